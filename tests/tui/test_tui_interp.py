"""The interpretability screens: y (logit lens), A (attribution), P (a patching sweep), W (attention to generated
tokens) open over the step view at 80×24, 120×40 and 200×50; Enter on a cell shows its recorded step there; a
model or run they do not apply to says why instead of opening."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import _until, drive, text_of
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

import explain
from explain.interp.patching import prepare, sweep_runs
from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS
from explain.tui.screens.interp_grid import GridScreen
from explain.tui.state import View

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)


def footer_keys(screen) -> list[str]:
    """The keys a screen's Footer shows."""
    return [k.key_display for k in screen.query_one(Footer).query(FooterKey)]


def footer_whole(screen) -> bool:
    """The Footer shows its keys whole: it does not need to scroll."""
    footer = screen.query_one(Footer)
    return footer.virtual_size.width <= footer.size.width

SIZES = [(80, 24), (120, 40), (200, 50)]


def _on(pilot, name: str):
    """Wait for the screen ``name``, with its table filled if it has one."""
    def ready() -> bool:
        screen = pilot.app.screen
        if type(screen).__name__ != name:
            return False
        if not isinstance(screen, GridScreen):
            return True
        tables = screen.query(DataTable)  # empty until the screen has composed
        return bool(tables) and tables.first().row_count > 0

    return _until(pilot, ready, tries=3000)  # a hang guard, not a speed target: a loaded machine is slow


@pytest.mark.parametrize("size", SIZES)
def test_lens_screen_and_its_cell(size):
    app = ExplainApp(explain.run("gpt", random_weights=True))

    async def script(pilot):
        await pilot.press("y")
        await _on(pilot, "LensScreen")
        screen = app.screen
        table = screen.query_one(DataTable)
        assert table.row_count == 5 and len(table.columns) == 5  # 2 layers: 0, 0+attn, 1, 1+attn, 2; 4 tokens
        assert table.region.width > 0 and table.region.height >= 3
        await _until(pilot, lambda: len(footer_keys(screen)) >= 2)
        assert {"⏎", "esc"} <= set(footer_keys(screen)) and footer_whole(screen)  # the table's own Enter hid ⏎
        await pilot.press("right", "down")
        await pilot.pause()
        line = text_of(screen.query_one("#grid-cell"))
        assert "lens.blocks.0.resid_mid.logits" in line and "rank" in line
        await pilot.press("enter")
        await _on(pilot, "StepScreen")
        view = app.screen.view
        assert view.step.name == "lens.blocks.0.resid_mid.probs" and view.index_of_cell[:2] == (0, 1)
        word = view.index_of_cell[2]
        assert word == int(view.step.output[0, 1].argmax())  # the top word of that cell

    drive(app, script, size=size)


@pytest.mark.parametrize("size", [(80, 24)])
def test_attribution_screen_ranks_the_parts(size):
    app = ExplainApp(explain.run("gpt", checkpoint=str(DATA / "gpt2_tiny"), text="The cat is"))

    async def script(pilot):
        await pilot.press("A")
        await _on(pilot, "AttributionScreen")
        screen = app.screen
        assert screen.query_one(DataTable).row_count == 11
        values = [abs(screen.result.parts[i][1]) for i in screen.order]
        assert values == sorted(values, reverse=True)
        assert "TransformerLens" in text_of(screen.query_one("#grid-title"))
        await pilot.press("enter")
        await _on(pilot, "StepScreen")
        assert app.screen.view.step.name == "attrib.contributions"
        assert app.screen.view.index_of_cell == (screen.order[0],)

    drive(app, script, size=size)


def test_sweep_screen_opens_a_cells_patched_run():
    runs = prepare("gpt", "The cat is", "The step is", " happy", " the", checkpoint=str(DATA / "gpt2_tiny"))
    sweep = sweep_runs(runs, "resid")
    runs.corrupt.sweep = sweep
    app = ExplainApp(runs.corrupt)

    async def script(pilot):
        await pilot.press("P")
        await _on(pilot, "SweepScreen")
        assert app.screen.query_one(DataTable).row_count == 2
        await pilot.press("right", "down")  # blocks.0.resid_post, position 1
        await pilot.press("enter")
        await _on(pilot, "StepScreen")
        view = app.screen.view
        assert view.step.name == "patch.blocks.0.resid_post" and "patch.clean.blocks.0.resid_post" in view.trace
        assert view.trace["logits"].output[0, -1, runs.word] - view.trace["logits"].output[0, -1, runs.vs] == \
            pytest.approx(sweep.diffs[1, 1], abs=1e-10)

    drive(app, script)


