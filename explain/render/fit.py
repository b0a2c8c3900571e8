"""Which of the step screen's layouts applies: one pure function from measurements to CSS classes.

Textual lays the step screen out: ``app.tcss`` sizes every pane with ``auto``, ``1fr`` and ``max-height``,
under modifier classes on the screen that select among those rules. :func:`step_classes` picks the classes,
from the terminal's size, what the view's panes need (:class:`Measures`, computed from the view by
:mod:`explain.render.measure`), the user's choices (T: the sidebar, i: the operands) and whether a tutorial is
followed; the screen sets them in the call where the view changes, so a step change is one frame. The order of
priority, from the issue that asked for it:

1. the drill-down is always complete: at least its head, its title and its result line (it cuts its table of
   terms to the rows that fit when it paints; a longer body scrolls, its result line pinned at the bottom);
2. the result matrix shows whole when it fits, otherwise as much as the space allows, never fewer than
   MATRIX_MIN_ROWS rows where the terminal has them (all of a smaller one);
3. the operands, the predictions and the sidebar (step tree or narration) take what is left, and the matrix's
   title says so when one is hidden.

No Textual here: numbers in, class names out, so every size is tested without an app.
"""

from __future__ import annotations

from dataclasses import dataclass

SIDE_MIN = 100  # the sidebar (tree or narration) is shown from this many columns
TUTORIAL_SIDE_MIN = 80  # ... a tutorial's narration from this many
DRILL_MIN_W = 40  # the narrowest drill-down beside the matrix
DRILL_BESIDE_W = 56  # a drill-down wider than this goes beside the matrix only with this much room
MATRIX_MIN_H = 4  # title, ruler, one row, legend: the matrix never gets less
OPERANDS_MIN_H = 4  # title, ruler, one row and its margin: less than this and the operands are hidden
PREDICTIONS_MIN_H = 4  # title, header, the top token, the actual token's line
DRILL_SCROLL_MIN = 6  # rule, head, title, two lines of the body, result: the least a scrolling drill-down keeps
TALL = 33  # from this many rows the header may take 7 lines and a blank one (-tall), else 4
# The sizes app.tcss shares with the measures here have their one home below: the CSS reads them as variables
# (css_variables, fed to Textual by the app), so a change here moves the drawing and the measures together.
SIDEBAR_WIDTHS = (30, 36, 44)  # the sidebar: the tree, and a tutorial's narration from 120 and 160 columns
TREE_WIDE, TREE_W = 180, 54  # from 180 columns the step tree is 54 wide: a backward pass's names whole
CENTRE_PAD = 1  # the centre column's padding left and right
HEADER_LINES = (4, 7)  # the header's lines at most, short and tall (the tall one and a blank line)
DRILL_PAD = 1  # the drill-down's padding left and right (its rule, left beside the matrix or above it, is 1 more)

CLASSES = ("-no-sidebar", "-sidebar-mid", "-sidebar-wide", "-no-operands", "-operands-fill", "-operands-share",
           "-no-predictions", "-predictions-fill", "-beside", "-drill-fill", "-drill-whole", "-matrix-whole",
           "-drill-least", "-matrix-least", "-both-cut", "-info-whole", "-sidebar-tree")


@dataclass(frozen=True)
class Measures:
    """What the panes of the current step need at a centre column's width, in terminal cells."""

    info_h: int  # the step header (name, formula, signature, note), wrapped to the centre's width
    matrix_w: int  # the result matrix, whole (capped at the width offered when it cannot be whole)
    matrix_h: int  # titles, rulers, every row (up to 500), legend
    matrix_min_h: int  # titles, rulers, MATRIX_MIN_ROWS rows (or all), legend
    drill_w: int  # the drill-down's natural width, its frame included
    drill_h: int  # below the matrix: every line of the drill-down and its rule
    drill_min_h: int  # below the matrix: its lines with the table of terms cut to two rows, and its rule
    beside_h: int  # beside the matrix (as wide as it is there): every line
    beside_min_h: int  # beside the matrix: the table of terms cut to two rows
    operands_h: int  # 0 when the step has no inputs
    predictions_h: int = 0  # the next-token predictions (steps about the vocabulary), 0 on other steps


