"""The router's conventions, each against an independent numpy computation: the tie rule (the lower expert index),
softmax-then-renormalise = a softmax over the chosen logits (one step, both said), the grouped choice with a
choosing-only bias, and the drill-downs that say why an expert was (not) chosen."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain.core.config import make_config
from explain.core.errors import ConfigError
from explain.ops import kernels

TEXT = "the cat sat on the mat"


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _with(trace, **params):
    """The trace's weights with some replaced, run again with the same options."""
    weights = dict(trace.params, **params)
    cfg = trace.config
    opts = {k: getattr(cfg, k) for k in ("n_experts", "experts_per_token", "router", "n_group", "topk_group",
                                          "norm_topk_prob", "routed_scaling_factor", "n_layers")}
    return explain.run("llama", text=TEXT, weights=weights, **opts)


def test_a_tie_goes_to_the_lower_expert_index() -> None:
    # experts 1 and 3 have the same router column: their logits are equal at every position, bit for bit; 0 and 2
    # have zeros, so they tie at 0. With k = 1 the choice is expert 1 where x·w > 0, expert 0 elsewhere: never 3
    # or 2, the higher index of each tie.
    base = explain.run("llama", text=TEXT, n_experts=4, experts_per_token=1, n_layers=1)
    rng = np.random.default_rng(3)
    w = rng.standard_normal(base.config.d_model)
    W = np.zeros((base.config.d_model, 4))
    W[:, 1] = W[:, 3] = w
    trace = _with(base, **{"blocks.0.mlp.W_router": W})
    x = trace["blocks.0.ln2"].output[0]
    logits = trace["blocks.0.mlp.router_logits"].output[0]
    assert np.array_equal(logits[:, 1], logits[:, 3])
    chosen = trace["blocks.0.mlp.choice"].output[0].argmax(-1)
    np.testing.assert_array_equal(chosen, np.where(x @ w > 0, 1, 0))
    t = int(np.argmax(x @ w > 0))
    lines = trace.explain("blocks.0.mlp.choice", (0, t, 1)).lines
    assert any("tie with expert 3, broken by the lower index" in ln for ln in lines), lines
    lines = trace.explain("blocks.0.mlp.choice", (0, t, 3)).lines
    assert any("a tie with expert 1, broken by the lower index" in ln for ln in lines), lines
    assert kernels.route(np.array([[0.5, 0.5, 0.1, 0.5]]), 2).tolist() == [[1, 1, 0, 0]]


def test_renormalised_softmax_is_a_softmax_over_the_chosen_logits() -> None:
    trace = explain.run("llama", text=TEXT, n_experts=6, experts_per_token=3, seed=4)
    logits = trace["blocks.1.mlp.router_logits"].output[0]
    choice = trace["blocks.1.mlp.choice"].output[0]
    want = np.zeros_like(logits)
    for t, row in enumerate(logits):
        top = np.argsort(-row, kind="stable")[:3]
        assert set(top) == set(np.nonzero(choice[t])[0])
        want[t, top] = _softmax(row[top])
    np.testing.assert_allclose(trace["blocks.1.mlp.kept_weights"].output[0], want, rtol=1e-12, atol=1e-15)
    assert not any(s.name.endswith(("renormalised", "renormalized")) for s in trace)  # one step, not two
    e = int(np.nonzero(choice[2])[0][0])
    lines = trace.explain("blocks.1.mlp.kept_weights", (0, 2, e)).lines
    assert any(ln.startswith("renormalised over the 3 chosen") for ln in lines), lines
    assert any("the same as a softmax over the chosen experts' logits alone" in ln for ln in lines), lines
    assert any(ln.startswith("the chosen experts' probabilities: ") for ln in lines), lines  # not "probabilitys"


def test_not_renormalised_the_weights_are_the_probabilities() -> None:
    trace = explain.run("llama", text=TEXT, n_experts=4, norm_topk_prob=False)
    probs, choice = (trace[f"blocks.0.mlp.{n}"].output for n in ("router_scores", "choice"))
    np.testing.assert_array_equal(trace["blocks.0.mlp.kept_weights"].output, probs * choice)
    e = int(np.nonzero(choice[0, 0])[0][0])
    assert any("norm_topk_prob off" in ln for ln in trace.explain("blocks.0.mlp.kept_weights", (0, 0, e)).lines)


