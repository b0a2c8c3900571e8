"""The op kinds of the backward pass.

| kind | what it records |
| --- | --- |
| ``<kind>.grad`` (:class:`GradOf`) | the gradient of one input of a ``<kind>`` step: every view comes from the forward op's own ``vjp*`` methods |
| ``accumulate`` | the gradients that arrive at a value feeding several steps, added (the multivariable chain rule) |
| ``sgd`` | one step of gradient descent on a parameter: W − lr·∂L/∂W |

A gradient step's inputs are ``(∂L/∂output, *the forward inputs, the forward output)``, its attrs the forward
step's attrs plus ``wrt`` (which input). So the maths of a backward lives only beside its forward.
"""

from __future__ import annotations

from typing import Any

from explain import shape_rules as sr
from explain.ops.base import BACKWARD_OF, CellExplanation, Op, Syms, arg, idx, num, register


class GradOf(Op):
    """The backward of one forward op kind, registered as ``"<kind>.grad"`` by :func:`explain.ops.get`."""

    def __init__(self, fwd: Op) -> None:
        self.fwd = fwd
        self.kind = f"{fwd.kind}.grad"  # type: ignore[misc]
        self.helpers = fwd.vjp_helpers  # type: ignore[misc]
        self.default_note = (f"Backward through {fwd.kind}: the gradient of the loss with respect to one of its "  # type: ignore[misc]
                             "inputs, from the gradient with respect to its output (the chain rule).")

    @staticmethod
    def _split(items: list | tuple) -> tuple[Any, list, Any]:
        g, *rest = items
        return g, list(rest[:-1]), rest[-1]

    def shape(self, g: sr.Shape, *shapes: sr.Shape, wrt: int = 0, **attrs: Any) -> sr.Shape:
        """∂L/∂X has the shape of X."""
        return tuple(shapes[wrt])

    def axes(self, g, *axes, wrt: int = 0, **attrs):
        return axes[wrt]

    def signature(self, shapes, out, wrt: int = 0, **attrs) -> str:
        return f"∂L/∂out {sr.fmt_shape(shapes[0])} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, wrt: int = 0, **attrs) -> str:
        return self.fwd.vjp_formula(wrt, syms, **attrs)

    def source(self, out, ins, wrt: int = 0, **attrs) -> str:
        g, fins, fout = self._split(ins)
        return self.fwd.vjp_source(wrt, g, fins, fout, **attrs)

    def feeds(self, index, inputs, wrt: int = 0, **attrs):
        g, fins, fout = self._split(inputs)
        return self.fwd.vjp_feeds(wrt, index, g, fins, fout, **attrs)

    def explain(self, index, inputs, output, syms: Syms, wrt: int = 0, **attrs) -> CellExplanation:
        g, fins, fout = self._split(inputs)
        return self.fwd.vjp_explain(wrt, index, g, fins, fout, output, syms, **attrs)


BACKWARD_OF.append(GradOf)  # explain.ops.get makes "<kind>.grad" with it (base cannot import this module)


@register
class Accumulate(Op):
    """The sum of the gradients that arrive at one value from every step it feeds."""

    kind = "accumulate"
    join = " + "
    default_note = ("This value feeds several steps, so the loss depends on it along several paths: its gradient "
                    "is the sum of the gradients that arrive along each (the multivariable chain rule).")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = " + " + ".join(f"[{s}]" for s in syms.ins)

    def source(self, out, ins, **attrs) -> str:
        return " + ".join(ins)

    def explain(self, index, inputs, output, syms: Syms, sources: tuple = (), **attrs) -> CellExplanation:
        terms = [float(p[index]) for p in inputs]
        names = sources or tuple(syms.ins)
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: the sum of {len(terms)} "
                               "gradients, one per step this value feeds",
                               ("from", "gradient"), [(n, t) for n, t in zip(names, terms)],
                               [" + ".join([num(terms[0])] + [arg(t) for t in terms[1:]]) + f" = {num(output[index])}"])


@register
class Sgd(Op):
    """One step of stochastic gradient descent: W′ = W − lr·∂L/∂W."""

    kind = "sgd"
    differentiable = ()
    default_note = ("Gradient descent: move each weight a small step (the learning rate) against its gradient, "
                    "the direction in which the loss falls fastest.")

    def formula(self, syms: Syms, lr: float = 0.1, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} − {num(lr)}·{syms.ins[1]}"

    def signature(self, shapes, out, lr: float = 0.1, **attrs) -> str:
        return f"{sr.fmt_shape(shapes[0])} − lr·{sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def source(self, out, ins, lr: float = 0.1, **attrs) -> str:
        return f"{ins[0]} - {lr!r} * {ins[1]}"

    def explain(self, index, inputs, output, syms: Syms, lr: float = 0.1, **attrs) -> CellExplanation:
        w, g = float(inputs[0][index]), float(inputs[1][index])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} − "
                               f"lr·{syms.ins[1]}{idx(index)}",
                               lines=[f"learning rate lr = {num(lr)}",
                                      f"{num(w)} − {num(lr)}×{arg(g)} = {num(output[index])}",
                                      "the gradient is " + ("positive: the weight goes down" if g > 0 else
                                                            "negative: the weight goes up" if g < 0 else
                                                            "0: the weight stays")])
