"""The drill-down of a cell that reads a weight of a GGUF run ends with where that weight's float came from in the
file (explain.checkpoints.origin): its block, the block's scale and minimum, the stored integer.

Checked on a Q4_1 file the test writes (tests/helpers/gguf_files.py) for every step kind that reads a parameter:
the weight explained is the one the cell reads (a single cell for the embedding and a norm's gain; for a dot
product the term with the largest |product|, found here with numpy), its value is the run's weight bit for bit,
and the table of terms cut to fit keeps that term's row. A generation's steps and the TUI's backward pass keep
it; a gradient step and a run with random weights have none; the walkthrough prints it after the result.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from gguf_files import write_gguf
from rich.console import Console

import explain
from explain.render.step import explanation_body, explanation_view

TEXT = "The capital of France is"


@pytest.fixture(scope="module")
def q4(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("origin") / "m.gguf", "Q4_1")


@pytest.fixture(scope="module")
def trace(q4: Path):
    return explain.run("llama", checkpoint=str(q4), text=TEXT)


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


def _largest(x_row: np.ndarray, w_col: np.ndarray) -> int:
    return int(np.argmax(np.abs(x_row * w_col)))


def test_dot_products_explain_the_weight_of_their_largest_product(trace) -> None:
    p = trace.params
    x = trace["blocks.0.ln1"].output[0, 3]  # position 3's normalised row
    cases = {  # step, cell -> (parameter, the weight cell it reads with the largest product)
        ("blocks.0.attn.q", (0, 2, 3, 5)): ("blocks.0.attn.W_Q", (2, _largest(x, p["blocks.0.attn.W_Q"][2, :, 5]), 5)),
        ("blocks.0.attn.k", (0, 1, 3, 6)): ("blocks.0.attn.W_K", (1, _largest(x, p["blocks.0.attn.W_K"][1, :, 6]), 6)),
        ("blocks.0.attn.v", (0, 0, 3, 1)): ("blocks.0.attn.W_V", (0, _largest(x, p["blocks.0.attn.W_V"][0, :, 1]), 1)),
    }
    h = trace["blocks.1.ln2"].output[0, 4]
    g = trace["blocks.1.mlp.post"].output[0, 4]
    cases[("blocks.1.mlp.pre", (0, 4, 9))] = ("blocks.1.mlp.W_gate", (_largest(h, p["blocks.1.mlp.W_gate"][:, 9]), 9))
    cases[("blocks.1.mlp.pre_linear", (0, 4, 9))] = ("blocks.1.mlp.W_in", (_largest(h, p["blocks.1.mlp.W_in"][:, 9]), 9))
    cases[("blocks.1.mlp_out", (0, 4, 2))] = ("blocks.1.mlp.W_out", (_largest(g, p["blocks.1.mlp.W_out"][:, 2]), 2))
    f = trace["ln_final"].output[0, 4]
    cases[("logits", (0, 4, 77))] = ("unembed.W_U", (_largest(f, p["unembed.W_U"][:, 77]), 77))
    for (step, index), (name, cell) in cases.items():
        ex = trace.explain(step, index)
        assert ex.origin is not None, step
        assert ex.origin.title == f"where {name}{list(cell)} came from in the file", (step, ex.origin.title)
        assert ex.origin.value == p[name][cell], step  # the float the run used, bit for bit
        text = "\n".join(ex.origin.lines)
        assert f"k = {cell[-2]}" in text and "scale d" in text and "minimum m" in text and "stored integer q" in text
        assert ex.focus[0] == cell[-2], step  # a table cut to fit shows the explained term's row


def test_a_single_weight_cell_is_explained_as_it_is_read(trace) -> None:
    ids = trace["tokens"].output[0]
    ex = trace.explain("embed", (0, 2, 7))
    assert ex.origin.title == f"where W_E[{int(ids[2])}, 7] came from in the file"
    assert ex.origin.value == trace.params["W_E"][int(ids[2]), 7] == trace["embed"].output[0, 2, 7]
    assert f"row {int(ids[2])} of token_embd.weight, column 7" in ex.origin.lines
    ex = trace.explain("blocks.1.ln1", (0, 0, 4))  # the norm's gain is stored as float32: read as is
    assert ex.origin.title == "where blocks.1.ln1.w[4] came from in the file"
    assert ex.origin.value == trace.params["blocks.1.ln1.w"][4]
    assert any("stored as F32" in line for line in ex.origin.lines)


def test_steps_without_weights_gradients_and_random_runs_have_no_origin(trace) -> None:
    assert trace.explain("blocks.0.attn.scores", (0, 0, 1, 0)).origin is None  # reads no parameter
    assert explain.run("llama", text=TEXT).explain("embed", (0, 0, 0)).origin is None  # random weights
    back = explain.engine.api.with_backward(trace)
    assert back.origin is trace.origin and back.explain("blocks.0.attn.q", (0, 0, 0, 0)).origin is not None
    grad = next(s for s in back if s.op.endswith(".grad"))
    assert back.explain(grad, (0,) * len(grad.shape)).origin is None


def test_a_generated_token_reads_the_same_weights(q4: Path) -> None:
    gen = explain.generate("llama", checkpoint=str(q4), text=TEXT, max_new_tokens=2, greedy=True)
    step = next(s for s in gen if s.name.startswith("gen.") and s.name.endswith("blocks.0.attn.q"))
    w = gen.params["blocks.0.attn.W_Q"]
    k = _largest(gen.inputs_of(step)[0][0, 0], w[1, :, 3])  # the new token's one position
    ex = gen.explain(step, (0, 1, 0, 3))
    assert ex.origin.title == f"where blocks.0.attn.W_Q[1, {k}, 3] came from in the file"
    assert ex.origin.value == w[1, k, 3]


def test_printed_after_the_arithmetic(trace) -> None:
    ex = trace.explain("blocks.0.attn.q", (0, 2, 3, 5))
    body = _text(explanation_body(ex))
    assert "came from in the file" in body and "stored integer q" in body
    view = _text(explanation_view(ex))  # the walkthrough: the result first, then where the weight came from
    assert view.index("sum of 32 products") < view.index("came from in the file")


def test_plain_and_json_cell_carry_it(q4: Path, trace) -> None:
    """--cell prints one drill-down (issue 26's): --plain after the result, --json as "origin"."""
    from click.testing import CliRunner

    from explain.cli import main

    args = ["run", "--checkpoint", str(q4), "--text", TEXT, "--match", "blocks.0.attn.q", "--cell", "0,1,2,3"]
    plain = CliRunner().invoke(main, [*args, "--plain"], catch_exceptions=False)
    assert plain.exit_code == 0, plain.output
    assert plain.output.index("sum of 32 products") < plain.output.index("came from in the file")
    assert "stored integer q" in plain.output
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False).output)
    origin = next(s for s in doc["steps"] if s["name"] == "blocks.0.attn.q")["explanation"]["origin"]
    want = trace.explain("blocks.0.attn.q", (0, 1, 2, 3)).origin
    assert origin["title"] == want.title and origin["value"] == want.value and origin["lines"] == want.lines


def test_the_readme_call_runs_as_written(q4: Path) -> None:
    """Session 9: the README said to import open_checkpoint from explain.checkpoints.gpt2 (an ImportError)."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    call, module = re.search(r"From Python: `(open_checkpoint\(FILE\)\.weight_origin\([^`]*\))` \(from\s+`([\w.]+)`\)",
                             readme).groups()
    namespace: dict = {}
    exec(f"from {module} import open_checkpoint", namespace)  # noqa: S102 - the README's own words
    origin = eval(call.replace("FILE", repr(str(q4))), namespace)  # noqa: S307
    assert origin.index == (0, 5, 3) and "stored integer q" in " ".join(origin.lines)
