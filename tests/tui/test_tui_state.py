"""Pilot tests of the TUI's state on the shipped tutorials: batch-item labels (tutorial 10 with ``b``), a re-run
from a tutorial that changes nothing (tutorial 1: same numbers, ``normalize = "sum"`` kept, ``t`` back to the
tutorial's run), go-to and search messages, leaving the tutorial's path, the tree's root, moving from the last
stop of tutorial 1 to tutorial 2, and one frame per step change."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import drive, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView
from explain.tutorial import load_tutorial, run_tutorial


def tutorial_app(name: str) -> tuple[ExplainApp, object, object]:
    tut = load_tutorial(name)
    trace = run_tutorial(tut)
    return ExplainApp(trace, tutorial=tut), tut, trace


def narration(app) -> str:
    return app.screen.query_one(NarrationPane).text


def test_tutorial_10_batch_item_1_is_labelled_dog_on_every_step_kind():
    app, tut, trace = tutorial_app("10")

    async def script(pilot):
        s = app.screen
        await pilot.press("w", "<")
        kinds = set()
        for _ in range(len(trace) - 1):
            step = s.view.step
            if "batch" in step.axes[:-2]:  # the batch picks the slice: turn to item 1 (kept from step to step)
                if s.view.lead[step.axes.index("batch")] == 0:
                    await pilot.press("b")
                await pilot.pause()
                assert s.view.lead[step.axes.index("batch")] == 1
                shown = text_of(s.query_one(TensorView))
                assert "The dog is happy" in shown, step.name  # the slice names its sentence
                if step.axes[-2] == "pos" and step.shape[-2] == 4:  # rows are positions: row 1 is dog's
                    assert re.search(r"^\s*1 dog\b", shown, re.M) and not re.search(r"\b1 cat\b", shown), step.name
                kinds.add(step.op)
            await pilot.press("n")
        assert {"embed", "add", "matmul", "softmax", "layer_norm", "log_softmax", "linear", "gelu", "mask"} <= kinds

    drive(app, script, size=(200, 50))


def test_tutorial_10_token_ids_name_both_sentences():
    app, tut, trace = tutorial_app("10")

    async def script(pilot):
        s = app.screen
        assert s.view.step.name == "tokens"
        shown = text_of(s.query_one(TensorView))
        assert "cat/dog" in shown  # the (batch, pos) ids: one column per position, both sentences' words

    drive(app, script, size=(200, 50))


def test_rerun_from_tutorial_1_changing_nothing_reproduces_it_and_t_returns():
    app, tut, trace = tutorial_app("1")

    async def script(pilot):
        s = app.screen
        await pilot.press("n", "e")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"  # leaving the tutorial is asked first
        await pilot.press("enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "RerunScreen"
        assert not app.screen.query("#n_heads") and not app.screen.query("#n_layers")  # simple has neither
        assert app.screen.query_one("#normalize").value == "sum"
        await pilot.press("enter")  # run, changing nothing
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert type(app.screen).__name__ == "StepScreen"
        assert s.trace is not trace and s.trace.config.normalize == "sum"
        assert s.trace.names() == trace.names()
        for a, b in zip(s.trace, trace):  # the tutorial's hand-written embeddings, exactly
            np.testing.assert_array_equal(a.output, b.output, err_msg=a.name)
        assert s.view.step.name == "attn.scores" and not s.tutorial_on
        assert "Off the tutorial's path — `t` returns to stop 2" in narration(app)
        await pilot.press("t")
        assert s.trace is trace and s.tutorial_on and s.tour.stop == 1
        assert "Off the tutorial's path" not in narration(app)

    drive(app, script)


def test_rerun_refused_when_asked_to_stay():
    app, tut, trace = tutorial_app("1")

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "StepScreen" and s.tutorial_on and s.trace is trace

    drive(app, script)


def test_search_and_goto_in_a_tutorial_say_they_leave_the_path():
    app, tut, trace = tutorial_app("1")

    async def script(pilot):
        s = app.screen
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"zzz")
        await pilot.pause()
        assert "no step matches 'zzz'" in str(app.screen.query_one("#error").render())
        await pilot.press("escape", "g")
        await pilot.pause()
        placeholder = app.screen.query_one("#query").placeholder
        assert placeholder in trace  # a real step of this run (simple has no blocks.0.attn.pattern)
        await pilot.press("a", "t", "t", "tab")
        value = app.screen.query_one("#query").value
        await pilot.press("tab")
        second = app.screen.query_one("#query").value
        assert value.startswith("att") and second.startswith("att") and value != second  # Tab cycles
        await pilot.press("tab", "tab")
        assert app.screen.query_one("#query").value == value  # three attn.* steps: round and round
        await pilot.press("enter")
        await pilot.pause()
        assert s.view.step.name == value and not s.tutorial_on
        assert any("off the tutorial's path" in n.message for n in app._notifications)
        if value != trace[0].name:
            assert "Off the tutorial's path — `t` returns to stop 1" in narration(app)

    drive(app, script)


def test_tree_opens_at_its_root_and_a_click_goes_to_the_step():
    trace = explain.run("transformer")
    app = ExplainApp(trace)

    async def script(pilot):
        s = app.screen
        tree = s.query_one(StepTree)
        await pilot.pause(0.3)
        assert tree.scroll_y == 0
        first = tree.get_node_at_line(0)
        assert str(first.label) == "encoder"  # the first group, not scrolled away
        target = next(i for i in range(1, 12) if (tree.get_node_at_line(i).data or -1) >= 2)
        await pilot.click(StepTree, offset=(6, target - int(tree.scroll_y)))
        await pilot.pause()
        assert s.view.index == tree.get_node_at_line(target).data

    drive(app, script)


def test_last_stop_of_tutorial_1_opens_tutorial_2():
    app, tut, trace = tutorial_app("1")

    async def script(pilot):
        s = app.screen
        await pilot.press(">")
        assert s.tour.last and "opens the next tutorial" in narration(app)
        await pilot.press("n")
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert s.tutorial.name.startswith("02") and s.tour.stop == 0 and s.tutorial_on
        assert "stop 1 of" in narration(app) and s.trace is not trace

    drive(app, script)


def test_palette_lists_every_tutorial():
    app, tut, trace = tutorial_app("1")

    async def script(pilot):
        titles = [c.title for c in app.get_system_commands(app.screen)]
        from explain.tutorial import list_tutorials

        assert sum(t.startswith("Tutorial ") for t in titles) == len(list_tutorials()) >= 11

    drive(app, script)


def test_first_frame_holds_the_narration_and_a_step_change_draws_it_in_its_first_frame():
    """The narration is there before the first frame, and on every stop change the first frame drawn after the
    key already holds the new stop's narration, laid out (no frame comes later for it). The panes of the centre
    may settle their heights in a later frame (the step screen's layout); the narration never does."""
    app, tut, trace = tutorial_app("1")
    frames: list[tuple[str, int]] = []
    display = app._display

    def counting(screen, renderable):  # every frame the app draws (headless: nothing is written)
        if renderable is not None and not app._batch_count:
            pane = app.screen.query_one(NarrationPane)
            frames.append((pane.text, pane.virtual_size.height))
        return display(screen, renderable)

    app._display = counting

    async def script(pilot):
        assert frames and tut.stops[0].title in frames[0][0]  # the first frame holds the narration
        for key, stop in (("n", 1), ("n", 2), ("p", 1), ("n", 2)):
            frames.clear()
            await pilot.press(key)
            await pilot.pause(0.5)
            final = (narration(app), app.screen.query_one(NarrationPane).virtual_size.height)
            assert tut.stops[stop].title in final[0]
            # a frame already pending when the key came may show the old stop; from the first frame that shows
            # the new stop on, the narration is complete and laid out (no later frame changes it)
            new = [f for f in frames if f[0] == final[0]]
            assert new and all(f == final for f in new), key
            assert frames[frames.index(new[0]):] == new, key

    drive(app, script)


def _screen_text(app) -> str:
    """The whole screen as the terminal would get it, every cell's character and style (ANSI), from the
    compositor: two frames that draw the same thing give the same text."""
    import io

    from rich.console import Console

    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.file.getvalue()


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
@pytest.mark.parametrize("which", ["1", "4", "run"])
def test_a_step_change_is_drawn_whole_in_one_frame(size, which):
    """After n or p, the first frame that shows the change already shows all of it: the step header, operands,
    matrix, drill-down (its table cut to the pane the layout is about to give it, not the old one) and
    narration. Textual may draw the same screen once more after its layout settles; no later frame differs."""
    if which == "run":
        app = ExplainApp(explain.run("gpt", random_weights=True))
    else:
        app, _, _ = tutorial_app(which)
    frames: list[str] = []
    display = app._display

    def recording(screen, renderable):  # every frame the app draws (headless: nothing is written)
        if renderable is not None and not app._batch_count and screen is app.screen:
            frames.append(_screen_text(app))
        return display(screen, renderable)

    app._display = recording

    async def script(pilot):
        await pilot.pause(0.3)
        for key in ("n", "n", "n", "p"):
            before = _screen_text(app)
            frames.clear()
            await pilot.press(key)
            await pilot.pause(0.4)
            changed = [f for f in frames if f != before]
            assert changed, key
            first = frames.index(changed[0])
            assert all(f == changed[0] for f in frames[first:]), (key, size, which)

    drive(app, script, size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_revealing_the_answer_brings_it_into_view(size):
    """At 80×24 the question and the answer are below the fold of the narration: ``a`` scrolls the pane so the
    answer is on screen (with its question when both fit); the next stop starts at its top again."""
    app, tut, _ = tutorial_app("1")

    async def script(pilot):
        pane = app.screen.query_one(NarrationPane)
        await pilot.press("a")
        await pilot.pause()
        lines = [pane.render_line(y).text for y in range(pane.scrollable_content_region.height)]
        shown = "\n".join(lines)
        assert "Answer." in shown, shown
        assert tut.stops[0].answer.split()[0] in shown
        await pilot.press("n")
        await pilot.pause()
        assert pane.scroll_y == 0

    drive(app, script, size=size)
