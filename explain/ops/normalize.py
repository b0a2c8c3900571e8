"""Op kinds that normalise along the last axis: softmax, the divide-by-the-sum alternative, log-softmax and
layer norm."""

from __future__ import annotations

import math
from typing import Any

from explain.core import shape_rules as sr
from explain.core.shape_rules import fmt_shape
from explain.ops.base import CellExplanation, Op, Syms, arg, id_word, idx, num, register
from explain.ops.products import dot_explanation


def _row(index):
    """The index of the row (all but the last axis) and the position in it."""
    return tuple(index[:-1]), index[-1]


class _RowOp(Op):
    """An op whose output cell depends on the whole row of its (first) input."""

    def feeds(self, index, inputs, **attrs):
        return [tuple(index[:-1]) + (slice(None),)]

    def row_axes(self, in_axes, **attrs):
        return in_axes[0][-1:]  # one row per entry of the row: a softmax over the keys counts positions

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[-1:]


@register
class Softmax(_RowOp):
    """Softmax over the last axis, numerically stable; a fully masked row is explained and returned as zeros."""

    kind = "softmax"
    probability = True
    row_words = True
    helpers = ("softmax",)
    default_note = ("Softmax turns each row of scores into weights that are positive and sum to 1: "
                    "exp(score) / Σ exp(scores). Larger scores get exponentially more weight.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = softmax({syms.ins[0]})  (each row)"

    def source(self, out, ins, **attrs) -> str:
        return f"softmax({ins[0]})"

    def explain(self, index, inputs, output, syms: Syms, words: Any = None, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        r, j = _row(index)
        row = np.asarray(inputs[0][self.feeds(index, inputs)[0]], dtype=float)
        title = f"{syms.out}{idx(index)} = exp({syms.ins[0]}{idx(index)}) / Σₖ exp({syms.ins[0]}{idx(r)}[k])"
        m = row.max()
        if np.isneginf(m):
            return CellExplanation(index, float(output[index]), title, lines=[
                "every entry of this row is −inf (every position is masked)",
                "softmax would be 0/0 here, which has no value; it is shown as 0 for every position",
                "a row needs at least one position it may attend to"])
        e = np.exp(row - m)
        s = e.sum()
        rows = [(k if words is None else id_word(k, words), float(x), float(x - m), float(ek), float(ek / s))
                for k, (x, ek) in enumerate(zip(row, e))]
        lines = [f"max of the row = {num(m)} (subtracted first so exp cannot overflow; the result is unchanged)",
                 f"Σ exp = {num(s)}",
                 f"exp({num(row[j])} − {arg(m)}) / {num(s)} = {num(e[j])} / {num(s)} = {num(output[index])}"]
        if np.isneginf(row[j]):
            lines.append("this position was masked (−inf): exp(−inf) = 0, so its weight is 0")
        # the rows that matter: this cell's own, then the positions a mask left, largest weight first
        live = [int(k) for k in np.argsort(-e, kind="stable") if np.isfinite(row[k]) and k != j]
        return CellExplanation(index, float(output[index]), title,
                               ("k", "score", "score − max", "exp", "weight"), rows, lines, focus=(j, *live))

    # -- backward: the softmax Jacobian ∂Aₖ/∂Sⱼ = Aₖ(δₖⱼ − Aⱼ), applied to one row at a time ------------------
    vjp_helpers = ("softmax_backward",)
    vjp_note = ("Softmax couples a row: raising one score raises its weight and lowers the others, so each "
                "score's gradient is its weight times (its upstream gradient minus the row's weighted average). "
                "A saturated row (one weight ≈ 1) passes almost no gradient back.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, a = syms.out, syms.ins[0], syms.ins[-1]
        return f"{d} = {a} ⊙ ({g} − rowsum({g} ⊙ {a}))"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"softmax_backward({g}, {out})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        r, _ = _row(index)
        return [r, None, r]  # the row of ∂L/∂A and of A (the Jacobian is written in A alone)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        r, j = _row(index)
        gs, s_sym, a_sym = syms.ins[0], syms.ins[1], syms.ins[-1]
        a, gr = output[r], g[r]
        terms = a * gr
        dot = float(terms.sum())
        rows = [(k, float(ak), float(gk), float(tk)) for k, (ak, gk, tk) in enumerate(zip(a, gr, terms))]
        lines = [f"∂{a_sym}[k]/∂{s_sym}[{j}] = {a_sym}[k]·(δₖ{j} − {a_sym}[{j}])  (one score up: its weight up, the rest down)",
                 f"rowsum({gs} ⊙ {a_sym}) = {num(dot)}  (the row's weighted average gradient)",
                 f"{a_sym}[{j}]·({gs}[{j}] − {arg(dot)}) = {num(a[j])}×({num(gr[j])} − {arg(dot)}) = "
                 f"{num(grad[index])}"]
        if a[j] == 0:
            lines.append("this weight is exactly 0 (a masked score): no gradient flows to its score")
        elif (a > 0).sum() == 1:
            lines.append("only this key is visible in the row (the others are masked): its weight is 1 whatever "
                         "its score, so the score gets no gradient")
        elif a.max() > 0.99:
            lines.append("this row is saturated (one weight ≈ 1): every gradient in it is close to 0")
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {a_sym}[{j}]·({gs}[{j}] − "
                               f"Σₖ {gs}[k]·{a_sym}[k])  (row {idx(r)})",
                               ("k", f"{a_sym}[k]", f"{gs}[k]", "product"), rows, lines)


@register
class SumNormalize(_RowOp):
    """Divide each row by its sum: the naive alternative to softmax (shown to motivate softmax)."""

    kind = "sum_normalize"
    probability = True
    default_note = ("Divide each score by the row's sum, so the row sums to 1. Unlike softmax this breaks on "
                    "negative scores and treats large scores no differently from small ones.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} / Σ {syms.ins[0]}  (each row)"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]} / {ins[0]}.sum(axis=-1, keepdims=True)"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        r, j = _row(index)
        row = inputs[0][self.feeds(index, inputs)[0]]
        s = float(row.sum())
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} / row sum",
                               ("k", "score"), [(k, float(x)) for k, x in enumerate(row)],
                               [f"row sum = {num(s)}", f"{num(row[j])} / {num(s)} = {num(output[index])}"])

    # -- backward: y = a / s with s = Σ a gives da = (dy − Σ dy·y) / s --------------------------------------
    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, x, y = syms.out, syms.ins[0], syms.ins[1], syms.ins[-1]
        return f"{d} = ({g} − rowsum({g} ⊙ {y})) / Σ {x}"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"({g} - np.sum({g} * {out}, axis=-1, keepdims=True)) / {ins[0]}.sum(axis=-1, keepdims=True)"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        r, _ = _row(index)
        return [r, r, r]  # ∂L/∂y's row, the row sum of x, y's row

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        r, j = _row(index)
        s, dot = float(inputs[0][r].sum()), float((g[r] * output[r]).sum())
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}",
                               lines=[f"row sum = {num(s)}", f"rowsum(g ⊙ y) = {num(dot)}",
                                      f"({num(g[index])} − {arg(dot)}) / {arg(s)} = {num(grad[index])}"])


