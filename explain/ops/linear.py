"""Linear layers: ``x·W + b`` (``nn.Linear``, or a tied unembedding x·W_Eᵀ) and the per-head projection
X·W_s + b_s of multi-head attention, each with its backward (dx = dy·Wᵀ, dW = xᵀ·dy, db = Σ dy)."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register
from explain.ops.products import dot_explanation


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

    def flops(self, shapes, out, **attrs) -> int:
        return 2 * math.prod(out) * shapes[0][-1]  # every output: a dot product over x's last axis

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
        cols, rows, total = dot_explanation(row, col, f"{x_sym}{idx(tuple(lead))}[k]",
                                             f"{w_sym}{'ᵀ' if transpose_w else ''}[k, {j}]")
        lines = [f"sum of {len(rows)} products = {num(total)}"]
        if b:
            bias = float(b[0][j])
            lines.append(f"{num(total)} + bias {b_sym[0]}[{j}] {arg(bias)} = {num(total + bias)}")
        return CellExplanation(index, float(output[index]),
                               f"{syms.out}{idx(index)} = {x_sym}{idx(tuple(lead))} · column {j} of "
                               f"{w_sym}{'ᵀ' if transpose_w else ''}" + (f" + {b_sym[0]}[{j}]" if b else ""),
                               cols, rows, lines)

    # -- backward: y = x·W + b gives dx = dy·Wᵀ, dW = xᵀ·dy and db = Σ dy, summed over every position ---------
    def vjp_formula(self, wrt, syms: Syms, transpose_w: bool = False, **attrs) -> str:
        d, g, (x, w) = syms.out, syms.ins[0], syms.ins[1:3]
        if wrt == 0:
            return f"{d} = {g}·{w}" if transpose_w else f"{d} = {g}·{w}ᵀ"
        if wrt == 2:
            return f"{d} = Σ over positions of {g}"
        return f"{d} = {g}ᵀ·{x}  (summed over positions)" if transpose_w else f"{d} = {x}ᵀ·{g}  (summed over positions)"

    def vjp_source(self, wrt, g, ins, out, transpose_w: bool = False, **attrs) -> str:
        x, w = ins[:2]
        if wrt == 0:
            return f"{g} @ {w}" if transpose_w else f"{g} @ {w}.T"
        g2, x2 = f"{g}.reshape(-1, {g}.shape[-1])", f"{x}.reshape(-1, {x}.shape[-1])"
        if wrt == 2:
            return f"{g2}.sum(axis=0)"
        return f"{g2}.T @ {x2}" if transpose_w else f"{x2}.T @ {g2}"

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[:-1] if wrt else ()  # a weight's and a bias's gradients sum over every position

    def vjp_feeds(self, wrt, index, g, inputs, output, transpose_w: bool = False, **attrs):
        x, w = inputs[:2]
        every = slice(None)
        nb = len(inputs) - 2  # 1 with a bias
        if wrt == 0:  # dx[…, k] = Σⱼ dy[…, j]·W[k, j]
            *lead, k = index
            return [tuple(lead) + (every,), None, (every, k) if transpose_w else (k, every)] + [None] * (nb + 1)
        if wrt == 2:  # the bias: column j of dy at every position
            return [(every,) * (g.ndim - 1) + (index[0],), None, None] + [None] * (nb + 1)
        k, j = (index[1], index[0]) if transpose_w else index  # dW[k, j] = Σₚ x[p, k]·dy[p, j]
        return [(every,) * (g.ndim - 1) + (j,), (every,) * (x.ndim - 1) + (k,), None] + [None] * (nb + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, transpose_w: bool = False,
                    **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        x, w = inputs[:2]
        gs, x_sym, w_sym = syms.ins[0], syms.ins[1], syms.ins[2]
        title = f"{syms.out}{idx(index)}: chain rule over every output cell it feeds"
        if wrt == 0:  # dx[…, k] = Σⱼ dy[…, j]·W[k, j]
            *lead, k = index
            col = w[:, k] if transpose_w else w[k]
            cols, rows, total = dot_explanation(g[tuple(lead)], col, f"{gs}{idx(tuple(lead))}[j]",
                                                 f"{w_sym}{'ᵀ' if transpose_w else ''}[{k}, j]", "j")
            return CellExplanation(index, float(grad[index]), title, cols, rows,
                                   [f"{x_sym}{idx(index)} is multiplied by row {k} of {w_sym}"
                                    f"{'ᵀ' if transpose_w else ''} into every output j",
                                    f"sum of {len(rows)} products = {num(total)}"])
        g2 = g.reshape(-1, g.shape[-1])
        pos = [idx(tuple(int(v) for v in np.unravel_index(p, g.shape[:-1]))) for p in range(g2.shape[0])]
        if wrt == 2:
            (j,) = index
            rows = [(p, float(v)) for p, v in zip(pos, g2[:, j])]
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: the bias is added at every "
                                   "position, so its gradient sums theirs", ("position", f"{gs}[·, {j}]"), rows,
                                   [f"sum over {len(rows)} positions = {num(g2[:, j].sum())}"])
        x2 = x.reshape(-1, x.shape[-1])
        k, j = (index[1], index[0]) if transpose_w else index  # x column k meets dy column j
        cols, rows, total = dot_explanation(x2[:, k], g2[:, j], f"{x_sym}[p, {k}]", f"{gs}[p, {j}]", "p")
        rows = [(pos[r[0]],) + r[1:] for r in rows]
        return CellExplanation(index, float(grad[index]), title, cols, rows,
                               [f"this weight multiplies {x_sym}[p, {k}] into output {j} at every position p",
                                f"sum of {len(rows)} products = {num(total)}"])


@register
class LinearHeads(Op):
    """Per-head projection: x (…, T, d) with W (h, d, m) and b (h, m) gives (…, h, T, m), i.e. X·W_s + b_s
    for every head s."""

    kind = "linear_heads"
    vjp_helpers = ("heads_weight_backward",)
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

    def flops(self, shapes, out, **attrs) -> int:
        return 2 * math.prod(out) * shapes[0][-1]

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
        cols, rows, total = dot_explanation(row, col, f"{x_sym}[{t}, k]", f"{w_sym}[{h}][k, {j}]")
        lines = [f"sum of {len(rows)} products = {num(total)}"]
        if b:
            lines.append(f"{num(total)} + bias {b_sym[0]}[{h}, {j}] {arg(b[0][h, j])} = {num(total + b[0][h, j])}")
        return CellExplanation(index, float(output[index]),
                               f"head {h}: {syms.out}{idx(index)} = row {t} of {x_sym} · column {j} of {w_sym}[{h}]",
                               cols, rows, lines)

    # -- backward: every head's gradient flows back to the shared x; W and b sum over the positions ----------
    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, (x, w) = syms.out, syms.ins[0], syms.ins[1:3]
        if wrt == 0:
            return f"{d} = Σₛ {g}ₛ·{w}ₛᵀ  (every head's gradient reaches {x})"
        if wrt == 1:
            return f"{d}ₛ = {x}ᵀ·{g}ₛ  (for each head s, summed over positions)"
        return f"{d}ₛ = Σ over positions of {g}ₛ"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        x, w = ins[:2]
        if wrt == 0:
            return f"({g} @ np.swapaxes({w}, -1, -2)).sum(axis=-3)"
        if wrt == 1:
            return f"heads_weight_backward({x}, {g})"
        return f"{g}.sum(axis=-2).reshape(-1, *{w}.shape[::2]).sum(axis=0)"

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[:-3] + g_axes[-2:-1] if wrt else ()  # a head's weight sums over every position

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        x = inputs[0]
        every = slice(None)
        nb = len(inputs) - 2
        if wrt == 0:  # dx[…, t, k] = Σₛ Σⱼ dy[…, s, t, j]·W[s, k, j]
            *lead, t, k = index
            return [tuple(lead) + (every, t, every), None, (every, k, every)] + [None] * (nb + 1)
        lead = (every,) * (g.ndim - 3)
        if wrt == 2:  # head s's bias, column j: at every position
            s, j = index
            return [lead + (s, every, j), None, None] + [None] * (nb + 1)
        s, k, j = index  # dW[s, k, j] = Σₚ x[p, k]·dy[s, p, j]
        return [lead + (s, every, j), (every,) * (x.ndim - 1) + (k,), None] + [None] * (nb + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        x, w = inputs[:2]
        gs, x_sym, w_sym = syms.ins[0], syms.ins[1], syms.ins[2]
        title = f"{syms.out}{idx(index)}: chain rule over every output cell it feeds"
        if wrt == 0:  # dx[…, t, k] = Σₛ Σⱼ dy[…, s, t, j]·W[s, k, j]
            *lead, t, k = index
            gl = g[tuple(lead)][:, t, :]  # (h, m)
            rows = [(f"{s}, {j}", float(gl[s, j]), float(w[s, k, j]), float(gl[s, j] * w[s, k, j]))
                    for s in range(w.shape[0]) for j in range(w.shape[2])]
            total = sum(r[3] for r in rows)
            return CellExplanation(index, float(grad[index]), title,
                                   ("head, j", f"{gs}[s, {t}, j]", f"{w_sym}[s][{k}, j]", "product"), rows,
                                   [f"{x_sym}{idx(index)} feeds every head s and every column j",
                                    f"sum of {len(rows)} products = {num(total)}"])
        gf = g.reshape(-1, *g.shape[-3:])  # (positions-batch, h, T, m)
        xf = x.reshape(-1, *x.shape[-2:]) if x.ndim > 2 else x[None]
        if wrt == 2:
            s, j = index
            vals = gf[:, s, :, j].reshape(-1)
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: head {s}'s bias is added at "
                                   "every position", ("position", "gradient"), list(enumerate(map(float, vals))),
                                   [f"sum over {vals.size} positions = {num(vals.sum())}"])
        s, k, j = index
        a_col, g_col = xf[:, :, k].reshape(-1), gf[:, s, :, j].reshape(-1)
        cols, rows, total = dot_explanation(a_col, g_col, f"{x_sym}[p, {k}]", f"{gs}[{s}][p, {j}]", "p")
        return CellExplanation(index, float(grad[index]), title, cols, rows,
                               [f"head {s}'s weight [{k}, {j}] multiplies {x_sym}[p, {k}] into column {j} at every "
                                "position p", f"sum of {len(rows)} products = {num(total)}"])
