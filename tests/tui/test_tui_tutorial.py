"""Pilot tests of tutorial mode (with a duck-typed fake tutorial, not the shipped ones), export from the TUI
(with a stand-in export module, so these tests do not depend on its timing), and the re-run form."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import drive

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.narration import NarrationPane


def narration(app) -> str:
    return app.screen.query_one(NarrationPane).text


def test_stops_narration_answer_wander_and_back(gpt_trace, tutorial):
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        s = app.screen
        assert s.tutorial_on and s.view.step.name == "embed"
        assert "## Embeddings" in narration(app) and "stop 1 of 3" in narration(app)
        assert s.has_class("-tutorial") and not s.query_one("#tree").display
        await pilot.press("n")
        assert s.view.step.name == "blocks.0.attn.q"  # a group stop shows the group's first step
        assert "What shape is Q?" in narration(app) and "batch, head" not in narration(app)
        await pilot.press("a")
        assert "**Answer.** (1, 2, 4, 4)" in narration(app)
        await pilot.press("right")
        assert s.view.step.name == "blocks.0.attn.masked" and s.view.index_of_cell == (0, 1, 0, 2)
        await pilot.press("n")  # past the last stop: stays, says so
        assert s.tour.stop == 2
        await pilot.press("w")
        assert not s.tutorial_on and s.query_one("#tree").display
        await pilot.press("n", "n")
        assert s.view.step.name == "blocks.0.attn.z"
        await pilot.press("t")
        assert s.tutorial_on and s.view.step.name == "blocks.0.attn.masked"
        await pilot.press("p", "p")
        assert s.view.step.name == "embed"

    drive(app, script)


def test_narration_drawn_again_after_wandering_where_it_was_hidden(gpt_trace, tutorial):
    """At 80 columns, wandering hides the sidebar (the tree needs 100): t shows the narration again, painted with
    its stop's text, not the 'wandering' lines it last drew (a hidden pane has no width to draw the new text at)."""
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        pane = app.screen.query_one(NarrationPane)
        painted: dict[int, str] = {}
        draw = pane.render_line

        def render_line(y):  # what the terminal gets, line by line, as it is painted
            strip = draw(y)
            painted[y] = " ".join(strip.text.split())
            return strip

        pane.render_line = render_line
        await pilot.press("n", "w")
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        await pilot.pause()
        shown = " ".join(painted[y] for y in sorted(painted))
        assert app.screen.tutorial_on and pane.region.width > 0
        assert "What shape is Q?" in shown and "wandering" not in shown, shown

    drive(app, script, size=(80, 24))

