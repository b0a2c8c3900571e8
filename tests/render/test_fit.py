"""The step screen's layout classes (:func:`explain.render.fit.step_classes`) on their own, at many sizes: the pure
function from measurements to CSS classes, no app. What Textual then does with the classes is checked on the
real screen in test_tui_layout.py."""

from __future__ import annotations

import pytest

from explain.render import fit
from explain.render.fit import Measures, step_classes

WORK = {"-beside", "-matrix-whole", "-drill-whole", "-drill-least", "-matrix-least", "-both-cut"}
SIZES = [(w, h) for w in range(40, 241, 20) for h in range(12, 73, 6)]


def measures(**kw) -> Measures:
    """A 4×4 result with a 4-term drill-down (the gpt scores' shape), unless told otherwise."""
    base = dict(info_h=4, matrix_w=40, matrix_h=9, matrix_min_h=9, drill_w=60, drill_h=10, drill_min_h=8,
                beside_h=9, beside_min_h=7, operands_h=8)
    return Measures(**{**base, **kw})


PROFILES = {
    "scores 4x4": measures(),
    "pattern 12x12": measures(matrix_w=70, matrix_h=17, matrix_min_h=9, drill_h=20, drill_min_h=10, beside_h=19,
                              beside_min_h=9, operands_h=16),
    "logits (wide)": measures(matrix_w=300, matrix_h=9, matrix_min_h=9, drill_h=14, drill_min_h=8, predictions_h=9),
    "grad 768 rows": measures(matrix_w=300, matrix_h=505, matrix_min_h=9, drill_h=780, drill_min_h=10,
                              beside_h=780, beside_min_h=10, operands_h=20),
    "no inputs": measures(operands_h=0, drill_h=4, drill_min_h=4),
}


def room(width: int, height: int, m: Measures) -> int:
    """Rows below the header, as the CSS gives them: less the footer and the header (at most 4, or 7 and a
    blank line from fit.TALL rows)."""
    tall = height >= fit.TALL
    return height - 1 - min(m.info_h, 7 if tall else 4) - tall


@pytest.mark.parametrize("profile", list(PROFILES))
def test_one_layout_of_the_work_at_every_size(profile):
    m = PROFILES[profile]
    for w, h in SIZES:
        f = step_classes(w, h, m)
        assert len(f.classes & WORK) == 1 or "-predictions-fill" in f.classes, (w, h, f)
        assert f.classes <= set(fit.CLASSES), f.classes - set(fit.CLASSES)
        assert not ({"-no-operands", "-operands-fill"} <= f.classes)
        assert ("-drill-fill" in f.classes) <= ("-beside" in f.classes)
        said = {"operands": "operands hidden: no room (i)", "sidebar": "tree hidden (T)",
                "predictions": "predictions: no room"}
        assert sorted(said[p] for p in f.hidden) == sorted(x for x in f.hint.split(" · ") if x), (w, h, f)
        if "-beside" not in f.classes:
            assert f.work_h <= room(w, h, m)  # the operands and predictions never take the work's rows away


@pytest.mark.parametrize("profile", list(PROFILES))
def test_priority_drill_down_then_matrix_then_the_rest(profile):
    """Below the matrix: whenever the matrix is whole with the drill-down's least, it is (-matrix-whole); the
    drill-down gets its least before the matrix gets more than its least; the operands are shown only where
    the matrix and the drill-down are both whole beside them."""
    m = PROFILES[profile]
    least = max(fit.MATRIX_MIN_H, min(m.matrix_min_h, m.matrix_h))
    for w, h in SIZES:
        f = step_classes(w, h, m)
        if "-beside" in f.classes or "-predictions-fill" in f.classes:
            continue
        r = f.work_h
        if m.matrix_h + m.drill_min_h <= r:
            assert "-matrix-whole" in f.classes, (w, h, r, f)
        elif m.drill_h + least <= r:
            assert "-drill-whole" in f.classes
        elif m.drill_min_h + least <= r:
            assert "-drill-least" in f.classes
        if "-no-operands" not in f.classes and m.operands_h:
            assert m.matrix_h + m.drill_h <= r  # both whole below the operands


def test_beside_or_below():
    m = measures()
    assert "-beside" in step_classes(200, 50, m).classes  # 168 columns: 40 + 56 + 1 fit
    assert "-beside" not in step_classes(120, 40, m).classes  # 88 columns: not 97
    # a drill-down wider than the room beside the matrix takes all of it; one narrower keeps its width
    assert "-drill-fill" in step_classes(200, 50, measures(matrix_w=110, drill_w=80)).classes
    assert "-drill-fill" not in step_classes(200, 50, measures(drill_w=60)).classes
    assert fit.fits_beside(97, 40, 60) and not fit.fits_beside(96, 40, 60)
    assert fit.fits_beside(81, 40, 30)  # a narrow drill-down still gets DRILL_MIN_W


