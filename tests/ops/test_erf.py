"""The kernels' erf (numpy has none) against the standard library's, which is within an ulp of the true value:
within 6e-16 everywhere (5 ulp near 2, where the series hands over to the continued fraction), 0 and the signs
exact, ±1 from 6 on, nan kept; BERT's GELU built on it against x·Φ(x) written with math.erf."""

from __future__ import annotations

import math

import numpy as np

from explain.ops.kernels import erf, gelu_erf, gelu_erf_backward


def test_erf_is_float64_accurate() -> None:
    x = np.concatenate([np.linspace(-7, 7, 14001), np.logspace(-300, 0.9, 400), -np.logspace(-20, 0.9, 200),
                        [1.9999999999999998, 2.0, 2.0000000000000004, 5.999999999, 6.0, 1e300]])
    want = np.array([math.erf(v) for v in x])
    got = erf(x)
    assert np.max(np.abs(got - want)) <= 6e-16
    small = (np.abs(x) < 1e-3) & (x != 0)  # relative accuracy where erf itself is tiny
    assert np.max(np.abs(got[small] - want[small]) / np.abs(want[small])) <= 4e-16
    assert erf(0.0) == 0.0 and math.copysign(1, erf(-0.0)) == -1
    assert erf(np.inf) == 1.0 and erf(-np.inf) == -1.0 and np.isnan(erf(np.nan))
    assert erf(np.array([[0.5, -3.0]])).shape == (1, 2)


def test_gelu_erf_is_x_times_the_normal_cdf() -> None:
    x = np.linspace(-9, 9, 721)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(gelu_erf(x), want, rtol=1e-15, atol=1e-15)
    slope = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi)
                      for v in x])
    np.testing.assert_allclose(gelu_erf_backward(np.ones_like(x), x), slope, rtol=1e-14, atol=1e-15)
