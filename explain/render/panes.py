"""The pure measures and texts of the step screen's smaller panes, as functions of the view (no widget asked,
none mounted): the step header (its text and its lines at a width), the operands (which slice of each, the lines
the tallest needs) and the predictions (whether a step shows them, their lines). The widgets draw with these and
:mod:`explain.render.measure` measures with them, so the layout and the drawing agree."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Group
from rich.text import Text

from explain.core.names import is_draw
from explain.render.drill import text_lines
from explain.render.predictions import text_so_far
from explain.render.step import step_header
from explain.render.view import View
from explain.report.predict import has_predictions
from explain.trace import Step

OPERAND_ROWS = 16  # rows an operand shows at most (a 12-token pattern whole where the layout has room)
PREDICTION_ROWS = 5  # rows of the predictions table when there is room (fewer when the layout gives less)


# -- the step header ---------------------------------------------------------------------------------------------
def header_lines(view: View, width: int, stop: str = "") -> int:
    """Lines the header takes at ``width`` columns (the note wraps)."""
    return len(text_lines(header(view, max(10, width), stop), max(10, width)))


def short(label: str) -> str:
    """A weights label with its file's name, not its whole path ('checkpoint: gpt2_tiny'): the header's room."""
    kind, sep, path = label.partition(": ")
    if sep and kind in ("checkpoint", "weights") and os.sep in path:
        return f"{kind}: {os.path.basename(path.rstrip(os.sep))}"
    return label


def header(view: View, width: int = 200, stop: str = "") -> Any:
    """The step's header; on a generation's steps the text so far comes first (what the student reads). The
    first line says 'step 45 of 95', or '45/95' where that keeps it on one line (a generation's long names),
    then which weights the run shows ('trained: gpt-tiny', 'random, seed 0'), on a line of its own where the
    first has no room. Words the checkpoint's vocabulary lacks are named on every step: they read as <unk>.
    ``stop`` ('stop 1 of 4': a tutorial whose narration is hidden) comes first."""
    where = f"{stop} · " * bool(stop) + f"step {view.index + 1} of {len(view.trace)}"
    room = width - len(view.step.name) - len(view.step.op) - 6
    if len(where) > room:
        where = f"{stop.replace(' of ', '/')} · " * bool(stop) + f"{view.index + 1}/{len(view.trace)}"
    weights = short(view.trace.weights)
    if weights and len(where) + len(weights) + 3 <= room:
        where, weights = f"{where} · {weights}", ""
    title, *rest = step_header(view.step, where).renderables
    lines: list[Any] = [title]
    if weights:
        lines.append(Text(weights, style="dim"))
    if view.trace.unknown_words:  # under the title: a short screen shows the header's first four lines only
        words = ", ".join(f"'{w}'" for w in view.trace.unknown_words)
        lines.append(Text(f"not in the vocabulary, read as <unk>: {words}", style="yellow"))
    batch = view.lead[0] if view.lead and view.step.axes[:1] == ("batch",) else 0
    text = text_so_far(view.trace, view.index, batch)
    return Group(*([] if text is None else [text]), *lines, *rest)


# -- the operands ------------------------------------------------------------------------------------------------
def operand_slice(view: View, axes: tuple[str, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """Leading indices of an operand: the result's index on an axis of the same name, else 0."""
    step = view.step
    chosen = {a: i for a, i in zip(step.axes, view.lead)}
    lead = []
    for axis, n in zip(axes[: max(len(shape) - 2, 0)], shape):
        lead.append(min(chosen.get(axis, 0), n - 1))
    return tuple(lead)


def axes_and_shape(view: View, name: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    trace = view.trace
    if name in trace:
        s = trace[name]
        return s.axes, tuple(s.shape)
    spec = trace.specs[name]
    return spec.axes, tuple(spec.shape)


def operands_height(view: View) -> int:
    """Lines the operands pane needs: the tallest operand's title, slice line, ruler and rows (0: no inputs)."""
    step = view.step
    if not step.inputs:
        return 0
    tallest = 1
    for name in step.inputs:
        _, shape = axes_and_shape(view, name)
        rows = shape[-2] if len(shape) >= 2 else 1
        tallest = max(tallest, 2 + (1 if len(shape) > 2 else 0) + min(rows, OPERAND_ROWS))
    return tallest + 1  # and the margin below


# -- the predictions ---------------------------------------------------------------------------------------------
def shows_predictions(view: View) -> bool:
    """Whether the current step is about next tokens: its last axis is the vocabulary, or it is a draw."""
    step: Step = view.step
    return step.output is not None and has_predictions(view.trace) and (
        step.axes[-1:] == ("vocab",) or is_draw(step.name))


def predictions_height(view: View) -> int:
    """Lines for the whole pane on this step: title, header, PREDICTION_ROWS rows, the actual token (row and line); 0 on a
    step without predictions."""
    return PREDICTION_ROWS + 4 if shows_predictions(view) else 0


def told_apart(names: list[str], syms: list[str]) -> list[str]:
    """Each operand's title symbol, with the part of its step name that tells it from another operand of the same
    symbol: a patched run's fraction reads three logits (its own ``logits``, ``patch.clean.logits``,
    ``patch.corrupt.logits``), which the pane titled ``logits`` three times where the name did not fit; they become
    ``logits``, ``logits clean``, ``logits corrupt``. Symbols that differ, and one step read twice, are kept
    as they are."""
    shown = [s or n for s, n in zip(syms, names)]
    for s in list(shown):
        twins = [j for j, t in enumerate(shown) if t == s]
        if len({names[j] for j in twins}) > 1:  # one step read twice (X·Xᵀ) is one operand twice: no suffix
            for j in twins:
                parts = names[j].split(".")
                if len(parts) > 1:  # a step of this run keeps the bare symbol: the others say whose they are
                    shown[j] = f"{s} {parts[-2]}"
    return shown
