"""The objective a model without a loss of its own is trained against: the mean-squared error to a target."""

from __future__ import annotations

from explain import shape_rules as sr
from explain.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


@register
class Mse(Op):
    """L = mean((Y − target)²) over every entry."""

    kind = "mse"
    differentiable = (0,)  # the target is given, not learned
    default_note = ("The objective: the mean-squared error between the output and a target. The backward pass "
                    "starts here.")

    def shape(self, y, target, **attrs):
        if tuple(y) != tuple(target):
            raise ShapeError(f"the target {sr.fmt_shape(target)} must have the output's shape {sr.fmt_shape(y)}")
        return ()

    def axes(self, y, target, **attrs):
        return ()

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = mean(({syms.ins[0]} − {syms.ins[1]})²)"

    def signature(self, shapes, out, **attrs) -> str:
        return f"{sr.fmt_shape(shapes[0])}, {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def source(self, out, ins, **attrs) -> str:
        return f"np.mean(({ins[0]} - {ins[1]}) ** 2)"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        y, t = inputs
        d = (y - t).reshape(-1)
        return CellExplanation((), float(output), f"{syms.out} = mean of the {d.size} squared differences",
                               ("i", "difference", "squared"), [(i, float(v), float(v * v)) for i, v in enumerate(d)],
                               [f"Σ (y − target)² = {num((d * d).sum())}", f"/ {d.size} = {num(output)}"])

    def feeds(self, index, inputs, **attrs):
        return [(slice(None),) * a.ndim for a in inputs]  # the mean reads every entry of both

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} · 2·({syms.ins[1]} − {syms.ins[2]}) / N"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"{g} * 2.0 * ({ins[0]} - {ins[1]}) / {ins[0]}.size"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [(), index, index, None]  # ∂L/∂L, and this entry's difference

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        y, t = float(inputs[0][index]), float(inputs[1][index])
        n = inputs[0].size
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = 2·(y − target) / {n}",
                               lines=[f"y = {num(y)}, target = {num(t)}: the output is "
                                      + ("too high" if y > t else "too low" if y < t else "on target"),
                                      f"{num(g)} × 2×({num(y)} − {arg(t)}) / {n} = {num(grad[index])}"])