def test_grouped_sigmoid_router_with_a_choosing_bias() -> None:
    """DeepSeek-V3's choice, computed here by hand: groups scored by their 2 best biased scores, the best kept,
    the top k of the experts in them; weights from the unbiased scores, renormalised, × the scale."""
    opts = dict(n_experts=8, experts_per_token=2, router="sigmoid", n_group=4, topk_group=2,
                routed_scaling_factor=2.5, n_layers=1)
    base = explain.run("llama", text=TEXT, **opts)
    rng = np.random.default_rng(5)
    bias = rng.normal(0, 0.05, 8)
    trace = _with(base, **{"blocks.0.mlp.W_router": rng.standard_normal((base.config.d_model, 8)),
                           "blocks.0.mlp.b_choice": bias})
    scores = 1 / (1 + np.exp(-trace["blocks.0.mlp.router_logits"].output[0]))
    np.testing.assert_allclose(trace["blocks.0.mlp.router_scores"].output[0], scores, rtol=1e-14)
    biased = scores + bias
    changed = 0
    for t in range(len(scores)):
        groups = [sorted(biased[t, g * 2:g * 2 + 2])[-2:] for g in range(4)]
        kept = np.argsort([-sum(g) for g in groups], kind="stable")[:2]
        allowed = [e for e in range(8) if e // 2 in kept]
        top = sorted(allowed, key=lambda e: (-biased[t, e], e))[:2]
        np.testing.assert_array_equal(np.nonzero(trace["blocks.0.mlp.choice"].output[0, t])[0], sorted(top))
        w = np.zeros(8)
        w[top] = scores[t, top] / scores[t, top].sum() * 2.5  # the weights: unbiased scores
        np.testing.assert_allclose(trace["blocks.0.mlp.kept_weights"].output[0, t], w, rtol=1e-12)
        plain = explain.ops.kernels.route(scores[t][None], 2, 4, 2)[0]
        if not np.array_equal(plain, trace["blocks.0.mlp.choice"].output[0, t]):
            changed += 1
            e = int(np.nonzero(trace["blocks.0.mlp.choice"].output[0, t] - plain)[0][0])
            lines = trace.explain("blocks.0.mlp.choice", (0, t, e)).lines
            assert any(ln.startswith("the biases changed the choice") for ln in lines), lines
        dropped = [e for e in range(8) if e not in allowed][0]
        lines = trace.explain("blocks.0.mlp.choice", (0, t, dropped)).lines
        assert any("which was dropped" in ln for ln in lines), lines
    assert changed  # the bias changed some position's choice: the drill-down said so


def test_an_expert_computes_only_the_positions_routed_to_it() -> None:
    trace = explain.run("llama", text=TEXT, n_experts=4, n_layers=1)
    choice = trace["blocks.0.mlp.choice"].output[0]  # (T, E)
    x = trace["blocks.0.ln2"].output[0]
    W = trace.params["blocks.0.mlp.experts.W_gate"]
    pre = trace["blocks.0.mlp.experts.pre"].output[0]  # (E, T, f)
    for e in range(4):
        for t in range(len(x)):
            want = x[t] @ W[e] if choice[t, e] else 0 * W[e][0]
            np.testing.assert_allclose(pre[e, t], want, rtol=1e-13)
    e, t = int(np.argmin(choice[0])), 0  # an expert position 0 did not go to
    ex = trace.explain("blocks.0.mlp.experts.pre", (0, e, t, 1))
    assert "did not go to expert" in ex.title and ex.value == 0


@pytest.mark.parametrize("options, needles", [
    (dict(n_experts=0), ("--experts 0", "at least 1 expert")),
    (dict(n_experts=2, experts_per_token=3), ("--experts-per-token 3", "more than the 2 experts")),
    (dict(n_experts=6, n_group=4), ("--n-group 4", "divisor of 6")),
    (dict(n_experts=4, n_group=4), ("groups of 1 expert", "at most 2 groups")),
    (dict(n_experts=8, n_group=2, topk_group=3), ("--topk-group 3", "more than the 2 groups")),
    (dict(n_experts=8, n_group=4, topk_group=1, experts_per_token=3), ("cannot be chosen from 1 group of 2",)),
    (dict(n_experts=4, routed_scaling_factor=0.0), ("--routed-scaling-factor", "positive")),
    (dict(n_experts=4, routed_scaling_factor=float("nan")), ("--routed-scaling-factor",)),
    (dict(n_experts=4, first_k_dense_replace=2), ("--first-k-dense-replace 2", "at most 1")),
    (dict(n_experts=4, shared_expert_gate=True), ("--shared-expert-gate", "--shared-experts 1")),
    (dict(experts_per_token=3), ("--experts-per-token 3", "needs --experts")),
    (dict(router="sigmoid"), ("--router sigmoid", "needs --experts")),
])
def test_a_router_that_cannot_be_built_is_refused_in_one_line(options: dict, needles: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError) as err:
        make_config("llama", **options)
    message = str(err.value)
    assert "\n" not in message and all(n in message for n in needles), message


def test_expert_steps_fill_untouched_zeros_and_equal_the_plain_kernels() -> None:
    """Issue 43 (bench_moe): an expert's step is written into zeros whose pages are backed only where a taken row
    lands (an anonymous mmap: numpy's own zeros of 4 MiB or more ask for 2 MiB huge pages, so one taken row zeroed
    a whole huge page); the values are exactly the exported kernels' (np.zeros), rows not taken 0."""
    import mmap

    from explain.ops import get
    from explain.ops.kernels import expert_linear, expert_swiglu

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 5, 4)), rng.standard_normal((3, 4, 6))
    choice = np.zeros((2, 5, 3))
    choice[..., 0], choice[0, 2, 1], choice[1, 4, 2] = 1.0, 1.0, 1.0
    gate = get("expert_linear").compute(x, w, choice)
    up = get("expert_linear").compute(x, w[::-1].copy(), choice)
    out = get("expert_swiglu").compute(gate, up, choice)
    for got, plain in ((gate, expert_linear(x, w, choice)), (out, expert_swiglu(gate, up, choice))):
        np.testing.assert_array_equal(got, plain)
        root = got
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        assert isinstance(root, memoryview) and isinstance(root.obj, mmap.mmap)  # the untouched zeros, not np.zeros
    assert (gate[1, 1] == 0).all() and (gate[1, 1, 4] == 0).all() and (gate[0, 1, 2] != 0).all()
