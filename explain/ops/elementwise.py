"""Elementwise op kinds: residual add, scaling (÷√d_k), the causal mask, activations, negation."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register, summed_index


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
        return f"{syms.out} = {syms.ins[0]} + {syms.ins[1]}"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]} + {ins[1]}"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        a, b = inputs
        ia, ib = self.feeds(index, inputs)  # the same cell of each, with broadcasting
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(ia)} + {syms.ins[1]}{idx(ib)}",
            ("term", "value"), [(syms.ins[0] + idx(ia), float(a[ia])), (syms.ins[1] + idx(ib), float(b[ib]))],
            [f"{num(a[ia])} + {arg(b[ib])} = {num(output[index])}"])

    # -- backward: ∂(a + b)/∂a = 1, so the gradient passes through unchanged (the residual highway); a
    # broadcast operand sums it over the axes it was stretched along
    vjp_helpers = ("unbroadcast",)
    # broadcast operand sums it over the axes it was stretched along
    vjp_note = ("An addition passes its gradient to both operands unchanged: this is why the residual stream is a "
                "gradient highway from the loss to every block.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]}"  # why it is so is the note's: the header's line fits 80 columns

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"unbroadcast({g}, {ins[wrt]}.shape)"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        # the gradient passes through: only ∂L/∂output's cells, summed over the axes broadcasting added
        return [summed_index(index, inputs[wrt].shape, g.shape)] + [None] * (len(inputs) + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        title = f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)}"
        if g.shape == inputs[wrt].shape:
            return CellExplanation(index, float(grad[index]), title, lines=[
                f"{syms.ins[-1]} = {syms.ins[1]} + {syms.ins[2]}, so ∂{syms.ins[-1]}/∂{syms.ins[1 + wrt]} = 1",
                f"the gradient passes through unchanged: {num(grad[index])}"])
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: summed over the broadcast axes",
                               lines=[f"{syms.ins[1 + wrt]} was added at every position of the broadcast axes, so "
                                      "its gradient is the sum of theirs", f"= {num(grad[index])}"])


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

    # -- backward: scaling by a constant scales the gradient by the same constant ---------------------------
    vjp_note = ("Dividing the scores by √d_k divides their gradients by √d_k too; more importantly it keeps "
                "softmax out of saturation, where the gradients would vanish.")

    def vjp_formula(self, wrt, syms: Syms, root: str = "", multiply: bool = False, **attrs) -> str:
        return self.formula(Syms(syms.out, (syms.ins[0],)), root=root, multiply=multiply)

    def vjp_source(self, wrt, g, ins, out, n: int = 1, multiply: bool = False, **attrs) -> str:
        return self.source("", [g], n=n, multiply=multiply)

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index] + [None] * (len(inputs) + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, root: str = "", n: int = 1,
                    multiply: bool = False, **attrs) -> CellExplanation:
        op, c = ("×" if multiply else "/"), math.sqrt(n)
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} {op} "
                               f"√{root}",
                               lines=[f"the forward step {op} √{root} = {num(c)}, so ∂{syms.ins[-1]}/∂{syms.ins[1]} = "
                                      f"{'' if multiply else '1/'}{num(c)}",
                                      f"{num(g[index])} {op} {num(c)} = {num(grad[index])}"])


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

    # -- backward: a masked score was replaced by a constant (−inf), so no gradient reaches it --------------
    vjp_helpers = ("causal_mask_backward",)
    vjp_note = ("A masked score was replaced by −inf, a constant: the loss does not depend on the original score, "
                "so no gradient flows to it.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}[i, j] = 0 if j > i else {syms.ins[0]}[i, j]"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"causal_mask_backward({g})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        # a masked score (key after query) was replaced by a constant: nothing reaches its gradient
        return [None if index[-1] > index[-2] else index] + [None] * (len(inputs) + 1)

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        i, j = index[-2], index[-1]
        if j > i:
            lines = [f"key position {j} comes after query position {i}: this score was −inf",
                     "no gradient flows to it: the loss does not depend on it at all, so its gradient is 0"]
        else:
            lines = [f"key position {j} ≤ query position {i}: the score was kept, so ∂{syms.ins[-1]}/∂"
                     f"{syms.ins[1]} = 1 here", f"the gradient passes through: {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: query {i}, key {j}", lines=lines)


class Unary(Op):
    """An elementwise function with a kernel of the same name."""

    fn = ""
    label = ""

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {self.label}({syms.ins[0]})"

    def source(self, out, ins, **attrs) -> str:
        return f"{self.fn}({ins[0]})"


@register
class Relu(Unary):
    """max(0, x)."""

    kind = fn = "relu"
    label = "ReLU"
    helpers = ("relu",)
    default_note = "ReLU keeps positive values and sets negative ones to 0."

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = max(0, {syms.ins[0]}{idx(index)})",
                               lines=[f"max(0, {num(x)}) = {num(output[index])}"])

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ [{syms.ins[1]} > 0]"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"{g} * ({ins[0]} > 0)"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        # x decides the gate; the upstream gradient reaches the cell only through an open one (x > 0)
        return [index if inputs[0][index] > 0 else None, index, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        slope = "x > 0: slope 1, the gradient passes" if x > 0 else "x ≤ 0: slope 0, the gradient stops here"
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} · "
                               "ReLU′(x)", lines=[f"x = {num(x)}: {slope}",
                                                  f"{num(g[index])} × {1 if x > 0 else 0} = {num(grad[index])}"])


@register
class Gelu(Unary):
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

    vjp_helpers = ("gelu_backward",)

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} ⊙ GELU′({syms.ins[1]})"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"gelu_backward({g}, {ins[0]})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, index, None]  # GELU′ at x, times the upstream gradient

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        x = float(inputs[0][index])
        c = math.sqrt(2 / math.pi)
        t = math.tanh(c * (x + 0.044715 * x**3))
        slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} · "
                               f"GELU′({num(x)})",
                               lines=[f"tanh(u) = {num(t)}",
                                      f"GELU′(x) = 0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·u′ = {num(slope)}",
                                      f"{num(g[index])} × {arg(slope)} = {num(grad[index])}"])


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

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = −{syms.ins[0]}"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"-{g}"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = −{syms.ins[0]}{idx(index)}",
                               lines=[f"negation flips the gradient's sign: −({num(g[index])}) = {num(grad[index])}"])
