"""What the step screen's panes need for a view, in terminal cells, computed from the view (no widget is asked,
none needs to be mounted): the step header's lines, the result matrix whole and at its least, the drill-down
whole and with its table cut short, the operands, the predictions. The pure function of
:mod:`explain.render.fit` (:func:`~explain.render.fit.step_classes`) turns these into the screen's CSS classes; each pane's own ``height: auto`` /
``width: auto`` reads the same functions, so the classes and the sizes Textual gives agree.

Each measure is drawn with the renderer that draws the pane (the header with :func:`step_info.header`, the
matrix with :func:`explain.render.grid.fit_window`, the drill-down with :func:`explain.render.drill.drill_measure`)
and cached per trace, step, slice and width.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from rich.text import Text

from explain.core.errors import ExplainError
from explain.core.shape_rules import fmt_shape
from explain.ops.base import CellExplanation, idx, precision
from explain.render import fit
from explain.render.drill import drill_measure
from explain.render.fit import Fit, Measures, centre_width, fits_beside, step_classes
from explain.render.grid import fit_window
from explain.render.panes import header_lines, operands_height, predictions_height
from explain.render.step import axis_labels, id_words
from explain.render.tensor import NumberFormat, number_format
from explain.render.view import View
from explain.trace.slices import lead_shape

MAX_ROWS = 500  # rows a matrix asks for at most (no terminal shows more)
MATRIX_MIN_ROWS = 3  # rows of the result kept at the least (all of a smaller one): a result of three rows is
# never one row and a ⋮
FOOT_LINES = 1  # the matrix's colour legend
CACHE_SIZE = 512
_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per trace: {key: value}


def _cached(trace: Any, key: tuple, make: Callable[[], Any]) -> Any:
    cache = _caches.setdefault(trace, {})
    if key not in cache:
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[key] = make()
    return cache[key]


def measure(view: View, centre: int) -> Measures:
    """The measures of ``view``'s panes in a centre column ``centre`` cells wide (its padding excluded)."""
    matrix_w, matrix_h = matrix_size(view, centre)
    drill_w, drill_h, drill_min = drill_size(view, centre - 2 * fit.DRILL_PAD)
    beside_h, beside_min = drill_h, drill_min  # measured again only where it goes beside the matrix
    if fits_beside(centre, matrix_w, drill_w):
        beside = min(drill_w, centre - matrix_w - 1)  # as wide as it is there (see fit: -drill-fill)
        _, beside_h, beside_min = drill_size(view, beside - drill_frame())
    return Measures(header_height(view, centre), matrix_w, matrix_h, matrix_min_h(view, centre),
                    drill_w, drill_h + 1, drill_min + 1, beside_h, beside_min, operands_height(view),
                    predictions_height(view))


def fit_of(view: View, width: int, height: int, *, sidebar: bool, operands: bool | None, tutorial: bool) -> Fit:
    """The step screen's classes for ``view`` on a ``width`` × ``height`` terminal: its panes measured at the
    centre column's width, then :func:`~explain.render.fit.step_classes`."""
    tree = 0 if tutorial or width < fit.TREE_WIDE else tree_width(view.trace)
    centre = centre_width(width, tutorial, sidebar, tree)[1]
    return step_classes(width, height, measure(view, centre), sidebar=sidebar, operands=operands, tutorial=tutorial,
                        tree=tree)


def tree_width(trace: Any) -> int:
    """The columns the step tree's longest line takes (its guides, two a level; the label and the shape; the
    sidebar's rule and the scrollbar): from TREE_WIDE columns the tree is as wide as this needs (up to TREE_W),
    for every step of the run, so it does not change width as you step."""
    def need() -> int:
        return max((2 * len(s.group) + 2 + len(s.label) + 1 + len(fmt_shape(s.shape)) + 3 for s in trace), default=0)
    return _cached(trace, ("tree",), need)


def header_height(view: View, width: int) -> int:
    """Lines the step header takes at ``width`` columns (the note wraps)."""
    return _cached(view.trace, ("info", view.index, view.lead, width), lambda: header_lines(view, width))


