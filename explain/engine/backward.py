"""The backward pass, recorded one operation at a time, after the forward steps of a run.

The walk is generic over the trace (like micrograd's ``backward``): start from the loss with ∂L/∂L = 1, visit
the forward steps in reverse, and for each input of a step that carries a gradient record one step of kind
``"<op>.grad"``, whose maths is the op's own backward source, evaluated (see :mod:`explain.ops.grad`). Where
a value feeds several steps (X into Q, K and V; the residual stream into a block and past it) each gradient
that arrives is its own step (``x.grad.from.<step>``) and an ``accumulate`` step adds them into ``x.grad``. A value feeding one step
gets ``x.grad`` directly. Parameters get ``<name>.grad`` the same way (``W_E.grad``).

Models with a loss (``gpt``, ``transformer``) start from it. The others take an objective recorded before the
backward steps: the mean-squared error to a target (drawn from the seed unless one is given), or a given
∂L/∂output. With ``lr`` each parameter then takes one step of gradient descent (``<name>.updated``).

Everything here also runs on shapes alone, so ``explain shapes --backward`` and the memory estimate see the
backward steps too.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from explain import ops
from explain.core.errors import InputError, UsageError
from explain.core.names import GRAD, backward_group, grad, grad_from, gradient_of, update_group, updated, updated_of
from explain.engine.prepare import load_embeddings
from explain.trace import BackwardPass, Step
from explain.trace.recorder import Recorder, Ref


@dataclass(frozen=True)
class Training:
    """What a backward run is asked for: an objective for a model without a loss, and an optional SGD step."""

    output_target: Any = None  # target of the mean-squared error (the output's shape); None: default_target
    grad_output: Any = None  # a given ∂L/∂output, instead of an objective
    lr: float | None = None
    optimizer: str = "sgd"  # or "adamw": one AdamW step from a fresh state (explain train's settings)


# explain train's AdamW settings (explain.train.step.AdamW; a test holds them equal); the decay on the W matrices
# (_matrix; explain train also decays the per-head biases, explain.train.step.decayed)
ADAMW = dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)


def _ref(rec: Recorder, steps: dict[str, Step], name: str) -> Ref:
    """The Ref of a recorded step or a parameter, to feed a gradient step."""
    if name in steps:
        s = steps[name]
        return Ref(name, s.syms.out, s.shape if rec.shape_only else s.output, s.axes, s.shape)
    return rec.reuse(name)


def _sym(rec: Recorder, steps: dict[str, Step], name: str) -> str:
    return steps[name].syms.out if name in steps else rec.specs[name].sym


def objective(rec: Recorder, training: Training) -> tuple[str, Ref]:
    """Record what the backward pass starts from: the name of the step to differentiate and ∂L/∂(that step),
    a step of its own. A model with a loss starts from it; otherwise the objective is recorded first."""
    steps = {s.name: s for s in rec.steps}
    has_loss = "loss" in steps
    if has_loss and (training.grad_output is not None or training.output_target is not None):
        raise UsageError(f"the '{rec.config.model}' model has a loss and backpropagates from it; drop "
                         "--grad-output/--output-target (they are for models without a loss)")
    if training.grad_output is not None and training.output_target is not None:
        raise UsageError("give one objective: --output-target FILE (mean-squared error) or --grad-output FILE")
    out = rec.steps[-1]
    if not has_loss and training.grad_output is not None:
        if training.lr is not None:
            raise UsageError("--lr shows the loss falling, and --grad-output gives a gradient but no loss; "
                             "use --output-target FILE (mean-squared error) with --lr")
        g = _given(rec, training.grad_output, out, "--grad-output")
        seed = rec.op("input", grad(out.name), sym=f"∂L/∂{out.syms.out}", value=g, shape=out.shape,
                      axes=out.axes, group=backward_group(out.name),
                      note=f"The given gradient of the loss with respect to the output {out.name} "
                           "(--grad-output): the backward pass starts here.")
        return out.name, seed
    if not has_loss:
        _record_mse(rec, out, training.output_target)
    seed = rec.op("input", grad("loss"), sym="∂L/∂L", shape=(), axes=(),
                  value=None if rec.shape_only else _one(), formula="∂L/∂L = 1", group=backward_group("loss"),
                  note="The backward pass starts at the loss: ∂L/∂L = 1. Every gradient that follows is the "
                       "chain rule applied to this 1, one operation at a time, in reverse.")
    return "loss", seed


def _one() -> Any:
    import numpy as np  # lazy: numpy off the shape path

    return np.array(1.0)


def _given(rec: Recorder, value: Any, out: Step, flag: str) -> Any:
    """A given array (or file) for the output ``out``, checked against its shape; None in a shape-only run."""
    if rec.shape_only:
        return None
    import numpy as np  # lazy: numpy off the shape path

    if isinstance(value, str):
        value = load_embeddings(value, flag)  # named "--output-target file" in its errors
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != tuple(out.shape):
        raise InputError(f"{flag} has shape {list(arr.shape)} but the output {out.name} is {list(out.shape)}; "
                         f"give an array of shape {list(out.shape)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{flag} contains NaN or infinite values; replace them with numbers")
    return arr


def _record_mse(rec: Recorder, out: Step, target: Any) -> None:
    """The objective of a model without a loss: L = mean((output − target)²)."""
    given = target is not None
    value = _given(rec, target, out, "--output-target") if given else None
    if value is None and not rec.shape_only:
        value = default_target(rec.config.seed, out.shape)
    steps = {s.name: s for s in rec.steps}
    t = rec.op("input", "output_target", sym="target", value=value, shape=out.shape, axes=out.axes,
               note=("The target for the output, given with --output-target." if given else
                     f"The target for the output: standard-normal numbers drawn with the seed ({rec.config.seed}), "
                     "standing in for what the output should have been (no --output-target was given). Give your "
                     "own with --output-target FILE."))
    rec.op("mse", "loss", _ref(rec, steps, out.name), t, sym="L",
           note=f"{rec.config.model} has no loss of its own: the objective is the mean-squared error between its "
                f"output {out.name} and the target. The backward pass starts here.")


def default_target(seed: int, shape: tuple[int, ...]) -> Any:
    """The target of the mean-squared error when none is given: standard normal, from the run's seed (a
    stream of its own, so the weights are the same as without it). Not zeros: a layer-normed output has a fixed
    mean square, so its distance to zeros has no gradient to show."""
    import numpy as np  # lazy: numpy off the shape path

    return np.random.default_rng([seed, 13]).standard_normal(shape)


def backward(rec: Recorder, start: str, seed: Ref) -> None:
    """Record ∂L/∂(every value the loss depends on), walking the forward steps from ``start`` in reverse. A
    gradient step is filed with the forward step it goes back through, an accumulation with the value it
    completes (:func:`explain.core.names.backward_group`)."""
    rec.backward = BackwardPass(start)
    steps = {s.name: s for s in rec.steps}
    forward = rec.steps[: steps[start].index + 1]
    diff = {s.name: ops.get(s.op).grad_inputs(len(s.inputs)) for s in forward}

    # 1. what carries a gradient: parameters, given float inputs fed to a differentiable position (not token
    #    ids or targets), and everything computed from them
    carries: set[str] = set(rec.specs)
    for s in forward:
        for i in diff[s.name]:
            x = s.inputs[i]
            if x in steps and steps[x].op == "input":
                carries.add(x)
        if any(s.inputs[i] in carries for i in diff[s.name]):
            carries.add(s.name)
    # 2. the edges a gradient flows along: from a step the loss depends on back to each input that carries one
    reach = {start}
    uses: dict[str, list[tuple[Step, int]]] = defaultdict(list)
    for s in reversed(forward):
        if s.name in reach:
            for i in diff[s.name]:
                if s.inputs[i] in carries:
                    reach.add(s.inputs[i])
                    uses[s.inputs[i]].append((s, i))
    # 3. walk back: each edge is a gradient step; a value's gradient is complete when every edge has arrived
    grads: dict[str, Ref] = {start: seed}
    arrived: dict[str, list[tuple[Step, Ref]]] = defaultdict(list)
    for s in reversed(forward):
        if s.name not in grads:
            continue
        g = grads[s.name]
        ins = [_ref(rec, steps, n) for n in s.inputs]
        out = _ref(rec, steps, s.name)
        done: list[str] = []
        for i in diff[s.name]:
            x = s.inputs[i]
            if x not in carries:
                continue
            sym = _sym(rec, steps, x)
            many = len(uses[x]) > 1
            twice = sum(u is s for u, _ in uses[x]) > 1
            name = grad_from(x, s.name, i if twice else None) if many else grad(x)
            ref = rec.op(f"{s.op}{GRAD}", name, g, *ins, out, wrt=i, **s.attrs, group=backward_group(s.name),
                         sym=f"∂L/∂{sym}" + (f" via {s.name.rsplit('.', 1)[-1]}" if many else ""),
                         note=_note(s, i, x, sym, many))
            arrived[x].append((s, ref))
            if len(arrived[x]) == len(uses[x]):
                done.append(x)
                grads[x] = ref
        for x in done:  # after this step's own gradients, so the tree stays in this step's group till then
            parts = arrived[x]
            if len(parts) > 1:
                grads[x] = rec.op("accumulate", grad(x), *[r for _, r in parts], sym=f"∂L/∂{_sym(rec, steps, x)}",
                                  sources=tuple(u.name for u, _ in parts), group=backward_group(x),
                                  note=f"{x} feeds {len(parts)} steps ({', '.join(u.name for u, _ in parts)}); the "
                                       "loss depends on it along each, so the gradients arriving from each are "
                                       "added (the multivariable chain rule).")


def _note(s: Step, i: int, x: str, sym: str, many: bool) -> str:
    """The note of a gradient step: what it is the gradient of, through which step, and the op's own words."""
    via = f" (the part that arrives through {s.name}; {x} feeds several steps)" if many else ""
    return (f"∂L/∂{sym}: how the loss changes when {x} changes{via}, back through {s.name} ({s.op}). "
            f"{ops.get(s.op).vjp_note}").strip()


