"""Each op kind's backward, against central finite differences in float64 (a hypothesis property test), and its
other backward views against its VJP: the numpy source computes the same array, the shape rule gives its shape,
and a gradient cell's explanation ends at that cell's value."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explain import ops
from explain.ops import kernels
from explain.ops.base import Op, Syms, num

Case = Callable[[np.random.Generator, int, int], tuple[list, dict]]


def _away_from_zero(a):
    return np.where(np.abs(a) < 0.1, a + 0.3, a)  # ReLU's kink at 0 has no derivative to check


IGNORE = -100  # torch's ignore_index, as explain.core.padding uses it


def _padding(r, b, s):
    """A (batch, keys) padding indicator: each sequence keeps its first key, and a random tail is <pad>."""
    lengths = r.integers(1, s + 1, b)
    return (np.arange(s)[None, :] >= lengths[:, None]).astype(np.int64)


def _ignored(r, targets):
    """Targets with a random right-hand tail (but never the first) set to ignore_index, as padding leaves them."""
    out = targets.copy()
    for row in out:
        row[r.integers(1, len(row) + 1):] = IGNORE
    return out


CASES: dict[str, Case] = {
    "matmul": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((2, n + 1, m))], {"transpose_b": True}),
    "matmul_broadcast": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((m, n))], {}),
    "weighted_sum": lambda r, n, m: ([r.standard_normal((n, n)), r.standard_normal((n, m))], {}),
    "linear": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((m, 3)), r.standard_normal(3)], {}),
    "linear_tied": lambda r, n, m: ([r.standard_normal((n, m)), r.standard_normal((5, m))], {"transpose_w": True}),
    "linear_heads": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((2, m, 3)),
                                      r.standard_normal((2, 3))], {}),
    "merge_heads": lambda r, n, m: ([r.standard_normal((2, 3, n, m))], {}),
    "slice": lambda r, n, m: ([r.standard_normal((m, n + 2))], {"axis": -1, "stop": n}),
    "slice_start": lambda r, n, m: ([r.standard_normal((2, m, n + 2))], {"axis": -1, "start": 1, "stop": n + 1}),
    "add": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((n, m))], {}),
    "scale": lambda r, n, m: ([r.standard_normal((n, m))], {"root": "d_k", "n": 4}),
    "scale_multiply": lambda r, n, m: ([r.standard_normal((n, m))], {"root": "d_model", "n": 3, "multiply": True}),
    "mask": lambda r, n, m: ([r.standard_normal((2, n, n))], {}),
    "relu": lambda r, n, m: ([_away_from_zero(r.standard_normal((n, m)))], {}),
    "gelu": lambda r, n, m: ([2 * r.standard_normal((n, m))], {}),
    "neg": lambda r, n, m: ([r.standard_normal((n, m))], {}),
    "softmax": lambda r, n, m: ([3 * r.standard_normal((2, n, m))], {}),
    "softmax_masked": lambda r, n, m: ([kernels.causal_mask(r.standard_normal((n, n)))], {}),
    "sum_normalize": lambda r, n, m: ([r.uniform(0.5, 2.0, (n, m))], {}),
    "log_softmax": lambda r, n, m: ([r.standard_normal((2, n, m))], {}),
    "layer_norm": lambda r, n, m: ([r.standard_normal((2, n, m + 1)), r.standard_normal(m + 1),
                                    r.standard_normal(m + 1)], {"eps": 1e-5}),
    "embed": lambda r, n, m: ([r.integers(0, 5, (2, n)), r.standard_normal((5, m))], {}),
    "pos_embed": lambda r, n, m: ([r.standard_normal((n + 3, m))], {"n": n}),
    "pick": lambda r, n, m: ([r.standard_normal((2, n, m)), r.integers(0, m, (2, n))], {}),
    "mean": lambda r, n, m: ([r.standard_normal((n, m))], {}),
    # a padded batch: the padding mask hides whole key columns; ignored targets (-100) drop out of pick and mean
    "pad_mask": lambda r, n, m: ([r.standard_normal((2, n, n + 1)), _padding(r, 2, n + 1)], {}),
    "pick_ignore": lambda r, n, m: ([r.standard_normal((2, n, m)), _ignored(r, r.integers(0, m, (2, n)))],
                                    {"ignore_index": IGNORE}),
    "mean_ignore": lambda r, n, m: ([r.standard_normal((2, n)), _ignored(r, r.integers(0, m, (2, n)))],
                                    {"ignore_index": IGNORE}),
    "mse": lambda r, n, m: ([r.standard_normal((n, m)), r.standard_normal((n, m))], {}),
    # the Llama block's op kinds
    "rms_norm": lambda r, n, m: ([r.standard_normal((2, n, m + 1)), r.standard_normal(m + 1)], {"eps": 1e-5}),
    "rope": lambda r, n, m: ([r.standard_normal((2, 2, n, 2 * m))], {"theta": 100.0, "start": n}),
    "rope_interleaved": lambda r, n, m: ([r.standard_normal((2, 1, n, 2 * m))],
                                         {"theta": 100.0, "start": n, "layout": "interleaved"}),
    "repeat_kv": lambda r, n, m: ([r.standard_normal((2, 2, n, m))], {"n": 3}),
    "swiglu": lambda r, n, m: ([2 * r.standard_normal((n, m)), r.standard_normal((n, m))], {}),
    # the Gemma block's: its norm's gain 1 + w (QK-norm over the last axis of heads), GeGLU, the sliding window
    "rms_norm_plus_one": lambda r, n, m: ([r.standard_normal((2, 2, n, m + 1)), 0.3 * r.standard_normal(m + 1)],
                                          {"eps": 1e-6, "plus_one": True}),
    "geglu": lambda r, n, m: ([2 * r.standard_normal((n, m)), r.standard_normal((n, m))], {}),
    "window_mask": lambda r, n, m: ([kernels.causal_mask(r.standard_normal((2, n + 2, n + 2)))], {"window": 2}),
    # the mixture of experts' (the choice itself, route, has no gradient)
    "keep": lambda r, n, m: ([r.uniform(0.1, 1.0, (2, n, 4)), _choice(r, (2, n), 4, 2)],
                             {"norm": True, "scale": 2.5}),
    "keep_plain": lambda r, n, m: ([r.uniform(0.1, 1.0, (n, 4)), _choice(r, (n,), 4, 2)], {"norm": False}),
    "expert_linear": lambda r, n, m: ([r.standard_normal((2, n, m)), r.standard_normal((3, m, 2)),
                                      _choice(r, (2, n), 3, 2)], {}),
    "expert_linear_each": lambda r, n, m: ([r.standard_normal((2, 3, n, m)), r.standard_normal((3, m, 2)),
                                           _choice(r, (2, n), 3, 1)], {}),
    "expert_swiglu": lambda r, n, m: _swiglu_rows(r, n, m),
    "expert_sum": lambda r, n, m: ([r.standard_normal((2, n, 3)), r.standard_normal((2, 3, n, m))], {}),
    "sigmoid": lambda r, n, m: ([3 * r.standard_normal((n, m))], {}),
    "mul": lambda r, n, m: ([r.standard_normal((2, n, 1)), r.standard_normal((2, n, m))], {}),
    # BERT's GELU and the sentence head: mean pooling (over every position, or the real ones), L2 norm, 1 − cos
    "gelu_erf": lambda r, n, m: ([3 * r.standard_normal((n, m))], {}),
    "mean_pool": lambda r, n, m: ([r.standard_normal((2, n, m))], {}),
    "mean_pool_padded": lambda r, n, m: ([r.standard_normal((2, n + 1, m)), _padding(r, 2, n + 1)], {}),
    "l2_normalize": lambda r, n, m: ([r.standard_normal((n, m + 1))], {}),
    "cosine_loss": lambda r, n, m: ([r.standard_normal((n + 1, n + 1))], {"a": 0, "b": 1}),
    # the tiled attention kernel's last step, whose backward is FlashAttention's, straight to Q, K and V
    "tile_normalize": lambda r, n, m: _tiled(r, n, m, causal=False),
    "tile_normalize_causal": lambda r, n, m: _tiled(r, n, m, causal=True),
}


def _swiglu_rows(r, n, m):
    """An expert SwiGLU's inputs as the expert layers leave them: 0 in the rows an expert did not take."""
    choice = _choice(r, (2, n), 3, 2)
    taken = np.moveaxis(choice, -1, -2)[..., None]
    return [2 * r.standard_normal((2, 3, n, m)) * taken, r.standard_normal((2, 3, n, m)) * taken, choice], {}


