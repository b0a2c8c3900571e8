"""``explain lens``, ``explain attribute`` and ``explain patch``: why the model predicts what it predicts, each a
recorded computation (:mod:`explain.interp`), printed (``--plain``, the default off a terminal), as one JSON
document (``--json``), and exported as a script that reproduces its numbers (``-o FILE.py``)."""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from typing import Any

import click

from explain.commands.options import MODEL_HELP, model_options, run_kwargs
from explain.core.errors import UsageError
from explain.core.registry import able, quoted
from explain.core.served import interactive
from explain.interp.names import ATTRIB, LENS, PATCH, attr, lens_point, lens_probs

EPILOG = MODEL_HELP + f" These read the residual stream as a sum: use a pre-norm model ({quoted(able('pre_norm'))})."


def _output(trace: Any, steps: list[str], output: str | None, force: bool) -> None:
    """Export ``steps`` of ``trace`` to ``output`` (a script that recomputes them and checks them)."""
    if output is None:
        return
    if not output.endswith(".py"):
        raise UsageError(f"-o writes a Python script; name it *.py, not '{output}'")
    from explain.export import write_export  # lazy: a command's engine is not loaded for --help

    path = write_export(trace, output, steps=steps, force=force)
    click.echo(f"wrote {path} ({len(steps)} steps; run it with python to check every number)", err=True)


@dataclass(frozen=True)
class Opened:
    """Where the TUI opens on a command's answer: the trace, its run's options, the step ``start`` (its ``cell``),
    and the screen of the key whose action is ``then`` open over it (Esc shows the recorded steps)."""

    trace: Any
    options: dict[str, Any]
    start: str
    then: str
    cell: tuple[int, ...] | None = None


