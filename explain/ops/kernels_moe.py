"""The numpy functions behind the mixture of experts' ops (:mod:`explain.ops.routing`, :mod:`explain.ops.experts`,
:mod:`explain.ops.gates`): the router's choice and kept weights, each expert's layers at the positions routed to it,
the weighted sum, the sigmoid. :mod:`explain.ops.kernels` takes them in, so they are kernels like the others: in
scope for every op's source, and copied into exported scripts, so each is self-contained (only ``np``), with a
docstring a learner can read there and lines of at most 88 columns.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    """The logistic function σ(x) = 1/(1 + e^(-x)), written e^(-log(1 + e^(-x)))
    so that it cannot overflow and keeps its digits where σ is near 0."""
    return np.exp(-np.logaddexp(0.0, -x))


def route(choose, k, n_group=1, topk_group=1):
    """The router's choice: 1 for the k experts each position is sent to, 0
    for the others. choose (..., E) holds the scores the choice ranks. With
    n_group > 1 the experts form n_group consecutive groups, each scored by
    the sum of its two best scores, and only the topk_group best groups take
    part (DeepSeek-V3). A tie goes to the lower index (a stable sort)."""
    n = choose.shape[-1]
    if n_group > 1:
        groups = choose.reshape(*choose.shape[:-1], n_group, n // n_group)
        best2 = np.sort(groups, axis=-1)[..., -2:].sum(axis=-1)
        ranked = np.argsort(-best2, axis=-1, kind="stable")[..., :topk_group]
        kept = np.zeros(best2.shape, dtype=bool)
        np.put_along_axis(kept, ranked, True, axis=-1)
        choose = np.where(np.repeat(kept, n // n_group, axis=-1), choose, -np.inf)
    ranked = np.argsort(-choose, axis=-1, kind="stable")[..., :k]
    out = np.zeros(choose.shape)
    np.put_along_axis(out, ranked, 1.0, axis=-1)
    return out


def keep_weights(scores, choice, norm=True, scale=1.0):
    """The weights of the chosen experts: their scores (0 for the others),
    divided by their sum when norm (for softmax scores the same as a softmax
    over the chosen experts' logits alone), times scale."""
    kept = scores * choice
    if norm:
        kept = kept / kept.sum(axis=-1, keepdims=True)
    return kept * scale


def expert_linear(x, w, choice, out=None):
    """Each expert's linear layer at the positions routed to it: w is
    (E, d_in, d_out); x is (..., T, d_in), read by every expert, or
    (..., E, T, d_in), one slice per expert; choice is (..., T, E). The
    result is (..., E, T, d_out), 0 in the rows of the positions an expert
    did not take (only the taken rows are computed; out: zeros to fill)."""
    taken = np.moveaxis(choice, -1, -2) > 0  # (..., E, T)
    if out is None:
        out = np.zeros(taken.shape + w.shape[-1:])
    for e in range(w.shape[0]):
        rows = taken[..., e, :]
        xe = x if x.ndim == choice.ndim else x[..., e, :, :]
        out[..., e, :, :][rows] = xe[rows] @ w[e]
    return out


def expert_swiglu(gate, up, choice, out=None):
    """silu(gate) * up in the rows each expert took (gate, up (..., E, T, f);
    choice (..., T, E)), 0 in the others: only the taken rows are computed
    (out: zeros to fill)."""
    rows = np.flatnonzero(np.moveaxis(choice, -1, -2) > 0)  # the taken (e, t) rows
    f = gate.shape[-1]
    if out is None:
        out = np.zeros(gate.shape)
    g = gate.reshape(-1, f)[rows]
    h = np.tanh(0.5 * g)  # silu(g) = g·σ(g), σ(g) = (1 + tanh(g/2))/2;
    h += 1.0  # in place: these rows can be many,
    h *= 0.5  # and each temporary array the size
    h *= g  # of them costs fresh memory
    h *= up.reshape(-1, f)[rows]
    out.reshape(-1, f)[rows] = h
    return out


def expert_sum(weights, outs):
    """The mixture: over the experts, each one's weight times its output.
    weights (..., T, E) and outs (..., E, T, d) give (..., T, d). Only the
    rows with a weight are read: the others add 0."""
    total = np.zeros(outs.shape[:-3] + outs.shape[-2:])
    for e in range(outs.shape[-3]):
        rows = weights[..., e] != 0  # (..., T)
        total[rows] += weights[..., e][rows, None] * outs[..., e, :, :][rows]
    return total


def keep_weights_backward(g, scores, choice, norm=True, scale=1.0):
    """Gradient of keep_weights with respect to the scores. Renormalised,
    w = scale·s/S with s the chosen scores and S their sum, so
    ds = choice·scale·(g - Σ g·s/S)/S; otherwise ds = choice·scale·g."""
    if not norm:
        return g * choice * scale
    total = (scores * choice).sum(axis=-1, keepdims=True)
    share = scores * choice / total
    return choice * scale * (g - (g * share).sum(axis=-1, keepdims=True)) / total


def expert_linear_backward(g, x, w, choice, wrt):
    """Gradient of expert_linear: for x (wrt=0) each expert's g·W[e]ᵀ at the
    rows it took (summed over the experts when they share x); for w (wrt=1)
    x[rows]ᵀ·g[rows], expert by expert."""
    taken = np.moveaxis(choice, -1, -2) > 0
    shared = x.ndim == choice.ndim
    d = np.zeros(x.shape if wrt == 0 else w.shape)
    for e in range(w.shape[0]):
        rows = taken[..., e, :]
        ge = g[..., e, :, :][rows]
        if wrt == 1:
            d[e] = (x if shared else x[..., e, :, :])[rows].T @ ge
        elif shared:
            d[rows] += ge @ w[e].T
        else:
            d[..., e, :, :][rows] = ge @ w[e].T
    return d


__all__ = ["sigmoid", "route", "keep_weights", "expert_linear", "expert_swiglu", "expert_sum", "keep_weights_backward", "expert_linear_backward"]
