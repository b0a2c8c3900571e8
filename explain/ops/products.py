"""Op kinds that are sums of products: matmul (Q·Kᵀ), the weighted sum of values, and the head concatenation
and slicing that go with them (linear layers are in :mod:`explain.ops.linear`)."""

from __future__ import annotations

import math
from typing import Any

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.core.shape_rules import Shape
from explain.ops.base import CellExplanation, Op, Syms, arg, broadcast_index, idx, num, register, summed_index


def dot_explanation(a_row: Any, b_col: Any, a_name: str, b_name: str, k_name: str = "k",
                     term: str = "product") -> tuple[tuple[str, ...], list[tuple], Any]:
    """The term table of a dot product: one row per k with both elements and their product."""
    prods = a_row * b_col
    rows = [(k, float(a), float(b), float(p)) for k, (a, b, p) in enumerate(zip(a_row, b_col, prods))]
    return (k_name, a_name, b_name, term), rows, prods.sum()


def products_line(rows: list[tuple], times: str = "×", shown: int = 8) -> str:
    """``a×b + c×d + …``: the first ``shown`` products of a term table, the rest elided."""
    return " + ".join(f"{arg(r[1])}{times}{arg(r[2])}" for r in rows[:shown]) + (" + …" if len(rows) > shown else "")


