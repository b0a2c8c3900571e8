"""Issue 38 (b): each size the layout's measures share with app.tcss has one home, explain/render/fit.py, and the
CSS reads it as a Textual variable (fit.css_variables): the sidebar's widths, the centre's padding, the header's
lines, the drill-down's padding. Changing the one home changes both the measures (fit.centre_width, the
drill-down's frame) and what Textual lays out, at 80x24, 120x40 and 200x50, in a tutorial and out of one."""

from __future__ import annotations

import pytest
from conftest import drive, fake_tutorial

import explain
from explain.render import fit, measure
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (120, 40), (200, 50)]


def _check(app, size: tuple[int, int], tutorial: bool) -> None:
    """What Textual laid out is what the measures say, for the constants in force."""
    s = app.screen
    width, height = size
    tree = 0 if tutorial or width < fit.TREE_WIDE else measure.tree_width(app.screen.view.trace)
    sidebar_w, centre_w = fit.centre_width(width, tutorial, tree=tree)
    sidebar = s.query_one("#sidebar")
    assert (sidebar.region.width if sidebar.display else 0) == sidebar_w
    assert s.query_one("#centre").content_region.width == centre_w
    tall = height >= fit.TALL
    whole = s.query_one("#body").has_class("-info-whole")  # every pane whole below: the header uncapped
    assert s.query_one("#info").styles.max_height.value == (100 if whole else fit.HEADER_LINES[tall] + tall)
    cell = s.query_one("#cell")
    assert (cell.styles.padding.left, cell.styles.padding.right) == (fit.DRILL_PAD, fit.DRILL_PAD)
    assert measure.drill_frame() == 2 * fit.DRILL_PAD + 1


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("tutorial", [False, True], ids=["run", "tutorial"])
@pytest.mark.parametrize("moved", [False, True], ids=["as-shipped", "moved"])
def test_the_css_reads_the_one_home(gpt_trace, monkeypatch, size, tutorial, moved) -> None:
    if moved:  # every shared size changed in its home only: the CSS and the measures follow
        monkeypatch.setattr(fit, "SIDEBAR_WIDTHS", (26, 40, 50))
        monkeypatch.setattr(fit, "TREE_W", 48)
        monkeypatch.setattr(fit, "CENTRE_PAD", 2)
        monkeypatch.setattr(fit, "HEADER_LINES", (3, 6))
        monkeypatch.setattr(fit, "DRILL_PAD", 2)
        gpt_trace = explain.run("gpt", random_weights=True)  # measures are cached per trace: a fresh one
    app = ExplainApp(gpt_trace, tutorial=fake_tutorial() if tutorial else None)

    async def script(pilot) -> None:
        await pilot.pause()
        _check(app, size, tutorial)
        if moved and size[0] >= fit.SIDE_MIN:  # the sidebar shown: its width is the moved one
            expect = fit.centre_width(size[0], False, tree=measure.tree_width(app.screen.view.trace))[0] \
                if not tutorial else \
                fit.SIDEBAR_WIDTHS[0] if size[0] < 120 else \
                fit.SIDEBAR_WIDTHS[1] if size[0] < 160 else fit.SIDEBAR_WIDTHS[2]
            assert app.screen.query_one("#sidebar").region.width == expect

    drive(app, script, size)


def test_the_variables_name_the_constants() -> None:
    assert fit.css_variables() == {"sidebar-narrow": "30", "sidebar-mid": "36", "sidebar-wide": "44",
                                   "centre-pad": "1", "header-lines": "4", "header-lines-tall": "8",
                                   "drill-pad": "1", "sidebar-tree": "54"}
