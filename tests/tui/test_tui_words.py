"""No token id without its word (issue 26, defect 2): on the generation, prediction and target screens every id
is written with its word (grids of ids, the filters' and the draw's drill-downs, the predictions), and the
generation's steps show the text so far; byte-level tokens keep their visible whitespace (␣) and the raw id in
tables, while the running text writes spaces as spaces, as ``--plain`` does (issue 42 item 12).

An id in a line of text is ``id 20 (starts)`` or ``'starts' (id 20)``, in a table ``20 starts``; :data:`BARE` finds one written
without its word, which is what this test forbids."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import drive, text_of
from rich.console import Console

import explain
from explain.core.errors import ExplainError
from explain.render.predictions import generation_view, predictions_view, text_so_far
from explain.render.step import explanation_view, id_words, step_output
from explain.report.predict import predictions
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.step_info import StepInfo
from explain.tui.widgets.tensor_view import TensorView

CKPT = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
# "token 20" / "id 20" neither followed by "(word)" nor inside "'word' (id 20)"
BARE = re.compile(r"(?<!\()\b(?:id|token) (\d+)\b(?! \()")
ID_OPS = {"top_k", "top_p", "sample", "argmax"}


def plain(renderable, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable, crop=False, soft_wrap=True)
    return console.file.getvalue()


@pytest.fixture(scope="module")
def runs():
    return {
        "sampled": explain.generate("gpt", random_weights=True, text="the cat is", max_new_tokens=3, top_k=3, top_p=0.9, seed=1),
        "greedy": explain.generate("gpt", random_weights=True, text="the cat is", max_new_tokens=2, greedy=True),
        "padded targets": explain.run("gpt", random_weights=True, text=["the cat sat", "a dog"]),
        "byte-level": explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=2, top_k=3,
                                       ignore_eos=True),
    }


def test_id_grids_write_each_id_with_its_word(runs):
    checked = 0
    for name, trace in runs.items():
        vocab = trace.labels["vocab"]
        for step in trace.steps:
            if id_words(trace, step) is None:
                continue
            text = plain(step_output(trace, step, max_cols=64))
            first = step.output[(0,) * (step.output.ndim - 2)] if step.output.ndim > 2 else step.output
            for v in np.unique(first[first >= 0]):
                assert f"{v} {vocab[int(v)]}" in text, f"{name}: {step.name} shows id {v} without its word"
                checked += 1
    assert checked >= 10


def test_drill_downs_name_every_id(runs):
    checked = 0
    for name, trace in runs.items():
        vocab = trace.labels["vocab"]
        for step in trace.steps:
            if step.op not in ID_OPS and id_words(trace, step) is None:
                continue
            flat = step.output.reshape(-1) if step.output.ndim else step.output.reshape(1)
            for n in sorted({0, flat.size // 2, flat.size - 1}):
                index = tuple(int(i) for i in np.unravel_index(n, step.shape)) if step.shape else ()
                try:
                    ex = trace.explain(step, index)
                except ExplainError:
                    continue
                text = plain(explanation_view(ex))
                assert not BARE.search(text), f"{name}: {step.name}{list(index)}: {BARE.search(text)[0]!r}\n{text}"
                if "token" in ex.columns:
                    col = ex.columns.index("token")
                    for row in ex.rows:
                        i = int(str(row[col]).split(" ", 1)[0])
                        assert row[col] == f"{i} {vocab[i]}", f"{name}: {step.name}: token column {row[col]!r}"
                checked += 1
    assert checked >= 20


def test_predictions_name_every_id(runs):
    trace = runs["sampled"]
    for name in trace.generation.steps:
        probs = trace[name.replace(".next", ".probs")]
        text = plain(predictions_view(predictions(trace, probs, 0, 0, 5)))
        assert not BARE.search(text), text


def test_text_so_far_grows_one_token_per_draw(runs):
    trace = runs["sampled"]
    vocab = trace.labels["vocab"]
    gen = trace.generation
    assert text_so_far(trace, trace["blocks.0.attn.q"].index) is None  # the prompt's own forward pass
    before = text_so_far(trace, trace["gen.0.probs"].index).plain
    assert before == "text so far: the cat is ▸ (nothing drawn yet)"
    drawn = [vocab[int(trace[n].output[0, 0])] for n in gen.steps]
    assert text_so_far(trace, trace["gen.1.embed"].index).plain == f"text so far: the cat is ▸ {drawn[0]}"
    last = text_so_far(trace, len(trace) - 1).plain
    assert last == "text so far: the cat is ▸ " + " ".join(drawn)


def test_byte_level_text_keeps_visible_whitespace_and_ids(runs):
    """The running text (the TUI's header) writes GPT-2's spaces as spaces, exactly as --plain's generation
    line does: on the old code the header said 'The␣cat ▸ ␣…' beside --plain's 'The cat …'. The token tables
    keep ␣ and the raw id."""
    trace = runs["byte-level"]
    vocab = trace.labels["vocab"]
    drawn = [vocab[int(trace[n].output[0, 0])] for n in trace.generation.steps]
    assert all(word.startswith("␣") for word in drawn)  # GPT-2's words carry their leading space
    header = text_so_far(trace, len(trace) - 1).plain
    assert header == "text so far: The cat ▸ " + "".join(drawn).replace("␣", " ")
    console = Console(file=io.StringIO(), width=400, color_system=None)
    console.print(generation_view(trace))
    line = console.file.getvalue().splitlines()[1]  # --plain's text: the prompt, then the new tokens
    assert line.rstrip() == header.removeprefix("text so far: ").replace(" ▸ ", "", 1).rstrip()  # byte-level: no sep
    first = int(trace["gen.0.next"].output[0, 0])
    assert f"{first} {vocab[first]}" in plain(step_output(trace, trace["gen.0.next"]))  # the raw id kept
    assert "⏎" in vocab[:256] and "\n" not in vocab[:256]  # the newline byte is visible, never a line break


def test_tui_shows_the_text_so_far_and_the_words():
    trace = explain.generate("gpt", random_weights=True, text="the cat is", max_new_tokens=2, top_k=3, seed=1)
    vocab = trace.labels["vocab"]
    app = ExplainApp(trace, start="gen.1.next")

    async def script(pilot):
        screen = app.screen
        first, second = (int(trace[n].output[0, 0]) for n in trace.generation.steps)
        info = text_of(screen.query_one(StepInfo))
        assert f"text so far: the cat is ▸ {vocab[first]} {vocab[second]}" in info
        assert f"{second} {vocab[second]}" in text_of(screen.query_one(TensorView))
        drill = screen.query_one(CellPanel).plain()
        assert f"= id {second} ({vocab[second]})" in drill and not BARE.search(drill)
        screen.view = screen.view.go(trace["gen.1.top_k"].index)
        await pilot.pause()
        assert not BARE.search(screen.query_one(CellPanel).plain())

    drive(app, script, size=(120, 40))
