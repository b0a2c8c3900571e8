"""The numpy functions behind BERT's ops (:mod:`explain.ops.activations`, :mod:`explain.ops.sentence`): the error
function numpy lacks and the GELU built on it, and the sentence head (mean pooling over the real tokens, the L2
normalisation, a pair of texts' cosine split over their word pairs). :mod:`explain.ops.kernels` takes them in, so
they are kernels like the others: in scope for every op's source, and copied into exported scripts (which then
need numpy alone), each self-contained (``np`` and, for the GELU, ``erf``), with a docstring a learner can read
there and lines of at most 88 columns.
"""

from __future__ import annotations

import numpy as np


def erf(x):
    """The error function erf(x) = 2/√π ∫₀ˣ e^(-t²) dt, elementwise, to float64
    accuracy (within 6e-16 of the exact value; numpy has no erf).
    |x| < 2: erf(x) = 2/√π · e^(-x²) · x·(1 + 2x²/3·(1 + 2x²/5·(1 + …))), a
    series of positive terms, so nothing cancels.
    |x| ≥ 2: erf(x) = 1 - erfc(x), erfc(x) = e^(-x²)/√π / (x + ½/(x + 1/(x +
    (3/2)/(x + …)))), the continued fraction evaluated from 40 levels down.
    |x| ≥ 6 gives ±1 (erfc(6) < 2.2e-17). e^(-x²) is e^(-h²)·e^(-(x-h)(x+h)),
    h = x cut to 26 bits, so h² is exact and x² adds no rounding."""
    x = np.asarray(x, dtype=float)
    a = np.minimum(np.abs(x), 6.0)
    h = (a.view(np.uint64) & np.uint64(0xFFFFFFFFF8000000)).view(np.float64)
    e = np.exp(-h * h) * np.exp(-(a - h) * (a + h))  # e^(-x²)
    out = np.empty_like(a)
    small = a < 2.0
    s = a[small]
    t, f = 2.0 * s * s, np.ones_like(s)
    for n in range(30, 0, -1):  # 2x² < 8: the 30th term is below 1e-17 of the sum
        f = 1.0 + f * t / (2 * n + 1)
    out[small] = 2.0 / np.sqrt(np.pi) * e[small] * s * f
    b = a[~small]
    f = b.copy()
    for k in range(40, 0, -1):
        f = b + (k / 2.0) / f
    out[~small] = 1.0 - e[~small] / np.sqrt(np.pi) / f
    return np.copysign(out, x)


def gelu_erf(x):
    """GELU as BERT computes it (hidden_act "gelu", not the tanh approximation):
    x·Φ(x) = 0.5·x·(1 + erf(x/√2)), Φ the standard normal distribution."""
    x = np.asarray(x, dtype=float)
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def gelu_erf_backward(g, x):
    """Gradient of x·Φ(x): g times Φ(x) + x·φ(x), where
    Φ(x) = 0.5·(1 + erf(x/√2)) and φ(x) = e^(-x²/2)/√(2π)."""
    cdf = 0.5 * (1.0 + erf(x / np.sqrt(2.0)))
    return g * (cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi))


def mean_pool(h, key_padding=None):
    """Mean pooling over the real tokens (sentence-transformers): for each
    text b, the mean of h[b, t] over the positions t that are not padding.
    h (B, T, d), key_padding (B, T) true at <pad> -> (B, d)."""
    if key_padding is None:
        return h.mean(axis=-2)
    keep = ~key_padding.astype(bool)
    return (h * keep[..., None]).sum(axis=-2) / keep.sum(axis=-1)[..., None]


def mean_pool_backward(g, h, key_padding=None):
    """Gradient of mean pooling: every real position of text b gets g[b]/n_b,
    a padded one 0."""
    if key_padding is None:
        return np.repeat(g[..., None, :] / h.shape[-2], h.shape[-2], axis=-2)
    keep = ~key_padding.astype(bool)
    return keep[..., None] * (g / keep.sum(axis=-1)[..., None])[..., None, :]


def l2_normalize(x, eps=1e-12):
    """Each row divided by its length, so it has length 1 (torch's
    F.normalize: the length is taken as at least eps)."""
    n = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
    return x / np.maximum(n, eps)


def l2_normalize_backward(g, x, eps=1e-12):
    """Gradient of x/‖x‖: (g - x̂·(g·x̂))/‖x‖, the part of g across the unit
    vector x̂ (moving along x̂ does not change it)."""
    n = np.maximum(np.sqrt(np.sum(x * x, axis=-1, keepdims=True)), eps)
    u = x / n
    return (g - u * np.sum(g * u, axis=-1, keepdims=True)) / n


def pair_parts(h, e, a, b, n_a, n_b):
    """The cosine of texts a and b split over their word pairs: with mean
    pooling, e[a] = (1/n_a)·Σᵢ h[a, i], so
    cos = e[a]·e[b] / (‖e[a]‖·‖e[b]‖)
        = Σᵢⱼ h[a, i]·h[b, j] / (n_a·n_b·‖e[a]‖·‖e[b]‖),
    and part (i, j) is one term of that sum."""
    u = h[a, :n_a] / (n_a * np.sqrt(np.sum(e[a] * e[a])))
    v = h[b, :n_b] / (n_b * np.sqrt(np.sum(e[b] * e[b])))
    return u @ v.T


def ranked(parts):
    """The parts in one column, the largest (by size, whatever its sign) first;
    equal sizes keep their reading order."""
    flat = np.reshape(parts, -1)
    return flat[np.argsort(-np.abs(flat), kind="stable")][:, None]
