"""The interpretability screens on the runs the interp commands open (``explain attribute``, ``explain lens``,
``explain patch``): a screen key shows what the command recorded for the words asked for, not something else, and opens with that screen (``then``) as the commands do."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import _until, drive, region_lines, text_of
from textual.widgets import DataTable

import explain
from explain.interp.attribution import attribute
from explain.interp.lens import lens
from explain.interp.patching import patch, prepare, sweep_runs
from explain.ops.base import num
from explain.tui.app import ExplainApp

TEXT = "The cat is happy"


def test_a_on_an_attribute_run_shows_the_words_asked_for(size=(120, 40)):
    """`explain attribute gpt --text "The cat is happy" --word happy --vs cat` opens on attrib.total; `A` re-recorded
    the top word against the runner-up ('.' − 'small', 10.23) over it. Now it shows happy − cat, whose sum is the
    logit difference of a plain run without any attribution (independent reference; tolerance 1e-10), and the
    recorded steps are the ones the command made; read after 'is', where happy is the next token (issue 42)."""
    result = attribute("gpt", "happy", "cat", trained=True, text=TEXT)
    logits = explain.run("gpt", trained=True, text=TEXT)["logits"].output
    vocab = result.trace.labels["vocab"]
    want = logits[0, 2, vocab.index("happy")] - logits[0, 2, vocab.index("cat")]
    app = ExplainApp(result.trace, start="attrib.total", then="attribution")  # as the command opens it

    async def script(pilot):
        for key in ("", "A"):  # the screen it opens with, then A on the step view
            if key:
                await pilot.press(key)
            # the screen and its title: on a loaded machine the title was queried before the screen had composed it
            await _until(pilot, lambda: type(app.screen).__name__ == "AttributionScreen"
                         and bool(app.screen.query("#grid-title")), tries=3000)
            shown = app.screen.result
            assert (shown.word_text, shown.vs_text) == ("happy", "cat")
            np.testing.assert_allclose(shown.total, want, rtol=0, atol=1e-10)
            assert "logit['happy'] − logit['cat'] after position 2" in text_of(app.screen.query_one("#grid-title"))
            await pilot.press("escape")
            await _until(pilot, lambda: type(app.screen).__name__ == "StepScreen")
            np.testing.assert_allclose(app.screen.view.trace["attrib.total"].output, want, rtol=0, atol=1e-10)

    drive(app, script, size=size)


@pytest.mark.parametrize("size", [(80, 24)])
def test_a_twice_on_a_plain_run_is_one_attribution(size):
    """On a run without one, `A` records the top word against the runner-up once; pressed again it shows the same."""
    app = ExplainApp(explain.run("gpt", trained=True, text="the cat sat on the"))

    async def script(pilot):
        for _ in range(2):
            await pilot.press("A")
            await _until(pilot, lambda: type(app.screen).__name__ == "AttributionScreen", tries=3000)
            assert (app.screen.result.word_text, app.screen.result.vs_text) == ("mat", "lazy")
            await pilot.press("escape")
            await _until(pilot, lambda: type(app.screen).__name__ == "StepScreen")
        assert sum(s.name == "attrib.total" for s in app.screen.view.trace) == 1

    drive(app, script, size=size)


async def open_sweep(pilot, app) -> None:
    """P on a run holding a sweep, then wait until the sweep screen's table has its rows."""
    await pilot.press("P")
    await _until(pilot, lambda: type(app.screen).__name__ == "SweepScreen" and app.screen.query(DataTable)
                 and app.screen.query_one(DataTable).row_count > 0, tries=3000)


