"""The vector-Jacobian products that are more than one operator: the backward kernels of the ops
(:meth:`explain.ops.base.Op.vjp_source`). :mod:`explain.ops.kernels` takes them in, so they are kernels like the
others: in scope for every op's source, and copied into exported scripts, so each is self-contained (only ``np``),
with a docstring a learner can read there and lines of at most 88 columns.
"""

from __future__ import annotations

import numpy as np


def unbroadcast(g, shape):
    """Sum a gradient over the axes that broadcasting added or stretched, so
    it has the shape of the operand it flows back to."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def softmax_backward(g, a):
    """Gradient of softmax from the upstream gradient g and the output a:
    dS = A * (dA - rowsum(dA * A)), the softmax Jacobian applied row by row."""
    return a * (g - np.sum(g * a, axis=-1, keepdims=True))


def log_softmax_backward(g, y):
    """Gradient of log-softmax from g and its output y = log p:
    dx = g - p * rowsum(g), with p = exp(y)."""
    d = np.asarray(np.exp(y))  # the one array as large as y (GPT-2: 51 MB), not two
    d *= np.sum(g, axis=-1, keepdims=True)
    return np.subtract(g, d, out=d)


def layer_norm_backward(g, x, w, eps=1e-5):
    """Gradient of layer norm with respect to its input x. With x̂ the
    normalised row, n its width, σ = sqrt(var + eps) and dx̂ = g * w:
    dx = (dx̂ - mean(dx̂) - x̂ * mean(dx̂ * x̂)) / σ."""
    centred = x - np.mean(x, axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean(centred**2, axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    dxhat = g * w
    inner = dxhat - dxhat.mean(-1, keepdims=True)
    return (inner - xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True)) / sigma


def gelu_backward(g, x):
    """Gradient of the tanh GELU: g times its derivative
    0.5·(1 + tanh(u)) + 0.5·x·(1 - tanh(u)²)·u', u = √(2/π)·(x + 0.044715·x³)."""
    # Step by step in four arrays (GPT-2's MLP makes (tokens, 4·d_model) of each),
    # each step the same arithmetic as the formula's, so the same numbers.
    c = np.sqrt(2.0 / np.pi)
    t = np.asarray(x * x)  # x * x * x: numpy's x**3 is slow
    t *= x
    t *= 0.044715
    t += x
    t *= c
    np.tanh(t, out=t)  # t = tanh(u)
    du = np.asarray(x * x)
    du *= 3 * 0.044715
    du += 1.0
    du *= c  # du = u' = √(2/π)·(1 + 3·0.044715·x²)
    s = np.asarray(t * t)
    np.subtract(1.0, s, out=s)  # 1 - tanh(u)²
    d = np.asarray(x * 0.5)
    d *= s
    d *= du  # 0.5·x·(1 - tanh(u)²)·u'
    t += 1.0
    t *= 0.5
    t += d
    t *= g
    return t


def causal_mask_backward(g):
    """Gradient through the causal mask: a masked score was replaced by -inf,
    a constant, so no gradient flows to it (0); kept scores pass g through."""
    t_q, t_k = g.shape[-2], g.shape[-1]
    future = np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
    return np.where(future, 0.0, g)


def padding_mask_backward(g, key_padding):
    """Gradient through the padding mask: a score whose key is padding was
    replaced by -inf, a constant, so no gradient flows to it (0)."""
    pad = key_padding.astype(bool)
    pad = pad.reshape(pad.shape[0], *[1] * (g.ndim - 2), pad.shape[1])
    return np.where(pad, 0.0, g)


def pad_back(g, shape):
    """Gradient of a cut (the first entries of each axis): g in the entries
    that were kept, zeros after them, up to the operand's shape."""
    return np.pad(g, [(0, n - m) for n, m in zip(shape, g.shape)])


def heads_weight_backward(x, g):
    """Gradient of a per-head projection x·W_s for its weights: for every
    head s, xᵀ·g_s summed over the batch. The heads are laid side by side
    (…, T, h·l), so one matrix product per batch item computes every head's
    sums (each the same dot product over positions as head by head, so the
    same numbers) instead of one small product per head."""
    *lead, h, t, m = g.shape
    side = np.swapaxes(g, -2, -3).reshape(*lead, t, h * m)
    per = (np.swapaxes(x, -1, -2) @ side).reshape(*lead, x.shape[-1], h, m)
    return np.moveaxis(per, -2, -3).reshape(-1, h, x.shape[-1], m).sum(axis=0)


def split_heads(g, h):
    """Undo the concatenation of heads: (..., T, h·l) -> (..., h, T, l)."""
    *lead, t, c = g.shape
    return np.moveaxis(g.reshape(*lead, t, h, c // h), -2, -3)


def embed_backward(g, ids, n_vocab):
    """Gradient of an embedding lookup for the matrix: row t collects the sum
    of the gradients at every position that holds token t (others stay 0)."""
    d = np.zeros((n_vocab, g.shape[-1]))
    np.add.at(d, np.reshape(ids, -1), g.reshape(-1, g.shape[-1]))
    return d


def pick_backward(g, lp, targets):
    """Gradient of picking lp[..., t, target[t]]: g at each picked entry, 0
    everywhere else."""
    d = np.zeros(lp.shape, lp.dtype)  # left untouched (zeros_like writes every 0)
    np.put_along_axis(d, targets[..., None], g[..., None], axis=-1)
    return d


def patched(corrupt, clean, where):
    """Activation patching: a copy of ``corrupt`` whose cells selected by
    ``where`` (pairs (axis, index), each fixing one axis) come from ``clean``."""
    out = np.array(corrupt, dtype=float)
    cells = [slice(None)] * out.ndim
    for axis, i in where:
        cells[axis] = i
    out[tuple(cells)] = clean[tuple(cells)]
    return out


def rms_norm_backward(g, x, w, eps=1e-6):
    """Gradient of RMSNorm with respect to x. With r = 1/sqrt(mean(x²) + eps)
    and dx̂ = g * w: dx = r * (dx̂ - x * r² * mean(dx̂ * x))."""
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    dxhat = g * w
    return r * (dxhat - x * r * r * np.mean(dxhat * x, axis=-1, keepdims=True))


def swiglu_backward(g, gate, up, wrt):
    """Gradient of silu(gate) * up: for up (wrt=1) g * silu(gate); for the
    gate (wrt=0) g * up * silu'(gate), silu'(z) = σ(z)·(1 + z·(1 - σ(z)))."""
    s = 0.5 * (1.0 + np.tanh(0.5 * gate))
    if wrt == 1:
        return g * gate * s
    return g * up * s * (1.0 + gate * (1.0 - s))


__all__ = ["unbroadcast", "softmax_backward", "log_softmax_backward", "layer_norm_backward", "gelu_backward", "causal_mask_backward", "padding_mask_backward", "pad_back", "heads_weight_backward", "split_heads", "embed_backward", "pick_backward", "patched", "rms_norm_backward", "swiglu_backward"]
