"""The operands of the current step (its inputs: earlier steps and parameters) as small matrices side by side,
each with its symbol, name, shape and, for a 3- or 4-D operand, the slice shown.

The slice of an operand follows the result's where their axes have the same name (head 1 of the scores shows
head 1 of Q and K; W_Q (head, d_model, d_head) shows head 1's matrix). Only a corner of each operand is drawn,
so a 50257 × 768 embedding matrix costs what a 4 × 4 one does.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from explain import ops
from explain.core.shape_rules import fmt_shape
from explain.render.grid import Marks, draw_window, fit_window, window_scale
from explain.render.panes import (  # noqa: F401
    OPERAND_ROWS,
    axes_and_shape,
    operand_slice,
    operands_height,
    told_apart,
)
from explain.render.step import axis_labels
from explain.render.tensor import number_format
from explain.tui.state import View
from explain.tui.widgets.view_widget import ViewWidget

MIN_WIDTH = 14


def marks_of(feed: tuple | None, ndim: int) -> tuple[tuple[int, ...] | None, Marks | None]:
    """The slice an operand should show and the cells to mark in it, from the op's ``feeds`` index (ints pick,
    slices take all); (None, None) when the feed does not pin the leading axes."""
    if feed is None or ndim == 0:
        return None, None
    feed = feed if isinstance(feed, tuple) else (feed,)  # a bare slice or int: one axis's index
    feed = feed + (slice(None),) * (ndim - len(feed))
    lead = feed[: max(ndim - 2, 0)]
    if not all(isinstance(i, int) for i in lead):
        return None, None
    tail = feed[max(ndim - 2, 0):]
    if ndim == 1:
        return (), Marks(0, tail[0] if isinstance(tail[0], int) else None)
    r, c = tail
    return tuple(lead), Marks(r if isinstance(r, int) else None, c if isinstance(c, int) else None)


def _operand(view: View, name: str, feed: tuple | None) -> tuple[tuple[int, ...], tuple[int, ...], Marks | None,
                                                                  Any]:
    """An operand's shape, the slice shown, its marks and its 2-D matrix (None: shape only)."""
    axes, shape = axes_and_shape(view, name)
    value: Any = view.trace.value(name)
    fed_lead, marks = marks_of(feed, len(shape))
    lead = fed_lead if fed_lead is not None else operand_slice(view, axes, shape)
    if value is None:
        return shape, lead, marks, None
    mat = value[lead] if lead else value
    if mat.ndim == 0:
        mat = mat.reshape(1, 1)
    elif mat.ndim == 1:
        mat = mat.reshape(1, -1)
    return shape, lead, marks, mat


def _anchor(view: View, marks: Marks | None, mat: Any) -> tuple[int, int]:
    """The cell an operand's window keeps in view: the marked one; along an axis the mark takes whole (a row op
    reads the whole row), the cursor's own row or column where the operand's axis is as long as the result's,
    so every operand follows the cursor the same way (``∂L/∂log P`` stood at column 0 beside ``log P`` at 28)."""
    result = view.matrix()
    here = view.cell if result is not None else (0, 0)
    same = [result is not None and result.shape[i] == mat.shape[i] for i in (0, 1)]
    r, c = (marks.r, marks.c) if marks is not None else (None, None)
    return (r if r is not None else here[0] if same[0] else 0, c if c is not None else here[1] if same[1] else 0)


def _words(view: View, mat: Any) -> Any:
    """The vocabulary for an operand of token ids (each drawn with its word), else None."""
    return view.trace.labels.get("vocab") if mat.dtype.kind in "iu" else None


def _row_words(view: View, name: str, lead: tuple[int, ...], mat: Any) -> list[str] | None:
    """The tokens of an operand's rows when they are positions (``Sₘ blocks.1.attn.masked``'s rows 0 The, 1 cat,
    …), as the result's grid labels its own; None for a parameter, a row vector or rows over features."""
    trace = view.trace
    if name not in trace or len(trace[name].shape) < 2:
        return None
    step = trace[name]
    return axis_labels(trace, step, len(step.shape) - 2, lead)


def operand_width(view: View, name: str, sym: str, width: int, feed: tuple | None = None) -> int:
    """Columns the operand needs to show whole, at most ``width`` (what it is offered): its window's width or
    its title's, whichever is wider. Costs what the columns that fit cost, never the operand's size."""
    shape, lead, marks, mat = _operand(view, name, feed)
    title = len(sym) + (len(name) + 1 if name != sym else 0) + len(fmt_shape(shape)) + 1  # "Q blocks.0.attn.q (4, 8)"
    if mat is None:
        return min(width, title)
    nf = number_format(mat, view.precision, _words(view, mat))
    anchor = _anchor(view, marks, mat)
    win = fit_window(mat, (0, 0), anchor, width, OPERAND_ROWS + 1, row_labels=_row_words(view, name, lead, mat),
                     precision=nf, values=view.values)
    return min(width, max(title, win.label_width + sum(win.widths)))


