"""The step screen's layout as a pure function of the terminal size and what the panes need.

The step screen calls :func:`plan` on every resize and whenever the step or cell changes what a pane needs,
and applies the :class:`Layout` it returns. The order of priority, from the issue that asked for it:

1. the drill-down is always complete: at least its head, its title and its result line (longer ones scroll,
   with the result line pinned at the bottom);
2. the result matrix shows whole when it fits, otherwise as much as the space allows, never fewer than
   MATRIX_MIN_ROWS rows (all of a smaller one: a result of three rows is never one row and a ``⋮``);
3. the operands and the sidebar (step tree or narration) take what is left, and say so when hidden.

No Textual here: the numbers in, the numbers out, so every size can be tested without an app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from explain.tui.widgets.operands import operands_height
from explain.tui.widgets.tensor_view import MAX_ROWS

SIDE_MIN = 100  # the sidebar (tree or narration) is shown from this many columns (a tutorial's from 80)
DRILL_MIN_W = 40  # the narrowest drill-down beside the matrix
DRILL_BESIDE_W = 56  # a drill-down wider than this goes beside the matrix only with this much room
MATRIX_MIN_H = 4  # title, ruler, one row, legend: the matrix never gets less
MATRIX_MIN_ROWS = 3  # rows of the result kept before the drill-down's table (which scrolls, its result pinned)
OPERANDS_MIN_H = 4  # title, ruler, one row and its margin: less than this and the operands are hidden
CENTRE_PAD = 2  # the centre column's padding (left and right)
PREDICTIONS_MIN_H = 4  # title, header, the top token, the actual token's line
MATRIX_TOPUP = 3  # rows a matrix this close to whole takes from the drill-down below it
DRILL_SCROLL_MIN = 6  # rule, head, title, two lines of the body, result: the least a scrolling drill-down keeps


@dataclass(frozen=True)
class Needs:
    """What the panes of the current step need, in terminal cells."""

    info_h: int  # the step header (name, formula, signature, note), wrapped to the centre's width
    matrix_w: int  # the result matrix, whole (capped at the width offered when it cannot be whole)
    matrix_h: int  # titles, rulers, every row, legend
    drill_w: int  # the drill-down's natural width
    drill_h: int  # every line of the drill-down, the whole table of terms included
    drill_min_h: int  # head, title, arithmetic and result with the table cut to one row
    operands_h: int  # 0 when the step has no inputs
    tutorial: bool = False
    predictions_h: int = 0  # the next-token predictions (steps about the vocabulary), 0 on other steps
    matrix_min_h: int = 0  # titles, rulers, MATRIX_MIN_ROWS rows (or all), legend: a 4-D slice with token labels
    # needs more than MATRIX_MIN_H (its slice line and the word ruler), or it would show its headers and no row


@dataclass(frozen=True)
class Layout:
    """Sizes for the step screen's panes (0 width/height: hidden)."""

    sidebar_w: int
    info_h: int
    operands_h: int
    side_by_side: bool  # drill-down beside the matrix (else below it)
    matrix_h: int  # below: the matrix's height; beside: the height of the row holding both
    drill_w: int  # beside: the drill-down's width; below: the centre's width
    drill_h: int
    hidden: tuple[str, ...] = ()  # panes hidden for lack of room: "operands", "sidebar", "predictions"
    predictions_h: int = 0  # above the matrix: what is left after the matrix's need and the drill-down's minimum


def sidebar_width(width: int, tutorial: bool) -> int:
    """The sidebar's width at a terminal width: the narration gets more as the terminal widens."""
    if tutorial:
        return 30 if width < 120 else 36 if width < 160 else 44
    return 30


def centre_width(width: int, tutorial: bool, sidebar: bool = True) -> tuple[int, int]:
    """(sidebar width, centre width) at a terminal width; the sidebar is 0 when hidden or without room."""
    side_min = 80 if tutorial else SIDE_MIN
    sidebar_w = sidebar_width(width, tutorial) if sidebar and width >= side_min else 0
    # the sidebar's width includes its rule (border-box), so the centre is what is left less its padding
    return sidebar_w, max(10, width - sidebar_w - CENTRE_PAD)


