"""Pilot tests of what issue 26 found the step screen hiding, each seen first on a real terminal: a backward
step's unread operands crowding out the ones it reads, and a tutorial stop's own precision (defect 5)."""

from __future__ import annotations

from conftest import drill_answer, drive, goto, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.operands import Operands
from explain.tui.widgets.tensor_view import TensorView
from explain.tutorial import load_tutorial, run_tutorial


def test_unread_operands_leave_the_width_to_the_read_one():
    app = ExplainApp(explain.run("attention", text="Thinking Machines", backward=True))

    async def script(pilot):
        await goto(pilot, "attn.scores.grad")
        text = text_of(app.screen.query_one(Operands))
        assert "∂L/∂S' attn.scaled.grad (2, 2)" in text  # the one it reads, its name whole
        assert text.count("not read here") == 2  # Q and K: a symbol, a shape, three words
        assert "(not read by this" not in text

    drive(app, script, size=(100, 30))


def at_stop(tutorial: str, step: str, check, size: tuple[int, int]) -> None:
    """``check(screen)`` on the tutorial's app at its first stop on ``step``, reached by n as a student does."""
    tut = load_tutorial(tutorial)
    stop = next(i for i, s in enumerate(tut.stops) if s.step == step)
    app = ExplainApp(run_tutorial(tut), tutorial=tut)

    async def script(pilot):
        for _ in range(stop):
            await pilot.press("n")
        await pilot.pause()
        check(app.screen)

    drive(app, script, size=size)


def test_a_stop_shows_its_own_precision():
    def check(s):
        assert s.view.precision == 8
        assert "0.00000011" in text_of(s.query_one(TensorView))  # the narration's 1.1·10⁻⁷, visible

    at_stop("14-backpropagation-through-attention", "attn.pattern", check, (120, 40))


def test_labels_are_whole_where_there_is_room():
    # defect 6: tutorial 13's stop 1 at 120×40 read 'the/<pa…', the transformer's decoder '2 Maschin…'
    tut = load_tutorial("13-padding-and-masks")
    app = ExplainApp(run_tutorial(tut), tutorial=tut)

    async def script(pilot):
        text = text_of(app.screen.query_one(TensorView))
        assert "the/<pad>" in text and "mat/<pad>" in text and "…" not in text.split("\n")[2]

    drive(app, script, size=(120, 40))
    app = ExplainApp(explain.run("transformer"), start="decoder.embed")

    async def decoder(pilot):
        assert "2 Maschinen" in text_of(app.screen.query_one(TensorView))

    drive(app, decoder, size=(120, 40))


def test_labels_are_cut_only_when_the_columns_would_not_fit():
    import numpy as np

    from explain.render.grid import fit_window

    mat = np.zeros((2, 30))
    labels = [f"Maschinen{i}" for i in range(30)]
    whole = fit_window(mat[:, :3], (0, 0), (0, 0), 80, 10, col_labels=labels[:3], row_labels=labels[:2])
    assert whole.label_max > len(labels[0]) and None not in whole.cols
    cut = fit_window(mat, (0, 0), (0, 0), 80, 10, col_labels=labels, row_labels=labels[:2])
    assert cut.label_max == 8 and None in cut.cols  # 30 whole labels do not fit 80 columns: cut to show more


def test_the_cache_tells_its_two_keys_apart_and_marks_the_appended_row():
    # defect 8: both operands titled K, the appended row unmarked, rows numbered not named, and at 80×24 the
    # operands hidden, so "earlier keys kept, one appended" was nowhere on screen
    trace = explain.generate("gpt", random_weights=True, text="the cat is", max_new_tokens=2, greedy=True)
    drawn = trace.labels["vocab"][int(trace["gen.0.next"].output[0, 0])]
    app = ExplainApp(trace, start="gen.1.blocks.0.attn.k_cache")

    async def script(pilot):
        matrix = text_of(app.screen.query_one(TensorView))
        assert "0 the" in matrix and "2 is" in matrix and f"3 {drawn} +new" in matrix  # words, the new row said
        assert "+new" not in matrix.split(f"3 {drawn}")[0]  # the kept rows are not marked
        assert "K_cache = [K kept; K new]" in text_of(app.screen.query_one("#info"))
        assert "= K kept[0, 0, 0, 0]" in app.screen.query_one("#cell").plain()  # row 0: from the cache
        await pilot.press("j", "j", "j")
        assert "= K new[0, 0, 0, 0]" in app.screen.query_one("#cell").plain()  # row 3: the new one

    drive(app, script, size=(80, 24))
    app = ExplainApp(trace, start="gen.1.blocks.0.attn.k_cache")

    async def wide(pilot):
        operands = text_of(app.screen.query_one(Operands))
        assert "K kept blocks.0.attn.k" in operands and "K new gen.1.blocks.0.attn.k" in operands

    drive(app, wide, size=(120, 40))


def test_palette_has_one_keys_entry_and_the_header_fits_80_columns():
    import io

    from rich.console import Console

    from explain.tui.widgets.step_info import header

    trace = explain.generate("gpt", random_weights=True, text="the cat is", max_new_tokens=2)
    app = ExplainApp(trace)
    titles = [c.title for c in app.get_system_commands(app.get_default_screen())]
    assert sum(t.startswith("Keys") for t in titles) == 1, titles
    view = app.get_default_screen().view.go(trace["gen.1.blocks.0.attn.k_cache"].index)
    console = Console(file=io.StringIO(), width=48, color_system=None)
    console.print(header(view, 48))
    first = console.file.getvalue().splitlines()[1]  # after the text so far
    assert first.startswith("gen.1.blocks.0.attn.k_cache") and first.rstrip().endswith(f"{view.index + 1}/{len(trace)}")


def test_rerun_form_at_80x24_keeps_the_refused_field_its_message_and_the_buttons_on_screen():
    # defect 7: a two-line refusal took ten rows (a grid row spanning both columns is measured at the first's
    # width) and pushed the fields and Run/Cancel off the 80×24 screen; a message stayed after its field changed
    from explain.tui.screens.rerun import RerunScreen

    app = ExplainApp(explain.run("transformer"))

    async def script(pilot):
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, RerunScreen)
        form.query_one("#d_model").value = "1" + "0" * 15
        form.action_submit()
        await pilot.pause()
        screen = app.screen.region
        message = form.query_one("#error-d_model")
        assert "maximum" in str(message.render()) and message.region.height <= 3
        for widget in (form.query_one("#d_model"), message, form.query_one("#run"), form.query_one("#cancel")):
            assert widget.region.height and screen.contains_region(widget.region), widget
        form.query_one("#d_model").value = "8"  # being fixed: its message goes
        await pilot.pause()
        assert not message.display or message.region.height == 0

    drive(app, script, size=(80, 24))


def test_a_result_of_three_rows_shows_all_three_at_80x24():
    """Defect 4 (issue 26): tutorial 12's stop on the draw, ``next (3, 1)`` (three sequences, one token each), showed
    one row of three at 80×24: the drill-down took the room down to its whole minimum and left the result
    its titles and one row. A small result is whole; the drill-down's body scrolls, its answer pinned."""
    def check(s):
        assert s.view.step.name == "gen.0.next" and s.view.step.shape == (3, 1)
        tensor = s.query_one(TensorView)
        assert [r for r in tensor._window.rows if r is not None] == [0, 1, 2]
        assert "⋮" not in text_of(tensor)
        assert "= id" in drill_answer(s.app)  # the answer on screen, the drill-down's last line

    at_stop("12-from-logits-to-text", "gen.0.next", check, (80, 24))
