"""Issue 42 item 5 on screen: where a drill-down's table or an operand's rows count positions, each index stands
beside its token. The trained GPT of tutorial 16 (12 tokens, 'fox letter journey happy were mat' twice), at 80×24,
120×40 and 200×50 with Pilot."""

from __future__ import annotations

import pytest
from conftest import _until, drive, text_of

from explain.tui.app import ExplainApp
from explain.tui.widgets.operands import Operands
from explain.tutorial import load_tutorial, run_tutorial

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture(scope="module")
def trained():
    return run_tutorial(load_tutorial("16-inside-a-trained-model"))


@pytest.mark.parametrize("size", SIZES)
def test_the_weighted_sum_names_each_key_and_its_operands_rows(trained, size):
    # blocks.1.attn.z = A·V: the drill-down's j read 0 1 2 … beside a pattern whose rows and columns had words,
    # and the operands A and V were numbered 0–11 with no word
    app = ExplainApp(trained, start="blocks.1.attn.z")

    async def script(pilot):
        await _until(pilot, lambda: app.screen.view.step.name == "blocks.1.attn.z")
        await pilot.press("j", "j", "j", "j")  # query 4, 'were': a causal row with five keys
        await pilot.pause()
        cell = app.screen.query_one("#cell").plain()
        rows = [line.split() for line in cell.splitlines()[3:] if line.split()[:1] and line.split()[0].isdigit()]
        assert rows and all(not r[1][0].isdigit() and r[1][0] not in "-(" for r in rows), cell  # a word, no number
        assert "0 fox" in cell, cell
        operands = app.screen.query_one(Operands)
        if not operands.display or not operands.region.height:
            await pilot.press("i")  # hidden for room: show them
            await pilot.pause()
        assert operands.region.height or size != (200, 50)  # room for them at 200×50
        if operands.display and operands.region.height:
            text = text_of(operands)
            assert "4 were" in text and "0 fox" in text, text

    drive(app, script, size=size)


@pytest.mark.parametrize("size", SIZES)
def test_the_loss_names_the_token_read_and_the_one_scored(trained, size):
    app = ExplainApp(trained, start="loss")

    async def script(pilot):
        await _until(pilot, lambda: app.screen.view.step.name == "loss")
        await pilot.pause()
        cell = app.screen.query_one("#cell").plain()
        assert "0 fox→letter" in cell, cell

    drive(app, script, size=size)


@pytest.fixture(scope="module")
def attribution():
    tut = load_tutorial("19-which-head-writes-the-word")
    return tut, run_tutorial(tut)


@pytest.mark.parametrize("size", SIZES)
def test_item6_the_contributions_step_names_its_parts(attribution, size):
    # tutorial 19 stop 3: the narration says 'Row 10 is blocks.1 head 2' beside a nameless row numbered 0…14;
    # each column now says which part it is (L1H2: TransformerLens's name), the drill-down's title the long one
    from explain.tui.widgets.tensor_view import TensorView

    tut, trace = attribution
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.press("n", "n")
        await _until(pilot, lambda: app.screen.view.step.name == "attrib.contributions")
        await pilot.pause()
        grid = text_of(app.screen.query_one(TensorView))
        assert "L1H2" in grid, grid
        assert "c[10]: blocks.1 head 2" in app.screen.query_one("#cell").plain()

    drive(app, script, size=size)


def test_item6_the_parts_axis_names_every_part_and_the_bias_row(attribution):
    _, trace = attribution
    parts = trace.labels["part"]
    assert len(parts) == trace["attrib.contributions"].shape[0]
    assert parts[:2] == ["embed", "pos"] and parts[10] == "L1H2" and parts[-1] in ("β", "β+bias", "bias", "none")