@register
class MatMul(Op):
    """``a @ b`` over the last two axes, optionally with b transposed (``Q·Kᵀ``)."""

    kind = "matmul"
    join = " · "
    default_note = "Each output cell is the dot product of a row of the left operand and a column of the right."

    def shown_shapes(self, shapes: list[Shape], transpose_b: bool = False, **attrs: Any) -> list[Shape]:
        a, b = shapes
        return [a, sr.swapaxes(b, -1, -2) if transpose_b else b]

    def shape(self, a: Shape, b: Shape, transpose_b: bool = False, **attrs: Any) -> Shape:
        return sr.matmul(a, sr.swapaxes(b, -1, -2) if transpose_b else b)

    def axes(self, a, b, transpose_b: bool = False, **attrs):
        lead = a[:-2] if len(a) >= len(b) else b[:-2]
        return lead + (a[-2], b[-2] if transpose_b else b[-1])

    def flops(self, shapes, out, **attrs) -> int:
        return 2 * math.prod(out) * shapes[0][-1]  # a's last axis is the one summed over

    def formula(self, syms: Syms, transpose_b: bool = False, **attrs) -> str:
        a, b = syms.ins
        return f"{syms.out} = {a}·{b}{'ᵀ' if transpose_b else ''}"

    def source(self, out: str, ins: list[str], transpose_b: bool = False, **attrs) -> str:
        a, b = ins
        return f"{a} @ np.swapaxes({b}, -1, -2)" if transpose_b else f"{a} @ {b}"

    def feeds(self, index, inputs, transpose_b: bool = False, **attrs):
        a, b = inputs
        *lead, i, j = index
        ai = broadcast_index(tuple(lead), a.shape[:-2]) + (i, slice(None))
        bi = broadcast_index(tuple(lead), b.shape[:-2])
        return [ai, bi + ((j, slice(None)) if transpose_b else (slice(None), j))]

    def row_axes(self, in_axes, **attrs):
        return in_axes[0][-1:]  # k runs along a's last axis: features for Q·Kᵀ, the keys for A·V

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[-1:] if wrt == 0 else g_axes[-2:-1]  # dA sums over the output's columns, dB over its rows

    def _operands(self, index, inputs, transpose_b):
        a, b = inputs
        fa, fb = self.feeds(index, inputs, transpose_b=transpose_b)  # row of a, column of b (row of b if ᵀ)
        return a[fa], b[fb], fa[:-1], fb[:-2]

    def explain(self, index, inputs, output, syms: Syms, transpose_b: bool = False, **attrs) -> CellExplanation:
        a_sym, b_sym = syms.ins
        row, col, ai, bi = self._operands(index, inputs, transpose_b)
        *lead, i, j = index
        b_ref = f"{b_sym}{idx(bi + (j,))}" if transpose_b else f"{b_sym}{idx(bi)}[:, {j}]"
        cols, rows, total = dot_explanation(row, col, f"{a_sym}{idx(ai)}[k]",
                                             f"{b_sym}{'ᵀ' if transpose_b else ''}[k, {j}]")
        return CellExplanation(
            index, float(output[index]),
            f"{syms.out}{idx(index)} = {a_sym}{idx(ai)} · {b_ref}  (row {i} of {a_sym}, "
            f"{'row' if transpose_b else 'column'} {j} of {b_sym})",
            cols, rows,
            [products_line(rows), f"sum of {len(rows)} products = {num(total)}"],
        )

    # -- backward: S = A·B gives dA = dS·Bᵀ and dB = Aᵀ·dS (with B = Kᵀ: dK = dSᵀ·A) --------------------------
    vjp_helpers = ("unbroadcast",)

    def vjp_formula(self, wrt, syms: Syms, transpose_b: bool = False, **attrs) -> str:
        d, g, (a, b), _ = syms.out, syms.ins[0], syms.ins[1:3], syms.ins[-1]
        if wrt == 0:
            return f"{d} = {g}·{b}" if transpose_b else f"{d} = {g}·{b}ᵀ"
        return f"{d} = {g}ᵀ·{a}" if transpose_b else f"{d} = {a}ᵀ·{g}"

    def vjp_source(self, wrt, g, ins, out, transpose_b: bool = False, **attrs) -> str:
        a, b = ins
        if wrt == 0:
            return f"unbroadcast({g} @ {b if transpose_b else f'np.swapaxes({b}, -1, -2)'}, {a}.shape)"
        d = f"np.swapaxes({g}, -1, -2) @ {a}" if transpose_b else f"np.swapaxes({a}, -1, -2) @ {g}"
        return f"unbroadcast({d}, {b}.shape)"

    def vjp_feeds(self, wrt, index, g, inputs, output, transpose_b: bool = False, **attrs):
        a, b = inputs
        mine, other = inputs[wrt], inputs[1 - wrt]
        *lead, r, c = index
        # the leading (batch, head) cells of ∂L/∂out summed into this one, and the other operand's matching ones
        g_lead = summed_index(tuple(lead), mine.shape[:-2], g.shape[:-2])
        o_lead = tuple(0 if n == 1 else i for i, n in
                       zip(g_lead[len(g_lead) - (other.ndim - 2):], other.shape[:-2]))
        every = slice(None)
        if wrt == 0:  # dA[r, c] = Σₖ dY[r, k]·B[c, k]
            fg, fo = g_lead + (r, every), o_lead + ((every, c) if transpose_b else (c, every))
            return [fg, None, fo, None]
        if transpose_b:  # b is (k, c) with Y = A·bᵀ: db[r, c] = Σₚ dY[p, r]·A[p, c]
            return [g_lead + (every, r), o_lead + (every, c), None, None]
        return [g_lead + (every, c), o_lead + (every, r), None, None]  # dB[r, c] = Σₚ A[p, r]·dY[p, c]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, transpose_b: bool = False,
                    **attrs) -> CellExplanation:
        a, b = inputs
        gs, (a_sym, b_sym), out_sym = syms.ins[0], syms.ins[1:3], syms.ins[-1]
        *lead, r, c = index
        mine = (a, b)[wrt]
        if mine.ndim < g.ndim:  # a broadcast operand: its gradient also sums over the broadcast axes
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=[
                "this operand was broadcast over the leading axes, so its gradient sums over them too",
                f"= {num(grad[index])}"])
        gl = g[tuple(lead)]
        al, bl = a[broadcast_index(tuple(lead), a.shape[:-2])], b[broadcast_index(tuple(lead), b.shape[:-2])]

        def at(sym: str, *ij: Any) -> str:  # a cell with the leading (batch, head) indices of the cell explained
            return f"{sym}{idx(tuple(lead) + ij)}"

        if wrt == 0:  # dA[i, k] = Σⱼ dS[i, j]·Bᵀ[k, j]
            other = bl[:, c] if transpose_b else bl[c, :]
            b_ref = at(b_sym, "j", c) if transpose_b else at(b_sym, c, "j")
            cols, rows, total = dot_explanation(gl[r, :], other, at(gs, r, "j"), b_ref, "j")
            mine_at, out_at, by = at(a_sym, r, c), at(out_sym, r, "j"), b_ref
        elif transpose_b:  # B is (j, k): dB[j, k] = Σᵢ dS[i, j]·A[i, k]
            cols, rows, total = dot_explanation(gl[:, r], al[:, c], at(gs, "i", r), at(a_sym, "i", c), "i")
            mine_at, out_at, by = at(b_sym, r, c), at(out_sym, "i", r), at(a_sym, "i", c)
        else:  # dB[k, j] = Σᵢ A[i, k]·dS[i, j]
            cols, rows, total = dot_explanation(al[:, r], gl[:, c], at(a_sym, "i", r), at(gs, "i", c), "i")
            mine_at, out_at, by = at(b_sym, r, c), at(out_sym, "i", c), at(a_sym, "i", r)
        why = f"{mine_at} enters every {out_at}, with ∂{out_at}/∂{mine_at} = {by}"
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: chain rule over every output "
                               "cell it feeds", cols, rows,
                               [why, f"sum of {len(rows)} products = {num(total)}"])