def fits_beside(centre: int, matrix_w: int, drill_w: int) -> bool:
    """The "beside or below" rule: the drill-down goes beside the matrix when the centre column holds the matrix,
    a rule and the drill-down at its natural width up to DRILL_BESIDE_W (at least DRILL_MIN_W)."""
    return centre >= matrix_w + max(DRILL_MIN_W, min(drill_w, DRILL_BESIDE_W)) + 1


def no_room_for_sidebar(width: int, tutorial: bool) -> str | None:
    """Why ``T`` cannot show the sidebar at this width, or None."""
    if centre_width(width, tutorial)[0]:
        return None
    return (f"the {'narration' if tutorial else 'step tree'} needs {80 if tutorial else SIDE_MIN} columns; this "
            f"terminal has {width}. / searches the steps and g goes to one by name.")


def plan(width: int, height: int, needs: Needs, *, sidebar: bool = True, operands: bool | None = None) -> Layout:
    """The layout of a ``width`` × ``height`` step screen (footer included). ``sidebar`` is the user's choice
    (T); ``operands`` is the user's choice (i), None for automatic (shown when there is room)."""
    body = max(1, height - 1)  # the footer
    hidden: list[str] = []
    sidebar_w, centre = centre_width(width, needs.tutorial, sidebar)
    if sidebar and not sidebar_w:
        hidden.append("sidebar")

    info_h = min(needs.info_h, 4 if body < 32 else 7)
    info_h = info_h + (1 if body >= 32 else 0)  # a blank line under the header where there is room
    room = max(1, body - info_h)
    # the predictions take what is left once the matrix has what it needs and the drill-down its minimum
    matrix_min = max(MATRIX_MIN_H, min(needs.matrix_min_h, needs.matrix_h))
    pred_h = min(needs.predictions_h, max(0, room - max(needs.matrix_h, matrix_min) - needs.drill_min_h))
    if needs.predictions_h and pred_h < PREDICTIONS_MIN_H:
        pred_h = 0
        hidden.append("predictions")
    room = max(1, room - pred_h)

    beside = fits_beside(centre, needs.matrix_w, needs.drill_w)
    if beside:
        drill_w = max(DRILL_MIN_W, min(needs.drill_w, centre - needs.matrix_w - 1))
        work_need = max(needs.matrix_h, needs.drill_h)
        work_min = max(matrix_min, needs.drill_min_h)
        ops_h = _operands(room, work_need, work_min, needs.operands_h, operands, hidden)
        work = room - ops_h
        return Layout(sidebar_w, info_h, ops_h, True, work, drill_w, work, tuple(hidden), pred_h)

    # below: the drill-down gets what it needs (down to its minimum), the matrix what it needs (down to its
    # minimum), the operands the rest, and whatever is left goes to the drill-down's table of terms
    drill_h = min(needs.drill_h, max(needs.drill_min_h, room - needs.matrix_h))
    matrix_min = min(matrix_min, max(MATRIX_MIN_H, room - DRILL_SCROLL_MIN))  # the drill-down's answer stays
    drill_h = min(drill_h, max(1, room - matrix_min))
    matrix_h = max(min(needs.matrix_h, room - drill_h), min(matrix_min, room))
    ops_h = _operands(room, drill_h + matrix_h, drill_h + matrix_h, needs.operands_h, operands, hidden)
    drill_h = max(drill_h, room - ops_h - matrix_h)  # the rest: more rows of the table
    if drill_h > needs.drill_h + 1:  # more than the drill-down can use: the matrix takes it (it may have more)
        extra = drill_h - needs.drill_h - 1
        drill_h -= extra
        matrix_h += extra
    lack = needs.matrix_h - matrix_h
    if 0 < lack <= MATRIX_TOPUP and drill_h - lack >= max(needs.drill_min_h, DRILL_SCROLL_MIN):
        # a few rows short of whole: the matrix takes them from the drill-down's table of terms, never below the
        # drill-down's minimum (a body that had to scroll would draw its scrollbar a frame late)
        drill_h -= lack
        matrix_h += lack
    return Layout(sidebar_w, info_h, ops_h, False, matrix_h, centre, drill_h, tuple(hidden), pred_h)


