"""GELU with the error function, as BERT computes it (``hidden_act`` "gelu"): x·Φ(x), Φ the standard normal
distribution. GPT-2's tanh approximation and ReLU are in :mod:`explain.ops.elementwise`; numpy has no erf, so the
kernel computes one (:func:`explain.ops.kernels_bert.erf`) and an exported script carries it."""

from __future__ import annotations

import math

from explain.ops.base import CellExplanation, Syms, arg, idx, num, register
from explain.ops.elementwise import Unary


@register
class GeluErf(Unary):
    """0.5·x·(1 + erf(x/√2)) (Hendrycks & Gimpel 2016), exact rather than tanh-approximated."""

    kind = "gelu_erf"
    fn = "gelu_erf"
    label = "GELU"
    helpers = ("erf", "gelu_erf")
    default_note = ("GELU: x times the probability that a standard normal variable is below x, "
                    "0.5·x·(1 + erf(x/√2)). Large positive inputs pass, large negative ones go to 0.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = 0.5·{syms.ins[0]}·(1 + erf({syms.ins[0]}/√2))"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        e = math.erf(x / math.sqrt(2))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = GELU({num(x)})",
                               lines=[f"x/√2 = {num(x / math.sqrt(2))}", f"erf(x/√2) = {num(e)}",
                                      f"Φ(x) = 0.5·(1 + erf) = {num(0.5 * (1 + e))}  (the chance N(0, 1) < x)",
                                      f"x·Φ(x) = {num(x)} × {num(0.5 * (1 + e))} = {num(output[index])}"])

    vjp_helpers = ("erf", "gelu_erf_backward")
    vjp_note = "GELU's slope is Φ(x) + x·φ(x): about 1 for large x, 0 for very negative x, 0.5 at 0."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ (Φ({syms.ins[1]}) + {syms.ins[1]}·φ({syms.ins[1]}))"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"gelu_erf_backward({g}, {ins[0]})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, index, None]  # GELU′ at x, times the upstream gradient

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        cdf = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        pdf = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        slope = cdf + x * pdf
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} · "
                               f"GELU′({num(x)})",
                               lines=[f"Φ(x) = {num(cdf)}, φ(x) = e^(−x²/2)/√(2π) = {num(pdf)}",
                                      f"GELU′(x) = Φ(x) + x·φ(x) = {num(slope)}",
                                      f"{num(g[index])} × {arg(slope)} = {num(grad[index])}"])