@register
class WeightedSum(MatMul):
    """``A·V``: each output row is the attention-weighted sum of the value rows."""

    kind = "weighted_sum"
    default_note = "Each output row mixes the value vectors, weighted by that query's attention weights."

    def explain(self, index, inputs, output, syms: Syms, transpose_b: bool = False, **attrs) -> CellExplanation:
        a_sym, v_sym = syms.ins
        row, col, ai, bi = self._operands(index, inputs, transpose_b)
        *lead, i, c = index
        cols, rows, total = dot_explanation(row, col, f"{a_sym}[{i}, j]", f"{v_sym}[j, {c}]", "j", "a·v")
        return CellExplanation(
            index, float(output[index]),
            f"{syms.out}{idx(index)} = Σⱼ {a_sym}[{i}, j]·{v_sym}[j, {c}]  (weights of query {i} times column "
            f"{c} of the values)",
            cols, rows,
            [products_line(rows, "·"), f"= {num(total)}"],
        )


@register
class MergeHeads(Op):
    """Concatenate the heads' outputs side by side: (…, h, T, l) → (…, T, h·l)."""

    kind = "merge_heads"
    helpers = ("merge_heads",)
    default_note = "The heads' outputs are concatenated side by side, head 0's columns first."

    def shape(self, z, **attrs):
        if len(z) < 3:
            raise ShapeError(f"merging heads needs (…, heads, T, d_head), got {sr.fmt_shape(z)}")
        return tuple(z[:-3]) + (z[-2], z[-3] * z[-1])

    def axes(self, z, **attrs):
        return z[:-3] + (z[-2], "concat")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = concat({syms.ins[0]}₀, …, {syms.ins[0]}ₕ₋₁)"

    def source(self, out, ins, **attrs) -> str:
        return f"merge_heads({ins[0]})"

    def feeds(self, index, inputs, **attrs):
        *lead, t, c = index
        h, j = divmod(c, inputs[0].shape[-1])  # d_head: head h holds columns h·d_head … h·d_head + d_head − 1
        return [tuple(lead) + (h, t, j)]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        z = inputs[0]
        *lead, t, c = index
        width = z.shape[-1]
        *_, h, _, j = self.feeds(index, inputs)[0]
        return CellExplanation(index, float(output[index]),
                               f"{syms.out}{idx(index)} is column {j} of head {h}",
                               lines=[f"column {c}: head {c} // {width} = {h}, column {c} % {width} = {j}",
                                      f"{syms.ins[0]}{idx(tuple(lead) + (h, t, j))} = {num(output[index])}"])

    # -- backward: the concatenation's gradient is cut back into the heads ----------------------------------
    vjp_helpers = ("split_heads",)

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}ₛ = columns of head s in {syms.ins[0]}  (split the concatenation)"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"split_heads({g}, {ins[0]}.shape[-3])"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        *lead, h, t, j = index
        return [tuple(lead) + (t, h * inputs[0].shape[-1] + j), None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        *lead, h, t, j = index
        width = inputs[0].shape[-1]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}"
                               f"{idx(tuple(lead) + (t, h * width + j))}",
                               lines=[f"head {h}, column {j} was column {h}×{width} + {j} = {h * width + j} of the "
                                      "concatenation: its gradient comes back unchanged",
                                      f"= {num(grad[index])}"])


