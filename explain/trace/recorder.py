"""The recorder the models write a trace with.

The :class:`Recorder` is what model code calls for every operation (``rec.op("matmul", "scores", q, k,
transpose_b=True)`` inside ``with rec.scope("attn"):`` records the step ``attn.scores``). A step's math symbol
and its narration come from the model's notation table (:mod:`explain.models.notation`), looked up by step
name and op kind, so model code holds only the math. With ``shape_only=True`` the same model code runs on
shapes alone (tuples, no numpy), which is how ``explain shapes`` and the memory estimate get every step's shape
from each op's own shape rule. This module imports numpy only when values are computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from explain import ops
from explain.core.cancel import check_cancelled
from explain.core.config import Config
from explain.core.names import group_of, param_name
from explain.core.shape_rules import Shape
from explain.ops.base import Syms
from explain.trace import BackwardPass, Generation, ParamSpec, Step, Trace


@dataclass(slots=True)
class Ref:
    """A value flowing through model code: the step or parameter it came from, and its array (or shape)."""

    name: str
    sym: str
    value: Any
    axes: tuple[str, ...]
    shape: Shape


Notation = Callable[[str, str, dict[str, Any]], tuple[str, str | None]]
"""``(step name, op kind, attrs) -> (symbol, note or None)``: a model's table of symbols and narration."""


def _no_notation(name: str, kind: str, attrs: dict[str, Any]) -> tuple[str, str | None]:
    return name.rsplit(".", 1)[-1], None


