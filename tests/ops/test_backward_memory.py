"""The backward kernels written step by step in fewer arrays (fewer fresh pages for the recorded backward) compute
their formulas bit for bit. Tolerance: none (bytes compared)."""

from __future__ import annotations

import numpy as np
import pytest

from explain.ops import kernels


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
