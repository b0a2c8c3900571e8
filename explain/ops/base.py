"""The operation ("op") abstraction: one class per op kind gives every view of that op.

| view | method |
| --- | --- |
| output shape from input shapes, no data | :meth:`Op.shape` (rules from :mod:`explain.core.shape_rules`) |
| names of the output's axes (for token rulers) | :meth:`Op.axes` |
| numpy source for the step (export) | :meth:`Op.source`, with :attr:`Op.helpers` (functions of :mod:`explain.ops.kernels`) |
| arrays in, array out | :meth:`Op.compute`: by default the source itself, evaluated, so what runs is what exports |
| formula and shape signature | :meth:`Op.formula`, :meth:`Op.signature` |
| whether the output is a probability distribution (rows sum to 1) | :attr:`Op.probability` |
| floating-point operations of its contraction (2 per multiply-add) | :meth:`Op.flops` |
| how one output cell was computed; the axes its table's rows count (the words beside them) | :meth:`Op.explain`, :meth:`Op.row_axes` |
| which input cells feed one output cell (the TUI's linkage marks) | :meth:`Op.feeds`, read by ``explain`` too |
| backward: the vector-Jacobian product, its formula, numpy source, one gradient cell explained | :meth:`Op.vjp`, :meth:`Op.vjp_formula`, :meth:`Op.vjp_source`, :meth:`Op.vjp_explain` |

The backward views are read through the op kind ``"<kind>.grad"`` (:class:`explain.ops.grad.GradOf`), so a
gradient step is a step like any other: the TUI, printer, exporter and shapes CLI need no special case.

This module imports no numpy at import time: the shape-only path (``explain shapes``) uses the same op
classes with shapes instead of arrays. ``compute`` and ``explain`` import numpy when they are called.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module
from typing import Any, ClassVar

from explain.core.shape_rules import Shape, fmt_shape
from explain.core.shown import Grid, Line, Part, Showable
from explain.ops.kinds import MODULE_OF
from explain.ops.numbers import (  # noqa: F401 (ops read them)
    arg,
    exact_text,
    grid_number,
    num,
    one_minus,
    precision,
    residue,
    sig,
    sig6,
    term,
)

Axes = tuple[str, ...]


def token(token_id: int, vocab: list[str] | None) -> str:
    """``id 26 (dog)``: a token id with its word when the vocabulary is known."""
    word = vocab[token_id] if vocab is not None and 0 <= token_id < len(vocab) else None
    return f"id {token_id} ({word})" if word is not None else f"id {token_id}"


def id_word(token_id: int, vocab: Any) -> str:
    """``20 starts``: a token id and its word (a table cell), the id alone when the vocabulary is unknown."""
    word = vocab[token_id] if vocab is not None and 0 <= token_id < len(vocab) else None
    return f"{token_id} {word}" if word is not None else str(token_id)


def idx(index: tuple[int | str, ...]) -> str:
    """``[0, 1]`` for an index tuple (``[0, :]`` with a whole axis, as tutorials write it); nothing for a scalar's
    empty index: its cell is the loss ``L``, not ``L[]``."""
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


@dataclass
class CellExplanation(Showable):
    """How one output cell was computed, as data for the TUI drill-down and the plain printer.

    ``columns``/``rows`` form a table of terms (for a matmul cell: k, the row element, the column element,
    their product); ``lines`` are the arithmetic that follows, in order ("sum = 112", "112 / 8 = 14")."""

    index: tuple[int, ...]
    value: float
    title: str
    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    shown: str | None = None  # how the value is written when not as a number: a token id with its word
    focus: tuple[int, ...] = ()  # the rows of the table that matter most, first first (the cell's own term,
    # the survivors of a mask): a table cut to fit shows these, not its first and last rows
    origin: CellExplanation | None = None  # where a weight the cell reads came from in its file (explain.trace.origin)

    def __post_init__(self) -> None:
        # every op kind's formulas pass here: one minus sign per line, whichever op wrote it
        self.title = one_minus(self.title)
        self.lines = [one_minus(line) for line in self.lines]

    def value_text(self, digits: int | None = None) -> str:
        """The explained cell's value as the result writes it: a token id with its word, else the number."""
        return self.shown if self.shown is not None else num(self.value, digits)

    def result(self, digits: int | None = None) -> tuple[list[str], str]:
        """The arithmetic lines before the result, and the result line: the last line when it ends in the value
        (``sum of 4 products = 0.2879``), else ``= 0.2879``."""
        value = self.value_text(digits)
        if self.lines and self.lines[-1].endswith((f"= {value}", f"= {value.replace(chr(0x2212), '-')}")):  # -inf
            return list(self.lines[:-1]), self.lines[-1]
        return list(self.lines), f"= {value}"

    def display_parts(self, digits: int | None = None) -> list[Part]:
        """What ``--plain --cell`` prints of this cell (in :mod:`explain.render.step`'s order): the title, the
        whole table of terms, the arithmetic, the result, and where a weight it reads came from in its file."""
        parts: list[Part] = [Line(self.title, "title")]
        if self.columns and self.rows:
            parts.append(Grid(tuple(self.columns), tuple(tuple(term(v, digits) for v in row) for row in self.rows)))
        before, result = self.result(digits)
        parts += [Line(line) for line in before] + [Line(result, "result")]
        if self.origin is not None:
            parts += [Line(""), Line(self.origin.title, "origin"), *(Line(line, "origin") for line in self.origin.lines)]
        return parts


