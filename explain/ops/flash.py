"""The last step of the tiled attention kernel (:mod:`explain.ops.tiled`), ``tile_normalize``: Z = O / ℓ once
after the last tile, the plain kernel's value of a cell set beside it in the drill-down, and the kernel's backward:
FlashAttention's Algorithm 2, from Z straight to Q, K and V, every tile recomputed from its scores and the row
statistics L = m + log ℓ (:func:`explain.ops.kernels.flash_backward`).
"""

from __future__ import annotations

from explain.ops.base import CellExplanation, Op, Syms, broadcast_index, idx, num, register
from explain.ops.tiled import lead_index, row_stat


@register
class TileNormalize(Op):
    """Z = O / ℓ: the accumulator divided by the running sum, once, after the last tile. It also reads the running
    max m, Q, K and V (and the padding): its drill-down puts the plain kernel's value of the same cell beside the
    tiled one, and its backward is FlashAttention's, straight to Q, K and V (:func:`flash_backward`)."""

    kind = "tile_normalize"
    differentiable = (3, 4, 5)  # Q, K, V: the gradient skips the tiles and recomputes them (Algorithm 2)
    vjp_helpers = ("flash_backward",)
    vjp_note = ("FlashAttention's backward: the tiles are not stored, so each tile's weights are recomputed from its "
                "scores and the forward's row statistics, L = m + log ℓ; then dV = Pᵀ·dO, dS = P ⊙ (dO·Vᵀ − "
                "rowsum(dO ⊙ O)), dQ += dS·K/√d_k, dK = dSᵀ·Q/√d_k, tile by tile.")
    default_note = ("After the last tile: divide each row of the accumulator by its running sum. This is "
                    "softmax(Q·Kᵀ/√d_k)·V, computed without ever holding the score matrix; the drill-down puts the "
                    "plain kernel's value beside it.")

    def shown_shapes(self, shapes, **attrs):
        return list(shapes[:2])

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} / {syms.ins[1]}"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]} / np.where({ins[1]} > 0, {ins[1]}, 1.0)"  # a row with no visible key: 0

    def feeds(self, index, inputs, **attrs):
        out = [broadcast_index(index, inputs[0].shape), row_stat(index, inputs[1])]
        if len(inputs) > 2:  # m; Q's row, every key, the value column: what the plain kernel reads for this cell
            q, k, v = inputs[3:6]
            out += [row_stat(index, inputs[2]), lead_index(index, q.shape) + (index[-2], slice(None)),
                    lead_index(index, k.shape) + (slice(None),) * 2, lead_index(index, v.shape) + (slice(None), index[-1])]
            out += [(index[0], slice(None))] if len(inputs) > 6 else []
        return out

    def _scores(self, lead: tuple, inputs, n: int, causal: bool, window: int | None = None):
        """The whole (T, S) score matrix of one (batch, head) slice, masked: for the explanations only."""
        import numpy as np  # lazy: numpy off the shape path

        q, k = (inputs[j][lead_index(lead + (0, 0), inputs[j].shape)] for j in (3, 4))
        s = q @ k.T / np.sqrt(n)
        i, j = np.arange(s.shape[0])[:, None], np.arange(s.shape[1])[None, :]
        if causal:
            s = np.where(j > i, -np.inf, s)
        if window is not None:
            s = np.where(i - j >= window, -np.inf, s)
        if len(inputs) > 6:
            s = np.where(inputs[6][lead[0]].astype(bool)[None, :], -np.inf, s)
        return s

    def plain(self, index, inputs, n: int = 1, causal: bool = False, window: int | None = None) -> float:
        """The plain kernel's value of cell ``index``: the whole row of scores, softmax, times the value column."""
        import numpy as np  # lazy: numpy off the shape path

        s = self._scores(tuple(index[:-2]), inputs, n, causal, window)[index[-2]]
        if np.isneginf(s.max()):
            return 0.0
        e = np.exp(s - s.max())
        v = inputs[5][lead_index(index, inputs[5].shape) + (slice(None), index[-1])]
        return float(e @ v / e.sum())

    def explain(self, index, inputs, output, syms: Syms, n: int = 1, causal: bool = False,
                window: int | None = None, **attrs) -> CellExplanation:
        o, s = (float(a[f]) for a, f in zip(inputs, self.feeds(index, inputs)[:2]))
        *_, i, c = index
        lines = [f"{num(o)} / {num(s)} = {num(output[index])}" if s > 0 else "no key was visible to this row: 0"]
        if len(inputs) > 2:
            plain = self.plain(index, inputs, n, causal, window)
            lines += [f"tiled: {output[index]:.17g}",
                      f"plain: {plain:.17g}  (softmax of the whole row of scores, times value column {c})",
                      f"difference {abs(float(output[index]) - plain):.2g}"]
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}, {c}] = {syms.ins[0]}[{i}, {c}] / "
                               f"{syms.ins[1]}[{i}]", lines=lines)

    # -- backward: FlashAttention's Algorithm 2, recomputing the tiles --------------------------------------------
    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        g, d = syms.ins[0], syms.out
        return {3: f"{d} = Σ_tiles dS·K/√d_k,  dS = P ⊙ ({g}·Vᵀ − rowsum({g} ⊙ Z)),  P = exp(S − L) recomputed",
                4: f"{d} = dSᵀ·Q/√d_k per tile,  dS = P ⊙ ({g}·Vᵀ − rowsum({g} ⊙ Z)),  P = exp(S − L) recomputed",
                5: f"{d} = Pᵀ·{g} per tile,  P = exp(S − L) recomputed,  L = m + log ℓ"}[wrt]

    def vjp_source(self, wrt, g, ins, out, n: int = 1, causal: bool = False, tile: int = 1,
                   window: int | None = None, **attrs) -> str:
        pad = (f", key_padding={ins[6]}" if len(ins) > 6 else "") + (f", window={window}" if window is not None else "")
        return (f"flash_backward({g}, {ins[3]}, {ins[4]}, {ins[5]}, {out}, {ins[2]}, {ins[1]}, {n}, {causal}, "
                f"{tile}, {wrt - 3}{pad})")

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        every = slice(None)
        lead = tuple(index[:-2])
        rows = lead + (every, every)
        if wrt == 3:  # dQ[i, c]: row i of dO, of the statistics and of Z; every key and value
            i = index[-2]
            row = lead + (i, every)
            return [row, None, lead + (i, 0), lead + (i, 0), row, rows, rows, *([None] if len(inputs) > 6 else []),
                    row]
        j = index[-2]  # dK[j, c] or dV[j, c]: every query's dO, statistics and Z; key j and value j
        key = lead + (j, every)
        return [rows, None, lead + (every, 0), lead + (every, 0), rows, key, key if wrt == 4 else None,
                *([None] if len(inputs) > 6 else []), rows if wrt == 4 else None]

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[-2:-1]  # a sum over the queries (dK, dV) or the keys (dQ): positions either way

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, n: int = 1, causal: bool = False,
                    window: int | None = None, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        lead = tuple(index[:-2])
        r, c = index[-2], index[-1]
        s = self._scores(lead, inputs, n, causal, window)
        m, ell = inputs[2][lead][:, 0], inputs[1][lead][:, 0]
        L = np.where(ell > 0, m + np.log(np.where(ell > 0, ell, 1.0)), 0.0)
        P = np.exp(s - L[:, None])
        dO, Z, V = g[lead], output[lead], inputs[5][lead]
        dS = P * (dO @ V.T - (dO * Z).sum(-1, keepdims=True))
        if wrt == 5:  # dV[j, c] = Σᵢ P[i, j]·dO[i, c]
            rows = [(i, float(P[i, r]), float(dO[i, c]), float(P[i, r] * dO[i, c])) for i in range(P.shape[0])]
            cols = ("i", f"P[i, {r}]", f"{syms.ins[0]}[i, {c}]", "product")
            why = f"P[i, {r}] = exp(S[i, {r}] − L[i]), recomputed from the scores and L = m + log ℓ"
        elif wrt == 3:  # dQ[i, c] = Σⱼ dS[i, j]·K[j, c]/√d_k
            K = inputs[4][lead]
            rows = [(j, float(dS[r, j]), float(K[j, c]), float(dS[r, j] * K[j, c] / np.sqrt(n))) for j in range(
                K.shape[0])]
            cols = ("j", f"dS[{r}, j]", f"K[j, {c}]", "product / √d_k")
            why = "dS = P ⊙ (dO·Vᵀ − rowsum(dO ⊙ Z)): the softmax's backward, tile by tile"
        else:  # dK[j, c] = Σᵢ dS[i, j]·Q[i, c]/√d_k
            Q = inputs[3][lead]
            rows = [(i, float(dS[i, r]), float(Q[i, c]), float(dS[i, r] * Q[i, c] / np.sqrt(n))) for i in range(
                Q.shape[0])]
            cols = ("i", f"dS[i, {r}]", f"Q[i, {c}]", "product / √d_k")
            why = "dS = P ⊙ (dO·Vᵀ − rowsum(dO ⊙ Z)): the softmax's backward, tile by tile"
        total = sum(row[-1] for row in rows)
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: FlashAttention's backward",
                               cols, rows, [why, f"sum = {num(total)}"])
