"""Each op kind's views agree with each other: the cell explanation reproduces the output cell from its own
terms, the shape rule matches the computed shape (checked in every run by the recorder), and special cases
(−inf, fully masked rows) are explained rather than silently NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from interp_runs import GPT2_TINY, interp_run

import explain
from explain import ops
from explain.core.sampling import make_sampling
from explain.ops.base import Syms
from explain.ops.kernels import softmax

MODELS = ["simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt", "llama", "bert",
          "gemma"]


def _cells(step, n=3):
    """A few cells of a step: first, last, and one in the middle."""
    shape = step.shape
    if not shape:
        return [()]
    last = tuple(s - 1 for s in shape)
    mid = tuple(s // 2 for s in shape)
    return [tuple(0 for _ in shape), mid, last][:n]


@pytest.mark.parametrize("model", MODELS)
def test_every_cell_explanation_reports_the_cell_value(model: str) -> None:
    t = explain.run(model, normalize="sum") if model == "simple" else explain.run(model)
    for step in t:
        for cell in _cells(step):
            ex = t.explain(step, cell)
            out = float(step.output[cell]) if cell else float(step.output)
            assert ex.value == out or (math.isinf(out) and ex.value == out), (step.name, cell)
            assert ex.title and ex.lines, step.name


def test_every_op_kind_is_exercised_by_the_zoo() -> None:
    from explain.engine.api import plan

    kinds = {s.op for m in MODELS for s in plan(m, backward=True)} | {s.op for s in plan("gpt", lr=0.1)}
    kinds |= {s.op for s in plan("gpt", lr=0.1, optimizer="adamw")}
    kinds |= {s.op for s in plan("simple", normalize="sum", backward=True)}
    for sampling in (make_sampling(2, top_k=3, top_p=0.9), make_sampling(2, greedy=True)):
        kinds |= {s.op for s in plan("gpt", sampling=sampling)}
    kinds |= {s.op for s in plan("gpt", text=["the cat sat", "a dog"], backward=True)}  # padding
    kinds |= {s.op for s in interp_run()}  # recorded after a run: lens, attribution, a patch (explain.interp)
    kinds |= {s.op for s in plan("llama", sampling=make_sampling(2, greedy=True))}  # shared key heads' cache
    kinds |= {s.op for s in plan("gpt", attention_kernel="tiled", attention_tile=3, backward=True)}  # online softmax
    kinds |= {s.op for s in plan("gpt", tokenizer_steps=True, checkpoint=str(GPT2_TINY))}  # BPE merges
    # a mixture of experts with DeepSeek's router (sigmoid scores, groups, a gated shared expert), backward
    kinds |= {s.op for s in plan("llama", n_experts=6, router="sigmoid", n_group=3, topk_group=2, n_shared_experts=1,
                                 shared_expert_gate=True, backward=True)}
    kinds |= {"wordpiece_match"}  # no model of the zoo reads WordPiece: tests/export/test_export_sources.py runs it
    assert kinds == set(ops.REGISTRY), set(ops.REGISTRY) - kinds


@pytest.mark.parametrize("name", ["attn.scores", "attn.q", "attn_out", "attn.z", "attn.concat"])
def test_product_explanations_sum_to_the_value(name: str) -> None:
    t = explain.run("multihead", seed=1)
    step = t[name]
    for cell in _cells(step):
        ex = t.explain(step, cell)
        if step.op == "merge_heads":
            head, col = divmod(cell[-1], t.config.head_dim)
            assert ex.value == t["attn.z"].output[head, cell[0], col]
            continue
        products = [r[1] * r[2] for r in ex.rows]
        assert [r[3] for r in ex.rows] == pytest.approx(products)
        bias = t.params["attn.b_O"][cell[-1]] if step.op == "linear" else (
            t.params["attn.b_Q"][cell[0], cell[-1]] if step.op == "linear_heads" else 0.0)
        assert sum(products) + bias == pytest.approx(ex.value, rel=1e-12, abs=1e-12)


def test_softmax_explanation_shows_exps_sum_and_quotient() -> None:
    t = explain.run("causal", seed=2)
    ex = t.explain("attn.pattern", (3, 1))
    row = t["attn.masked"].output[3]
    exps = np.exp(row - row.max())
    assert [r[3] for r in ex.rows] == pytest.approx(list(exps))
    assert ex.value == pytest.approx(exps[1] / exps.sum(), rel=1e-12)
    masked = t.explain("attn.pattern", (1, 4))
    assert masked.value == 0.0 and any("masked" in line for line in masked.lines)


def test_mask_explains_why_a_cell_is_minus_infinity() -> None:
    t = explain.run("causal")
    ex = t.explain("attn.masked", (0, 3))
    assert math.isinf(ex.value) and "after query position 0" in ex.lines[0]
    kept = t.explain("attn.masked", (3, 0))
    assert kept.value == t["attn.scaled"].output[3, 0] and "allowed" in kept.lines[0]
    # the mask: exactly the cells above the diagonal are −inf
    m = t["attn.masked"].output
    assert np.array_equal(np.isneginf(m), np.triu(np.ones_like(m, dtype=bool), 1))


def test_fully_masked_row_is_zero_and_explained_not_nan() -> None:
    row = np.array([[-np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf]])
    out = softmax(row)
    assert not np.isnan(out).any() and out[0].tolist() == [0.0, 0.0, 0.0]
    ex = ops.get("softmax").explain((0, 1), [row], out, Syms("A", ("S",)))
    assert "every position is masked" in " ".join(ex.lines)


def test_layer_norm_explanation_gives_mean_and_biased_variance() -> None:
    t = explain.run("gpt", random_weights=True, seed=3)
    ex = t.explain("blocks.0.ln1", (0, 2, 5))
    x = t["blocks.0.resid_pre"].output[0, 2]
    assert f"mean = {ops.num(x.mean())}" in ex.lines
    assert ex.lines[1].endswith(ops.num(x.var()))


def test_add_explanation_names_both_terms_with_broadcasting() -> None:
    t = explain.run("gpt", random_weights=True, text=["the cat is happy", "the dog is hungry"])
    ex = t.explain("blocks.0.resid_pre", (1, 2, 3))
    # embed (B, T, d) + pos_embed (T, d): the position term has no batch index
    assert [r[0] for r in ex.rows] == ["X[1, 2, 3]", "P[2, 3]"]
    assert ex.rows[0][1] + ex.rows[1][1] == ex.value


def test_scale_explanation_divides_by_root_dk() -> None:
    t = explain.run("attention", d_model=16)
    ex = t.explain("attn.scaled", (0, 1))
    assert "√d_k = 4" in ex.lines[0]
    assert ex.value == pytest.approx(t["attn.scores"].output[0, 1] / 4)


def test_loss_steps_pick_negate_and_average() -> None:
    t = explain.run("gpt", random_weights=True)
    ids = t["tokens"].output[0]
    lp = t["log_probs"].output[0]
    picked = t["correct_log_probs"].output[0]
    assert picked.tolist() == [lp[i, ids[i + 1]] for i in range(len(ids) - 1)]
    assert float(t["loss"].output) == pytest.approx(-picked.mean(), rel=1e-14)
    np.testing.assert_allclose(np.exp(lp), t["probs"].output[0], rtol=1e-12)


def test_cell_outside_the_tensor_is_an_error() -> None:
    t = explain.run("attention")
    with pytest.raises(explain.core.errors.ShapeError, match="outside attn.scores"):
        t.explain("attn.scores", (5, 0))


def test_unknown_step_name_suggests_the_nearest() -> None:
    t = explain.run("gpt", random_weights=True)
    with pytest.raises(explain.core.errors.StepNotFound, match="blocks.0.attn.pattern"):
        t["blocks.0.attn.patern"]


def test_sinusoid_matches_the_paper_formula() -> None:
    t = explain.run("encoder", text="a b c d e f g h", d_model=8)
    pe = t["pos_embed"].output
    for pos in range(8):
        for i in range(4):
            assert pe[pos, 2 * i] == pytest.approx(math.sin(pos / 10000 ** (2 * i / 8)), abs=1e-15)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(pos / 10000 ** (2 * i / 8)), abs=1e-15)
