"""Open a link (:mod:`explain.serve.links`): a shipped tutorial at a stop, or a run of a registered model at a step
and a cell. ``explain run LINK`` and ``explain tutorial open LINK`` use :func:`open_link` in a terminal; ``explain
serve`` starts each visitor's app as ``python -I -m explain.commands.link`` with the link in ``EXPLAIN_LINK`` (no
shell, no argument built from it), and a link that cannot be opened is one line in the app (:func:`main`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from explain.core.errors import ExplainError, StepNotFound, UsageError
from explain.core.served import interactive
from explain.serve.links import Link, LinkError, parse_link

LINK_ENV = "EXPLAIN_LINK"
# what a link may set of 'explain run': everything else of the command keeps its default
_RUN_OWN = ("plain", "as_json", "precision", "save", "force", "match", "slice_", "cell", "model")


def is_link(arg: str) -> bool:
    """Whether a command-line argument is a link rather than a name or a path."""
    return arg.startswith(("http://", "https://", "explain:", "?"))


def _tutorial(link: Link) -> tuple[Any, Any, int | None]:
    from explain.tutorial import load_tutorial, run_tutorial  # lazy: engine not loaded for --help

    tut = load_tutorial(link.tutorial)
    trace = run_tutorial(tut)
    return trace, tut, link.stop - 1 if link.stop else None


def _run(link: Link) -> tuple[Any, dict[str, Any]]:
    """The run a link asks for, its options checked by 'explain run''s own option definitions."""
    from explain.commands.run import run, run_kwargs  # lazy: a command loads the engine when it runs
    from explain.engine.api import run as run_model  # lazy: as above

    args = [link.model] + (["--text", link.text] if link.text is not None else [])
    try:
        ctx = run.make_context("explain run", args)
    except click.ClickException as exc:
        raise LinkError(f"the link's {exc.format_message()}") from None
    kwargs = {k: v for k, v in ctx.params.items() if k not in _RUN_OWN}
    options = run_kwargs(link.model, kwargs)
    return run_model(link.model, **options), options


def _check_cell(trace: Any, link: Link) -> None:
    if link.step is None:
        return
    if link.step not in trace:
        raise StepNotFound(f"the run has no step '{link.step}'; see its steps with 'explain run {link.model} --plain'")
    if link.cell is None:
        return
    shape = tuple(trace[link.step].shape)
    if len(link.cell) != len(shape) or any(i >= n for i, n in zip(link.cell, shape)):
        raise UsageError(f"cell={','.join(map(str, link.cell))} is not a cell of {link.step}, whose shape is "
                         f"{shape}")


def open_link(text: str) -> None:
    """Open a link in the TUI (or one line saying why not)."""
    from explain.tui import open_trace  # lazy: textual only with the TUI

    link = parse_link(text)
    if link.tutorial is not None:
        trace, tut, stop = _tutorial(link)
        open_trace(trace, tutorial=tut, stop=stop)
    elif link.model is not None:
        trace, options = _run(link)
        _check_cell(trace, link)
        open_trace(trace, options=options, start=link.step, cell=link.cell)
    else:
        from explain.commands.open import open_default  # lazy: as above

        open_default()


def open_link_here(text: str, other_outputs: bool) -> None:
    """``explain run LINK``: the TUI on the link (it opens nothing else)."""
    parse_link(text)  # a wrong link is named first
    if other_outputs:
        raise UsageError("a link opens the TUI; for --plain, --json, --save or --match give the model and its "
                         "options instead of a link")
    if not interactive():
        raise UsageError("a link opens the TUI, and stdout is not a terminal; give the model and --plain instead")
    open_link(text)


def main() -> None:
    """A served visitor's app: the link of ``EXPLAIN_LINK``; one line in the app when it cannot be opened."""
    try:
        open_link(os.environ.get(LINK_ENV, ""))
    except ExplainError as exc:
        from explain.tui.message import MessageApp  # lazy: textual only with the TUI

        MessageApp(f"explain cannot open this link: {exc}").run()
    sys.exit(0)


if __name__ == "__main__":
    main()
