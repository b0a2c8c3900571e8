"""``explain lens``, ``explain attribute`` and ``explain patch``: why the model predicts what it predicts, each a
recorded computation (:mod:`explain.interp`), printed (``--plain``, the default off a terminal), as one JSON
document (``--json``), and exported as a script that reproduces its numbers (``-o FILE.py``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.errors import UsageError

EPILOG = MODEL_HELP + " These read the residual stream as a sum: use a pre-norm model ('gpt', a checkpoint)."


def _output(trace: Any, steps: list[str], output: str | None, force: bool) -> None:
    """Export ``steps`` of ``trace`` to ``output`` (a script that recomputes them and checks them)."""
    if output is None:
        return
    if not output.endswith(".py"):
        raise UsageError(f"-o writes a Python script; name it *.py, not '{output}'")
    from explain.export import write_export

    path = write_export(trace, output, steps=steps, force=force)
    click.echo(f"wrote {path} ({len(steps)} steps; run it with python to check every number)", err=True)


def _print(*renderables: Any) -> None:
    from rich.console import Console

    console = Console()
    for r in renderables:
        console.print(r)


def _mode(plain: bool, as_json: bool) -> None:
    if plain and as_json:
        raise UsageError("choose one of --plain and --json")


def _json(doc: dict[str, Any]) -> None:
    json.dump(doc, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


_common = [
    click.option("--plain", is_flag=True, help="Print tables (the default: these commands have no TUI view yet)."),
    click.option("--json", "as_json", is_flag=True, help="Write one JSON document."),
    click.option("-o", "--output", metavar="FILE.py", help="Export the recorded steps as a script that "
                 "recomputes and checks them."),
    click.option("--force", is_flag=True, help="Overwrite FILE.py if it exists."),
]


def common(f: Any) -> Any:
    for o in reversed(_common):
        f = o(f)
    return f


@click.command(epilog=EPILOG)
@model_options
@click.option("--word", metavar="W", help="A word to follow layer by layer: one token of the vocabulary (for "
              "byte-level BPE with its leading space, ' Paris').")
@click.option("--position", type=int, default=-1, show_default=True, help="The position whose next word is read "
              "(−1: the last).")
@common
def lens(model: str, word: str | None, position: int, plain: bool, as_json: bool, output: str | None, force: bool,
         **kwargs: Any) -> None:
    """The logit lens: the residual after each block and each attention, read through the final norm and the
    unembedding as if the model ended there.

    Each read is recorded steps (lens.POINT.ln_final, .logits, .probs); the last equals the run's logits.
    Per layer: the top word at every position, and W's rank and probability.

    \b
    Examples:
      explain lens gpt --text "The cat is happy" --word happy
      explain lens gpt --checkpoint DIR --text "The capital of France is" --word ' Paris'
      explain lens gpt --word cat --json > lens.json
    """
    _mode(plain, as_json)
    from explain.interp.lens import lens as run_lens

    result = run_lens(model, word, position=position, **run_kwargs(model, kwargs))
    _output(result.trace, [s.name for s in result.trace if s.name.startswith("lens.")], output, force)
    if as_json:
        _json(result.to_dict())
        return
    from explain.render.lens import lens_grid, lens_word

    _print(lens_grid(result), lens_word(result))
