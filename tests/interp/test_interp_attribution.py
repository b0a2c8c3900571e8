"""Direct logit attribution (explain.interp.attribution): the parts sum to the final residual and their
contributions to the logit (or logit difference) to 1e-10, on gpt and a GPT-2 checkpoint; parts and
contributions equal those made from transformers' hooks (tests/data/make_interp_expected.py) to 1e-10; the
drill-down of the total shows the sum beside the run's logit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explain.core.errors import UsageError
from explain.interp.attribution import attribute

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)

CKPT = DATA / "gpt2_tiny"
EXPECTED = DATA / "interp" / "gpt2_tiny_expected.npz"


@pytest.mark.parametrize("options", [dict(), dict(layers=3, seed=4, text="the cat sat on the mat"),
                                     dict(checkpoint=str(CKPT), text="The cat is")])
@pytest.mark.parametrize("vs", [None, "the"])
def test_the_parts_sum_to_the_logit(options, vs):
    options = {("n_layers" if k == "layers" else k): v for k, v in options.items()}
    ck = "checkpoint" in options
    result = attribute("gpt", " happy" if ck else "happy", (" " + vs if ck else vs) if vs else None, **options)
    t = result.trace
    stack = t["attrib.parts"].output
    final = t["ln_final"]
    np.testing.assert_allclose(stack.sum(axis=0), t[final.inputs[0]].output[0, result.position], rtol=0, atol=1e-10)
    assert abs(result.total - result.logit) <= 1e-10
    assert abs(sum(v for _, v in result.parts) - result.logit) <= 1e-10
    logits = t["logits"].output[0, result.position]  # where the word is next, when the text holds it
    want = logits[result.word] - (logits[result.vs] if result.vs is not None else 0.0)
    assert result.logit == want


@pytest.mark.parametrize("folder", ["hf_llama", "hf_qwen2"])
@pytest.mark.parametrize("vs", [None, " is"])
def test_the_parts_sum_to_the_logit_on_llama_checkpoints(folder, vs):
    """The issue's 'llama and its checkpoints': a Llama and a Qwen2 folder (RMSNorm's frozen scale, no position
    embedding, no output biases; Qwen2's q/k/v biases are inside each head's write)."""
    result = attribute("llama", " cat", vs, checkpoint=str(DATA / "llama" / folder), text="The cat is")
    t = result.trace
    final = t["ln_final"]
    np.testing.assert_allclose(t["attrib.parts"].output.sum(axis=0), t[final.inputs[0]].output[0, result.position], rtol=0,
                               atol=1e-10)
    assert abs(result.total - result.logit) <= 1e-10
    assert abs(sum(v for _, v in result.parts) - result.logit) <= 1e-10
    logits = t["logits"].output[0, result.position]  # where the word is next, when the text holds it
    assert result.logit == logits[result.word] - (logits[result.vs] if result.vs is not None else 0.0)


def test_parts_and_contributions_equal_transformers_hooks():
    exp = np.load(EXPECTED)
    result = attribute("gpt", " happy", " the", checkpoint=str(CKPT), text="The cat is")
    np.testing.assert_allclose(result.trace["attrib.parts"].output, exp["attr_parts"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.trace["attrib.contributions"].output, exp["attr_contrib"], rtol=0, atol=1e-10)


def test_ranked_by_size_and_the_total_explains_the_sum():
    result = attribute("gpt", "happy", "cat")
    sizes = [abs(v) for _, v in result.ranked()]
    assert sizes == sorted(sizes, reverse=True)
    labels = [p for p, _ in result.parts]
    assert labels[:2] == ["embed", "pos_embed"] and "blocks.1 head 1" in labels and labels[-1] == "final norm β"
    cell = result.trace.explain("attrib.total", ())
    assert len(cell.rows) == len(result.parts) and cell.lines[0].startswith("sum = ")
    p = result.position
    assert f"the run's logits[0, {p}, " in cell.lines[1] and "difference" in cell.lines[2]
    assert f"(happy) − logits[0, {p}, " in cell.lines[1] and "(cat) = " in cell.lines[1]  # words, not ids alone
    assert "TransformerLens" in result.trace["attrib.contributions"].note


def test_each_step_explains_its_cells():
    t = attribute("gpt", "happy").trace
    r = t["attrib.blocks.0.attn.result"]
    z, W_O = t["blocks.0.attn.z"].output, t.params["blocks.0.attn.W_O"]
    m = z.shape[-1]
    assert r.output[0, 1, 2, 3] == pytest.approx(z[0, 1, 2] @ W_O[m:2 * m, 3], abs=1e-12)
    heads = r.output.sum(axis=1) + t.params["blocks.0.attn.b_O"]
    np.testing.assert_allclose(heads, t["blocks.0.attn_out"].output, rtol=0, atol=1e-12)
    for name in ("attrib.blocks.0.attn.result", "attrib.parts", "attrib.normed", "attrib.contributions"):
        step = t[name]
        cell = tuple(0 for _ in step.shape)
        assert t.explain(step, cell).value == step.output[cell]


def test_the_same_word_twice_is_refused():
    with pytest.raises(UsageError, match="is --word itself"):
        attribute("gpt", "cat", "cat")
