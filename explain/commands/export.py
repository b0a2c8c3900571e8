"""``explain export MODEL -o FILE``: one step, a range of steps or the whole run as a standalone numpy script
(or a Jupyter notebook) that recomputes the steps and checks them against the recorded values."""

from __future__ import annotations

from pathlib import Path

import click

from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.core.errors import UsageError
from explain.io.paths import check_output


def _range(trace, step: str | None, first: str | None, last: str | None) -> list[str] | None:
    """The step names to export (None: all), from --step or --from/--to."""
    if step is not None:
        return [trace.find(step).name]
    if first is None and last is None:
        return None
    names = trace.names()
    i = trace.find(first).index if first is not None else 0
    j = trace.find(last).index if last is not None else len(names) - 1
    if i > j:
        raise UsageError(f"--from '{first}' (step {i + 1}) comes after --to '{last}' (step {j + 1}); swap them")
    return names[i:j + 1]


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("--step", metavar="NAME", help="Export one step (e.g. blocks.0.attn.scores).")
@click.option("--from", "first", metavar="NAME", help="First step of a range (default: the first step).")
@click.option("--to", "last", metavar="NAME", help="Last step of a range, included (default: the last step).")
@click.option("--format", "fmt", type=click.Choice(["py", "ipynb"]),
              help="A Python script or a Jupyter notebook (default: from the -o suffix, else py).")
@click.option("-o", "--output", required=True, metavar="PATH",
              help="Where to write (FILE.py or FILE.ipynb); '-' writes a script to stdout.")
@click.option("--force", is_flag=True, help="Overwrite PATH (and its .npz) if they exist.")
def export(model: str, step: str | None, first: str | None, last: str | None, fmt: str | None, output: str,
           force: bool, **kwargs) -> None:
    """Export steps of a MODEL run as a standalone numpy script that checks itself.

    The script recomputes each step with the same numpy code explain ran, from the parameters and the
    recorded inputs of the range, and ends by checking every result against the recorded values. Small
    values are written into the script; larger ones go to FILE.npz beside it. It needs only numpy.

    \b
    Examples:
      explain export gpt --step blocks.0.attn.scores -o scores.py && python scores.py
      explain export gpt --from blocks.0.attn.q --to blocks.0.attn_out -o attn.py
      explain export attention -o - | python
      explain export gpt --layers 1 --format ipynb -o gpt.ipynb
    """
    if step is not None and (first is not None or last is not None):
        raise UsageError("give either --step or --from/--to, not both")
    to_stdout = output == "-"
    fmt = fmt or ("ipynb" if output.endswith(".ipynb") else "py")
    if to_stdout and fmt == "ipynb":
        raise UsageError("a notebook cannot be written to stdout; give a file, e.g. -o export.ipynb")
    path = Path(output)
    if not to_stdout:
        check_output(output, force, example=f"export.{fmt}")  # before the run, which may be slow

    from explain.engine.api import run as run_model  # lazy: engine not loaded for --help
    from explain.export import (  # lazy: numpy off the shape path
        default_filename,
        export_source,
        write_export_files,
    )
    from explain.export.values import LITERAL_LIMIT  # lazy: numpy off the shape path

    trace = run_model(model, **run_kwargs(model, kwargs))
    steps = _range(trace, step, first, last)
    if to_stdout:
        text, arrays = export_source(trace, steps=steps)
        if arrays:
            n = sum(a.size for a in arrays.values())
            raise UsageError(f"this export has {n:,} values, more than the {LITERAL_LIMIT:,} written into a "
                             f"script, and needs a sidecar .npz that stdout cannot carry; write to a file, "
                             f"e.g. -o {default_filename(trace, steps)}")
        click.echo(text, nl=False)
        return
    written, exp = write_export_files(trace, path, steps=steps, fmt=fmt, force=force)
    side = f" and {written.with_suffix('.npz')}" if exp.sidecar else ""
    run_it = f"python {written}" if fmt == "py" else f"jupyter notebook {written}"
    computed = len(exp.checked)  # the steps with an op; the inputs (token ids, given arrays) are data
    given = len(exp.steps) - computed
    inputs = f" (and {given} input{'' if given == 1 else 's'}, given, not counted)" if given else ""
    click.echo(f"wrote {written}{side}: {computed} step{'' if computed == 1 else 's'} computed and checked"
               f"{inputs}; run it: {run_it}", err=True)