def sgd(rec: Recorder, lr: float, optimizer: str = "sgd") -> list[str]:
    """One step of gradient descent (or, with ``optimizer="adamw"``, one AdamW step from a fresh state: t = 1,
    m₀ = v₀ = 0, weight decay on matrices only) on every parameter with a gradient; the updated names."""
    steps = {s.name: s for s in rec.steps}
    done = []
    if rec.backward is not None:
        rec.backward = BackwardPass(rec.backward.start, lr)
    for name in rec.specs:
        if grad(name) not in steps:
            continue
        attrs: dict[str, Any] = dict(lr=lr)
        if optimizer == "adamw":
            attrs.update(ADAMW, t=1, weight_decay=ADAMW["weight_decay"] if _matrix(name) else 0.0)
        rec.op(optimizer, updated(name), rec.reuse(name), _ref(rec, steps, grad(name)), **attrs,
               sym=f"{rec.specs[name].sym}′", group=update_group(name))
        done.append(name)
    return done


def _matrix(name: str) -> bool:
    """A weight matrix (W_E, W_pos, W_Q, …, W_out), which the recorded AdamW step decays; biases and layer-norm
    gains are not decayed. By name, not by shape: the per-head biases b_Q are (heads, d_head) here but a vector
    in GPT-2's layout, and nanoGPT and torch decay the 2-D tensors of that layout. ``explain train`` decays by
    shape instead (:func:`explain.train.step.decayed`: b_Q, b_K, b_V too), the rule its shipped model was
    trained with; the two differ on those biases only."""
    return name.rsplit(".", 1)[-1].startswith("W")