def split_widths(needs: list[int], total: int, gap: int = 2) -> list[int]:
    """Share ``total`` columns among operands side by side (``gap`` between them): each gets what it needs
    when all fit; otherwise the narrow ones get theirs and the wide ones share the rest equally (a 6-wide
    padding vector beside a 6×6 score matrix leaves the matrix whole instead of halving it)."""
    room = max(len(needs) * MIN_WIDTH, total - gap * (len(needs) - 1))
    out = [0] * len(needs)
    left = sorted(range(len(needs)), key=lambda i: needs[i])
    while left:
        share = room // len(left)
        i = left[0]
        if needs[i] <= share:
            out[i] = max(MIN_WIDTH, needs[i])
            room -= out[i]
            left.pop(0)
            continue
        for i in left:  # every one left needs more than an equal share: they split the rest
            out[i] = max(MIN_WIDTH, share)
        break
    return out


def operand_view(view: View, name: str, sym: str, width: int, feed: tuple | None = None,
                 height: int = OPERAND_ROWS + 3) -> Text:
    """One operand as a titled window of its 2-D slice, ``width`` × ``height`` characters; the cells in
    ``feed`` (the op's linkage for the cell under the cursor) are marked and kept in view (an operand the cell
    does not read is :func:`unread_title` instead)."""
    axes, _ = axes_and_shape(view, name)
    shape, lead, marks, mat = _operand(view, name, feed)
    title = Text.assemble((sym, "bold cyan"), " ", (name, "dim"), f" {fmt_shape(shape)}")
    # no room for the step's name (the symbol and shape whole, not a name cut mid-word), or the name is the symbol
    if title.cell_len > width or name == sym:  # ('logits logits')
        title = Text.assemble((sym, "bold cyan"), f" {fmt_shape(shape)}")
    if lead:
        title.append("\n" + " · ".join(f"{a} {i}" for a, i in zip(axes, lead)), "yellow")
    if mat is None:
        return title
    nf = number_format(mat, view.precision, _words(view, mat))  # the result's and the drill-down's decimals
    if nf.exponent:
        title.append(f"  {nf.legend()}", "bold")
    anchor = _anchor(view, marks, mat)
    # the rows that fit the pane under the title (the pane may be shorter than OPERAND_ROWS): the marked row is
    # kept among them, so a mark is never drawn below the fold
    rows = max(2, min(OPERAND_ROWS + 1, height - title.plain.count("\n") - 1))
    words = _row_words(view, name, lead, mat)
    win = fit_window(mat, (0, 0), anchor, width, rows, row_labels=words, precision=nf, values=view.values)
    scale = window_scale(mat, win)[0] if view.heat and not nf.integer else None
    return Text("\n").join([title, draw_window(mat, win, row_labels=words, precision=nf, values=view.values,
                                               scale=scale, marks=marks)])


class Operands(ViewWidget):
    """The step's inputs, side by side, with the cells that fed the cell under the cursor marked."""

    def feeds(self, view: View) -> list[Any]:
        """The op's linkage for the cell under the cursor (one index per input), or [] when it has none."""
        step = view.step
        if step.output is None:
            return []
        try:
            inputs = view.trace.inputs_of(step)
            return list(ops.get(step.op).feeds(view.index_of_cell, inputs, **step.attrs))
        except Exception:  # an op without values for an input (shape-only parameters): no marks, never a crash
            return []

    DEPENDS = ('trace', 'index', 'lead', 'cell', 'show', 'precision')  # the marks follow the cell

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        """``height: auto``: the tallest operand whole and a blank line (the step screen's CSS may give less)."""
        return operands_height(self.view) if self.view is not None else 0

    def render(self) -> Any:
        view = self.view
        if view is None:
            return ""
        step = view.step
        if not step.inputs:
            return Text("operands: none (the value is given)", style="dim")
        names = list(step.inputs)
        syms = list(step.syms.ins) + [""] * len(names)
        if getattr(ops.get(step.op), "appends", False) and len(names) >= 2:  # the cache: two K's, told apart
            syms[0], syms[1] = f"{syms[0] or names[0]} kept", f"{syms[1] or names[1]} new"
        else:  # other operands of one symbol: by their step names (the fraction's three logits)
            syms = told_apart(names, syms)
        feeds = self.feeds(view)
        feed = [feeds[i] if i < len(feeds) else None for i in range(len(names))]
        total, height = self.content_size.width, self.content_size.height
        # a gradient's linkage (or a routed op's: a row an expert did not take) says None for an operand the cell
        # does not read
        skips = step.op.endswith(".grad") or ops.get(step.op).skips
        unread = [skips and feed[i] is None for i in range(len(names))]
        # an operand the cell does not read is its symbol, shape and "not read here": the ones it reads get
        # the width (a backward step's Q, K and V took half of it to say they were not read, cutting names)
        needs = [len(unread_title(view, n, syms[i] or n).plain.split("\n")[0]) if unread[i] else
                 operand_width(view, n, syms[i] or n, total, feed[i]) for i, n in enumerate(names)]
        widths = split_widths(needs, total)
        grid = Table.grid(padding=(0, 2))
        for w in widths:
            grid.add_column(no_wrap=True, overflow="crop", max_width=w)
        grid.add_row(*[unread_title(view, n, syms[i] or n) if unread[i] else
                       operand_view(view, n, syms[i] or n, widths[i], feed[i], height=height)
                       for i, n in enumerate(names)])
        return grid


def unread_title(view: View, name: str, sym: str) -> Text:
    """An operand the cell under the cursor does not read: ``Q (1, 2, 4, 4)`` and, below, ``not read here``."""
    _, shape = axes_and_shape(view, name)
    return Text.assemble((sym, "bold cyan"), f" {fmt_shape(shape)}\n", ("not read here", "italic dim"))