@register
class LogSoftmax(_RowOp):
    """log(softmax(x)) over the last axis, computed as x − max − log Σ exp(x − max)."""

    kind = "log_softmax"
    helpers = ("log_softmax",)
    default_note = "Log-probabilities: log softmax of the logits, computed stably."

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = log softmax({syms.ins[0]}) = {syms.ins[0]} − log Σ exp({syms.ins[0]})"

    def source(self, out, ins, **attrs) -> str:
        return f"log_softmax({ins[0]})"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        r, j = _row(index)
        row = inputs[0][self.feeds(index, inputs)[0]]
        m = float(row.max())
        lse = m + math.log(float(np.exp(row - m).sum()))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} − logsumexp(row)",
                               lines=[f"max of the row = {num(m)}",
                                      f"log Σ exp(row) = {num(m)} + log Σ exp(row − max) = {num(lse)}",
                                      f"{num(row[j])} − {arg(lse)} = {num(output[index])}",
                                      f"probability = exp({num(output[index])}) = {num(math.exp(output[index]))}"])

    # -- backward: ∂ log pₖ/∂xⱼ = δₖⱼ − pⱼ, so dx = g − p·rowsum(g) ----------------------------------------
    vjp_helpers = ("log_softmax_backward",)

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, y = syms.out, syms.ins[0], syms.ins[-1]
        return f"{d} = {g} − exp({y}) · rowsum({g})"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"log_softmax_backward({g}, {out})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        r, _ = _row(index)
        return [r, None, index]  # the row of ∂L/∂y (its sum), and p = exp(y) at this cell

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        r, j = _row(index)
        p, total = math.exp(float(output[index])), float(g[r].sum())
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} − "
                               f"p[{j}]·Σₖ {syms.ins[0]}[k]",
                               lines=[f"p[{j}] = exp({num(output[index])}) = {num(p)}",
                                      f"Σₖ {syms.ins[0]}{idx(r)}[k] = {num(total)}",
                                      f"{num(g[index])} − {arg(p)}×{arg(total)} = {num(grad[index])}"])


