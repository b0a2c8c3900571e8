"""Op kinds that are sums of products: matmul (Q·Kᵀ), the weighted sum of values, linear layers (per head
or not), and the head concatenation and slicing that go with them."""

from __future__ import annotations

from typing import Any

from explain import shape_rules as sr
from explain.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, broadcast_index, idx, num, register
from explain.shape_rules import Shape


def _dot_explanation(a_row: Any, b_col: Any, a_name: str, b_name: str, k_name: str = "k",
                     term: str = "product") -> tuple[tuple[str, ...], list[tuple], Any]:
    """The term table of a dot product: one row per k with both elements and their product."""
    prods = a_row * b_col
    rows = [(k, float(a), float(b), float(p)) for k, (a, b, p) in enumerate(zip(a_row, b_col, prods))]
    return (k_name, a_name, b_name, term), rows, prods.sum()


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

    def _operands(self, index, inputs, transpose_b):
        a, b = inputs
        fa, fb = self.feeds(index, inputs, transpose_b=transpose_b)  # row of a, column of b (row of b if ᵀ)
        return a[fa], b[fb], fa[:-1], fb[:-2]

    def explain(self, index, inputs, output, syms: Syms, transpose_b: bool = False, **attrs) -> CellExplanation:
        a_sym, b_sym = syms.ins
        row, col, ai, bi = self._operands(index, inputs, transpose_b)
        *lead, i, j = index
        b_ref = f"{b_sym}{idx(bi + (j,))}" if transpose_b else f"{b_sym}{idx(bi)}[:, {j}]"
        cols, rows, total = _dot_explanation(row, col, f"{a_sym}{idx(ai)}[k]",
                                             f"{b_sym}{'ᵀ' if transpose_b else ''}[k, {j}]")
        products = " + ".join(f"{arg(r[1])}×{arg(r[2])}" for r in rows[:8]) + (" + …" if len(rows) > 8 else "")
        return CellExplanation(
            index, float(output[index]),
            f"{syms.out}{idx(index)} = {a_sym}{idx(ai)} · {b_ref}  (row {i} of {a_sym}, "
            f"{'row' if transpose_b else 'column'} {j} of {b_sym})",
            cols, rows,
            [f"{products}", f"sum of {len(rows)} products = {num(total)}"],
        )


@register
class WeightedSum(MatMul):
    """``A·V``: each output row is the attention-weighted sum of the value rows."""

    kind = "weighted_sum"
    default_note = "Each output row mixes the value vectors, weighted by that query's attention weights."

    def explain(self, index, inputs, output, syms: Syms, transpose_b: bool = False, **attrs) -> CellExplanation:
        a_sym, v_sym = syms.ins
        row, col, ai, bi = self._operands(index, inputs, transpose_b)
        *lead, i, c = index
        cols, rows, total = _dot_explanation(row, col, f"{a_sym}[{i}, j]", f"{v_sym}[j, {c}]", "j", "a·v")
        return CellExplanation(
            index, float(output[index]),
            f"{syms.out}{idx(index)} = Σⱼ {a_sym}[{i}, j]·{v_sym}[j, {c}]  (weights of query {i} times column "
            f"{c} of the values)",
            cols, rows,
            [" + ".join(f"{arg(r[1])}·{arg(r[2])}" for r in rows[:8]) + (" + …" if len(rows) > 8 else ""),
             f"= {num(total)}"],
        )


@register
class Linear(Op):
    """``x·W + b`` over the last axis of x (``nn.Linear``); ``transpose_w`` for a tied unembedding (x·W_Eᵀ)."""

    kind = "linear"
    join = " · "
    default_note = "A linear layer: each output is a weighted sum of the input's features plus a bias."

    def shown_shapes(self, shapes, transpose_w: bool = False, **attrs):
        return [shapes[0], sr.transpose(shapes[1]) if transpose_w else shapes[1], *shapes[2:]]

    def signature(self, shapes, out, transpose_w: bool = False, **attrs) -> str:
        x, w = self.shown_shapes(shapes, transpose_w=transpose_w)[:2]
        tail = f" + {sr.fmt_shape(shapes[2])}" if len(shapes) > 2 else ""
        return f"{sr.fmt_shape(x)} · {sr.fmt_shape(w)}{tail} → {sr.fmt_shape(out)}"

    def shape(self, x, w, b=None, transpose_w: bool = False, **attrs):
        w = sr.transpose(w) if transpose_w else w
        if len(w) != 2:
            raise ShapeError(f"a linear layer's weight must be 2-D, got {sr.fmt_shape(w)}")
        out = sr.matmul(x, w)
        return sr.broadcast(out, b) if b is not None else out

    def axes(self, x, w, *rest, transpose_w: bool = False, **attrs):
        return x[:-1] + (w[0] if transpose_w else w[-1],)

    def formula(self, syms: Syms, transpose_w: bool = False, **attrs) -> str:
        x, w, *b = syms.ins
        return f"{syms.out} = {x}·{w}{'ᵀ' if transpose_w else ''}" + (f" + {b[0]}" if b else "")

    def source(self, out, ins, transpose_w: bool = False, **attrs) -> str:
        x, w, *b = ins
        return f"{x} @ {w}{'.T' if transpose_w else ''}" + (f" + {b[0]}" if b else "")

    def feeds(self, index, inputs, transpose_w: bool = False, **attrs):
        *lead, j = index
        out = [tuple(lead) + (slice(None),), (j, slice(None)) if transpose_w else (slice(None), j)]
        return out + [(j,)] * (len(inputs) - 2)

    def explain(self, index, inputs, output, syms: Syms, transpose_w: bool = False, **attrs) -> CellExplanation:
        x, w, *b = inputs
        x_sym, w_sym, *b_sym = syms.ins
        *lead, j = index
        fx, fw, *_ = self.feeds(index, inputs, transpose_w=transpose_w)  # the row of x, the column of W
        row, col = x[fx], w[fw]
        cols, rows, total = _dot_explanation(row, col, f"{x_sym}{idx(tuple(lead))}[k]",
                                             f"{w_sym}{'ᵀ' if transpose_w else ''}[k, {j}]")
        lines = [f"sum of {len(rows)} products = {num(total)}"]
        if b:
            bias = float(b[0][j])
            lines.append(f"{num(total)} + bias {b_sym[0]}[{j}] {arg(bias)} = {num(total + bias)}")
        return CellExplanation(index, float(output[index]),
                               f"{syms.out}{idx(index)} = {x_sym}{idx(tuple(lead))} · column {j} of "
                               f"{w_sym}{'ᵀ' if transpose_w else ''}" + (f" + {b_sym[0]}[{j}]" if b else ""),
                               cols, rows, lines)