class Recorder:
    """What model code calls for every parameter and operation; builds the :class:`Trace`.

    Names are relative to the current :meth:`scope`: ``with rec.scope("blocks.0"):`` then
    ``rec.op("add", "resid_mid", …)`` records ``blocks.0.resid_mid``."""

    def __init__(self, config: Config, params: dict[str, Any] | None = None, shape_only: bool = False,
                 notation: Notation | None = None, on_tensor: Callable[[str, Any], None] | None = None) -> None:
        self.config = config
        # told (name, value) of each parameter as it is declared and each step as it is computed, in a numeric
        # run (--save streams them to the file while the next op runs)
        self.on_tensor = on_tensor
        self.shape_only = shape_only
        self.params: dict[str, Any] = params if params is not None else {}
        self.specs: dict[str, ParamSpec] = {}
        self.steps: list[Step] = []
        self.labels: dict[str, list[str]] = {}
        self.batch_labels: dict[str, list[list[str]]] = {}
        self.notation = notation or _no_notation
        self.generation: Generation | None = None
        self.backward: BackwardPass | None = None
        self._names: set[str] = set()
        self._prefix = ""  # the current scope, "blocks.0.attn." (empty at the top)

    @contextmanager
    def scope(self, name: str) -> Iterator[None]:
        """Name everything recorded inside ``name.…`` (scopes nest: blocks.0 then attn gives blocks.0.attn.)."""
        outer = self._prefix
        self._prefix = f"{outer}{name}."
        try:
            yield
        finally:
            self._prefix = outer

    def param(self, name: str, shape: Shape, axes: tuple[str, ...], init: str = "uniform", fan_in: int = 1,
              sym: str | None = None, std: float = 1.0) -> Ref:
        """Declare a parameter; in a numeric run its array comes from ``params`` (loaded or initialised)."""
        name = param_name(self._prefix + name)
        shape = tuple(shape)
        sym = sym or name.rsplit(".", 1)[-1]
        self.specs[name] = ParamSpec(name, shape, tuple(axes), init, fan_in, sym, std)
        value = shape if self.shape_only else self.params[name]
        if self.on_tensor is not None and not self.shape_only:
            self.on_tensor(name, value)
        return Ref(name, sym, value, tuple(axes), shape)

    def recorded(self, name: str) -> bool:
        """Whether a step of this name is recorded already."""
        return name in self._names

    def keep_steps(self, steps: list[Step]) -> None:
        """Record on after ``steps`` (a run's first steps, a patched run's prefix) in place of what was recorded."""
        self.steps = list(steps)
        self._names = {s.name for s in self.steps}

    def reuse(self, name: str) -> Ref:
        """A parameter declared earlier (by its full name), used again (a tied unembedding reuses W_E)."""
        name = param_name(name)
        spec = self.specs[name]
        return Ref(name, spec.sym, spec.shape if self.shape_only else self.params[name], spec.axes, spec.shape)

    def ref(self, name: str) -> Ref:
        """A step recorded earlier, by its full name, as a value to compute with (a generation reads the prompt's
        K and V)."""
        step = next(s for s in reversed(self.steps) if s.name == name)
        return Ref(name, step.syms.out, step.shape if self.shape_only else step.output, step.axes, step.shape)

    def input(self, name: str, value: Any, axes: tuple[str, ...], shape: Shape | None = None) -> Ref:
        """Record a given value (token ids, embeddings, targets) as a step of its own."""
        shape = tuple(shape if shape is not None else value.shape)
        if not self.shape_only and isinstance(value, list):
            import numpy as np  # lazy: numpy off the shape path

            # ids stay integers (named by their words); flags (a padding mask) stay booleans, as torch's are
            value = np.asarray(value)
            value = value if value.dtype.kind == "b" else value.astype(np.int64)
        return self.op("input", name, value=None if self.shape_only else value, shape=shape, axes=tuple(axes))

    def op(self, kind: str, name: str, *inputs: Ref, sym: str | None = None, note: str | None = None,
           group: tuple[str, ...] | None = None, formula: str | None = None, **attrs: Any) -> Ref:
        """Run one operation and record it as a step named ``name`` (in the current scope). Its symbol and
        note come from the notation table unless given; its group is its name's (:func:`explain.core.names.group_of`)
        unless given (the backward pass files its steps under :data:`explain.core.names.BACKWARD`); its formula is
        the op's unless given (a value that is its own explanation: ``∂L/∂L = 1``)."""
        check_cancelled()  # long work (a run, a generation, a backward pass) stops here when cancelled
        name = self._prefix + name
        if name in self._names:
            raise ValueError(f"step name {name!r} recorded twice")  # a bug in model code, not user input
        self._names.add(name)
        op = ops.get(kind)
        shapes = [r.shape for r in inputs]
        shape = tuple(op.shape(*shapes, **attrs))  # the op's own rule, in numeric runs too
        out_axes = tuple(op.axes(*[r.axes for r in inputs], **attrs))
        output = None
        if not self.shape_only:
            output = op.compute(*[r.value for r in inputs], **attrs)
            if tuple(output.shape) != shape:  # the rule and the computation must agree
                raise AssertionError(f"{name}: shape rule says {shape}, compute gave {output.shape}")
        stored = {k: v for k, v in attrs.items() if k != "value"}
        if sym is None or note is None:
            table_sym, table_note = self.notation(name, kind, stored)
            sym, note = sym or table_sym, note or table_note
        ins = tuple(r.sym for r in inputs)
        # a result named like one of its inputs (the residual stream's x′ = x + F) is a new value: primed in this
        # step's formula, header and drill-down; the steps after it read it as x again
        syms = Syms(sym + "′" if sym in ins else sym, ins)
        step = Step(len(self.steps), name, kind, tuple(r.name for r in inputs), output, shape, out_axes,
                    formula or op.formula(syms, **stored), op.signature(shapes, shape, **stored),
                    note or op.default_note, group_of(name) if group is None else group, syms, stored)
        self.steps.append(step)
        if self.on_tensor is not None and output is not None:
            self.on_tensor(name, output)
        return Ref(name, sym, shape if self.shape_only else output, out_axes, shape)

    @classmethod
    def resume(cls, trace: Trace, shape_only: bool = False) -> Recorder:
        """A recorder that goes on after the steps of ``trace`` (the backward pass is recorded after the forward
        steps without running them again). With ``shape_only`` the new steps get shapes, not values."""
        rec = cls(trace.config, None if shape_only else trace.params, shape_only)
        rec.specs, rec.labels = dict(trace.specs), dict(trace.labels)
        rec.steps = list(trace.steps)
        rec._names = set(trace.names())
        rec.generation, rec.backward = trace.generation, trace.backward
        return rec

    def trace(self) -> Trace:
        out = Trace(self.config, self.steps, {} if self.shape_only else self.params, self.specs, self.labels,
                    self.shape_only, self.batch_labels)
        out.generation, out.backward = self.generation, self.backward
        return out