def test_an_eight_token_sweep_is_whole_from_80_columns(size=(80, 24)):
    """Rows by layer (what they patch said in the title), fixed two decimals: tutorial 20's sweep on the trained
    GPT, 2 rows × 8 positions, needs no sideways scrolling at 80×24 (so none wider); the clean row 0 at the
    changed position recovers 1."""
    clean, corrupt = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"
    runs = prepare("gpt", clean, corrupt, "tired", "happy", trained=True)
    runs.corrupt.sweep = sweep_runs(runs, "resid")
    app = ExplainApp(runs.corrupt)

    async def script(pilot):
        await pilot.press("P")
        await _on(pilot, "SweepScreen")
        table = app.screen.query_one(DataTable)
        await _until(pilot, lambda: table.virtual_size.width > 0)
        assert table.virtual_size.width <= table.size.width, (table.virtual_size, table.size)
        assert [str(table.get_row_at(r)[0]) for r in range(2)] == ["0", "1"]
        assert str(table.get_row_at(0)[3]) == "1.00" and str(table.get_row_at(1)[3]) == "0.88"
        assert str(table.get_row_at(1)[5]) == "0.00"  # -4.6e-06, not "-0.00"
        assert "row L: the input of block L" in text_of(app.screen.query_one("#grid-title"))

    drive(app, script, size=size)


def test_generated_screen_grows_with_the_text():
    short = explain.generate("gpt", random_weights=True, max_new_tokens=3, text="The cat is", seed=1, ignore_eos=True)
    longer = explain.generate("gpt", random_weights=True, max_new_tokens=5, text="The cat is", seed=1, ignore_eos=True)
    app = ExplainApp(short)

    async def script(pilot):
        await pilot.press("W")
        await _on(pilot, "GeneratedScreen")
        screen = app.screen
        assert screen.query_one(DataTable).row_count == 3
        await _until(pilot, lambda: len(footer_keys(screen)) >= 6)
        assert {"⏎", "esc", "n", "p", "s", "S"} <= set(footer_keys(screen)) and footer_whole(screen)  # at 80
        step_screen = app.screen_stack[-2]
        step_screen.view = View(longer)  # what a G in the step view does: a longer run
        await _until(pilot, lambda: screen.query_one(DataTable).row_count == 5, tries=3000)
        assert screen.query_one(DataTable).row_count == 5 and len(screen.query_one(DataTable).columns) == 1 + 3 + 4
        await pilot.press("n")  # the next layer (wraps to layer 0)
        await pilot.pause()
        assert screen.att.layer == 0

    drive(app, script, size=(80, 24))


@pytest.mark.parametrize("key, model, needle", [("y", "encoder", "post-LN"), ("A", "attention", "no residual"),
                                                ("P", "gpt", "explain patch"), ("W", "gpt", "generated nothing")])
def test_keys_that_do_not_apply_say_why(key, model, needle):
    app = ExplainApp(explain.run(model))

    async def script(pilot):
        await pilot.press(key)
        await pilot.pause(0.2)
        assert type(app.screen).__name__ == "StepScreen"
        assert any(needle in str(n.message) for n in app._notifications)

    drive(app, script)


def test_the_keys_are_in_the_key_table():
    actions = {k.action for k in KEYS}
    assert {"lens", "attribution", "patching", "generated"} <= actions


def test_the_rank_trail_stays_short_on_a_deep_model():
    """A run of equal ranks is said once; only the runs near the cursor's point are spelled out between the first
    and the last, so a 30-layer model's 61 points stay a few lines (SmolLM2's trail filled 6 lines and was cut)."""
    from explain.tui.screens.lens import trail

    ranks = [(f"{i}{s}", 1000 - 30 * i - len(s)) for i in range(30) for s in ("", "+attn")] + [("30", 1)]
    line = trail(ranks, 40)
    assert line.plain.startswith("0: 1000 … ") and line.plain.endswith(" … 30: 1")
    assert line.plain.count("→") == 6 and "20: 400" in line.plain  # point 40 is '20', three runs either side
    assert [line.plain[s.start:s.end] for s in line.spans if s.style == "bold"] == ["20: 400"]
    same = [("0", 9), ("0+attn", 5), ("1", 5), ("1+attn", 5), ("2", 1)]
    assert trail(same, 2).plain == "0: 9 → 0+attn–1+attn: 5 → 2: 1"


def test_the_lens_line_is_whole_at_80x24_on_twelve_layers():
    app = ExplainApp(explain.run("gpt", n_layers=12))

    async def script(pilot):
        await pilot.press("y")
        await _on(pilot, "LensScreen")
        await pilot.press("down", "down")
        await pilot.pause()
        cell = app.screen.query_one("#grid-cell")
        await _until(pilot, lambda: "layer by layer" in text_of(cell))
        assert "layer by layer: 0" in text_of(cell) and "12: " in text_of(cell)  # the first point and the last
        assert cell.virtual_size.height <= cell.size.height, (cell.virtual_size, cell.size)  # nothing cut

    drive(app, script, size=(80, 24))


def test_enter_before_the_table_is_composed_does_nothing():
    """Enter has priority on the grid screens, so a key typed as the screen opens can arrive before its table
    exists (the monkey test found it: NoMatches ended the app). It opens nothing and leaves the screen open."""
    screen = GridScreen()  # what every grid screen inherits; not composed yet
    assert not screen.query(DataTable)
    screen.action_open()  # no NoMatches, no dismiss