@dataclass(frozen=True)
class Syms:
    """The math symbols of a step's output and inputs (``S``, ``Q``, ``K``), for formulas and explanations."""

    out: str
    ins: tuple[str, ...]


class Op:
    """Base of every op kind. Subclasses set ``kind`` and override what differs from an elementwise op."""

    kind: ClassVar[str] = ""
    join: ClassVar[str] = ", "  # how the signature joins operand shapes: "(4, 64) · (64, 4) → (4, 4)"
    helpers: ClassVar[tuple[str, ...]] = ()  # names of explain.ops.kernels functions the source calls
    vjp_helpers: ClassVar[tuple[str, ...]] = ()  # ... and those the backward source calls
    vjp_note: ClassVar[str] = ""  # what the backward of this op teaches, for the gradient steps' notes
    # the input positions a gradient flows to (token ids and targets have none); None: every input
    differentiable: ClassVar[tuple[int, ...] | None] = None
    default_note: ClassVar[str] = ""
    probability: ClassVar[bool] = False  # its output rows are probability distributions (colour scale 0..1)
    # Whether explain() names token ids by their words: the trace then passes ``vocab`` (the vocabulary's
    # labels) to it, so a student reads "id 26 (dog)", not a bare number.
    reads_vocab: ClassVar[bool] = False
    # Whether its table of terms has a row per index k of the output's last axis: over a vocabulary (the next
    # token's softmax) the trace passes that axis's words as ``words``, and k is written "7042 ␣Paris".
    row_words: ClassVar[bool] = False
    skips: ClassVar[bool] = False  # its feeds may say None for an input a cell does not read (TUI: "not read here")
    routed: ClassVar[bool] = False  # per expert a (T, features) slice, computed at its routed rows (the choice: last)

    # -- shapes ---------------------------------------------------------------------------------------------
    def shape(self, *shapes: Shape, **attrs: Any) -> Shape:
        """Output shape from input shapes; elementwise by default."""
        return tuple(shapes[0])

    def axes(self, *axes: Axes, **attrs: Any) -> Axes:
        return axes[0]  # the output's axis names from the inputs': the first input's by default

    def signature(self, shapes: list[Shape], out: Shape, **attrs: Any) -> str:
        """``(4, 64) · (64, 4) → (4, 4)``."""
        ins = self.join.join(fmt_shape(s) for s in self.shown_shapes(shapes, **attrs))
        return f"{ins} → {fmt_shape(out)}" if ins else f"→ {fmt_shape(out)}"

    def flops(self, shapes: list[Shape], out: Shape, **attrs: Any) -> int:
        """FLOPs of the step's contraction, a multiply-add counted as 2 (``explain shapes --cost``); 0 for an op
        that contracts nothing (elementwise, a lookup, a reshape)."""
        return 0

    def stored_values(self, out: Shape, shapes: list[Shape], **attrs: Any) -> int:
        """How many values the step's output holds of its own (for memory estimates): all of them by default."""
        return math.prod(out)

    def shown_shapes(self, shapes: list[Shape], **attrs: Any) -> list[Shape]:
        """The operand shapes as the formula shows them (a transposed operand shows its transposed shape)."""
        return list(shapes)

    # -- values -----------------------------------------------------------------------------------------------
    def compute(self, *arrays: Any, **attrs: Any) -> Any:
        """The output: by default the op's export source evaluated on the arrays, with numpy as ``np`` and the
        functions of :mod:`explain.ops.kernels` (the ones an export copies) in scope."""
        names = [f"_{i}" for i in range(len(arrays))]
        return eval(_compiled(self.source("_out", names, **attrs)), _namespace(), dict(zip(names, arrays)))

    def formula(self, syms: Syms, **attrs: Any) -> str:
        return f"{syms.out} = {self.kind}({', '.join(syms.ins)})"

    def source(self, out: str, ins: list[str], **attrs: Any) -> str:
        """The right-hand side of one numpy statement computing this step from variables ``ins``."""
        raise NotImplementedError

    def feeds(self, index: tuple[int, ...], inputs: list[Any], **attrs: Any) -> list[Any]:
        """For each input, the numpy index of the cells that feed output cell ``index`` (ints and slices, e.g.
        ``(0, 1, slice(None))`` for row 1 of head 0); the explanation reads its operands through these. By
        default (elementwise, with broadcasting) the same cell of each input."""
        return [broadcast_index(index, a.shape) for a in inputs]

    def explain(self, index: tuple[int, ...], inputs: list[Any], output: Any, syms: Syms,
                **attrs: Any) -> CellExplanation:
        """How ``output[index]`` was computed; by default, the same cell of each input."""
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}",
                               lines=[f"{syms.out}{idx(index)} = {num(output[index])}"])

    def row_axes(self, in_axes: list[Axes], **attrs: Any) -> Axes:
        """The axes (from ``in_axes``, each input's axis names) whose index, flattened, the first column of
        :meth:`explain`'s table counts, when it counts positions or keys: the trace writes each one's token
        beside it ('1 cat'). None (``()``) by default: a table over features has no words."""
        return ()

    # -- backward ---------------------------------------------------------------------------------------------
    # ``g`` is ∂L/∂(output); ``wrt`` the position of the input whose gradient is wanted. Syms of a gradient
    # step: ``out`` is ∂L/∂(input wrt), ``ins`` is (∂L/∂(output), *the inputs' syms, the output's sym).
    def grad_inputs(self, n_inputs: int) -> tuple[int, ...]:
        """The positions of the inputs that receive a gradient."""
        return tuple(range(n_inputs)) if self.differentiable is None else self.differentiable

    def vjp(self, wrt: int, g: Any, inputs: list[Any], output: Any, **attrs: Any) -> Any:
        """The vector-Jacobian product: ∂L/∂(input ``wrt``) from ``g`` = ∂L/∂(output). By default the op's
        backward export source evaluated, as :meth:`compute` evaluates :meth:`source`: what runs is what exports."""
        names = [f"_{i}" for i in range(len(inputs) + 2)]  # ∂L/∂output, the inputs, the output
        env = dict(zip(names, [g, *inputs, output]))
        return eval(_compiled(self.vjp_source(wrt, names[0], names[1:-1], names[-1], **attrs)), _namespace(), env)

    def vjp_formula(self, wrt: int, syms: Syms, **attrs: Any) -> str:
        return f"{syms.out} = {syms.ins[0]} · ∂{syms.ins[-1]}/∂{syms.ins[1 + wrt]}"

    def vjp_feeds(self, wrt: int, index: tuple[int, ...], g: Any, inputs: list[Any], output: Any,
                  **attrs: Any) -> list[Any]:
        """Linkage of a gradient cell: for ∂L/∂output, each forward input and the forward output (in that
        order, as a gradient step's inputs), the numpy index of the cells that cell ``index`` of the gradient of
        input ``wrt`` is computed from, or None for one it does not read (an ``add`` passes the gradient
        through without reading its operands)."""
        raise NotImplementedError(f"op {self.kind!r} has no backward linkage")

    def vjp_source(self, wrt: int, g: str, ins: list[str], out: str, **attrs: Any) -> str:
        """The right-hand side of one numpy statement computing the gradient of input ``wrt``."""
        raise NotImplementedError(f"op {self.kind!r} has no backward source")

    def vjp_row_axes(self, wrt: int, g_axes: Axes, in_axes: list[Axes], **attrs: Any) -> Axes:
        """:meth:`row_axes` of the gradient of input ``wrt``'s table (``g_axes``: the output's axes)."""
        return ()

    def vjp_explain(self, wrt: int, index: tuple[int, ...], g: Any, inputs: list[Any], output: Any, grad: Any,
                    syms: Syms, **attrs: Any) -> CellExplanation:
        """How cell ``index`` of the gradient ``grad`` of input ``wrt`` was computed (the chain rule's terms)."""
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}",
                               lines=[f"{syms.out}{idx(index)} = {num(grad[index])}"])