def test_the_sweep_names_both_words_where_the_texts_differ(size=(80, 24)):
    """Tutorial 20's sweep at 80x24: the changed position's column read '2 happy' (the corrupted word; the patch
    puts tired there). It reads '2 tired/happy', the title says what a/b means, and the table still needs no
    sideways scrolling."""
    runs = prepare("gpt", "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book",
                   "tired", "happy", trained=True)
    runs.corrupt.sweep = sweep_runs(runs, "resid")
    app = ExplainApp(runs.corrupt)

    async def script(pilot):
        await open_sweep(pilot, app)
        table = app.screen.query_one(DataTable)
        await _until(pilot, lambda: table.virtual_size.width > 0)
        labels = [str(c.label) for c in table.columns.values()][1:]
        assert labels == ["0 fish", "1 book", "2 tired/happy", "3 cat", "4 man", "5 hungry", "6 fish", "7 book"]
        assert "labelled clean/corrupted" in text_of(app.screen.query_one("#grid-title"))
        assert table.virtual_size.width <= table.size.width, (table.virtual_size, table.size)

    drive(app, script, size=size)


def test_the_sweep_warns_in_a_title_that_is_whole_at_80x24(size=(80, 24)):
    """Runs only 0.016 apart (the README's old example): the sweep's title warns that the fractions are ratios of
    small numbers; at 80x24 that title is 10 lines, and the grid screens' 6-line cap cut the warning and the keys."""
    runs = prepare("gpt", TEXT, "The dog is happy", "happy", "dog", trained=True)
    runs.corrupt.sweep = sweep_runs(runs, "resid")
    app = ExplainApp(runs.corrupt)

    async def script(pilot):
        await open_sweep(pilot, app)
        title = app.screen.query_one("#grid-title")
        await _until(pilot, lambda: title.size.height > 0)
        shown = " ".join(line.strip() for line in region_lines(app, title.content_region))
        assert "only 0.016 apart" in shown and "the model prefers." in shown and "Enter records" in shown, shown
        assert app.screen.query_one(DataTable).size.height >= 3  # the header and both rows

    drive(app, script, size=size)


def test_the_lens_follows_the_word_asked_for(size=(80, 24)):
    """`explain lens gpt --text "The cat is happy" --word happy` opened the TUI on the last read at cell [0, 0, 0]
    and its lens screen followed the final prediction ('.'): 'happy' was nowhere. Now it opens on the lens screen
    at position 3, following happy, over the step view at p[0, 3, happy]; the last row's rank and p are the plain
    run's (no lens recorded: the independent reference). Since issue 42 the position is 2 ('is'), where happy is the
    next token of the text (position 3's next word is the one after happy)."""
    result = lens("gpt", "happy", trained=True, text=TEXT)
    happy = result.word
    assert result.position == 2
    probs = explain.run("gpt", trained=True, text=TEXT)["probs"].output[0, 2]
    rank = int((probs > probs[happy]).sum()) + 1
    app = ExplainApp(result.trace, start="lens.blocks.1.resid_post.probs", cell=(0, 2, happy), then="lens")

    async def script(pilot):
        await _until(pilot, lambda: type(app.screen).__name__ == "LensScreen" and app.screen.query(DataTable)
                     and app.screen.query_one(DataTable).row_count > 0, tries=3000)
        await pilot.press("down", "down", "down", "down")  # the last read: layer 2
        await pilot.pause()
        line = " ".join(text_of(app.screen.query_one("#grid-cell"), width=80).split())
        assert f"the word asked for after position 2, 'happy', has rank {rank} and p = {num(probs[happy], 4)}" \
            in line, line
        await pilot.press("escape")
        await _until(pilot, lambda: type(app.screen).__name__ == "StepScreen")
        assert app.screen.view.index_of_cell == (0, 2, happy)

    drive(app, script, size=size)