def number_format_of(view: View) -> NumberFormat:
    """The slice's number format (the matrix's, computed once per step, slice and precision)."""
    return _cached(view.trace, ("format", view.index, view.lead, view.precision),
                   lambda: number_format(view.matrix(), view.precision, id_words(view.trace, view.step)))


def matrix_size(view: View, width: int) -> tuple[int, int]:
    """(width, height) the result matrix needs to show whole at ``width`` columns (its width capped at ``width``
    when it cannot): titles, rulers, every row up to MAX_ROWS, the legend. Reads at most 80 rows."""
    def make() -> tuple[int, int]:
        step = view.step
        titles = 1 + (1 if lead_shape(step) else 0)
        mat = view.matrix()
        if mat is None:
            return 30, titles + 1
        nd = len(step.shape)
        row_labels = axis_labels(view.trace, step, nd - 2) if nd >= 2 else None
        col_labels = axis_labels(view.trace, step, nd - 1) if nd >= 1 else None
        n_rows = mat.shape[0]
        probe = mat[: min(n_rows, 80)]
        win = fit_window(probe, (0, 0), (0, min(view.cell[1], mat.shape[1] - 1)), width, probe.shape[0] + 2,
                         row_labels=row_labels, col_labels=col_labels, precision=number_format_of(view),
                         values=view.values)
        w = win.label_width + sum(win.widths) if None not in win.cols else width
        header_lines = 2 if col_labels else 1
        return max(w, 30), titles + header_lines + min(n_rows, MAX_ROWS) + FOOT_LINES
    return _cached(view.trace, ("matrix", view.index, view.lead, view.precision, view.show, width), make)


def matrix_min_h(view: View, width: int) -> int:
    """The matrix's titles, rulers and legend with MATRIX_MIN_ROWS of its rows (all of a smaller one) and the
    ``⋮`` that says the others are cut."""
    mat, height = view.matrix(), matrix_size(view, width)[1]
    rows = min(mat.shape[0], MAX_ROWS) if mat is not None else 1
    return height - rows + min(rows, MATRIX_MIN_ROWS) + (rows > MATRIX_MIN_ROWS)


# -- the drill-down ----------------------------------------------------------------------------------------------
def explanation(view: View) -> CellExplanation | str:
    """The cell's explanation, or a one-line reason there is none (cached per step and cell)."""
    def make() -> CellExplanation | str:
        try:
            with precision(view.precision):  # its arithmetic at the +/- setting
                return view.trace.explain(view.step, view.index_of_cell)
        except ExplainError as exc:
            return str(exc)
    return _cached(view.trace, ("explain", view.index, view.index_of_cell, view.precision), make)


def drill_frame() -> int:
    """Columns the drill-down's frame takes: its padding left and right (fit.DRILL_PAD, app.tcss reads the same)
    and its rule (left beside the matrix, above it below)."""
    return 2 * fit.DRILL_PAD + 1


def drill_head(view: View) -> Text:
    """The drill-down's head line: which cell, and its keys."""
    return Text.assemble(("drill-down ", "bold"), (f"{view.step.syms.out}{idx(view.index_of_cell)}", "bold cyan"),
                         ("  h j k l move · d u scroll", "dim"))


def drill_content(view: View) -> CellExplanation | Text:
    """The explanation, or a one-line reason there is none (as dim or red text)."""
    if view.step.output is None:
        return Text("shape only: no values to explain", style="dim")
    ex = explanation(view)
    return Text(ex, style="red") if isinstance(ex, str) else ex


def drill_size(view: View, width: int) -> tuple[int, int, int]:
    """(natural width with its frame, lines for everything, lines with the table of terms cut to two rows) of
    the drill-down drawn ``width`` columns wide (its content)."""
    def make() -> tuple[int, int, int]:
        with precision(view.precision):
            w, full, short = drill_measure(drill_head(view), drill_content(view), view.precision, width)
        return w + drill_frame(), full, short
    return _cached(view.trace, ("drill", view.index, view.index_of_cell, view.precision, max(20, width),
                                drill_frame()), make)