@lru_cache(maxsize=1024)
def _compiled(expr: str) -> Any:
    """The op's own expression, compiled once. It is built from the op's text and numeric attributes, never
    from user input; :func:`_check_expression` makes sure of that before anything is evaluated."""
    tree = ast.parse(expr, "<op source>", "eval")
    _check_expression(tree, expr)
    return compile(tree, "<op source>", "eval")


def _check_expression(tree: ast.AST, expr: str) -> None:
    """Refuse an op expression that holds anything but numpy arithmetic: names other than the inputs
    (``_0``, ``_1``, …), ``np`` and the kernels; dunder attributes; string or bytes constants. An attribute
    value that carried text (a name from a file, say) into a source string can then never run."""
    allowed = set(_namespace())
    for node in ast.walk(tree):
        bad = (isinstance(node, ast.Name) and node.id not in allowed and not re.fullmatch(r"_\d+", node.id)) \
            or (isinstance(node, ast.Attribute) and node.attr.startswith("__")) \
            or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))) \
            or isinstance(node, (ast.Lambda, ast.NamedExpr, ast.ListComp, ast.GeneratorExp, ast.DictComp,
                                 ast.SetComp))
        if bad:
            raise AssertionError(f"op expression {expr!r} is not plain numpy arithmetic")  # a bug, not input


