"""The op kinds of the backward pass.

| kind | what it records |
| --- | --- |
| ``<kind>.grad`` (:class:`GradOf`) | the gradient of one input of a ``<kind>`` step: every view comes from the forward op's own ``vjp*`` methods |
| ``accumulate`` | the gradients that arrive at a value feeding several steps, added (the multivariable chain rule) |
| ``sgd`` | one step of gradient descent on a parameter: W − lr·∂L/∂W |
| ``adamw`` | one AdamW step on a parameter from a fresh state: m, v, their bias corrections, W − lr·m̂/(√v̂ + ε) |

A gradient step's inputs are ``(∂L/∂output, *the forward inputs, the forward output)``, its attrs the forward
step's attrs plus ``wrt`` (which input). So the maths of a backward lives only beside its forward.
"""

from __future__ import annotations

import math
from typing import Any

from explain.core import shape_rules as sr
from explain.ops.base import BACKWARD_OF, CellExplanation, Op, Syms, arg, idx, num, register, sig


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

    def row_axes(self, in_axes, wrt: int = 0, **attrs):
        return self.fwd.vjp_row_axes(wrt, in_axes[0], list(in_axes[1:-1]), **attrs)

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
                               # the arithmetic last: the drill-down pins the last line as the result
                               lines=[f"learning rate lr = {num(lr)}",
                                      "the gradient is " + ("positive: the weight goes down" if g > 0 else
                                                            "negative: the weight goes up" if g < 0 else
                                                            "0: the weight stays"),
                                      f"{num(w)} − {num(lr)}×{arg(g)} = {num(output[index])}"])


@register
class AdamW(Op):
    """One AdamW step from a fresh state (t = 1, m₀ = v₀ = 0), as torch.optim.AdamW computes it: decay the
    weight, then m = β₁m₀ + (1−β₁)g, v = β₂v₀ + (1−β₂)g², m̂ = m/(1−β₁ᵗ), v̂ = v/(1−β₂ᵗ), W′ = W − lr·m̂/(√v̂ + ε)."""

    kind = "adamw"
    differentiable = ()
    default_note = ("AdamW: each weight moves by lr times its gradient's running mean m̂ over the running root "
                    "mean square √v̂; on the first step m̂ = g and √v̂ = |g|, so every weight with a gradient "
                    "moves by about lr, against the gradient's sign, however small the gradient. The weight "
                    "decay (matrices only) first shrinks W by lr·λ of itself.")

    def formula(self, syms: Syms, lr: float = 1e-3, weight_decay: float = 0.0, **attrs) -> str:
        decay = f"(1 − {sig(lr)}·{sig(weight_decay)})·" if weight_decay else ""
        return f"{syms.out} = {decay}{syms.ins[0]} − {sig(lr)}·m̂/(√v̂ + ε),  m̂ = g,  v̂ = g²  (g = {syms.ins[1]})"

    def signature(self, shapes, out, **attrs) -> str:
        return f"{sr.fmt_shape(shapes[0])}, ∂L/∂W {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def source(self, out, ins, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 0.0, t: int = 1, **attrs) -> str:
        # torch's order of operations: p·(1 − lr·λ), then p − (lr/c₁)·m/(√v/√c₂ + ε), m = (1−β₁)g, v = (1−β₂)g²
        b1, b2 = betas
        c1, c2 = 1 - b1**t, 1 - b2**t
        m, v = f"({1 - b1!r} * {ins[1]})", f"({1 - b2!r} * {ins[1]} * {ins[1]})"
        return (f"{ins[0]} * {1 - lr * weight_decay!r} - {lr / c1!r} * {m} / "
                f"(np.sqrt({v}) / {math.sqrt(c2)!r} + {eps!r})")

    def explain(self, index, inputs, output, syms: Syms, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                eps: float = 1e-8, weight_decay: float = 0.0, t: int = 1, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        w, g = float(inputs[0][index]), float(inputs[1][index])
        b1, b2 = betas
        c1, c2 = 1 - b1**t, 1 - b2**t
        m, v = (1 - b1) * g, (1 - b2) * g * g
        mh, vh = m / c1, v / c2
        decayed = w * (1 - lr * weight_decay)
        step = lr * mh / (np.sqrt(vh) + eps)

        def sarg(x: float) -> str:  # sig() for an operand: a negative in parentheses
            return f"({sig(x)})" if x < 0 else sig(x)

        W, G = f"{syms.ins[0]}{idx(index)}", f"g = {syms.ins[1]}{idx(index)}"
        decay = (f"weight decay λ = {sig(weight_decay)}: {num(w)} × (1 − {sig(lr)}×{sig(weight_decay)}) = "
                 f"{num(decayed)}" if weight_decay else "no weight decay (a bias or a layer-norm gain)")
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: one AdamW step from {W}",
                               lines=[f"{G} = {sig(g)};  lr = {sig(lr)}, β₁ = {sig(b1)}, β₂ = {sig(b2)}, "
                                      f"ε = {sig(eps)}, step t = {t} (m₀ = v₀ = 0)",
                                      f"m = β₁·0 + (1 − β₁)·g = {sig(1 - b1)}×{sarg(g)} = {sig(m)}",
                                      f"v = β₂·0 + (1 − β₂)·g² = {sig(1 - b2)}×{sarg(g)}² = {sig(v)}",
                                      f"bias corrections: m̂ = m/(1 − β₁ᵗ) = {sig(m)}/{sig(c1)} = {sig(mh)};  "
                                      f"v̂ = v/(1 − β₂ᵗ) = {sig(v)}/{sig(c2)} = {sig(vh)}",
                                      decay,
                                      f"update = lr·m̂/(√v̂ + ε) = {sig(lr)}×{sarg(mh)}/({sig(np.sqrt(vh))} + "
                                      f"{sig(eps)}) = {sig(step)}",
                                      "on the first step m̂/√v̂ = g/|g|: the weight moves by about lr against the "
                                      "gradient's sign" if g else "the gradient is 0: only the decay moves it",
                                      # the arithmetic last: the drill-down pins the last line as the result
                                      f"{num(decayed)} − {sarg(step)} = {num(output[index])}"])
