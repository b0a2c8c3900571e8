"""Op kinds that normalise along the last axis: softmax, the divide-by-the-sum alternative, log-softmax and
layer norm."""

from __future__ import annotations

import math

from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


def _row(index):
    """The index of the row (all but the last axis) and the position in it."""
    return tuple(index[:-1]), index[-1]


class _RowOp(Op):
    """An op whose output cell depends on the whole row of its (first) input."""

    def feeds(self, index, inputs, **attrs):
        return [tuple(index[:-1]) + (slice(None),)]


@register
class Softmax(_RowOp):
    """Softmax over the last axis, numerically stable; a fully masked row is explained and returned as zeros."""

    kind = "softmax"
    probability = True
    helpers = ("softmax",)
    default_note = ("Softmax turns each row of scores into weights that are positive and sum to 1: "
                    "exp(score) / Σ exp(scores). Larger scores get exponentially more weight.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = softmax({syms.ins[0]})  (each row)"

    def source(self, out, ins, **attrs) -> str:
        return f"softmax({ins[0]})"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        import numpy as np

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
        rows = [(k, float(x), float(x - m), float(ek), float(ek / s)) for k, (x, ek) in enumerate(zip(row, e))]
        lines = [f"max of the row = {num(m)} (subtracted first so exp cannot overflow; the result is unchanged)",
                 f"Σ exp = {num(s)}",
                 f"exp({num(row[j])} − {arg(m)}) / {num(s)} = {num(e[j])} / {num(s)} = {num(output[index])}"]
        if np.isneginf(row[j]):
            lines.append("this position was masked (−inf): exp(−inf) = 0, so its weight is 0")
        return CellExplanation(index, float(output[index]), title,
                               ("k", "score", "score − max", "exp", "weight"), rows, lines)


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
        import numpy as np

        r, j = _row(index)
        row = inputs[0][self.feeds(index, inputs)[0]]
        m = float(row.max())
        lse = m + math.log(float(np.exp(row - m).sum()))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} − logsumexp(row)",
                               lines=[f"max of the row = {num(m)}",
                                      f"log Σ exp(row) = {num(m)} + log Σ exp(row − max) = {num(lse)}",
                                      f"{num(row[j])} − {arg(lse)} = {num(output[index])}",
                                      f"probability = exp({num(output[index])}) = {num(math.exp(output[index]))}"])


@register
class LayerNorm(Op):
    """Layer norm over the last axis: (x − mean)/√(var + ε)·γ + β."""

    kind = "layer_norm"
    helpers = ("layer_norm",)
    default_note = ("Layer norm rescales each position's vector to mean 0 and variance 1, then applies a learned "
                    "scale γ and shift β. It keeps the residual stream's numbers in a stable range.")

    def shape(self, x, w, b, **attrs):
        from explain import shape_rules as sr

        sr.broadcast(x, w)
        return sr.broadcast(x, b)

    def signature(self, shapes, out, **attrs):
        from explain.shape_rules import fmt_shape

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