def test_one_patch_shows_its_recovered_fraction(size=(80, 24)):
    """`explain patch … --step blocks.1.attn.z --head 1` opened the TUI on the patched step with the answer (the
    recovered fraction) nowhere, and P said 'open one with explain patch'. Now the run opens with it in a
    notification, and P shows it again; the numbers are the plain runs' logits (independent of the patch code)."""
    clean, corrupt = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"
    one = patch("gpt", clean, corrupt, "tired", "happy", "blocks.1.attn.z", head=1, trained=True)
    vocab = one.trace.labels["vocab"]
    w, v = vocab.index("tired"), vocab.index("happy")
    diff = [t["logits"].output[0, -1, w] - t["logits"].output[0, -1, v]
            for t in (explain.run("gpt", trained=True, text=clean), explain.run("gpt", trained=True, text=corrupt),
                      one.trace)]
    want = (f"clean {num(diff[0], 4)}, corrupted {num(diff[1], 4)}, patched {num(diff[2], 4)}: recovered fraction "
            f"{num((diff[2] - diff[1]) / (diff[0] - diff[1]), 4)}")
    one.trace.patched = one  # as explain patch --step does before opening the TUI
    app = ExplainApp(one.trace, start="patch.blocks.1.attn.z", then="patching")

    async def script(pilot):
        await _until(pilot, lambda: any(want in str(n.message) for n in app._notifications), tries=500)
        assert any(want in str(n.message) for n in app._notifications), [n.message for n in app._notifications]
        assert app.screen.view.step.name == "patch.blocks.1.attn.z"
        app.clear_notifications()
        await pilot.press("P")
        await _until(pilot, lambda: bool(app._notifications))
        assert [want in str(n.message) for n in app._notifications] == [True]

    drive(app, script, size=size)



def test_the_lens_starts_at_the_position_asked_for(size=(80, 24)):
    """`explain lens gpt --text "The cat is happy" --position 1` (no --word): the lens screen started at position 0;
    it starts at 1 ('cat'), following the final prediction there."""
    result = lens("gpt", None, position=1, trained=True, text=TEXT)
    app = ExplainApp(result.trace, start="lens.blocks.1.resid_post.probs", then="lens")

    async def script(pilot):
        await _until(pilot, lambda: type(app.screen).__name__ == "LensScreen" and app.screen.query(DataTable)
                     and app.screen.query_one(DataTable).row_count > 0, tries=3000)
        await pilot.pause()
        assert app.screen.cursor() == (0, 1)
        assert "the final prediction after position 1" in text_of(app.screen.query_one("#grid-cell"))

    drive(app, script, size=size)


def test_a_patched_run_opens_on_a_patched_cell(size=(80, 24)):
    """Enter on the heads sweep's (layer 1, head 1) opened patch.blocks.1.attn.z on head 0's slice, every cell
    'kept': the patch was not on screen. It opens on head 1 at the first cell the patch changed (position 2, the
    word that differs; position 0 and 1 read the same words in both runs), whose value is the clean run's own
    (a plain run, no patching code: equal exactly)."""
    clean_text = "fish book tired cat man hungry fish book"
    runs = prepare("gpt", clean_text, "fish book happy cat man hungry fish book", "tired", "happy", trained=True)
    runs.corrupt.sweep = sweep_runs(runs, "heads")
    clean_z = explain.run("gpt", trained=True, text=clean_text)["blocks.1.attn.z"].output
    app = ExplainApp(runs.corrupt, then="patching")

    async def script(pilot):
        await _until(pilot, lambda: type(app.screen).__name__ == "SweepScreen" and app.screen.query(DataTable)
                     and app.screen.query_one(DataTable).row_count > 0, tries=3000)
        await pilot.press("right", "down", "enter")  # layer 1, head 1
        await _until(pilot, lambda: type(app.screen).__name__ == "StepScreen", tries=3000)
        await pilot.pause()
        view = app.screen.view
        assert view.step.name == "patch.blocks.1.attn.z" and view.index_of_cell == (0, 1, 2, 0)
        corrupt_z = runs.corrupt["blocks.1.attn.z"].output
        assert view.step.output[0, 1, 2, 0] == clean_z[0, 1, 2, 0] != corrupt_z[0, 1, 2, 0]
        drill = " ".join(region_lines(app, app.screen.query_one("#cell").content_region))
        assert "~Z[0, 1, 2, 0]: patched" in drill, drill

    drive(app, script, size=size)
