"""Op kinds at the end of a model: the cross-entropy loss's pick (the log-probability of each correct next token)
and mean, and the objective a model without a loss of its own is trained against: the mean-squared error to a
target."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register, token


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


@register
class Pick(Op):
    """For each position, the log-probability of the correct next token: log_probs[t, target[t]]."""

    kind = "pick"
    default_note = "Pick, at each position, the log-probability the model gave to the token that really came next."
    reads_vocab = True

    def shape(self, lp, targets, **attrs):
        if tuple(lp[:-1]) != tuple(targets):
            raise ShapeError(f"targets {sr.fmt_shape(targets)} must match the log-probabilities' positions "
                             f"{sr.fmt_shape(lp[:-1])}")
        return tuple(targets)

    def axes(self, lp, targets, **attrs):
        return lp[:-1]

    def formula(self, syms: Syms, ignore_index: int | None = None, **attrs) -> str:
        tail = f",  0 where target[t] = {ignore_index} (padding, ignored)" if ignore_index is not None else ""
        return f"{syms.out}[t] = {syms.ins[0]}[t, target[t]]{tail}"

    def source(self, out, ins, ignore_index: int | None = None, **attrs) -> str:
        if ignore_index is None:
            return f"np.take_along_axis({ins[0]}, {ins[1]}[..., None], axis=-1)[..., 0]"
        # an ignored target (padding) picks nothing: 0 here, and the mean leaves it out
        t = f"np.where({ins[1]} != {ignore_index}, {ins[1]}, 0)"
        return (f"np.where({ins[1]} != {ignore_index}, "
                f"np.take_along_axis({ins[0]}, {t}[..., None], axis=-1)[..., 0], 0.0)")

    def feeds(self, index, inputs, ignore_index: int | None = None, **attrs):
        lp, targets = inputs
        tok = int(targets[tuple(index)])
        if ignore_index is not None and tok == ignore_index:
            return [None, tuple(index)]  # an ignored target picks nothing
        return [tuple(index) + (tok,), tuple(index)]

    def explain(self, index, inputs, output, syms: Syms, vocab: list[str] | None = None,
                ignore_index: int | None = None, **attrs) -> CellExplanation:
        tok = int(inputs[1][tuple(index)])
        if ignore_index is not None and tok == ignore_index:
            return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: ignored",
                                   lines=[f"the target at {idx(index)} is {ignore_index} (ignore_index): the next "
                                          "token there is padding, not text", "left out of the loss: 0 here, and "
                                          "not counted in the mean"])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index + (tok,))}",
                               lines=[f"the correct next token at {idx(index)} is {token(tok, vocab)}",
                                      f"log p = {num(output[index])}  (p = {num(math.exp(output[index]))})"])

    # -- backward: only the picked entry of each row reaches the loss -----------------------------------------
    differentiable = (0,)
    vjp_helpers = ("pick_backward",)

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out}[t, v] = {syms.ins[0]}[t] if v = target[t] else 0"

    def vjp_source(self, wrt, g, ins, out, ignore_index: int | None = None, **attrs) -> str:
        if ignore_index is None:
            return f"pick_backward({g}, {ins[0]}, {ins[1]})"
        # an ignored target picked nothing: no gradient reaches its row (its g is 0 too; the mean left it out)
        keep = f"({ins[1]} != {ignore_index})"
        return f"pick_backward(np.where({keep}, {g}, 0.0), {ins[0]}, np.where({keep}, {ins[1]}, 0))"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        *pos, v = index
        picked = v == int(inputs[1][tuple(pos)])
        return [tuple(pos) if picked else None, None, tuple(pos), None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, ignore_index: int | None = None,
                    **attrs) -> CellExplanation:
        *pos, v = index
        tok = int(inputs[1][tuple(pos)])
        if ignore_index is not None and tok == ignore_index:
            lines = [f"the target at {idx(tuple(pos))} is padding (ignore_index {ignore_index}): nothing was picked",
                     f"the loss does not read this row, so its gradient here is {num(grad[index])}"]
        elif v == tok:
            lines = [f"token {v} is the correct next token at {idx(tuple(pos))}: it was picked",
                     f"its gradient is the picked value's: {num(grad[index])}"]
        else:
            lines = [f"the correct next token at {idx(tuple(pos))} is {tok}, not {v}: this entry was not picked",
                     "the loss does not read it directly, so its gradient here is 0 (log-softmax spreads it next)"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=lines)


@register
class Mean(Op):
    """The mean of every entry: the loss averages the per-token losses. With a second input (the targets) and
    ``ignore_index``, the mean of the entries whose target is not ignored, as ``F.cross_entropy(ignore_index=…)``."""

    kind = "mean"
    default_note = "The loss is the average of the per-token losses."
    differentiable = (0,)  # the targets (a padded batch's second input) get no gradient

    def shape(self, a, *targets, **attrs):
        return ()

    def axes(self, a, *targets, **attrs):
        return ()

    def formula(self, syms: Syms, ignore_index: int | None = None, **attrs) -> str:
        if len(syms.ins) > 1:
            return f"{syms.out} = mean({syms.ins[0]}[t] for t where target[t] ≠ {ignore_index})"
        return f"{syms.out} = mean({syms.ins[0]})"

    def source(self, out, ins, ignore_index: int | None = None, **attrs) -> str:
        if len(ins) > 1:
            return f"{ins[0]}[{ins[1]} != {ignore_index}].mean()"
        return f"{ins[0]}.mean()"

    def feeds(self, index, inputs, **attrs):
        return [(slice(None),) * inputs[0].ndim] + [(slice(None),) * t.ndim for t in inputs[1:]]  # every entry

    def row_axes(self, in_axes, **attrs):
        return in_axes[0]  # one row per entry, flattened: per token, the token's loss

    def explain(self, index, inputs, output, syms: Syms, ignore_index: int | None = None, **attrs) -> CellExplanation:
        a = inputs[0]
        flat = a.reshape(-1)
        if len(inputs) > 1:
            keep = (inputs[1] != ignore_index).reshape(-1)
            rows = [(i, float(v) if k else "ignored (padding)") for i, (v, k) in enumerate(zip(flat, keep))]
            total, n = flat[keep].sum(), int(keep.sum())
            return CellExplanation((), float(output), f"{syms.out} = mean of the {n} counted entries of "
                                   f"{syms.ins[0]} ({flat.size - n} padded targets ignored)", ("i", "value"), rows,
                                   [f"sum = {num(total)}", f"{num(total)} / {n} = {num(output)}"])
        return CellExplanation((), float(output), f"{syms.out} = mean of the {flat.size} entries of {syms.ins[0]}",
                               ("i", "value"), [(i, float(v)) for i, v in enumerate(flat)],
                               [f"sum = {num(flat.sum())}", f"{num(flat.sum())} / {flat.size} = {num(output)}"])

    # -- backward: every entry counts 1/N of the mean ----------------------------------------------------------
    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} / N  (every entry, N = the number of entries)"

    def vjp_source(self, wrt, g, ins, out, ignore_index: int | None = None, **attrs) -> str:
        if len(ins) > 1:  # (x, targets): the mean of the counted entries; an ignored one gets 0
            keep = f"({ins[1]} != {ignore_index})"
            return f"np.where({keep}, {g} / np.count_nonzero({keep}), 0.0)"
        return f"np.full({ins[0]}.shape, {g} / {ins[0]}.size)"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        if len(inputs) > 1:
            return [(), None, (slice(None),) * inputs[1].ndim, None]  # g / N, N from the targets
        return [(), None, None]  # g / N: x only gives its size

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, ignore_index: int | None = None,
                    **attrs) -> CellExplanation:
        if len(inputs) > 1:
            n = int((inputs[1] != ignore_index).sum())
            if inputs[1][index] == ignore_index:
                return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = 0",
                                       lines=[f"the target at {idx(index)} is padding (ignore_index): the mean "
                                              f"left this entry out, so its gradient is {num(grad[index])}"])
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]} / {n}",
                                   lines=[f"the mean counts each of its {n} non-padding entries with weight 1/{n}",
                                          f"{num(g)} / {n} = {num(grad[index])}"])
        n = inputs[0].size
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = {syms.ins[0]} / {n}",
                               lines=[f"the mean counts each of its {n} entries with weight 1/{n}",
                                      f"{num(g)} / {n} = {num(grad[index])}"])
