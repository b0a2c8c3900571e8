"""The logit lens (explain.interp.lens): recorded steps whose last read is the run's logits exactly, every read
equal to Hugging Face's GPT-2 through ln_f (tests/data/make_interp_expected.py, float64, 1e-10), ranks and
probabilities from an independent softmax, and the one-line refusals."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rich.console import Console

from explain.core.errors import InputError, UsageError
from explain.interp.lens import Lens, LensRow, lens
from explain.render.lens import lens_grid

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)

CKPT = DATA / "gpt2_tiny"
EXPECTED = DATA / "interp" / "gpt2_tiny_expected.npz"


@pytest.fixture(scope="module")
def tiny():
    return lens("gpt", " happy", checkpoint=str(CKPT), text="The cat is")


def test_last_read_is_the_logits_exactly_on_gpt():
    result = lens("gpt", "happy")
    t = result.trace
    np.testing.assert_array_equal(t["lens.blocks.1.resid_post.logits"].output, t["logits"].output)
    assert [r.label for r in result.rows] == ["0", "0+attn", "1", "1+attn", "2"]


def test_last_read_is_the_logits_exactly_on_a_checkpoint(tiny):
    t = tiny.trace
    np.testing.assert_array_equal(t["lens.blocks.1.resid_post.logits"].output, t["logits"].output)


def test_every_read_equals_transformers(tiny):
    """Each point through ln_f and the tied unembedding, against HF's hidden states caught by hooks."""
    want = np.load(EXPECTED)["lens"]
    got = np.stack([tiny.trace[r.step].output[0] for r in tiny.rows])
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)


def test_ranks_and_probabilities_from_an_independent_softmax(tiny):
    want = np.load(EXPECTED)["lens"][:, -1]  # (points, V) at the last position
    word = int(np.load(EXPECTED)["word"])
    for row, logits in zip(tiny.rows, want):
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-logits, kind="stable")
        assert row.rank == int(np.nonzero(order == word)[0][0]) + 1
        assert row.prob == pytest.approx(p[word], abs=1e-12)
        assert row.top[-1][0] == order[0] and row.top[-1][2] == pytest.approx(p[order[0]], abs=1e-12)


def test_lens_steps_have_the_usual_views(tiny):
    t = tiny.trace
    step = t["lens.blocks.0.resid_mid.logits"]
    assert step.inputs == ("lens.blocks.0.resid_mid.ln_final", "W_E") and "ᵀ" in step.formula
    cell = t.explain(step, (0, 2, 5))
    assert cell.value == step.output[0, 2, 5] and cell.lines[0].startswith("sum of 16 products")
    norm = t["lens.blocks.0.resid_mid.ln_final"]
    assert norm.inputs[0] == "blocks.0.resid_mid" and norm.op == "layer_norm"


@pytest.mark.parametrize("model, needle", [("encoder", "post-LN"), ("transformer", "post-LN"),
                                           ("attention", "no residual stream")])
def test_models_without_a_summed_stream_are_refused(model, needle):
    with pytest.raises(UsageError, match=needle):
        lens(model, "cat")


def test_a_word_that_splits_is_refused_with_its_tokens():
    with pytest.raises(InputError, match=r"' mat' is 2 tokens \('␣m' \+ 'at'\)"):
        lens("gpt", " mat", checkpoint=str(CKPT), text="The cat is")


def test_a_word_outside_the_vocabulary_is_refused():
    with pytest.raises(InputError, match="'Paris' is not in the vocabulary"):
        lens("gpt", "Paris")


def test_a_position_outside_the_text_is_refused():
    with pytest.raises(UsageError, match="--position 9 is outside the 4 positions"):
        lens("gpt", "cat", position=9)


def test_the_printed_grid_keeps_every_layer_and_probability_at_80_columns():
    """SmolLM2's lens printed at 80 columns (piped) cut the layer column ('10+a…') and the cells ('␣the 0.…',
    '␣capital 1…'). Here a 30-layer-like grid of five long words: every layer label and every probability is
    printed whole (a cell too narrow wraps its probability onto a second line)."""
    words = ["The", "␣capital", "␣of", "␣France", "␣is"]
    tops = ["<filename>", "␣dismant", "␣capital", "␣the", "␣Paris"]
    rows = [LensRow(label, "x", [(0, tops[(i + t) % 5], 0.5 + i / 100 + t / 1000) for t in range(5)])
            for i, label in enumerate(["0", "0+attn", "10", "10+attn", "29+attn"])]
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(lens_grid(Lens(SimpleNamespace(labels={"pos": words}), None, "", 4, rows)))
    out = console.file.getvalue()
    assert "…" not in out, out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for row in rows:
        assert any(line.startswith(f"│ {row.label:>7} │") for line in lines), (row.label, out)
        for _, _, p in row.top:
            assert f"{p:.2f}" in out, (p, out)