def _operands(room: int, need: int, minimum: int, ops_need: int, choice: bool | None, hidden: list[str]) -> int:
    """The operands' height: what they need if the rest still gets what it needs (automatic), or what is left
    above the rest's minimum (the user asked for them); 0 (and noted) when they do not fit."""
    if not ops_need or choice is False:
        return 0
    spare = room - (minimum if choice else need)
    if spare >= OPERANDS_MIN_H:
        return min(ops_need, spare)
    hidden.append("operands")
    return 0


def needs_of(view: Any, centre: int, tutorial: bool, info: Any, tensor: Any, panel: Any, predictions: Any) -> Needs:
    """What the panes need for ``view`` at a centre column ``centre`` wide, from the widgets' own measures
    (none needs to be mounted: a test lays out a step at any size without an app)."""
    info_h = info.height_at(view, centre)
    matrix_w, matrix_h = tensor.needs(view, centre)
    drill_w, _, _ = panel.needs(view, centre)
    beside_w = max(DRILL_MIN_W, min(drill_w, centre - matrix_w - 1))
    if fits_beside(centre, matrix_w, drill_w):
        _, drill_h, drill_min = panel.needs(view, beside_w)
    else:
        _, drill_h, drill_min = panel.needs(view, centre)
        drill_h, drill_min = drill_h + 1, drill_min + 1  # the rule above the drill-down
    mat = view.matrix()
    rows = min(mat.shape[0], MAX_ROWS) if mat is not None else 1  # as TensorView.needs counts them
    return Needs(info_h, matrix_w, matrix_h, drill_w, drill_h, drill_min, operands_height(view),
                 tutorial=tutorial, predictions_h=predictions.needs(view), matrix_min_h=matrix_h - rows + min(rows, MATRIX_MIN_ROWS))


def drill_content_size(plan: Layout) -> tuple[int, int]:
    """The drill-down's content size in a layout: the pane less its padding (0 1) and its rule (left beside,
    top below)."""
    if plan.side_by_side:
        return plan.drill_w - 3, plan.matrix_h
    return plan.drill_w - 2, plan.drill_h - 1


def relayout(screen: Any, force: bool = False) -> None:
    """Compute the step screen's layout for its size and step, and apply what changed."""
    view, (width, height) = screen.view, screen.size
    if width <= 0 or height <= 0:
        return
    # not the cell: cells of one step have drill-downs of one shape (and one that differs scrolls), so moving
    # the cursor costs no layout
    key = (width, height, view.trace, view.index, view.lead, view.precision, view.show,
           screen.show_operands, screen.show_sidebar, screen.tutorial_on)
    if key == screen._layout_key and not force:
        return
    screen._layout_key = key
    _, centre = centre_width(width, screen.tutorial_on, screen.show_sidebar)
    q = screen.query_one
    needs = needs_of(view, centre, screen.tutorial_on, q("#info"), q("#tensor"), q("#cell"), q("#predictions"))
    plan_ = plan(width, height, needs, sidebar=screen.show_sidebar, operands=screen.show_operands)
    if plan_ == screen._layout:
        return
    screen._layout = plan_
    sidebar = q("#sidebar")
    sidebar.styles.display = "block" if plan_.sidebar_w else "none"
    if plan_.sidebar_w:
        sidebar.styles.width = plan_.sidebar_w
    q("#info").styles.height = plan_.info_h
    for pane, h in ((q("#operands"), plan_.operands_h), (q("#predictions"), plan_.predictions_h)):
        pane.styles.display = "block" if h else "none"
        if h:
            pane.styles.height = h
    work, tensor, cell = q("#work"), q("#tensor"), q("#cell")
    work.styles.layout = "horizontal" if plan_.side_by_side else "vertical"
    screen.set_class(plan_.side_by_side, "-beside")
    tensor.styles.height = "1fr" if plan_.side_by_side else plan_.matrix_h
    cell.styles.width = plan_.drill_w if plan_.side_by_side else "1fr"
    cell.styles.height = "1fr"
    hints = []
    if "operands" in plan_.hidden:
        hints.append("operands hidden: no room (i)" if screen.show_operands is None else "operands: no room")
    if "sidebar" in plan_.hidden:
        hints.append("tree hidden (T)")
    if "predictions" in plan_.hidden:
        hints.append("predictions: no room")
    tensor.hint = " · ".join(hints)
