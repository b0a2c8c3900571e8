"""explain tokenize's TUI (a trace of the tokenizer's steps alone) and --tokenizer-steps at 80x24, 120x40 and
200x50: a merge's header and its drill-down (the pair, its rank, the ranks it beat) are on screen whole; the bytes
of the text are drawn as numbers, never as token words."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import drive, region_lines

from explain.checkpoints.open import open_checkpoint
from explain.tokenize.family import tokenizer_for
from explain.tokenize.record import record_walkthrough
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel

CKPT = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.fixture(scope="module")
def walk_trace():
    ck = open_checkpoint(str(CKPT))
    return record_walkthrough(tokenizer_for(ck).walk("The capital 😀"), "fixture", ck.vocab_labels())


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_merge_and_its_reasons_are_on_screen(walk_trace, size) -> None:
    app = ExplainApp(walk_trace)
    seen: dict[str, str] = {}

    async def script(pilot):
        screen = pilot.app.screen
        screen.view = screen.view.go(walk_trace["tokenizer.piece1.merge0"].index).at((0,))
        await pilot.pause()
        await pilot.pause()
        seen["screen"] = _words(" ".join(region_lines(pilot.app, pilot.app.screen.region)))
        panel = pilot.app.screen.query_one(CellPanel)
        lines: list[str] = []
        for _ in range(8):
            lines += region_lines(pilot.app, panel.content_region)
            if panel.body_offset >= panel.max_scroll:
                break
            await pilot.press("d")
            await pilot.pause()
        seen["drill"] = _words(" ".join(lines))
        screen.view = screen.view.go(walk_trace["tokenizer.text"].index)
        await pilot.pause()
        await pilot.pause()
        seen["text"] = _words(" ".join(region_lines(pilot.app, pilot.app.screen.region)))

    drive(app, script, size=size)
    assert "tokenizer.piece1.merge0" in seen["screen"] and "[bpe_merge]" in seen["screen"]
    for needle in ("␣ + c → ␣c", "rank 13", "beats"):
        assert needle in seen["drill"], (needle, seen["drill"])
    assert "84 104 101" in seen["text"]  # the bytes of 'The', not the words of ids 84, 104, 101


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_o_runs_again_with_the_tokenizer_steps_first(size) -> None:
    import explain

    trace = explain.run("gpt", text="The cat is happy")
    app = ExplainApp(trace, options={"text": "The cat is happy"})
    seen: dict[str, object] = {}

    async def script(pilot):
        await pilot.press("o")
        for _ in range(300):
            await pilot.pause(0.05)
            if pilot.app.screen.view.step.name == "tokenizer.text":
                break
        view = pilot.app.screen.view
        seen["step"], seen["has_ids"] = view.step.name, "tokenizer.ids" in view.trace
        await pilot.press("right")
        await pilot.pause()
        await pilot.press("o")  # the steps are there now: o goes back to the first
        await pilot.pause()
        seen["again"] = pilot.app.screen.view.step.name

    drive(app, script, size=size)
    assert seen == {"step": "tokenizer.text", "has_ids": True, "again": "tokenizer.text"}
