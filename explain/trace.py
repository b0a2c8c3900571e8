"""The trace: what a run records, and the recorder the models write it with.

A :class:`Trace` is a sequence of :class:`Step` s (name, op kind, input names, output array, shape, formula,
shape signature, note, group path), plus the parameters, the config and the token labels: ``labels`` maps an
axis name to one label per index (``pos`` holds the first batch item's words), and ``batch_labels`` maps an
axis whose labels differ between batch items to one list per item (:meth:`Trace.axis_labels` picks). It is data: the
TUI, the plain printer, the exporter and the tutorials read it and never reach into a model.

The :class:`Recorder` is what model code calls for every operation (``rec.op("matmul", "scores", q, k,
transpose_b=True)`` inside ``with rec.scope("attn"):`` records the step ``attn.scores``). A step's math symbol
and its narration come from the model's notation table (:mod:`explain.models.notation`), looked up by step
name and op kind, so model code holds only the math. With ``shape_only=True`` the same model code runs on shapes alone (tuples, no
numpy), which is how ``explain shapes`` and the memory estimate get every step's shape from each op's own
shape rule. This module imports numpy only when values are computed.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import prod
from typing import Any

from explain import ops
from explain.config import Config
from explain.errors import ShapeError, StepNotFound
from explain.names import group_of, label, param_name
from explain.ops.base import CellExplanation, Syms
from explain.sampling import Sampling
from explain.shape_rules import Shape

BYTES_PER_VALUE = 8  # float64 (and int64 for token ids)


@dataclass(slots=True)
class Ref:
    """A value flowing through model code: the step or parameter it came from, and its array (or shape)."""

    name: str
    sym: str
    value: Any
    axes: tuple[str, ...]
    shape: Shape


@dataclass(slots=True)
class ParamSpec:
    """A parameter as declared by model code: name, shape, axis names, how to initialise it."""

    name: str
    shape: Shape
    axes: tuple[str, ...]
    init: str  # "normal" (embeddings), "uniform" (nn.Linear: ±1/√fan_in), "ones", "zeros"
    fan_in: int = 1
    sym: str = ""

    @property
    def size(self) -> int:
        return prod(self.shape)


@dataclass(slots=True)
class Step:
    """One recorded operation."""

    index: int
    name: str
    op: str
    inputs: tuple[str, ...]
    output: Any  # numpy array; None in a shape-only trace
    shape: Shape
    axes: tuple[str, ...]
    formula: str
    signature: str
    note: str
    group: tuple[str, ...]
    syms: Syms
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return prod(self.shape) * BYTES_PER_VALUE

    @property
    def label(self) -> str:
        """The name within its group, as the step tree shows it (:func:`explain.names.label`)."""
        return label(self.name, self.group)


@dataclass(frozen=True)
class Generation:
    """What a generation adds to its trace: the settings, the prompts' token ids, the step that holds each new
    token (``gen.N.next``, in order) and whether it stopped early at the end-of-text token."""

    sampling: Sampling
    prompt: tuple[tuple[int, ...], ...]
    steps: tuple[str, ...]
    stopped_at_eos: bool = False


@dataclass(frozen=True)
class BackwardPass:
    """What a recorded backward pass adds to its trace: the step it starts from (``loss``, or the output of a
    model without a loss given ``--grad-output``) and the learning rate of the SGD step taken after it, if any."""

    start: str
    lr: float | None = None


class Trace(Sequence[Step]):
    """The record of one run; ``trace[3]`` or ``trace["blocks.0.attn.pattern"]``."""

    def __init__(self, config: Config, steps: list[Step], params: dict[str, Any], specs: dict[str, ParamSpec],
                 labels: dict[str, list[str]], shape_only: bool = False,
                 batch_labels: dict[str, list[list[str]]] | None = None) -> None:
        self.config = config
        self.steps = steps
        self.params = params
        self.specs = specs
        self.labels = labels
        self.batch_labels = dict(batch_labels or {})
        self.shape_only = shape_only
        self._by_name = {s.name: s for s in steps}
        self.generation: Generation | None = None  # set by a generation (explain.models.generate)
        self.backward: BackwardPass | None = None  # set by a recorded backward pass (explain.backward)
        self.meta: dict[str, Any] = {}  # what a caller notes on the trace (a tutorial's name and checks)

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self.find(key)
        return self.steps[key]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def names(self) -> list[str]:
        return [s.name for s in self.steps]

    def find(self, name: str) -> Step:
        """The step called ``name``, or a StepNotFound that suggests the nearest names."""
        step = self._by_name.get(name)
        if step is None:
            near = difflib.get_close_matches(name, list(self._by_name), n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else \
                "; list the steps with 'explain shapes MODEL'"
            raise StepNotFound(f"no step named '{name}' in this {self.config.model} run{hint}")
        return step

    def value(self, name: str) -> Any:
        """The array of a step's output or of a parameter."""
        if name in self._by_name:
            return self._by_name[name].output
        return self.params[name]

    def shape_of(self, name: str) -> Shape:
        if name in self._by_name:
            return self._by_name[name].shape
        return self.specs[name].shape

    def inputs_of(self, step: Step) -> list[Any]:
        return [self.value(n) for n in step.inputs]

    def explain(self, step: Step | str, index: tuple[int, ...]) -> CellExplanation:
        """How one cell of a step's output was computed, from the op's own explanation."""
        if isinstance(step, str):
            step = self.find(step)
        if len(index) != len(step.shape) or any(not 0 <= i < n for i, n in zip(index, step.shape)):
            raise ShapeError(f"cell {list(index)} is outside {step.name}, whose shape is {list(step.shape)}")
        op = ops.get(step.op)
        extra = {"vocab": self.labels.get("vocab")} if op.reads_vocab else {}
        return op.explain(tuple(index), self.inputs_of(step), step.output, step.syms, **step.attrs, **extra)

    def axis_labels(self, axis: str, item: int | None = 0) -> list[str] | None:
        """Labels of an axis called ``axis`` (tokens for positions, words for the vocabulary), if known.

        ``item`` is the batch item shown. With ``item=None`` (a view that shows every item at once, such as the
        (batch, pos) token ids), positions where the items differ are labelled with every item's word,
        ``cat/dog``."""
        per_item = self.batch_labels.get(axis)
        if not per_item:
            return self.labels.get(axis)
        if item is not None:
            return per_item[item] if 0 <= item < len(per_item) else None
        return ["/".join(dict.fromkeys(words)) for words in zip(*per_item)]

    def item_of(self, step: Step, lead: tuple[int, ...]) -> int | None:
        """The batch item a slice ``lead`` of ``step`` shows: its batch index, or None when the batch axis is
        one of the two axes drawn (every item is on screen); 0 for a step without a batch axis."""
        if "batch" not in step.axes:
            return 0
        axis = step.axes.index("batch")
        return lead[axis] if axis < len(lead) else None

    def item_text(self, item: int) -> str:
        """The words of batch item ``item``, space-separated (``The dog is happy``)."""
        per_item = self.batch_labels.get("pos")
        words = per_item[item] if per_item and 0 <= item < len(per_item) else self.labels.get("pos") or []
        return " ".join(words)

    def tokens_text(self) -> str:
        """The input's words for a one-line summary: every batch item, separated by `` | ``."""
        per_item = self.batch_labels.get("pos")
        if per_item:
            return " | ".join(" ".join(words) for words in per_item)
        return " ".join(self.labels.get("pos") or self.labels.get("src") or [])

    @property
    def nbytes(self) -> int:
        """Bytes of the step outputs the trace holds (views counted at their own size, except where the op
        says what it stores: a key/value cache is one buffer, not a copy per new token)."""
        return BYTES_PER_VALUE * sum(
            ops.get(s.op).stored_values(s.shape, [self.shape_of(n) for n in s.inputs], **s.attrs) for s in self.steps)

    @property
    def n_params(self) -> int:
        return sum(spec.size for spec in self.specs.values())