def _choice(r, lead, experts, k):
    """A router's 0/1 choice: k of the experts at every position."""
    return kernels.route(r.standard_normal((*lead, experts)), k)


def _tiled_statistics(inputs: list, attrs: dict) -> list:
    """tile_normalize's backward is the whole attention's (FlashAttention's, the tiles recomputed), so its O, ℓ and
    running max m are those Q, K and V give: a nudge of Q, K or V moves them too."""
    q, k, v = inputs[3:6]
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(attrs["n"])
    if attrs.get("causal"):
        s = kernels.causal_mask(s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    return [e @ v, e.sum(-1, keepdims=True), m, q, k, v, *inputs[6:]]


def _tiled(r, n, m, causal):
    q, k, v = r.standard_normal((2, n, m)), r.standard_normal((2, n if causal else n + 1, m)), r.standard_normal(
        (2, n if causal else n + 1, m))
    attrs = {"n": m, "causal": causal, "tile": 2}
    return _tiled_statistics([None, None, None, q, k, v], attrs), attrs


def kind_of(case: str) -> str:
    return {"matmul_broadcast": "matmul", "linear_tied": "linear", "scale_multiply": "scale",
            "softmax_masked": "softmax", "pick_ignore": "pick", "mean_ignore": "mean", "keep_plain": "keep",
            "rope_interleaved": "rope", "slice_start": "slice", "mean_pool_padded": "mean_pool",
            "expert_linear_each": "expert_linear", "tile_normalize_causal": "tile_normalize",
            "rms_norm_plus_one": "rms_norm"}.get(case, case)


def test_every_op_kind_with_a_backward_is_checked() -> None:
    with_vjp = {k for k, op in ops.REGISTRY.items() if type(op).vjp_source is not Op.vjp_source}
    assert with_vjp == {kind_of(c) for c in CASES}


def _objective(op, inputs, attrs, g):
    """Σ g ⊙ f(inputs) over the finite outputs (a masked −inf output has no value to perturb)."""
    if op.kind == "tile_normalize":
        inputs = _tiled_statistics(inputs, attrs)
    out = np.asarray(op.compute(*inputs, **attrs))
    return float(np.sum(np.where(np.isfinite(out), g * np.where(np.isfinite(out), out, 0.0), 0.0)))


@pytest.mark.parametrize("case", sorted(CASES))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), m=st.integers(1, 4))
def test_backward_matches_central_differences(case: str, seed: int, n: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    inputs, attrs = CASES[case](rng, n, m)
    op = ops.get(kind_of(case))
    out = op.compute(*inputs, **attrs)
    g = rng.standard_normal(np.shape(out))
    g = np.where(np.isfinite(out), g, 0.0)
    for wrt in op.grad_inputs(len(inputs)):
        got = op.vjp(wrt, g, inputs, out, **attrs)
        x = inputs[wrt]
        assert got.shape == x.shape
        want = np.zeros(x.shape)
        h = 1e-6
        for i in np.ndindex(x.shape):
            if np.isneginf(x[i]):
                continue  # a −inf input stays −inf when nudged: its derivative is 0, as the VJP says
            plus = [a.copy() for a in inputs]
            minus = [a.copy() for a in inputs]
            plus[wrt][i] += h
            minus[wrt][i] -= h
            want[i] = (_objective(op, plus, attrs, g) - _objective(op, minus, attrs, g)) / (2 * h)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=f"{case} wrt input {wrt}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_backward_views_agree_with_the_vjp(case: str) -> None:
    """Source (as exported), shape rule and cell explanation of every input's gradient."""
    rng = np.random.default_rng(7)
    inputs, attrs = CASES[case](rng, 3, 2)
    kind = kind_of(case)
    op, grad_op = ops.get(kind), ops.get(f"{kind}.grad")
    out = op.compute(*inputs, **attrs)
    g = np.where(np.isfinite(out), rng.standard_normal(np.shape(out)), 0.0)
    names = [f"x{i}" for i in range(len(inputs))]
    env = {"np": np, **{h: getattr(kernels, h) for h in grad_op.helpers}, "g": g, "out": out,
           **dict(zip(names, inputs))}
    syms = Syms("∂L/∂X", ("∂L/∂Y", *[f"X{i}" for i in range(len(inputs))], "Y"))
    for wrt in op.grad_inputs(len(inputs)):
        grad = grad_op.compute(g, *inputs, out, wrt=wrt, **attrs)
        source = grad_op.source("d", ["g", *names, "out"], wrt=wrt, **attrs)
        np.testing.assert_allclose(eval(source, env), grad, rtol=1e-12, atol=1e-12, err_msg=source)  # noqa: S307 - our own generated code
        shape = grad_op.shape(np.shape(g), *[np.shape(a) for a in inputs], np.shape(out), wrt=wrt, **attrs)
        assert tuple(shape) == grad.shape
        assert grad_op.formula(syms, wrt=wrt, **attrs).startswith("∂L/∂X")
        for cell in {tuple(0 for _ in grad.shape), tuple(s - 1 for s in grad.shape)}:
            ex = grad_op.explain(cell, [g, *inputs, out], grad, syms, wrt=wrt, **attrs)
            assert ex.value == float(grad[cell])
            assert num(ex.value) in "\n".join(ex.lines), (case, wrt, cell, ex.lines)
            if ex.columns and ex.columns[-1] == "product" and "Σ" not in ex.title:
                assert math.isclose(sum(r[-1] for r in ex.rows), ex.value, rel_tol=1e-9, abs_tol=1e-12)