@dataclass(frozen=True)
class Fit:
    """The classes for the step screen, what they hide for lack of room, and the hint that says so."""

    classes: frozenset[str]
    hidden: tuple[str, ...] = ()  # "operands", "sidebar", "predictions"
    hint: str = ""
    work_h: int = 0  # rows the matrix and the drill-down share (what the CSS gives them)


def css_variables() -> dict[str, str]:
    """The sizes above as the Textual CSS variables app.tcss reads (``$sidebar-mid``, ``$centre-pad``, …)."""
    narrow, mid, wide = SIDEBAR_WIDTHS
    return {"sidebar-narrow": str(narrow), "sidebar-mid": str(mid), "sidebar-wide": str(wide),
            "centre-pad": str(CENTRE_PAD), "header-lines": str(HEADER_LINES[0]),
            "header-lines-tall": str(HEADER_LINES[1] + 1), "drill-pad": str(DRILL_PAD), "sidebar-tree": str(TREE_W)}


def sidebar_width(width: int, tutorial: bool, tree: int = 0) -> int:
    """The sidebar's width at a terminal width: the narration gets more as the terminal widens; the step tree
    from TREE_WIDE columns the least of the widths that holds its longest line, ``tree`` columns (at most TREE_W;
    :func:`explain.render.measure.tree_width`): a backward pass's names, ``│ ├ blocks.0.resid_post.grad ←
    resid_mid (1, 4, 64)``, were cut at 29 columns at 200×50 beside a centre with room to spare."""
    narrow, mid, wide = SIDEBAR_WIDTHS
    if tutorial:
        return narrow if width < 120 else mid if width < 160 else wide
    if width < TREE_WIDE:
        return narrow
    return next((w for w in (narrow, mid, wide) if w >= tree), TREE_W)


def matrix_least(matrix_h: int, matrix_min_h: int) -> int:
    """The matrix's least height: MATRIX_MIN_ROWS rows (or all) and their titles, never below MATRIX_MIN_H."""
    return max(MATRIX_MIN_H, min(matrix_min_h, matrix_h))


def centre_width(width: int, tutorial: bool, sidebar: bool = True, tree: int = 0) -> tuple[int, int]:
    """(sidebar width, centre width) at a terminal width; the sidebar is 0 when hidden or without room."""
    side_min = TUTORIAL_SIDE_MIN if tutorial else SIDE_MIN
    sidebar_w = sidebar_width(width, tutorial, tree) if sidebar and width >= side_min else 0
    # the sidebar's width includes its rule (border-box), so the centre is what is left less its padding
    return sidebar_w, max(10, width - sidebar_w - 2 * CENTRE_PAD)


def fits_beside(centre: int, matrix_w: int, drill_w: int) -> bool:
    """The "beside or below" rule: the drill-down goes beside the matrix when the centre column holds the matrix,
    a rule and the drill-down at its natural width up to DRILL_BESIDE_W (at least DRILL_MIN_W)."""
    return centre >= matrix_w + max(DRILL_MIN_W, min(drill_w, DRILL_BESIDE_W)) + 1


def no_room_for_sidebar(width: int, tutorial: bool) -> str | None:
    """Why ``T`` cannot show the sidebar at this width, or None."""
    if centre_width(width, tutorial)[0]:
        return None
    return (f"the {'narration' if tutorial else 'step tree'} needs {TUTORIAL_SIDE_MIN if tutorial else SIDE_MIN} "
            f"columns; this terminal has {width}. / searches the steps and g goes to one by name.")