Notation = Callable[[str, str, dict[str, Any]], tuple[str, str | None]]
"""``(step name, op kind, attrs) -> (symbol, note or None)``: a model's table of symbols and narration."""


def _no_notation(name: str, kind: str, attrs: dict[str, Any]) -> tuple[str, str | None]:
    return name.rsplit(".", 1)[-1], None


class Recorder:
    """What model code calls for every parameter and operation; builds the :class:`Trace`.

    Names are relative to the current :meth:`scope`: ``with rec.scope("blocks.0"):`` then
    ``rec.op("add", "resid_mid", …)`` records ``blocks.0.resid_mid``."""

    def __init__(self, config: Config, params: dict[str, Any] | None = None, shape_only: bool = False,
                 notation: Notation | None = None) -> None:
        self.config = config
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
              sym: str | None = None) -> Ref:
        """Declare a parameter; in a numeric run its array comes from ``params`` (loaded or initialised)."""
        name = param_name(self._prefix + name)
        shape = tuple(shape)
        sym = sym or name.rsplit(".", 1)[-1]
        self.specs[name] = ParamSpec(name, shape, tuple(axes), init, fan_in, sym)
        value = shape if self.shape_only else self.params[name]
        return Ref(name, sym, value, tuple(axes), shape)

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
            import numpy as np

            # ids stay integers (named by their words); flags (a padding mask) stay booleans, as torch's are
            value = np.asarray(value)
            value = value if value.dtype.kind == "b" else value.astype(np.int64)
        return self.op("input", name, value=None if self.shape_only else value, shape=shape, axes=tuple(axes))

    def op(self, kind: str, name: str, *inputs: Ref, sym: str | None = None, note: str | None = None,
           group: tuple[str, ...] | None = None, formula: str | None = None, **attrs: Any) -> Ref:
        """Run one operation and record it as a step named ``name`` (in the current scope). Its symbol and
        note come from the notation table unless given; its group is its name's (:func:`explain.names.group_of`)
        unless given (the backward pass files its steps under :data:`explain.names.BACKWARD`); its formula is
        the op's unless given (a value that is its own explanation: ``∂L/∂L = 1``)."""
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
