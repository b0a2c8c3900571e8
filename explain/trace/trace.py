"""The trace: what a run records (the recorder the models write it with is :mod:`explain.trace.recorder`).

A :class:`Trace` is a sequence of :class:`Step` s (name, op kind, input names, output array, shape, formula,
shape signature, note, group path), plus the parameters, the config and the token labels: ``labels`` maps an
axis name to one label per index (``pos`` holds the first batch item's words), and ``batch_labels`` maps an
axis whose labels differ between batch items to one list per item (:meth:`Trace.axis_labels` picks). It is data: the
TUI, the plain printer, the exporter and the tutorials read it and never reach into a model.

What a generation and a backward pass add to a run are typed fields of the trace (:class:`Generation`,
:class:`BackwardPass`). A step's output is a numpy array, or None in a shape-only trace; this module imports
no numpy.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

from explain import ops
from explain.core.config import Config
from explain.core.errors import ShapeError, StepNotFound
from explain.core.names import label
from explain.core.sampling import Sampling
from explain.core.shape_rules import Shape
from explain.ops.base import CellExplanation, Syms
from explain.trace.origin import WeightOrigins, with_origin
from explain.trace.words import with_position_words, with_words

if TYPE_CHECKING:  # annotations only: what a derived run adds is made by interp and tutorial, which import the trace
    from explain.interp.lens import Lens
    from explain.interp.patching import Patched, Sweep
    from explain.tutorial.checks import Check

BYTES_PER_VALUE = 8  # float64 (and int64 for token ids)


@dataclass(slots=True)
class ParamSpec:
    """A parameter as declared by model code: name, shape, axis names, how to initialise it."""

    name: str
    shape: Shape
    axes: tuple[str, ...]
    init: str  # "normal" (N(0, std²)), "uniform" (nn.Linear: ±1/√fan_in), "ones", "zeros", "normal_0.02" (Llama: N(0, 0.02²))
    fan_in: int = 1
    sym: str = ""
    std: float = 1.0  # "normal" only: 1 as nn.Embedding, 0.02 (or less) as GPT-2

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
        """The name within its group, as the step tree shows it (:func:`explain.core.names.label`)."""
        return label(self.name, self.group)


@dataclass(frozen=True)
class Generation:
    """What a generation adds to its trace: the settings, the prompts' token ids, the step that holds each new
    token (``gen.N.next``, in order) and whether it stopped early at the end-of-text token. ``before``: the
    settings of new tokens 0, 1, … when they were drawn with others than ``sampling`` (the TUI's live sampling
    changes the settings from one token on); ``sampling`` holds from token ``len(before)`` on."""

    sampling: Sampling
    prompt: tuple[tuple[int, ...], ...]
    steps: tuple[str, ...]
    stopped_at_eos: bool = False
    before: tuple[Sampling, ...] = ()

    def sampling_of(self, n: int) -> Sampling:
        """The settings new token ``n`` was drawn with."""
        return self.before[n] if n < len(self.before) else self.sampling

    def describe(self) -> str:
        """How the tokens were chosen: ``sampled at temperature 0.7, seed 0``, or, after a live change, the
        settings of each stretch (``tokens 0–1 greedy …; from token 2 sampled at …``)."""
        if not self.before:
            return self.sampling.describe()
        spans: list[tuple[int, Sampling]] = []
        for i, s in enumerate(self.before):
            if not spans or spans[-1][1] != s:
                spans.append((i, s))
        parts = [f"token{'s' if end - start > 1 else ''} {start}{f'–{end - 1}' if end - start > 1 else ''} "
                 f"{s.describe()}" for (start, s), end in zip(spans, [*(i for i, _ in spans[1:]), len(self.before)])]
        return "; ".join([*parts, f"from token {len(self.before)} {self.sampling.describe()}"])


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
        self.backward: BackwardPass | None = None  # set by a recorded backward pass (explain.engine.backward)
        self.weights = ""  # which weights the run shows: "trained: gpt-tiny", "random, seed 0", … (explain.checkpoints.trained)
        self.unknown_words: list[str] = []  # words of the input the checkpoint's vocabulary lacks, read as <unk>
        # What a derived run adds, each a typed field a screen reads (issue 38: no side channel on the trace):
        self.tutorial: str | None = None  # the tutorial this run is (explain.tutorial.runner)
        self.checks: list[Check] = []  # what that tutorial checked on it, stop by stop
        self.lens: Lens | None = None  # what explain lens summarised: the lens screen follows its word
        self.sweep: Sweep | None = None  # the patching sweep this run belongs to (P opens its heatmap)
        self.patched: Patched | None = None  # the one patch this run is (explain patch --step, a tutorial's patch)
        # where each parameter's values came from in a checkpoint's file (a GGUF's), which a weight's drill-down
        # ends with (explain.trace.origin; set by the api from the checkpoint's weight_origins)
        self.origin: WeightOrigins | None = None

    def keeps_run_of(self, source: Trace) -> Trace:
        """This trace, given what ``source`` says of its run: its tutorial and checks, its lens, sweep and patch,
        which weights it shows, the words read as <unk> and where the weights came from. A trace derived from
        another (a backward pass, the lens, attribution, patching, a redrawn token) is the same run, so its header
        says the same."""
        self.tutorial, self.checks = source.tutorial, list(source.checks)
        self.lens, self.sweep, self.patched = source.lens, source.sweep, source.patched
        self.weights, self.unknown_words, self.origin = source.weights, list(source.unknown_words), source.origin
        return self

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
        if op.row_words and step.axes[-1:] == ("vocab",):  # a row over the vocabulary: its k are words
            extra["words"] = self.labels.get("vocab")
        ex = op.explain(tuple(index), self.inputs_of(step), step.output, step.syms, **step.attrs, **extra)
        ex = with_words(self, step, tuple(index), ex)  # positions and keys counted by the table: '1 cat'
        ex = with_position_words(self, step, tuple(index), ex)  # and named in its sentences: "position 1 'cat'"
        return ex if self.origin is None else with_origin(self.origin, self, step, tuple(index), ex)

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