def _show(result: Any, plain: bool, as_json: bool, opened: Opened, render: str, *views: str) -> None:
    """The command's answer, in the one form asked for: the TUI at ``opened`` (not asked for text or JSON, and
    stdout a terminal), one JSON document (``result.to_dict()``), or the tables that the functions ``views`` of
    the module ``explain.render.<render>`` draw from ``result``. One place, so the four answers (lens,
    attribution, a patch, a sweep) cannot drift apart in how they choose."""
    if not plain and not as_json and interactive():
        from explain.tui import open_trace  # lazy: textual only when the TUI opens

        open_trace(opened.trace, options=opened.options, start=opened.start, cell=opened.cell, then=opened.then)
        return
    if as_json:
        json.dump(result.to_dict(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    from rich.console import Console  # lazy: rich is not loaded for --help

    module = importlib.import_module(f"explain.render.{render}")  # the tables' module, loaded only to print them
    console = Console()
    for view in views:
        console.print(getattr(module, view)(result))


def _say(note: str) -> None:
    """A line on stderr (stdout is the data): which position was read, and why."""
    if note:
        click.echo(note, err=True)


def _mode(plain: bool, as_json: bool, output: str | None = None) -> None:
    """Refuse, before anything runs, --plain with --json and an -o that is not a script."""
    if plain and as_json:
        raise UsageError("choose one of --plain and --json")
    if output is not None and not output.endswith(".py"):
        raise UsageError(f"-o writes a Python script; name it *.py, not '{output}'")


_common = [
    click.option("--plain", is_flag=True, help="Print tables instead of opening the TUI (the default off a terminal)."),
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
@click.option("--position", type=int, help="The position whose next word is read (−1: the last). Default: where W "
              "is the next token of the text (its last such place), else the last.")
@common
def lens(model: str, word: str | None, position: int | None, plain: bool, as_json: bool, output: str | None, force: bool,
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
    _mode(plain, as_json, output)
    from explain.interp.lens import lens as run_lens  # lazy: a command's engine is not loaded for --help

    options = run_kwargs(model, kwargs)
    result = run_lens(model, word, position=position, **options)
    _say(result.note)
    _output(result.trace, [s.name for s in result.trace if s.group[:1] == (LENS,)], output, force)
    cell = None if result.word is None else (0, result.position, result.word)  # the lens screen (y), following W,
    at = Opened(result.trace, options, lens_probs(lens_point(result.rows[-1].step)), "lens", cell)  # at its last read
    _show(result, plain, as_json, at, "lens", "lens_grid", "lens_word")


@click.command(epilog=EPILOG)
@model_options
@click.option("--word", metavar="W", required=True, help="The word whose logit is attributed: one token of the "
              "vocabulary.")
@click.option("--vs", metavar="W2", help="A second word: attribute logit[W] − logit[W2] instead.")
@click.option("--position", type=int, help="The position whose next word is read (−1: the last). Default: where W "
              "is the next token of the text (its last such place), else the last.")
@common
def attribute(model: str, word: str, vs: str | None, position: int | None, plain: bool, as_json: bool,
              output: str | None, force: bool, **kwargs: Any) -> None:
    """Direct logit attribution: which part of the final residual writes the word.

    The final residual is split into the embeddings, each head's z·W_O, each attention bias and each MLP output;
    each part's contribution to the logit goes through the final norm with its scale frozen at the run's value
    (TransformerLens's convention). Ranked by size; they sum to the logit. Recorded as steps attrib.*.

    \b
    Examples:
      explain attribute gpt --text "The cat is happy" --word happy
      explain attribute gpt --word happy --vs cat --json > attr.json
    """
    _mode(plain, as_json, output)
    from explain.interp.attribution import (
        attribute as run_attribute,  # lazy: a command's engine is not loaded for --help
    )

    options = run_kwargs(model, kwargs)
    result = run_attribute(model, word, vs, position=position, **options)
    _say(result.note)
    _output(result.trace, [s.name for s in result.trace if s.group[:1] == (ATTRIB,)], output, force)
    at = Opened(result.trace, options, attr("total"), "attribution")  # the ranked parts (A) over the sum
    _show(result, plain, as_json, at, "attribution", "attribution_table")


@click.command(epilog=EPILOG)
@model_options
@click.option("--corrupt", metavar="TEXT", required=True, help="The corrupted text: as many tokens as --text.")
@click.option("--word", metavar="W", required=True, help="The word the clean run predicts: one token.")
@click.option("--vs", metavar="W2", required=True, help="The word the corrupted run predicts: one token.")
@click.option("--step", "step", metavar="S", help="The step to patch (blocks.0.resid_pre, blocks.1.attn.z, "
              "blocks.0.mlp_out, …); with --position and/or --head, only those cells.")
@click.option("--head", type=int, help="Patch only this head (a step with a head axis, e.g. blocks.0.attn.z).")
@click.option("--sweep", type=click.Choice(["resid", "heads", "mlp"]), help="Patch every layer × position "
              "(resid: each block's input; mlp: each MLP output) or layer × head, and draw the recovered fraction.")
@click.option("--position", type=int, help="Patch only this position (with --step).")
@common
def patch(model: str, corrupt: str, word: str, vs: str, step: str | None, head: int | None, sweep: str | None,
          position: int | None, plain: bool, as_json: bool, output: str | None, force: bool, **kwargs: Any) -> None:
    """Activation patching: the corrupted run with cells of one step taken from the clean run (--text).

    The patched run is recorded (patch.clean.S holds the clean cells, patch.S says of every cell where it came
    from) and everything after it recomputed; the logit difference W − W2 at the last position is compared with
    both runs: recovered = (patched − corrupted) / (clean − corrupted). --sweep does it for every layer ×
    position (or head), recomputing only what comes after each patch point.

    \b
    Examples:
      explain patch gpt --text "fish book tired cat man hungry fish book" --corrupt "fish book happy cat man hungry fish book" --word tired --vs happy --step blocks.0.resid_post --position 2
      explain patch gpt --text "fish book tired cat man hungry fish book" --corrupt "fish book happy cat man hungry fish book" --word tired --vs happy --sweep resid
    """
    _mode(plain, as_json, output)
    if (step is None) == (sweep is None):
        raise UsageError("give --step S (one patch) or --sweep resid|heads|mlp (every layer), not both or neither")
    if sweep is not None and (position is not None or head is not None):
        raise UsageError("--position and --head choose the cells of one --step; a --sweep patches each in turn")
    from explain.interp import patching  # lazy: a command's engine is not loaded for --help

    options = run_kwargs(model, kwargs)
    text = options.pop("text", None)
    if text is None:
        raise UsageError("give the clean text with --text (and the corrupted one with --corrupt)")
    if sweep is not None:
        if output is not None:
            raise UsageError("-o exports one patched run: give --step (a sweep keeps one number per cell)")
        result = patching.sweep(model, text, corrupt, word, vs, sweep, **options)
        result.runs.corrupt.sweep = result  # the heatmap (P) over the corrupted run; Enter opens a cell's patched run
        at = Opened(result.runs.corrupt, {**options, "text": corrupt}, "logits", "patching")
        _show(result, plain, as_json, at, "patching", "sweep_heatmap")
        return
    one = patching.patch(model, text, corrupt, word, vs, step, position=position, head=head, **options)
    first = one.trace[patching.names.patch_clean(step)].index
    _output(one.trace, [s.name for s in one.trace.steps[first:] if s.name in patching.needed_for(one.trace, "logits")
                        or s.group[:1] == (PATCH,)], output, force)
    one.trace.patched = one  # the TUI opens on the patched step, its numbers shown (P shows them again)
    at = Opened(one.trace, {**options, "text": corrupt}, patching.names.patched(step), "patching", one.first_cell())
    _show(one, plain, as_json, at, "patching", "patched_view")
