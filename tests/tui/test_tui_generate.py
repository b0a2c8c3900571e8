"""Pilot tests: the predictions pane (shown on the steps about next tokens, following the cursor's position and
the batch slice), generation in the TUI (``explain generate`` opens on the first new step; G generates more
from the current run), and a snapshot of a generation's draw at 80x24."""

from __future__ import annotations

from pathlib import Path

from conftest import drive, text_of

import explain
from explain.engine.api import generated_ids
from explain.tui.app import ExplainApp
from explain.tui.widgets.predictions import PredictionsPane

CKPT = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"


def go(screen, name: str) -> None:
    screen.view = screen.view.go(screen.trace[name].index)


def test_predictions_follow_the_step_the_position_and_the_batch() -> None:
    app = ExplainApp(explain.run("gpt", random_weights=True, text=["the cat is happy", "a dog is nice"]))

    async def script(pilot):
        s, pane = app.screen, app.screen.query_one(PredictionsPane)
        assert not pane.display  # the token ids: nothing about next tokens
        go(s, "probs")
        await pilot.pause()
        assert pane.display
        assert "next token after position 0 'the'" in text_of(pane)
        assert "next in the text: 'cat'" in text_of(pane)
        await pilot.press("j", "j")
        assert "after position 2 'is'" in text_of(pane) and "next in the text: 'happy'" in text_of(pane)
        await pilot.press("b")  # the second sequence of the batch
        assert "'is', sequence 1" in text_of(pane) and "next in the text: 'nice'" in text_of(pane)
        go(s, "blocks.0.attn.q")
        await pilot.pause()
        assert not pane.display

    drive(app, script)


def test_generate_opens_on_the_first_new_step_and_g_generates_more() -> None:
    trace = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=2, top_k=3, ignore_eos=True)
    options = {"checkpoint": str(CKPT), "text": "The cat", "sampling": trace.generation.sampling}
    app = ExplainApp(trace, options=options, start="gen.0.next_logits")

    async def script(pilot):
        s, pane = app.screen, app.screen.query_one(PredictionsPane)
        assert s.view.step.name == "gen.0.next_logits"
        assert pane.display and "← drawn" in text_of(pane)
        await pilot.press("G")
        for _ in range(100):  # the run happens in a worker thread
            await pilot.pause(0.05)
            if s.trace is not trace:
                break
        assert s.view.step.name == "gen.2.embed"  # the first token that was not there before
        new = generated_ids(s.trace)[0]
        assert len(new) == 7 and new[:2] == generated_ids(trace)[0]  # same seed: the first two are kept

    drive(app, script)


def test_g_on_a_model_without_a_vocabulary_says_why() -> None:
    app = ExplainApp(explain.run("attention"))

    async def script(pilot):
        await pilot.press("G")
        await pilot.pause()
        assert any("generation needs a model that writes the next token: gpt" in str(n.message) for n in app._notifications)

    drive(app, script)


def test_snapshot_generation_draw_small_terminal(snap_compare):
    trace = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=3, top_k=3, ignore_eos=True)
    app = ExplainApp(trace, start="gen.1.next")
    assert snap_compare(app, terminal_size=(80, 24))