def test_tutorial_keys_hidden_without_tutorial(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        assert s.check_action("wander", ()) is False and s.check_action("answer", ()) is False
        await pilot.press("w", "a", "t", "n")  # no tutorial: w/a/t do nothing
        assert s.view.index == 1

    drive(app, script)


@pytest.fixture
def fake_export(monkeypatch, tmp_path):
    """A stand-in explain.export whose write_export records its calls and writes a marker file."""
    calls = []

    def write_export(trace, path, *, steps=None, fmt="py", force=False, narration=None):
        assert force or not Path(path).exists()
        Path(path).write_text("# exported\n")
        calls.append(dict(path=Path(path), steps=steps, fmt=fmt, narration=narration, force=force))
        return Path(path)

    module = types.ModuleType("explain.export")
    module.write_export = write_export
    monkeypatch.setitem(sys.modules, "explain.export", module)
    monkeypatch.chdir(tmp_path)
    return calls


def test_export_asks_the_name_says_where_and_never_overwrites_unasked(gpt_trace, tutorial, fake_export, tmp_path):
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        await pilot.press("n", "x")
        await pilot.pause()
        assert type(app.screen).__name__ == "PromptScreen"
        assert app.screen.query_one("#answer").value == "blocks_0_attn_q.py"  # prefilled, in this folder
        await pilot.press("enter")
        await pilot.pause()
        assert any(n.message == f"wrote {tmp_path / 'blocks_0_attn_q.py'}" for n in app._notifications)
        await pilot.press("x", "enter")  # the same name again: asked before replacing
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert len(fake_export) == 1
        await pilot.press("x", "enter", "enter")  # …and replaced when confirmed
        await pilot.pause()
        assert len(fake_export) == 2 and fake_export[1]["force"]
        await pilot.press("X")
        await pilot.pause()
        field = app.screen.query_one("#answer")
        assert field.value == "gpt_run.py"
        field.value = "no/such/folder/run.py"
        await pilot.press("enter")
        await pilot.pause()
        assert "does not exist" in str(app.screen.query_one("#error").render())
        field.value = "my_run"
        await pilot.press("enter")
        await pilot.pause()

    drive(app, script)
    assert [c["path"].name for c in fake_export] == ["blocks_0_attn_q.py", "blocks_0_attn_q.py", "my_run.py"]
    assert fake_export[0]["steps"] == ["blocks.0.attn.q"] and fake_export[2]["steps"] is None
    assert all(c["fmt"] == "py" for c in fake_export) and not fake_export[2]["force"]
    assert "Queries" in fake_export[0]["narration"]["blocks.0.attn.q"]  # the stop's narration goes along
    assert set(fake_export[2]["narration"]) == {"embed", "blocks.0.attn.q", "blocks.0.attn.masked"}


async def _wait_for_run(pilot, app) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_rerun_form_runs_new_options(gpt_trace, tutorial):
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        s = app.screen
        await pilot.press("w", "g", *"blocks.0.attn.pattern", "enter", "e")
        await pilot.pause()
        assert type(app.screen).__name__ == "RerunScreen"
        text = app.screen.query_one("#text")
        assert text.value == "The cat is happy"
        text.value = "the dog sat on the mat"
        app.screen.query_one("#n_layers").value = "1"
        await pilot.press("enter")
        await _wait_for_run(pilot, app)
        assert type(app.screen).__name__ == "StepScreen"
        assert s.trace is not gpt_trace and s.trace.labels["pos"] == "the dog sat on the mat".split()
        assert s.trace.config.n_layers == 1
        assert s.view.step.name == "blocks.0.attn.pattern" and s.view.step.shape == (1, 2, 6, 6)
        # the tutorial stays, off its path, its own run kept; the narration says so
        assert s.tutorial is tutorial and not s.tutorial_on
        assert "Off the tutorial's path — `t` returns to stop 1" in narration(app)
        await pilot.press("e")
        await pilot.pause()
        assert app.screen.query_one("#text").value == "the dog sat on the mat"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("t")  # back to the tutorial's own run, at the stop left
        assert s.trace is gpt_trace and s.tutorial_on and s.view.step.name == "embed"

    drive(app, script)


def test_refused_run_keeps_the_form_and_says_why_beside_the_field(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        form.query_one("#n_heads").value = "3"  # 8 is not divisible by 3
        form.query_one("#text").value = "the dog is sad"
        await pilot.press("enter")
        await _wait_for_run(pilot, app)
        assert app.screen is form and s.trace is gpt_trace  # refused: the form stays open
        assert form.query_one("#n_heads").value == "3" and form.query_one("#text").value == "the dog is sad"
        beside = str(form.query_one("#error-n_heads").render())
        assert "not divisible by 3 heads" in beside and "--heads" not in beside and "heads" in beside
        form.query_one("#n_heads").value = "0"
        await pilot.press("enter")
        await pilot.pause()
        assert "heads" in str(form.query_one("#error-n_heads").render()) and app.screen is form
        form.query_one("#n_heads").value = "2"
        form.query_one("#n_ctx").value = "2"  # shorter than the text
        await pilot.press("enter")
        await _wait_for_run(pilot, app)
        assert app.screen is form and "context" in str(form.query_one("#error-n_ctx").render())
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("n")  # still alive
        assert s.view.index == 1

    drive(app, script)


def test_rerun_keeps_the_checkpoint_and_its_token_ids():
    """A checkpoint run re-run from the form stays on the checkpoint (its weights and tokenizer), and ids given
    with --tokens are kept while the text field is left alone."""
    ckpt = str(Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny")
    options = {"checkpoint": ckpt, "tokens": "262,285,274"}
    trace = explain.run("gpt", **options)
    app = ExplainApp(trace, options=options)

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")  # re-run unchanged
        await _wait_for_run(pilot, app)
        assert s.trace is not trace
        assert s.trace.params["W_E"].shape == (300, 16)  # the checkpoint's weights, not random ones
        np.testing.assert_array_equal(s.trace["logits"].output, trace["logits"].output)
        assert s.trace["tokens"].output.tolist() == [[262, 285, 274]]
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#text").value = "The cat"
        await pilot.press("enter")  # new text: tokenized by the checkpoint's own tokenizer
        await _wait_for_run(pilot, app)
        assert s.trace.params["W_E"].shape == (300, 16)
        assert s.trace.labels["pos"] == ["The", "␣cat"]

    drive(app, script)


def test_picture_key_saves_the_screen_as_svg_named_after_the_step(gpt_trace, monkeypatch, tmp_path):
    """``c``: the screen as an SVG, taken before the name dialog (which is not in the picture), named after the
    step, in the working directory; a second save offers the next free name (embed-2.svg), and the first name
    typed again asks before replacing; a folder that is not there is refused in the dialog, the typed name kept."""
    monkeypatch.chdir(tmp_path)
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("n", "c")
        await pilot.pause()
        assert type(app.screen).__name__ == "PromptScreen"
        assert app.screen.query_one("#answer").value == "embed.svg"
        await pilot.press("enter")
        await pilot.pause()
        assert any(n.message == f"wrote {tmp_path / 'embed.svg'}" for n in app._notifications)
        await pilot.press("c")
        await pilot.pause()
        assert app.screen.query_one("#answer").value == "embed-2.svg"  # the next free name
        app.screen.query_one("#answer").value = "embed.svg"
        await pilot.press("enter")  # the same name: asked, and kept when the answer is no
        await pilot.pause()
        assert type(app.screen).__name__ == "ConfirmScreen"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        field = app.screen.query_one("#answer")
        field.value = "no/such/folder/pic"
        await pilot.press("enter")
        await pilot.pause()
        assert "does not exist" in str(app.screen.query_one("#error").render())
        assert field.value == "no/such/folder/pic"
        field.value = "mine"
        await pilot.press("enter")
        await pilot.pause()

    drive(app, script)
    svg = (tmp_path / "embed.svg").read_text()
    text = svg.replace("&#160;", " ")  # rich writes the spaces of the terminal's text as &#160;
    assert svg.startswith("<svg") and "explain: embed" in text
    assert "File name" not in text  # the dialog is not in the picture
    assert "drill-down" in text  # the step screen is
    assert (tmp_path / "mine.svg").read_text().startswith("<svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["embed.svg", "mine.svg"]
