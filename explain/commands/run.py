"""``explain run MODEL`` (the TUI, or ``--plain``/``--json``) and ``explain params MODEL -o FILE.npz``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.errors import UsageError


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("--plain", is_flag=True, help="Print every step to stdout instead of opening the TUI.")
@click.option("--json", "as_json", is_flag=True, help="Write one JSON document with every step's values.")
@click.option("--precision", type=click.IntRange(0, 12), default=4, show_default=True, help="Digits after the point.")
def run(model: str, plain: bool, as_json: bool, precision: int, **kwargs) -> None:
    """Run MODEL one operation at a time and step through it.

    Without --plain or --json, opens the TUI on the run.

    \b
    Examples:
      explain run gpt --plain
      explain run attention --text "Thinking Machines" --d-model 4
      explain run simple --embeddings journey.npy --text "Your journey starts with one step" --plain
      explain run multihead --heads 4 --d-model 16 --json > run.json
    """
    if plain and as_json:
        raise UsageError("choose one of --plain and --json")
    from explain.api import run as run_model  # lazy: engine not loaded for --help

    options = run_kwargs(model, kwargs)
    trace = run_model(model, **options)
    if as_json:
        from explain.render.plain import write_trace_json  # lazy: rich out of the core

        out = sys.stdout
        write_trace_json(trace, out.write)  # streamed: the document is never whole in memory
        out.write("\n")
        return
    if plain or not sys.stdout.isatty():
        from rich.console import Console  # lazy: rich out of the core

        from explain.render.plain import print_trace  # lazy: rich out of the core

        print_trace(Console(), trace, precision)
        return
    from explain.tui import open_trace  # lazy: textual only with the TUI; imports textual only here

    open_trace(trace, options=options)  # the re-run form starts from these (and keeps --checkpoint)


@click.command(epilog=MODEL_HELP)
@model_options
@click.option("-o", "--output", "output", required=True, metavar="FILE.npz", help="Where to write the parameters.")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def params(model: str, output: str, force: bool, **kwargs) -> None:
    """Write every parameter of MODEL under its dotted name to an .npz file.

    Edit the file and load it back with --weights.

    \b
    Example:
      explain params attention --d-model 4 -o attn.npz
      explain run attention --d-model 4 --weights attn.npz --plain
    """
    path = Path(output)
    if path.suffix != ".npz":
        raise UsageError(f"'{output}' must end in .npz (numpy would add the suffix and write another file)")
    if path.is_dir():
        raise UsageError(f"'{output}' is a folder; give a file name such as '{path / 'params.npz'}'")
    if path.is_symlink() and not path.exists() and not force:
        raise UsageError(f"'{output}' is a symbolic link to '{os.readlink(path)}', which does not exist; remove "
                         "the link, or use --force to write the file it points to")
    if path.exists() and not force:
        raise UsageError(f"'{output}' exists; use --force to overwrite it")
    if not path.parent.is_dir():
        raise UsageError(f"folder '{path.parent}' does not exist; create it first")
    from explain.api import run as run_model  # lazy: engine not loaded for --help
    from explain.weights import save_params  # lazy: numpy off the shape path

    trace = run_model(model, **run_kwargs(model, kwargs))
    try:
        save_params(trace.params, path, force=force)  # exclusive: a file that appeared meanwhile is kept
    except OSError as exc:
        raise UsageError(f"cannot write '{output}': {exc.strerror}") from None
    click.echo(f"wrote {len(trace.params)} parameters ({trace.n_params:,} values) to {output}", err=True)
