"""The gemma screens as a student sees them, at 80×24, 120×40 and 200×50, in the real step screen: the default
``explain run gemma`` (a sliding then a full layer, a window of 4 over 8 words) and a tiny Gemma 3 GGUF the test
writes (tests/helpers/gemma_files.py).

- the window mask: the header names the step and its op; a hidden cell's drill-down says why, whole
  (``query 7 − key 3 = 4 ≥ window 4``), and a kept one that it is inside the window; the legend tells the keys
  this mask hid from those the causal mask hid before;
- the step tree, where it is shown, says each block's kind and rotary base (``sliding θ10k``, ``full θ1M``);
- the (1 + w) norm's drill-down is whole, and on a GGUF ends with the stored 1 + w and the w the run used;
- a SentencePiece vocabulary's words label the predictions' table (no ``#id``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from conftest import drive
from test_tui_llama import _drill_text, _screen_text, _show, _words

import explain
from explain.ops.base import precision
from explain.render.step import explanation_result
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (120, 40), (200, 50)]
SCROLLBAR = "█▁▂▃▄▅▆▇▔"  # the drill-down's scroll bar, drawn over its last column at 80×24
_spec = importlib.util.spec_from_file_location(
    "gemma_files", Path(__file__).resolve().parents[1] / "helpers" / "gemma_files.py")
gemma_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gemma_files)


@pytest.fixture(scope="module")
def run():
    return explain.run("gemma")


@pytest.fixture(scope="module")
def from_gguf(tmp_path_factory: pytest.TempPathFactory):
    path = gemma_files.write_gguf(tmp_path_factory.mktemp("tui") / "g.gguf", "Q8_0")
    return explain.run("gemma", checkpoint=str(path), text="Once upon a time, the cat")


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_window_says_why_a_key_is_hidden(run, size):
    app = ExplainApp(run)
    name = "blocks.0.attn.window_masked"
    problems: list[str] = []

    async def script(pilot):
        for index, said in (((0, 0, 7, 3), "query 7 'cat' − key 3 'time' = 4 ≥ window 4: the key is outside the window"),
                            ((0, 0, 7, 4), "query 7 'cat' − key 4 'there' = 3 < window 4: inside the window")):
            await _show(pilot, run, name, index)
            screen = _screen_text(pilot)
            if f"{name}  [window_mask]" not in screen:
                problems.append(f"header not on screen at {size}")
            drill = await _drill_text(pilot)
            if _words(said) not in drill:
                problems.append(f"{index} at {size}: {said!r} not in\n{drill}")
            if "masked here" not in screen and "here" not in screen:
                problems.append(f"the legend of the newly hidden keys is not on screen at {size}")
        if size[0] >= 120:  # the step tree is shown: each block's kind and θ
            screen = _screen_text(pilot)
            for label in ("blocks.0 sliding θ10k", "blocks.1 full θ1M"):
                if label not in screen:
                    problems.append(f"{label!r} not in the tree at {size}")

    drive(app, script, size=size)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_one_plus_w_norm_and_where_the_one_is_stored(from_gguf, size):
    app = ExplainApp(from_gguf)
    index = (0, 2, 5)

    async def script(pilot):
        await _show(pilot, from_gguf, "blocks.0.ln1", index)
        drill = _words("".join(" " if c in SCROLLBAR else c for c in await _drill_text(pilot)))
        with precision(4):
            ex = from_gguf.explain("blocks.0.ln1", index)
        for line in [ex.title, *ex.lines[:-1], explanation_result(ex).plain, *ex.origin.lines]:
            assert _words(line) in drill, (size, line, drill)
        assert "the file stores 1 + w" in drill

    drive(app, script, size=size)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_a_sentencepiece_vocabulary_labels_the_predictions(from_gguf, size):
    app = ExplainApp(from_gguf)
    T = from_gguf["probs"].shape[1]

    async def script(pilot: Any):
        await _show(pilot, from_gguf, "probs", (0, T - 1, 7))
        drill = await _drill_text(pilot)
        assert "7 ␣␣" in drill, drill  # the cell's own row: its piece, spaces visible
        assert "#7" not in drill

    drive(app, script, size=size)