def test_sidebar_classes_and_why_not():
    m = measures()
    assert "-no-sidebar" in step_classes(80, 24, m).classes
    assert "tree hidden (T)" in step_classes(80, 24, m).hint
    assert step_classes(80, 24, m, sidebar=False).hint.count("tree") == 0  # the user hid it: nothing to say
    assert "-no-sidebar" not in step_classes(100, 30, m).classes
    assert "-no-sidebar" not in step_classes(80, 24, m, tutorial=True).classes  # a narration from 80 columns
    assert "-sidebar-mid" in step_classes(120, 40, m, tutorial=True).classes
    assert "-sidebar-wide" in step_classes(160, 40, m, tutorial=True).classes
    assert not {"-sidebar-mid", "-sidebar-wide", "-sidebar-tree"} & step_classes(200, 50, m).classes  # tree: 30
    assert "-sidebar-tree" in step_classes(200, 50, m, tree=56).classes  # a backward pass's names: 54 wide
    assert "-sidebar-mid" in step_classes(200, 50, m, tree=32).classes  # GPT-2 small's: the least that holds them
    assert not {"-sidebar-mid", "-sidebar-tree"} & step_classes(160, 50, m, tree=56).classes
    assert fit.no_room_for_sidebar(100, False) is None
    assert "needs 100 columns" in fit.no_room_for_sidebar(99, False)
    assert "needs 80 columns" in fit.no_room_for_sidebar(79, True)


def test_user_choice_of_operands():
    m = measures()
    assert "-no-operands" in step_classes(200, 50, m, operands=False).classes
    assert step_classes(200, 50, m, operands=False).hidden == ()
    tight = step_classes(80, 24, m)
    assert "-no-operands" in tight.classes and tight.hint.startswith("operands hidden: no room (i)")
    asked = step_classes(80, 24, m, operands=True)
    assert "-no-operands" in asked.classes and asked.hint.startswith("operands: no room")
    # beside the matrix, asked for: shown above the least of the rest where they do not fit beside its need
    tall_drill = measures(beside_h=60, beside_min_h=7)
    assert "-no-operands" in step_classes(200, 40, tall_drill).classes
    assert "-no-operands" not in step_classes(200, 40, tall_drill, operands=True).classes
    # what the matrix and the drill-down leave, when that is at least OPERANDS_MIN_H rows but not all they need
    f = step_classes(120, 32, measures(operands_h=12))  # room 26: 9 + 10 whole, 7 left
    assert "-operands-fill" in f.classes and f.work_h == 19


def test_predictions_take_what_is_left():
    m = PROFILES["logits (wide)"]
    assert "-no-predictions" not in step_classes(120, 40, m).classes  # room 32: 9 + 8 + 9
    f = step_classes(100, 30, m)  # room 25: 9 + 8 leaves 8, fewer than 9, more than PREDICTIONS_MIN_H
    assert {"-predictions-fill", "-drill-least"} <= f.classes
    f = step_classes(80, 24, m)  # room 19: 2 left
    assert "-no-predictions" in f.classes and "predictions: no room" in f.hint
    assert "predictions" not in step_classes(80, 24, measures()).hidden  # a step without predictions


def test_a_huge_matrix_keeps_its_least_and_the_drill_down_its_answer():
    m = PROFILES["grad 768 rows"]
    assert "-drill-least" in step_classes(120, 40, m).classes  # the drill-down's least, the matrix the rest
    assert "-matrix-least" in step_classes(60, 20, measures(matrix_h=17, matrix_min_h=9, drill_h=30,
                                                             drill_min_h=12)).classes
    assert "-both-cut" in step_classes(60, 14, m).classes  # 9 rows: not even both at their least


def test_the_header_is_whole_where_every_pane_below_is_whole():
    """Issue 42 item 12: a 6-line header was cut to 4 (its note ending '…') above blank rows. Whole when the
    matrix, the drill-down and the operands all fit whole under it; capped when they do not. Fails on the old
    code (no -info-whole)."""
    small = measures(info_h=6, matrix_h=5, matrix_min_h=5, drill_h=4, drill_min_h=4, operands_h=0)
    fit_ = step_classes(80, 24, small)
    assert "-info-whole" in fit_.classes and fit_.work_h == 24 - 1 - 6
    big = measures(info_h=6, matrix_h=9, drill_h=30, drill_min_h=8, operands_h=0)
    assert "-info-whole" not in step_classes(80, 24, big).classes  # the drill-down needs the rows
    assert "-info-whole" not in step_classes(80, 24, measures(info_h=3)).classes  # nothing was cut