@register
class LayerNorm(Op):
    """Layer norm over the last axis: (x − mean)/√(var + ε)·γ + β."""

    kind = "layer_norm"
    helpers = ("layer_norm",)
    default_note = ("Layer norm rescales each position's vector to mean 0 and variance 1, then applies a learned "
                    "scale γ and shift β. It keeps the residual stream's numbers in a stable range.")

    def shape(self, x, w, b, **attrs):
        sr.broadcast(x, w)
        return sr.broadcast(x, b)

    def signature(self, shapes, out, **attrs):
        return f"LN{fmt_shape(shapes[0])}, γ{fmt_shape(shapes[1])}, β{fmt_shape(shapes[2])} → {fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        x, w, b = syms.ins
        return f"{syms.out} = ({x} − mean) / √(var + ε) · {w} + {b}  (each row)"

    def source(self, out, ins, eps: float = 1e-5, **attrs) -> str:
        return f"layer_norm({ins[0]}, {ins[1]}, {ins[2]}, eps={eps!r})"

    def feeds(self, index, inputs, **attrs):
        r, j = _row(index)
        return [r + (slice(None),), (j,), (j,)]  # the row, γ[j], β[j]

    def explain(self, index, inputs, output, syms: Syms, eps: float = 1e-5, **attrs) -> CellExplanation:
        x, w, b = inputs
        r, j = _row(index)
        row = x[self.feeds(index, inputs)[0]]
        mean = float(row.mean())
        var = float(((row - mean) ** 2).mean())
        xhat = (float(row[j]) - mean) / math.sqrt(var + eps)
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)}: normalise row {idx(r)} of {syms.ins[0]}, then scale and shift",
            ("k", "x"), [(k, float(v)) for k, v in enumerate(row)],
            [f"mean = {num(mean)}", f"variance (divide by n = {row.shape[0]}) = {num(var)}",
             f"x̂ = ({num(row[j])} − {arg(mean)}) / √({num(var)} + {eps:g}) = {num(xhat)}",
             f"x̂·γ[{j}] + β[{j}] = {num(xhat)}·{arg(w[j])} + {arg(b[j])} = {num(output[index])}"])

    # -- backward: x̂ = (x − mean)/σ, dx̂ = dy·γ, dx = (dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) / σ; γ, β: Σ over positions
    vjp_helpers = ("layer_norm_backward", "layer_norm")
    vjp_note = ("Layer norm's backward goes through the scale γ, then the division by σ and the subtraction of "
                "the mean: every x of a row moves the row's mean and variance, so each gradient depends on the "
                "whole row.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, w = syms.out, syms.ins[0], syms.ins[2]
        if wrt == 0:
            # dx̂ as the drill-down names it ("dx + sub̂" read wrong), one line of the header at 80 columns (issue 26)
            return f"{d} = (dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂)) / σ,  dx̂ = {g} ⊙ {w}"
        if wrt == 1:
            return f"{d} = Σ over positions of {g} ⊙ x̂"
        return f"{d} = Σ over positions of {g}"

    def vjp_source(self, wrt, g, ins, out, eps: float = 1e-5, **attrs) -> str:
        x, w, _ = ins
        if wrt == 0:
            return f"layer_norm_backward({g}, {x}, {w}, eps={eps!r})"
        g2 = f"{g}.reshape(-1, {g}.shape[-1])"
        if wrt == 2:
            return f"{g2}.sum(axis=0)"
        return f"({g2} * layer_norm({x}, 1.0, 0.0, eps={eps!r}).reshape(-1, {x}.shape[-1])).sum(axis=0)"

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[:-1] if wrt else ()  # the gain's and the bias's gradients sum over every position

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        x = inputs[0]
        if wrt == 0:  # the whole row: its mean and variance; every γ
            r, _ = _row(index)
            return [r, r, (slice(None),), None, None]
        column = (slice(None),) * (g.ndim - 1) + (index[0],)  # this feature at every position
        if wrt == 2:
            return [column, None, None, None, None]
        return [column, (slice(None),) * x.ndim, None, None, None]  # x̂ needs every row's statistics

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, eps: float = 1e-5,
                    **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        x, w, _ = inputs
        gs = syms.ins[0]
        xhat_all = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
        if wrt in (1, 2):
            (j,) = index
            gcol = g.reshape(-1, g.shape[-1])[:, j]
            if wrt == 2:
                rows = [(p, float(v)) for p, v in enumerate(gcol)]
                return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: β is added at every "
                                       "position", ("position", f"{gs}[p, {j}]"), rows,
                                       [f"sum over {len(rows)} positions = {num(gcol.sum())}"])
            xcol = xhat_all.reshape(-1, x.shape[-1])[:, j]
            cols, rows, total = dot_explanation(gcol, xcol, f"{gs}[p, {j}]", f"x̂[p, {j}]", "p")
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: γ[{j}] multiplies x̂[p, {j}] "
                                   "at every position", cols, rows, [f"sum of {len(rows)} products = {num(total)}"])
        r, j = _row(index)
        xhat, dxhat = xhat_all[r], g[r] * w
        sigma = math.sqrt(float(x[r].var()) + eps)
        m1, m2 = float(dxhat.mean()), float((dxhat * xhat).mean())
        rows = [(k, float(a), float(b), float(c)) for k, (a, b, c) in enumerate(zip(xhat, g[r], dxhat))]
        return CellExplanation(
            index, float(grad[index]), f"{syms.out}{idx(index)}: back through scale, normalise, centre (row {idx(r)})",
            ("k", "x̂", gs, f"dx̂ = {gs}·γ"), rows,
            [f"σ = √(var + ε) = {num(sigma)}",
             f"mean(dx̂) = {num(m1)}  (moving every x of the row moves the mean too)",
             f"mean(dx̂ ⊙ x̂) = {num(m2)}  (and the variance)",
             f"(dx̂[{j}] − mean(dx̂) − x̂[{j}]·mean(dx̂ ⊙ x̂)) / σ",  # two lines: each fits 80 columns
             f"= ({num(dxhat[j])} − {arg(m1)} − {arg(xhat[j])}×{arg(m2)}) / {num(sigma)} = {num(grad[index])}"])