@register
class LinearHeads(Op):
    """Per-head projection: x (…, T, d) with W (h, d, m) and b (h, m) gives (…, h, T, m), i.e. X·W_s + b_s
    for every head s."""

    kind = "linear_heads"
    default_note = "Every head has its own weight matrix; each head's output is X times that head's matrix."

    def signature(self, shapes, out, **attrs) -> str:
        x, w, *b = shapes
        tail = f" + {sr.fmt_shape(b[0])}" if b else ""
        return f"{sr.fmt_shape(x)} · {sr.fmt_shape(w)}{tail} → {sr.fmt_shape(out)}"

    def shape(self, x, w, b=None, **attrs):
        if len(w) != 3:
            raise ShapeError(f"per-head weights must be (heads, d_in, d_out), got {sr.fmt_shape(w)}")
        if x[-1] != w[1]:
            raise ShapeError(f"per-head projection: input width {x[-1]} does not match the weights' d_in {w[1]} "
                             f"({sr.fmt_shape(x)} · {sr.fmt_shape(w)})")
        if b is not None and tuple(b) != (w[0], w[2]):
            raise ShapeError(f"per-head bias must be {sr.fmt_shape((w[0], w[2]))}, got {sr.fmt_shape(b)}")
        return tuple(x[:-2]) + (w[0], x[-2], w[2])

    def axes(self, x, w, *rest, **attrs):
        return x[:-2] + ("head", x[-2], w[-1])

    def formula(self, syms: Syms, **attrs) -> str:
        x, w, *b = syms.ins
        return f"{syms.out}ₛ = {x}·{w}ₛ" + (f" + {b[0]}ₛ" if b else "") + "   (for each head s)"

    def source(self, out, ins, **attrs) -> str:
        # x[..., None, :, :] @ w broadcasts x over the heads: one BLAS matmul per head (einsum without
        # optimize= would loop in C without BLAS, several times slower at GPT-2 size).
        x, w, *b = ins
        return f"{x}[..., None, :, :] @ {w}" + (f" + {b[0]}[:, None, :]" if b else "")

    def feeds(self, index, inputs, **attrs):
        *lead, h, t, j = index
        return [tuple(lead) + (t, slice(None)), (h, slice(None), j)] + [(h, j)] * (len(inputs) - 2)

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x, w, *b = inputs
        x_sym, w_sym, *b_sym = syms.ins
        *lead, h, t, j = index
        fx, fw, *_ = self.feeds(index, inputs)  # row t of x, column j of head h's W
        row, col = x[fx], w[fw]
        cols, rows, total = _dot_explanation(row, col, f"{x_sym}[{t}, k]", f"{w_sym}[{h}][k, {j}]")
        lines = [f"sum of {len(rows)} products = {num(total)}"]
        if b:
            lines.append(f"{num(total)} + bias {b_sym[0]}[{h}, {j}] {arg(b[0][h, j])} = {num(total + b[0][h, j])}")
        return CellExplanation(index, float(output[index]),
                               f"head {h}: {syms.out}{idx(index)} = row {t} of {x_sym} · column {j} of {w_sym}[{h}]",
                               cols, rows, lines)


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


@register
class Slice(Op):
    """The first ``stop`` entries along ``axis`` (a parameter sized for the context, cut to the sequence)."""

    kind = "slice"
    default_note = "Only the first T entries are used: the parameter is sized for the whole context."

    def shape(self, a, axis: int = -1, stop: int = 1, **attrs):
        ax = sr.normalize_axis(axis, len(a))
        if stop > a[ax]:
            raise ShapeError(f"cannot take {stop} entries of axis {axis} of {sr.fmt_shape(a)}")
        return tuple(a[:ax]) + (stop,) + tuple(a[ax + 1:])

    def axes(self, a, axis: int = -1, **attrs):
        return a

    def formula(self, syms: Syms, axis: int = -1, stop: int = 1, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]}[…, :{stop}{', :' * (-axis - 1) if axis < 0 else ''}]"

    def source(self, out, ins, axis: int = -1, stop: int = 1, **attrs) -> str:
        if axis >= 0:
            return f"{ins[0]}[{':, ' * axis}:{stop}]"
        return f"{ins[0]}[..., :{stop}{', :' * (-axis - 1)}]"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)}",
                               lines=[f"copied: {num(output[index])}"])
