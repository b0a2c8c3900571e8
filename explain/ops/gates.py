"""Gates: the sigmoid (``sigmoid``: DeepSeek-V3's router scores, Qwen2-MoE's shared-expert gate) and the
elementwise product that applies a gate (``mul``: σ(x·w) per position times the shared expert's output)."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register, summed_index


@register
class Sigmoid(Op):
    """σ(x) = 1/(1 + e^(−x)), elementwise."""

    kind = "sigmoid"
    helpers = ("sigmoid",)
    default_note = "The sigmoid squeezes every number into (0, 1): σ(x) = 1/(1 + e^(−x))."

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = σ({syms.ins[0]}) = 1/(1 + e^(−{syms.ins[0]}))"

    def source(self, out, ins, **attrs) -> str:
        return f"sigmoid({ins[0]})"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = σ({syms.ins[0]}{idx(index)})",
                               lines=[f"1/(1 + e^{arg(-x)}) = 1/(1 + {num(math.exp(min(-x, 700)))}) = "
                                      f"{num(output[index])}"])

    vjp_note = "The sigmoid's slope is σ(1 − σ): largest at 0, small where the sigmoid is nearly 0 or 1."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ {syms.ins[-1]}·(1 − {syms.ins[-1]})"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"{g} * {out} * (1.0 - {out})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, None, index]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        s, gi = float(output[index]), float(g[index])
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: the gradient times σ′",
                               lines=[f"σ = {num(s)}, σ′ = σ(1 − σ) = {num(s * (1 - s))}",
                                      f"{num(gi)} × {num(s * (1 - s))} = {num(grad[index])}"])


@register
class Mul(Op):
    """``a * b`` elementwise, with numpy broadcasting (a gate (…, T, 1) times a vector per position)."""

    kind = "mul"
    join = " ⊙ "
    vjp_helpers = ("unbroadcast",)
    default_note = "Elementwise product."

    def shape(self, a, b, **attrs):
        return sr.broadcast(a, b)

    def axes(self, a, b, **attrs):
        return b if len(b) >= len(a) else a

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ {syms.ins[1]}"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]} * {ins[1]}"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        a, b = inputs
        ia, ib = self.feeds(index, inputs)
        return CellExplanation(index, float(output[index]),
                               f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(ia)} × {syms.ins[1]}{idx(ib)}",
                               lines=[f"{num(a[ia])} × {arg(b[ib])} = {num(output[index])}"])

    vjp_note = "A product sends each operand the gradient times the other operand."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ {syms.ins[2 - wrt]}"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"unbroadcast({g} * {ins[1 - wrt]}, {ins[wrt]}.shape)"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        cells = summed_index(index, inputs[wrt].shape, g.shape)  # the gradient's cells this one sums
        other = inputs[1 - wrt]
        extra = g.ndim - other.ndim  # those cells, as the other operand (broadcast too, maybe) holds them
        ins: list = [None, None]
        ins[1 - wrt] = tuple(0 if n == 1 and gn != 1 else c
                             for c, n, gn in zip(cells[extra:], other.shape, g.shape[extra:]))
        return [cells, *ins, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: the gradient times "
                               f"{syms.ins[2 - wrt]}" + ("" if g.shape == inputs[wrt].shape else
                                                         ", summed over the broadcast axes"),
                               lines=[f"= {num(grad[index])}"])