@register
class Slice(Op):
    """The entries ``start`` … ``stop − 1`` along ``axis`` (by default the first ``stop``: a parameter sized for the
    context, cut to the sequence; with a ``start``, a part of the last axis, as latent attention's rotary split)."""

    kind = "slice"
    default_note = "Only the first T entries are used: the parameter is sized for the whole context."

    def shape(self, a, axis: int = -1, stop: int = 1, start: int = 0, **attrs):
        ax = sr.normalize_axis(axis, len(a))
        if stop > a[ax] or not 0 <= start < stop or (start and ax != len(a) - 1):
            raise ShapeError(f"cannot take entries {start}–{stop - 1} of axis {axis} of {sr.fmt_shape(a)}")
        return tuple(a[:ax]) + (stop - start,) + tuple(a[ax + 1:])

    def axes(self, a, axis: int = -1, **attrs):
        return a

    def _cut(self, axis: int, stop: int, start: int) -> str:
        return f"{start or ''}:{stop}"

    def formula(self, syms: Syms, axis: int = -1, stop: int = 1, start: int = 0, **attrs) -> str:
        cut = self._cut(axis, stop, start)
        return f"{syms.out} = {syms.ins[0]}[…, {cut}{', :' * (-axis - 1) if axis < 0 else ''}]"

    def source(self, out, ins, axis: int = -1, stop: int = 1, start: int = 0, **attrs) -> str:
        cut = self._cut(axis, stop, start)
        if axis >= 0:
            return f"{ins[0]}[{':, ' * axis}{cut}]"
        return f"{ins[0]}[..., {cut}{', :' * (-axis - 1)}]"

    def _source_index(self, index, ndim: int, axis: int, start: int) -> tuple[int, ...]:
        ax = sr.normalize_axis(axis, ndim)
        return tuple(i + start if n == ax else i for n, i in enumerate(index))

    def feeds(self, index, inputs, axis: int = -1, start: int = 0, **attrs):
        return [self._source_index(index, inputs[0].ndim, axis, start)]

    def explain(self, index, inputs, output, syms: Syms, axis: int = -1, start: int = 0, **attrs) -> CellExplanation:
        src = self._source_index(index, inputs[0].ndim, axis, start)
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(src)}",
                               lines=[f"copied: {num(output[index])}"])

    # -- backward: the used entries get the gradient; the entries never used get 0 --------------------------
    vjp_helpers = ("pad_back",)

    def vjp_formula(self, wrt, syms: Syms, stop: int = 1, start: int = 0, **attrs) -> str:
        if start:
            return f"{syms.out} = {syms.ins[0]} in entries {start}–{stop - 1}, 0 elsewhere"
        return f"{syms.out} = {syms.ins[0]} in the first {stop} entries, 0 after"

    def vjp_source(self, wrt, g, ins, out, stop: int = 1, start: int = 0, **attrs) -> str:
        if start:  # a part of the last axis: zeros before it and after it
            zeros = f"np.zeros({g}.shape[:-1] + ({{}},))"
            return (f"np.concatenate([{zeros.format(int(start))}, {g}, "
                    f"{zeros.format(f'{ins[0]}.shape[-1] - {int(stop)}')}], axis=-1)")
        return pad_back_source(g, ins[0])

    def vjp_feeds(self, wrt, index, g, inputs, output, axis: int = -1, stop: int = 1, start: int = 0, **attrs):
        ax = sr.normalize_axis(axis, len(index))
        used = start <= index[ax] < stop and all(i < n for k, (i, n) in enumerate(zip(index, g.shape)) if k != ax)
        src = tuple(i - start if k == ax else i for k, i in enumerate(index))
        return [src if used else None, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, axis: int = -1, stop: int = 1,
                    start: int = 0, **attrs) -> CellExplanation:
        if start:
            used = start <= index[axis] < stop
            line = ("this entry was taken: its gradient passes through unchanged" if used else
                    f"this entry is outside {start}–{stop - 1}: the slice did not take it, gradient 0 from here")
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}",
                                   lines=[line, f"= {num(grad[index])}"])
        return explain_pad_back(index, grad, syms, index[axis] < stop)


def pad_back_source(g: str, a: str) -> str:
    """:func:`pad_back` as numpy source."""
    return f"pad_back({g}, {a}.shape)"


def explain_pad_back(index: tuple[int, ...], grad: Any, syms: Syms, used: bool) -> CellExplanation:
    """A gradient cell of a cut: passed through if the entry was used, else 0."""
    line = ("this entry was used: its gradient passes through unchanged" if used else
            "this entry was cut off (the sequence is shorter than the context): it reaches no output, gradient 0")
    return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=[line, f"= {num(grad[index])}"])
