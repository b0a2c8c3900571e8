"""How the recorded backward pass holds its memory changes no number: the kernels written step by step in fewer
arrays compute their formulas bit for bit, and the gradients kept in huge-page chunks (explain.arena) are the
values, shapes and memory order the ops computed, each in memory of its own. Tolerance: none (bytes compared)."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain import arena, kernels


def _same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture
def values() -> np.ndarray:
    """Ordinary numbers, and the awkward ones: ±0, tiny, huge (tanh saturates, squares overflow to inf)."""
    r = np.random.default_rng(24)
    x = 3 * r.standard_normal((4, 6, 50))
    x[0, 0, :8] = [0.0, -0.0, 1e-300, -1e-300, 1e10, -1e10, 1e200, 5e-324]
    return x


def test_gelu_backward_is_its_formula_in_one_expression(values: np.ndarray) -> None:
    g = np.random.default_rng(1).standard_normal(values.shape)
    x, c = values, np.sqrt(2.0 / np.pi)
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.tanh(c * (x + 0.044715 * (x * x * x)))
        du = c * (1.0 + 3 * 0.044715 * x**2)
        want = g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t**2) * du)
        got = kernels.gelu_backward(g, x)
    assert _same_bits(got, want)


def test_log_softmax_and_pick_backward_are_their_formulas(values: np.ndarray) -> None:
    y = kernels.log_softmax(values)
    g = np.random.default_rng(2).standard_normal(values.shape)
    assert _same_bits(kernels.log_softmax_backward(g, y), g - np.exp(y) * np.sum(g, axis=-1, keepdims=True))
    targets = np.random.default_rng(3).integers(0, values.shape[-1], values.shape[:-1])
    picked = np.random.default_rng(4).standard_normal(values.shape[:-1])
    want = np.zeros_like(y)
    np.put_along_axis(want, targets[..., None], picked[..., None], axis=-1)
    assert _same_bits(kernels.pick_backward(picked, y, targets), want)


def _run() -> explain.Trace:
    """A gpt backward whose activations' gradients (64 positions × 256 features, 4 heads' 64 × 64 patterns: 128
    KiB each) are large enough for the arena; with an SGD step after it."""
    tokens = ",".join(str(3 + (i * 7) % 40) for i in range(64))
    return explain.run("gpt", random_weights=True, tokens=tokens, d_model=64, n_heads=4, d_ff=256, n_layers=2,
                       n_ctx=64, backward=True, lr=0.1)


def test_arena_keeps_the_values_the_ops_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _run()
    monkeypatch.setattr(arena, "SMALL", 1 << 62)  # nothing copied: every array as its op returned it
    plain = _run()
    assert [(s.name, s.op, s.shape) for s in kept] == [(s.name, s.op, s.shape) for s in plain]
    for a, b in zip(kept, plain):
        assert _same_bits(a.output, b.output), a.name
        assert a.output.flags.c_contiguous == b.output.flags.c_contiguous, a.name
    chunked = [s for s in kept if s.output.base is not None and s.output.base.nbytes == arena.CHUNK]
    assert len(chunked) >= 10, [s.name for s in chunked]  # the arena was used (not a vacuous comparison)
    assert all(s.group[:1] == ("backward",) for s in chunked)  # the forward's steps and the SGD step are not copied
    # each kept view has bytes of its own: no other step's output overlaps them
    spans = sorted({(s.output.__array_interface__["data"][0], s.output.nbytes, id(s.output)) for s in kept
                    if isinstance(s.output, np.ndarray) and s.output.nbytes})
    views = {id(s.output) for s in chunked}
    for (start, size, i), (nxt, _, j) in zip(spans, spans[1:]):
        if i in views or j in views:
            assert start + size <= nxt, "two steps share memory"
