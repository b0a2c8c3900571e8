"""Elementwise op kinds: residual add, scaling (÷√d_k), the causal mask, activations, negation."""

from __future__ import annotations

import math

from explain import shape_rules as sr
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


@register
class Add(Op):
    """``a + b`` with numpy broadcasting (residual connections, adding positions to embeddings)."""

    kind = "add"
    join = " + "
    default_note = "Elementwise sum."

    def shape(self, a, b, **attrs):
        return sr.broadcast(a, b)

    def axes(self, a, b, **attrs):
        return a if len(a) >= len(b) else b

    def formula(self, syms: Syms, **attrs) -> str:
        out = syms.out + "′" if syms.out in syms.ins else syms.out  # x′ = x + F: the result is a new x
        return f"{out} = {syms.ins[0]} + {syms.ins[1]}"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]} + {ins[1]}"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        a, b = inputs
        ia, ib = self.feeds(index, inputs)  # the same cell of each, with broadcasting
        out = syms.out + "′" if syms.out in syms.ins else syms.out  # a residual add: the result is a new x
        return CellExplanation(
            index, float(output[index]), f"{out}{idx(index)} = {syms.ins[0]}{idx(ia)} + {syms.ins[1]}{idx(ib)}",
            ("term", "value"), [(syms.ins[0] + idx(ia), float(a[ia])), (syms.ins[1] + idx(ib), float(b[ib]))],
            [f"{num(a[ia])} + {arg(b[ib])} = {num(output[index])}"])


@register
class Scale(Op):
    """``a / √n`` or ``a · √n``, the constant named after the dimension it is the root of: ``√d_k`` in
    attention, ``√d_model`` on the original transformer's embeddings (attrs ``root="d_k", n=4``)."""

    kind = "scale"
    default_note = "Every entry is scaled by the same constant."

    def formula(self, syms: Syms, root: str = "", multiply: bool = False, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} · √{root}" if multiply else f"{syms.out} = {syms.ins[0]} / √{root}"

    def signature(self, shapes, out, root: str = "", multiply: bool = False, **attrs):
        return f"{sr.fmt_shape(shapes[0])} {'·' if multiply else '/'} √{root} → {sr.fmt_shape(out)}"

    def source(self, out, ins, n: int = 1, multiply: bool = False, **attrs) -> str:
        return f"{ins[0]} * np.sqrt({n})" if multiply else f"{ins[0]} / np.sqrt({n})"

    def explain(self, index, inputs, output, syms: Syms, root: str = "", n: int = 1, multiply: bool = False,
                **attrs) -> CellExplanation:
        a, c = float(inputs[0][index]), math.sqrt(n)
        op = "×" if multiply else "/"
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} {op} √{root}",
                               lines=[f"√{root} = {num(c)}", f"{num(a)} {op} {num(c)} = {num(output[index])}"])


@register
class Mask(Op):
    """The causal mask: −inf where the key position is after the query position, applied before softmax."""

    kind = "mask"
    helpers = ("causal_mask",)
    default_note = ("Causal mask: a position may attend only to itself and earlier positions. Future scores "
                    "become −inf, so softmax gives them weight exactly 0.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} + M,  M[i, j] = −inf if j > i else 0"

    def signature(self, shapes, out, **attrs):
        return f"{sr.fmt_shape(shapes[0])} + mask {sr.fmt_shape(shapes[0][-2:])} → {sr.fmt_shape(out)}"

    def source(self, out, ins, **attrs) -> str:
        return f"causal_mask({ins[0]})"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        i, j = index[-2], index[-1]
        before = float(inputs[0][index])
        if j > i:
            why = [f"key position {j} comes after query position {i}: the future is hidden",
                   f"{num(before)} → −inf, so softmax will give it weight exp(−inf) = 0"]
        else:
            why = [f"key position {j} ≤ query position {i}: allowed", f"kept: {num(before)}"]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: query {i}, key {j}", lines=why)


class _Unary(Op):
    """An elementwise function with a kernel of the same name."""

    fn = ""
    label = ""

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {self.label}({syms.ins[0]})"

    def source(self, out, ins, **attrs) -> str:
        return f"{self.fn}({ins[0]})"


@register
class Relu(_Unary):
    """max(0, x)."""

    kind = fn = "relu"
    label = "ReLU"
    helpers = ("relu",)
    default_note = "ReLU keeps positive values and sets negative ones to 0."

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = max(0, {syms.ins[0]}{idx(index)})",
                               lines=[f"max(0, {num(x)}) = {num(output[index])}"])


@register
class Gelu(_Unary):
    """GELU, tanh approximation."""

    kind = fn = "gelu"
    label = "GELU"
    helpers = ("gelu",)
    default_note = "GELU: a smooth ReLU. Large positive inputs pass, large negative ones go to 0."

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = GELU({num(x)})",
                               lines=[f"u = √(2/π)·(x + 0.044715·x³) = {num(inner)}",
                                      f"tanh(u) = {num(math.tanh(inner))}",
                                      f"0.5·x·(1 + tanh(u)) = {num(0.5 * x * (1 + math.tanh(inner)))}"])


@register
class Neg(Op):
    """−x (a log-probability becomes a loss)."""

    kind = "neg"
    default_note = "Negate: a log-probability near 0 is a small loss; a very negative one is a large loss."

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = −{syms.ins[0]}"

    def source(self, out, ins, **attrs) -> str:
        return f"-{ins[0]}"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = −{syms.ins[0]}{idx(index)}",
                               lines=[f"−({num(inputs[0][index])}) = {num(output[index])}"])
