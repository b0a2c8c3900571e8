"""The tutorial format as dataclasses (:class:`Tutorial`, :class:`Stop`, :class:`Expect`) and the keys each
table may hold; :mod:`explain.tutorial.parser` builds them from a TOML document.

The format is data, never code; ``tutorials/README.md`` describes it for teachers. In short::

    title = "…"            summary = "…"            model = "simple"
    tol = 5e-5             # optional: the default tolerance of this tutorial's expectations
    [options]              # explain.run options: text, tokens, target, embeddings, seed, d_model, n_heads, …
    [weights]              # optional: parameters by dotted name (the rest come from the seed)
    [[stops]]              # step, title, narration, cell, precision, question, answer, a [stops.expect] table
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explain.core.options import GENERATION, OPTIONS
from explain.tutorial.errors import Source

DEFAULT_TOL = 1e-6  # absolute; book numbers printed to 4 decimals need tol = 5e-5

TOP_KEYS = ("title", "summary", "model", "tol", "options", "generate", "weights", "stops", "interp")
GENERATE_KEYS = tuple(o.name for o in GENERATION if o.tutorial)  # explain.generate's settings
STOP_KEYS = ("step", "title", "narration", "cell", "precision", "question", "answer", "expect")
OPTION_KEYS = tuple(o.name for o in OPTIONS if o.tutorial)
NUMBER_EXPECTS = ("value", "row_sums", "row_means", "row_vars", "min", "max", "above_diagonal")
EXPECT_KEYS = ("shape", "values", "index", "tol", *NUMBER_EXPECTS, "equal_slices", "unequal_slices", "inputs",
               "n_params", "param_count", "equals")

Index = tuple[int | str, ...]  # ints, or ":" for a whole axis


@dataclass
class Expect:
    """What a stop's step must produce. Every field is optional; those given are all checked."""

    shape: tuple[int, ...] | None = None
    value: float | None = None  # the value of the stop's cell
    values: Any = None  # a numpy array: the whole output, or output[index]
    index: Index | None = None
    tol: float = DEFAULT_TOL  # absolute tolerance of every numeric comparison
    row_sums: float | None = None  # every row (last axis) sums to this
    row_means: float | None = None
    row_vars: float | None = None  # population variance of every row
    min: float | None = None  # no value below this
    max: float | None = None
    above_diagonal: float | None = None  # every entry above the diagonal of the last two axes (-inf, 0)
    equal_slices: list[Index] | None = None  # these slices of the output are equal
    unequal_slices: list[Index] | None = None  # no two of these slices are equal
    inputs: tuple[str, ...] | None = None  # names the step must read (steps or parameters)
    n_params: int | None = None  # the run's parameter count
    param_count: dict[str, int] | None = None  # name prefix -> parameter count
    equals: tuple[str, ...] | None = None  # the output equals this step's output (or the sum of these steps')

    def kinds(self) -> list[str]:
        """The expectation fields that are set, in the order they are checked."""
        return [k for k in EXPECT_KEYS if k not in ("index", "tol") and getattr(self, k) is not None]


@dataclass
class Stop:
    """One stop of a walkthrough: a step (or a group prefix such as "blocks.0.attn": its first step is shown),
    the narration, a cell to focus, a question and its answer, and the expectations."""

    step: str
    title: str
    narration: str  # markdown
    cell: tuple[int, ...] | None = None
    question: str | None = None
    answer: str | None = None
    expect: Expect | None = None
    number: int = 0  # 1-based position in the tutorial
    line: int | None = None  # line of its [[stops]] header
    precision: int | None = None  # decimals the stop is shown with (a narration quoting 1.1·10⁻⁷ sets 8)


@dataclass
class Tutorial:
    """A scripted walkthrough of one run."""

    name: str
    title: str
    summary: str
    model: str
    stops: list[Stop]
    options: dict[str, Any] = field(default_factory=dict)  # explain.run keywords (text, d_model, …)
    embeddings: Any = None  # a (T, d) array given inline, or a path; None: the text's token embeddings
    weights: dict[str, Any] = field(default_factory=dict)  # parameter name -> array; the rest from the seed
    path: Path | None = None
    tol: float = DEFAULT_TOL
    source: Source | None = field(default=None, repr=False, compare=False)
    generate: dict[str, Any] = field(default_factory=dict)  # a [generate] table: new tokens after the run
    interp: dict[str, Any] = field(default_factory=dict)  # an [interp] table: lens, attribution, patch steps
