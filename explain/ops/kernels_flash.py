"""The numpy function behind the tiled attention kernel's backward (:mod:`explain.ops.tiled`): FlashAttention's
Algorithm 2, which recomputes each tile's weights from the scores and the forward's row statistics instead of
keeping the score matrix. :mod:`explain.ops.kernels` takes it in, so it is a kernel like the others: in scope for
every op's source and copied into exported scripts (self-contained, only ``np``, lines of at most 88 columns).
"""

from __future__ import annotations

import numpy as np


def flash_backward(g, q, k, v, o, m, total, d_k, causal, tile, wrt,
                   key_padding=None, window=None):
    """FlashAttention's backward (Dao et al. 2022, Algorithm 2): the gradient
    of O = softmax(Q·Kᵀ/√d_k)·V with respect to q (wrt 0), k (1) or v (2),
    one tile of keys at a time. Each tile's weights are recomputed from its
    scores and L = m + log(ℓ), the forward's running max and sum, so the
    T × T matrix is never kept: P = exp(S - L), dV = Pᵀ·dO, dP = dO·Vᵀ,
    dS = P ⊙ (dP - rowsum(dO ⊙ O)), dQ += dS·K/√d_k, dK = dSᵀ·Q/√d_k."""
    seen = total > 0  # a row with no visible key has no weights: its L is unused
    L = np.where(seen, m + np.log(np.where(seen, total, 1.0)), 0.0)
    D = np.sum(g * o, axis=-1, keepdims=True)
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for start in range(0, k.shape[-2], tile):
        stop = min(start + tile, k.shape[-2])
        kt, vt = k[..., start:stop, :], v[..., start:stop, :]
        s = q @ np.swapaxes(kt, -1, -2) / np.sqrt(d_k)
        keys, queries = np.arange(start, stop)[None, :], np.arange(s.shape[-2])[:, None]
        if causal:
            s = np.where(keys > queries, -np.inf, s)
        if window is not None:  # a sliding layer: keys window or more positions back
            s = np.where(queries - keys >= window, -np.inf, s)
        if key_padding is not None:
            pad = key_padding[:, start:stop].astype(bool)
            s = np.where(pad.reshape(pad.shape[0], *[1] * (s.ndim - 2), -1), -np.inf, s)
        p = np.exp(s - L)
        dv[..., start:stop, :] = np.swapaxes(p, -1, -2) @ g
        ds = p * (g @ np.swapaxes(vt, -1, -2) - D)
        dq += ds @ kt / np.sqrt(d_k)
        dk[..., start:stop, :] = np.swapaxes(ds, -1, -2) @ q / np.sqrt(d_k)
    return (dq, dk, dv)[wrt]