OPTIMIZERS = {"sgd": "one step of gradient descent", "adamw": "one AdamW step"}


def check_lr(lr: Any) -> float:
    """The learning rate as a positive finite float, or a UsageError."""
    try:
        value = float(lr)
    except (TypeError, ValueError):
        raise UsageError(f"--lr must be a number such as 0.1, got {lr!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"--lr must be a positive number such as 0.1, got {lr!r}")
    if value < sys.float_info.min:  # subnormal: lr × gradient underflows, the step changes (almost) nothing
        raise UsageError(f"--lr {value!r} is below the smallest normal float64 ({sys.float_info.min:.3g}): the step "
                         "would change nothing; give a rate such as 0.1")
    return value


def record_loss_after(rec: Recorder, lr: float, loss_with: Any, optimizer: str = "sgd") -> None:
    """Record the loss after the SGD (or AdamW) step: ``loss_with(params)`` runs the model again with the
    updated parameters. The student sees the loss fall (or, with too large a step, rise)."""
    steps = {s.name: s for s in rec.steps}
    value, text = None, "L′ = the loss with the updated parameters"
    note = (f"The loss after {OPTIMIZERS[optimizer]} with lr = {lr:g}: the model run again with every "
            "updated parameter.")
    if not rec.shape_only:
        import numpy as np  # lazy: numpy off the shape path

        new = {n: steps[updated(n)].output if updated(n) in steps else v for n, v in rec.params.items()}
        after, before = loss_with(new), float(steps["loss"].output)
        value = np.array(after)
        text = f"L′ = {after:.6g}  (L was {before:.6g})"
        trend = ("down" if after < before else "up: the step was too large" if after > before else "unchanged")
        note += f" It went from {before:.6g} to {after:.6g}: {trend} ({after - before:+.3g})."
    rec.op("input", "loss_after", sym="L′", value=value, shape=(), axes=(), note=note, formula=text,
           group=update_group(), given_by="the loss of the model run again with the updated parameters (that "
                                          "forward pass is not recorded step by step)")


def gradient_partner(trace: Any, step: Step) -> tuple[str | None, str]:
    """The step the TUI's ``r`` key goes to from ``step``: a value's gradient, or a gradient's value; None with
    the reason when there is none."""
    name = step.name
    value = gradient_of(name)
    if value is not None:
        if value in trace:
            return value, ""
        if value in trace.params:
            return None, f"{value} is a parameter, not a step: its values are the operands of the step that uses it"
        return None, f"{name} has no forward step of its own"
    if grad(name) in trace:
        return grad(name), ""
    param = updated_of(name)
    if param is not None and grad(param) in trace:
        return grad(param), ""
    if step.op == "input" and step.output is not None and getattr(step.output, "dtype", None) is not None \
            and step.output.dtype.kind in "iu":
        return None, f"{name} holds integers (token ids): no gradient flows to it"
    return None, f"the loss does not depend on {name}, so it has no gradient"
