"""The llama screens as a student sees them, at 80×24, 120×40 and 200×50, in the real step screen: a tiny
``explain run llama`` and a Q4_1 GGUF file the test writes (tests/helpers/gguf_files.py, from the checked-in
Hugging Face fixture).

- the header names the step and its op kind, with its place in the run;
- the RMSNorm, RoPE (a pair at a position > 0, so its angle is not 0) and SwiGLU drill-downs are whole: every
  line of the explanation is on screen, read off what the compositor drew, scrolling the body with ``d``
  where the pane is shorter than the explanation (words compared with the line breaks taken out: a narrow pane
  wraps);
- the next-token softmax of a byte-level vocabulary writes its words, leading spaces visible (``␣``): in the
  drill-down's table of terms at every size (``7042 ␣Paris``), and in the predictions pane where there is room
  for it; the row labels of the text keep their ``␣`` too;
- the drill-down of a quantized weight's projection ends with where the weight came from in the file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import drive

import explain
from explain.ops.base import precision
from explain.render.predictions import repr_token
from explain.render.step import explanation_result
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel

SIZES = [(80, 24), (120, 40), (200, 50)]
TEXT = "The capital of France is"
_spec = importlib.util.spec_from_file_location(
    "gguf_files", Path(__file__).resolve().parents[1] / "helpers" / "gguf_files.py")
gguf_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gguf_files)


@pytest.fixture(scope="module")
def tiny():
    return explain.run("llama", text="the cat sat on the mat")


@pytest.fixture(scope="module")
def q4_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gguf_files.write_gguf(tmp_path_factory.mktemp("tui") / "m.gguf", "Q4_1")


@pytest.fixture(scope="module")
def q4(q4_path: Path):
    return explain.run("llama", checkpoint=str(q4_path), text=TEXT)


def _region_lines(app: Any, region: Any) -> list[str]:
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strips[y])[region.x:region.x + region.width]
            for y in range(region.y, min(region.y + region.height, len(strips)))]


def _words(text: str) -> str:
    return " ".join(text.split())


async def _show(pilot: Any, trace: Any, name: str, index: tuple[int, ...]) -> None:
    screen = pilot.app.screen
    screen.view = screen.view.go(trace[name].index).at(index)
    await pilot.pause()
    await pilot.pause()


async def _drill_text(pilot: Any) -> str:
    """Everything the drill-down shows for the cell, scrolling its body down with d until it stops moving."""
    panel = pilot.app.screen.query_one(CellPanel)
    seen: list[str] = []
    for _ in range(12):
        lines = _region_lines(pilot.app, panel.content_region)
        seen.extend(lines)
        if panel.body_offset >= panel.max_scroll:
            break
        await pilot.press("d")
        await pilot.pause()
    return _words(" ".join(seen))


def _screen_text(pilot: Any) -> str:
    return "\n".join(_region_lines(pilot.app, pilot.app.screen.region))


CELLS = {"blocks.0.ln1": (0, 2, 5), "blocks.0.attn.rot_q": (0, 1, 3, 1), "blocks.0.mlp.post": (0, 4, 7)}


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_llama_header_and_drill_downs_whole(tiny, size):
    app = ExplainApp(tiny)
    problems: list[str] = []

    async def script(pilot):
        for name, index in CELLS.items():
            await _show(pilot, tiny, name, index)
            step = tiny[name]
            screen = _screen_text(pilot)
            first = screen.splitlines()
            if not any(f"{name}  [{step.op}]" in line and (f"step {step.index + 1} of {len(tiny)}" in line or
                                                         f"{step.index + 1}/{len(tiny)}" in line) for line in first):
                problems.append(f"{name}: header not on screen whole at {size}")
            with precision(4):
                ex = tiny.explain(step, index)
            drill = await _drill_text(pilot)
            for line in [ex.title, *ex.lines[:-1], explanation_result(ex).plain]:
                if _words(line) not in drill:
                    problems.append(f"{name}{list(index)} at {size}: {line!r} not on screen in\n{drill}")

    drive(app, script, size=size)
    assert not problems, "\n".join(problems)
    rope = tiny.explain("blocks.0.attn.rot_q", CELLS["blocks.0.attn.rot_q"])
    assert any("angle = position × frequency = 3 ×" in line for line in rope.lines)  # a real rotation


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_gguf_predictions_are_words_with_visible_spaces(q4, size):
    probs = q4["probs"].output[0, -1]
    vocab = q4.labels["vocab"]
    top = [int(i) for i in np.argsort(-probs, kind="stable")[:3]]
    app = ExplainApp(q4)

    async def script(pilot):
        await _show(pilot, q4, "probs", (0, q4["probs"].shape[1] - 1, top[0]))
        drill = await _drill_text(pilot)
        assert f"{top[0]} {vocab[top[0]]}" in drill, drill  # the chosen cell's k is its word
        assert f"{top[1]} {vocab[top[1]]}" in drill, drill  # and the runner-up's, kept in view by the table
        screen = _screen_text(pilot)
        assert "4 ␣is" in screen  # the cursor's row, its token's space visible
        if size[1] >= 40:  # the predictions pane, where the layout has room for it
            for i in top:
                assert repr_token(vocab[i]) in screen, (vocab[i], screen)

    drive(app, script, size=size)
    assert any(vocab[i].startswith("␣") for i in range(len(vocab)))  # the vocabulary is byte-level


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_gguf_weight_origin_in_the_drill_down(q4, size):
    app = ExplainApp(q4)
    index = (0, 1, 2, 3)

    async def script(pilot):
        await _show(pilot, q4, "blocks.0.attn.q", index)
        drill = await _drill_text(pilot)
        origin = q4.explain("blocks.0.attn.q", index).origin
        for line in [origin.title, *origin.lines]:
            assert _words(line) in drill, (line, drill)

    drive(app, script, size=size)


def test_g_generates_from_the_gguf_and_the_new_run_keeps_the_weights_origin(q4, q4_path):
    """G (5 new tokens) on a llama run from a GGUF file: the run again with the file's weights, sampled with
    the run's seed, and the drill-down of a new token's projection still says where its weight
    came from."""
    app = ExplainApp(q4, options={"checkpoint": str(q4_path), "text": TEXT})

    async def script(pilot):
        s = app.screen
        await pilot.press("G")
        for _ in range(200):  # the run happens in a worker thread
            await pilot.pause(0.05)
            if s.trace is not q4:
                break
        assert s.trace.generation is not None and len(s.trace.generation.steps) == 5
        step = next(st for st in s.trace if st.name.startswith("gen.1.") and st.name.endswith("attn.q"))
        assert s.trace.explain(step, (0, 0, 0, 0)).origin is not None

    drive(app, script, size=(120, 40))
