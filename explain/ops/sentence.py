"""Op kinds of a sentence embedding (sentence-transformers on BERT); why two sentences are similar is in
:mod:`explain.ops.pairs`.

| kind | what it computes |
| --- | --- |
| ``mean_pool`` | each text's vector: the mean of its real tokens' final states ([CLS] and [SEP] included, <pad> not) |
| ``l2_normalize`` | each vector divided by its length (the cosine of two is then their dot product) |
| ``cosine_loss`` | L = 1 − cos(text a, text b): what the backward pass starts from |

The cosines themselves are a ``matmul`` of the normalised vectors with their transpose.
"""

from __future__ import annotations

import math

from explain.core.errors import ShapeError
from explain.core.shape_rules import fmt_shape
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


def _text_axes(axes: tuple[str, ...]) -> tuple[str, ...]:
    """A pooled vector's axes: one row per text where the states had (batch, pos)."""
    return tuple("text" if a == "batch" else a for a in axes[:-2]) + (axes[-1],)


@register
class MeanPool(Op):
    """h (B, T, d) [and the key padding (B, T)] → (B, d): the mean over each text's real positions."""

    kind = "mean_pool"
    helpers = ("mean_pool",)
    differentiable = (0,)  # the padding is data
    default_note = ("Mean pooling: each text becomes one vector, the average of its tokens' final vectors. Every "
                    "real token counts, [CLS] and [SEP] included; <pad> positions do not.")

    def shape(self, h, *pad, **attrs):
        if len(h) < 2 or (pad and tuple(pad[0]) != tuple(h[:-1])):
            raise ShapeError(f"mean pooling needs states (batch, T, d) and padding (batch, T), got {fmt_shape(h)}"
                             + (f" and {fmt_shape(pad[0])}" if pad else ""))
        return tuple(h[:-2]) + (h[-1],)

    def axes(self, h, *pad, **attrs):
        return _text_axes(h)

    def formula(self, syms: Syms, **attrs) -> str:
        real = " (t not <pad>)" if len(syms.ins) > 1 else ""
        return f"{syms.out}[b] = (1/n_b) · Σₜ {syms.ins[0]}[b, t]{real}"

    def source(self, out, ins, **attrs) -> str:
        return f"mean_pool({', '.join(ins)})"

    def feeds(self, index, inputs, **attrs):
        *lead, k = index
        return [tuple(lead) + (slice(None), k)] + [tuple(lead) + (slice(None),) for _ in inputs[1:]]

    def row_axes(self, in_axes, **attrs):
        return in_axes[0][-2:-1]  # one row per position of the text

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        h = inputs[0]
        *lead, k = index
        column = h[tuple(lead) + (slice(None), k)]
        pad = inputs[1][tuple(lead)] if len(inputs) > 1 else [False] * len(column)
        rows = [(t, float(v) if not p else "padding: not counted") for t, (v, p) in enumerate(zip(column, pad))]
        real = [float(v) for v, p in zip(column, pad) if not p]
        total = sum(real)
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = mean of {syms.ins[0]}"
                               f"{idx(tuple(lead))}[t, {k}] over the {len(real)} real tokens", ("t", "value"), rows,
                               [f"sum = {num(total)}", f"{num(total)} / {len(real)} = {num(output[index])}"],
                               focus=tuple(t for t, p in enumerate(pad) if not p))

    vjp_helpers = ("mean_pool_backward",)
    vjp_note = "A mean hands each of its n terms 1/n of the gradient: every real token of a text gets the same share."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}[b, t] = {syms.ins[0]}[b] / n_b  (0 at <pad>)"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"mean_pool_backward({g}, {', '.join(ins)})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        *lead, t, k = index
        pad = [tuple(lead) + (slice(None),)] if len(inputs) > 1 else []
        return [tuple(lead) + (k,), None, *pad, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        *lead, t, k = index
        pad = inputs[1][tuple(lead)] if len(inputs) > 1 else None
        n = int(len(pad) - pad.astype(bool).sum()) if pad is not None else inputs[0].shape[-2]
        if pad is not None and pad[t]:
            lines = [f"position {t} is padding: the mean did not count it, so its gradient is 0"]
        else:
            lines = [f"the mean counts each of the text's {n} real tokens with weight 1/{n}",
                     f"{num(g[tuple(lead) + (k,)])} / {n} = {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=lines)


@register
class L2Normalize(Op):
    """Each row divided by its length (torch's F.normalize, p = 2)."""

    kind = "l2_normalize"
    helpers = ("l2_normalize",)
    default_note = ("Divide each text's vector by its length, so every vector has length 1: the cosine of two "
                    "texts is then just the dot product of their vectors.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out}[b] = {syms.ins[0]}[b] / ‖{syms.ins[0]}[b]‖"

    def source(self, out, ins, **attrs) -> str:
        return f"l2_normalize({ins[0]})"

    def feeds(self, index, inputs, **attrs):
        return [tuple(index[:-1]) + (slice(None),)]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        row = inputs[0][tuple(index[:-1])]
        squares = row * row
        length = math.sqrt(float(squares.sum()))
        rows = [(k, float(v), float(s)) for k, (v, s) in enumerate(zip(row, squares))]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} / "
                               f"‖{syms.ins[0]}{idx(tuple(index[:-1]))}‖", ("k", "value", "squared"), rows,
                               [f"‖·‖ = √(Σ squares) = √{num(squares.sum())} = {num(length)}",
                                f"{num(row[index[-1]])} / {num(length)} = {num(output[index])}"], focus=(index[-1],))

    vjp_helpers = ("l2_normalize_backward",)
    vjp_note = ("A unit vector cannot grow: the gradient along its own direction is removed, the rest divided by "
                "the length.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        g, x, u = syms.ins[0], syms.ins[1], syms.ins[-1]
        return f"{syms.out} = ({g} − {u}·({g}·{u})) / ‖{x}‖  (each row)"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"l2_normalize_backward({g}, {ins[0]})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        row = tuple(index[:-1]) + (slice(None),)
        return [row, row, None]  # u is recomputed from x by l2_normalize_backward: the output is not read

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        r = tuple(index[:-1])
        gu = float((g[r] * output[r]).sum())
        length = math.sqrt(float((inputs[0][r] ** 2).sum()))
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=[
            f"g·u = {num(gu)} (the gradient along the unit vector u), ‖x‖ = {num(length)}",
            f"({num(g[index])} − {num(output[index])}×{arg(gu)}) / {num(length)} = {num(grad[index])}"])


@register
class CosineLoss(Op):
    """L = 1 − C[a, b], C the matrix of cosines: 0 when the two texts point the same way, 2 when opposite."""

    kind = "cosine_loss"
    default_note = ("The loss 1 − cos(text 1, text 2): 0 for two texts the model reads as the same, up to 2 for "
                    "opposite ones. The backward pass starts here.")

    def shape(self, c, a: int = 0, b: int = 1, **attrs):
        if len(c) != 2 or not (0 <= a < c[0] and 0 <= b < c[1]):
            raise ShapeError(f"the loss reads cosine [{a}, {b}] of a matrix {fmt_shape(c)}; give two texts or more")
        return ()

    def axes(self, c, **attrs):
        return ()

    def formula(self, syms: Syms, a: int = 0, b: int = 1, **attrs) -> str:
        return f"{syms.out} = 1 − {syms.ins[0]}[{a}, {b}]"

    def source(self, out, ins, a: int = 0, b: int = 1, **attrs) -> str:
        return f"1.0 - {ins[0]}[{a}, {b}]"

    def feeds(self, index, inputs, a: int = 0, b: int = 1, **attrs):
        return [(a, b)]

    def explain(self, index, inputs, output, syms: Syms, a: int = 0, b: int = 1, **attrs) -> CellExplanation:
        c = float(inputs[0][a, b])
        return CellExplanation((), float(output), f"{syms.out} = 1 − {syms.ins[0]}[{a}, {b}]",
                               lines=[f"cos(text {a + 1}, text {b + 1}) = {num(c)}", f"1 − {arg(c)} = {num(output)}"])

    vjp_note = "Only cosine [a, b] is read by the loss: it gets −1 times the upstream gradient, every other cell 0."

    def vjp_formula(self, wrt, syms: Syms, a: int = 0, b: int = 1, **attrs) -> str:
        return f"{syms.out}[{a}, {b}] = −{syms.ins[0]}, 0 elsewhere"

    def vjp_source(self, wrt, g, ins, out, a: int = 0, b: int = 1, **attrs) -> str:
        c = ins[0]
        return f"-{g} * np.eye({c}.shape[0])[{a}][:, None] * np.eye({c}.shape[1])[{b}][None, :]"

    def vjp_feeds(self, wrt, index, g, inputs, output, a: int = 0, b: int = 1, **attrs):
        return [() if tuple(index) == (a, b) else None, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, a: int = 0, b: int = 1,
                    **attrs) -> CellExplanation:
        if tuple(index) == (a, b):
            lines = [f"L = 1 − C[{a}, {b}], so ∂L/∂C[{a}, {b}] = −1", f"−{arg(g)} = {num(grad[index])}"]
        else:
            lines = [f"the loss reads C[{a}, {b}] only: this cosine does not change it, gradient 0"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=lines)