def step_classes(width: int, height: int, m: Measures, *, sidebar: bool = True, operands: bool | None = None,
                 tutorial: bool = False, tree: int = 0) -> Fit:
    """The classes of a ``width`` × ``height`` step screen (footer included) showing a step with measures ``m``.
    ``sidebar`` is the user's choice (T); ``operands`` the user's choice (i), None for automatic (shown when
    there is room); ``tutorial``: a tutorial is followed (its narration is the sidebar); ``tree``: the columns the step
    tree's longest line needs (from TREE_WIDE columns it gets them, up to TREE_W: :func:`sidebar_width`)."""
    classes: set[str] = set()
    hidden: list[str] = []
    sidebar_w, centre = centre_width(width, tutorial, sidebar, tree)
    if not sidebar_w:
        classes.add("-no-sidebar")
        hidden += ["sidebar"] if sidebar else []
    elif sidebar_w != SIDEBAR_WIDTHS[0]:
        classes.add({SIDEBAR_WIDTHS[1]: "-sidebar-mid", TREE_W: "-sidebar-tree"}.get(sidebar_w, "-sidebar-wide"))
    tall = height >= TALL
    header = min(m.info_h, HEADER_LINES[tall])
    if m.info_h > header and _whole_below(height - 1 - m.info_h - tall, centre, m, operands):
        header = m.info_h  # every pane whole under the whole header: no note cut with blank rows below
        classes.add("-info-whole")
    room = max(1, height - 1 - header - tall)  # less the footer and the header

    # the predictions take what is left once the matrix has what it needs and the drill-down its least
    matrix_min = matrix_least(m.matrix_h, m.matrix_min_h)
    spare = room - max(m.matrix_h, matrix_min) - m.drill_min_h
    squeezed = bool(m.predictions_h) and PREDICTIONS_MIN_H <= spare < m.predictions_h
    if m.predictions_h and spare >= m.predictions_h:
        room -= m.predictions_h
    elif squeezed:  # what the matrix (whole) and the drill-down (its least) leave
        classes |= {"-predictions-fill", "-drill-least"}
        room -= spare
    else:
        classes.add("-no-predictions")
        hidden += ["predictions"] if m.predictions_h else []

    beside = fits_beside(centre, m.matrix_w, m.drill_w)
    if beside:  # the matrix and the drill-down side by side: the row is as tall as the taller
        need, least = max(m.matrix_h, m.beside_h), max(matrix_min, m.beside_min_h)
    else:  # one above the other: the operands only where both are whole
        need = least = m.matrix_h + m.drill_h
    if not m.operands_h or operands is False:
        classes.add("-no-operands")
    elif room - need >= m.operands_h:  # whole, and the matrix and the drill-down whole below them
        room -= m.operands_h
    elif room - need >= OPERANDS_MIN_H:  # what the matrix and the drill-down leave (they are as tall as they need)
        classes.add("-operands-fill")
        room = need
    elif operands and room - least >= OPERANDS_MIN_H:  # asked for (i): above the least of the rest
        if room - least >= m.operands_h:
            room -= m.operands_h
        else:  # the operands and the rest share the room
            classes.add("-operands-share")
            room -= room // 2
    else:
        classes.add("-no-operands")
        hidden.append("operands")

    if beside:
        classes.add("-beside")
        if m.drill_w > centre - m.matrix_w - 1:  # the drill-down takes what the matrix leaves
            classes.add("-drill-fill")
    elif squeezed:  # the matrix whole, the drill-down its least (-drill-least), as the predictions left them
        pass
    elif m.matrix_h + m.drill_min_h <= room:  # the matrix whole, the drill-down under it the rest (its table
        classes.add("-matrix-whole")  # whole where it fits, else cut to fit)
    elif m.drill_h + matrix_min <= room:  # the drill-down whole, the matrix the rest (never below its least)
        classes.add("-drill-whole")
    elif m.drill_min_h + matrix_min <= room:  # neither whole: the drill-down its least, the matrix the rest
        classes.add("-drill-least")
    elif room - matrix_min >= DRILL_SCROLL_MIN:  # the matrix its least, the drill-down the rest (its body scrolls)
        classes.add("-matrix-least")
    else:  # not even that: they share the room (the table cut, the body scrolled, its result kept)
        classes.add("-both-cut")
    return Fit(frozenset(classes), tuple(hidden), hint(hidden, operands), room)


def _whole_below(room: int, centre: int, m: Measures, operands: bool | None) -> bool:
    """Whether the panes under the header fit whole in ``room`` rows: the matrix and the drill-down (side by
    side or one above the other), the predictions, and the operands unless hidden by the user (i)."""
    beside = fits_beside(centre, m.matrix_w, m.drill_w)
    need = max(m.matrix_h, m.beside_h) if beside else m.matrix_h + m.drill_h
    return room >= need + m.predictions_h + (m.operands_h if operands is not False else 0)


def hint(hidden: list[str], operands: bool | None) -> str:
    """What the matrix's title says about the panes hidden for lack of room."""
    said = {"operands": "operands hidden: no room (i)" if operands is None else "operands: no room",
            "sidebar": "tree hidden (T)", "predictions": "predictions: no room"}
    return " · ".join(said[name] for name in ("operands", "sidebar", "predictions") if name in hidden)