@lru_cache(maxsize=1)
def _namespace() -> dict[str, Any]:
    import numpy as np  # lazy: numpy off the shape path

    from explain.ops import kernels  # lazy: numpy off the shape path

    return {"np": np, **{k: v for k, v in vars(kernels).items() if callable(v) and not k.startswith("_")}}


REGISTRY: dict[str, Op] = {}  # the kinds loaded so far; explain.ops.REGISTRY is every kind
BACKWARD_OF: list[Callable[[Op], Op]] = []  # how a "<kind>.grad" op is made: explain.ops.grad puts GradOf here



def register(cls: type[Op]) -> type[Op]:
    """Class decorator: make one instance of the op kind available by name."""
    REGISTRY[cls.kind] = cls()
    return cls


def get(kind: str) -> Op:
    """The op of a kind (``"matmul"``; ``"matmul.grad"`` is the backward of matmul), its module imported the
    first time; a KeyError for a kind there is not."""
    if kind not in REGISTRY:
        forward = kind[: -len(".grad")] if kind.endswith(".grad") else kind
        if forward in MODULE_OF:
            import_module(f"explain.ops.{MODULE_OF[forward]}")
        if forward != kind and forward in REGISTRY:
            import_module("explain.ops.grad")  # puts GradOf in BACKWARD_OF
            REGISTRY[kind] = BACKWARD_OF[0](REGISTRY[forward])
    return REGISTRY[kind]


def summed_index(index: tuple[int, ...], shape: tuple[int, ...], g_shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The cells of an output's gradient (shape ``g_shape``) that were summed into cell ``index`` of the
    gradient of an operand of ``shape`` broadcast to it: every entry along the axes broadcasting added or
    stretched, the same entry along the others (the inverse of :func:`broadcast_index`)."""
    extra = len(g_shape) - len(shape)
    return (slice(None),) * extra + tuple(slice(None) if n == 1 and gn != 1 else i
                                          for i, n, gn in zip(index, shape, g_shape[extra:]))


def broadcast_index(index: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index into an operand of ``shape`` that broadcasting paired with output cell ``index``."""
    tail = index[len(index) - len(shape):] if shape else ()
    return tuple(0 if s == 1 else i for i, s in zip(tail, shape))
