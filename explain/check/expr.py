"""The expression form: ``"softmax(Q @ K.T / sqrt(d_k)) @ V"`` over named shapes, parsed and never evaluated.

:func:`check_expression` parses the text with :mod:`ast` (``mode="eval"``) and walks the tree, giving every
sub-expression a shape with the rules in :mod:`explain.core.shape_rules`. The result is a :class:`Node` tree. A
shape mismatch is a :class:`CheckShapeError` whose display puts a caret under the failing operator; anything
the checker does not understand is a one-line ``not supported: …`` :class:`UsageError` listing what is.
Function calls are handled in :mod:`explain.check.calls`, fix suggestions in :mod:`explain.check.hints`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from explain.check.calls import visit_call
from explain.check.errors import CheckShapeError, caret_lines
from explain.check.names import Ax, Names, binop_names, fmt_names
from explain.check.node import Node, origin, sqrt_claim
from explain.check.parse import Bindings, check_length, parse_expression
from explain.check.spelling import looks_like_torch
from explain.check.supported import BINOPS, FUNCTIONS, KIND_NAMES, NP_NAMES, unsupported
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError
from explain.core.shape_rules import Shape, fmt_shape


class Checker:
    """Walks one parsed expression; holds the source (for text and carets) and the bindings."""

    def __init__(self, source: str, bindings: Bindings, torch: bool | None = None) -> None:
        self.set_source(source)
        self.b = bindings
        # PyTorch's rules where they differ from numpy's (x.transpose(1, 2)): --lib, or the line's own spelling.
        self.torch = looks_like_torch(source) if torch is None else torch
        self.numpy_only = torch is False  # --lib numpy: a PyTorch spelling is a mistake, not a hint
        self.sizes: dict[str, int] = dict(bindings.dims)  # each axis name's size, for reshape's bookkeeping
        self.aliases: dict[str, Ax] = {}  # a size name bound to an axis name (B, T, C = x.shape)
        self.env: dict[str, Node] = {}  # names assigned earlier in a checked function
        self.unknown: dict[str, str] = {}  # names a skipped statement assigned -> why it was skipped
        self.advice: list[Any] = []  # warnings: shapes that fit, named axes that say the code is wrong
        self.pending: list[Node] = []
        self.shapes: dict[str, list[Any]] = {}  # shapes held by a name (new_shape = x.size()[:-1] + (H, Dh))
        self.configs: set[str] = set()
        self.missing: dict[str, None] = {}  # config fields a class's __init__ needed and --dim did not give  # names of config objects in a class's __init__ (config.n_embd: --dim n_embd)
        self.line = 0  # in a function, the line of the statement being checked
        self.cls: Any = None  # the class a method is checked in (explain.check.classes.ClassContext)  # reductions that may be a normalisation over the wrong axis (reviewed later)

    def uses_torch(self, what: str, fix: str) -> None:
        """The line spells something PyTorch's way (``dim=``, ``.view``): PyTorch's rules from here on; under
        ``--lib numpy`` a refusal saying what numpy calls it (numpy has no such argument or method)."""
        if self.numpy_only:
            raise UsageError(f"{what} is PyTorch's, and --lib numpy was given: {fix}, or pass --lib torch")
        self.torch = True

    def set_source(self, source: str) -> None:
        """The text being checked (a function check sets each statement's in turn)."""
        self.src = source
        # ast's columns count UTF-8 bytes; map them to characters so non-ASCII names slice and caret right.
        self._col = None if source.isascii() else [i for i, ch in enumerate(source) for _ in ch.encode()] + [
            len(source)]

    def col(self, byte_col: int) -> int:
        return byte_col if self._col is None else self._col[byte_col]

    def span(self, node: ast.AST) -> tuple[int, int]:
        return self.col(node.col_offset), self.col(node.end_col_offset)  # type: ignore[attr-defined]

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.src[start:end]

    def make(self, node: ast.AST, op: str, shape: Shape, children: list[Node] | None = None,
             detail: str = "", names: Names | None = None, **info: Any) -> Node:
        start, end = self.span(node)
        atomic = isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Constant, ast.Subscript))
        return Node(self.src[start:end], op, tuple(shape), children or [], detail, start, end, atomic, info, names)

    def fail(self, err: ShapeError, start: int, end: int, operands: list[Node], hint: str = "",
             labels: tuple[str, ...] = (), fix: tuple[int, int, str] | None = None) -> CheckShapeError:
        """A CheckShapeError: the caret display, the operands' shapes, then the rule's message and a hint."""
        lines = caret_lines(self.src, start, end)
        labels = labels or ("input",) * len(operands)
        width = max((len(_short(n.text)) for n in operands), default=0)
        for label, n in zip(labels, operands):
            lines.append(f"  {label + ':':<7}{_short(n.text):<{width}}  {fmt_shape(n.shape)}  {fmt_names(n.names)}"
                         .rstrip())
        return CheckShapeError(f"{err}{hint}", lines, fix)

    # --- the node kinds ---------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> Node:
        """The shape of ``node``, from the handler for its kind (:data:`KINDS`); other kinds are refused."""
        handler = KINDS.get(type(node))
        if handler is not None:
            return handler(self, node)
        kind = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
        raise unsupported(KIND_NAMES.get(kind, kind) + f" in {_short(self.text(node))!r}")

    def constant(self, node: ast.Constant) -> Node:
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return self.make(node, "number", ())
        raise unsupported(f"the constant {self.text(node)}")

    def unary(self, node: ast.UnaryOp) -> Node:
        if not isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
            raise unsupported(KIND_NAMES.get(type(node.op).__name__, type(node.op).__name__)
                              + f" in {_short(self.text(node))!r}")
        inner = self.visit(node.operand)
        op = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "not"}[type(node.op)]
        return self.make(node, op, inner.shape, [inner], names=inner.names)

    def subscript(self, node: ast.Subscript) -> Node:
        from explain.check.index import visit_subscript  # lazy: only indexing loads it (bench_check_startup)

        return visit_subscript(self, node)

    def unknown_name(self, node: ast.Name) -> UsageError:
        err = UsageError(f"{node.id} is unknown here: {self.unknown[node.id]}")
        err.root = self.unknown[node.id]  # type: ignore[attr-defined]  # a later skip passes the first cause on
        return err

    def name(self, node: ast.Name) -> Node:
        name = node.id
        if name in self.env:
            known = self.env[name]
            return self.make(node, "name", known.shape, detail=known.detail if known.op == "input" else "",
                             names=known.names, was=known)
        if name in self.unknown:
            raise self.unknown_name(node)
        if name in self.b.arrays:
            written = self.b.written.get(name, ())
            named = any(isinstance(d, str) for d in written)
            detail = "input (" + ", ".join(map(str, written)) + ")" if named else "input"
            names = tuple((d,) if isinstance(d, str) else None for d in written)
            return self.make(node, "input", self.b.arrays[name], detail=detail, names=names)
        if name in self.b.dims:
            return self.make(node, "scalar", (), detail=f"{name}={self.b.dims[name]}",
                             claim=self.aliases.get(name, (name,)))

        if name in FUNCTIONS or name in NP_NAMES:
            raise UsageError(f"{name} is a function or module, not an array: call it, like {name}(x)"
                             if name in FUNCTIONS else f"{name} on its own is not an array: use {name}.FUNCTION(x)")

        from difflib import get_close_matches  # lazy: only a mistake pays for difflib (bench_check_startup)

        near = get_close_matches(name, list(self.b.arrays) + list(self.b.dims), n=1)
        maybe = f" (did you mean {near[0]}?)" if near else ""
        raise UsageError(f"unknown name '{name}'{maybe}: give its shape with --shape {name}=DIMS, or its size "
                         f"with --dim {name}=N to use it as a number")

    def binop(self, node: ast.BinOp | ast.Compare) -> Node:
        op_node = node.ops[0] if isinstance(node, ast.Compare) else node.op
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            raise unsupported("chained comparisons")
        if type(op_node) not in BINOPS:
            raise unsupported(KIND_NAMES.get(type(op_node).__name__, type(op_node).__name__))
        sym, op = BINOPS[type(op_node)]
        right_ast = node.comparators[0] if isinstance(node, ast.Compare) else node.right
        left, right = self.visit(node.left), self.visit(right_ast)
        # ast does not record where the operator is; it is the only symbol between the operands (plus parens).
        gap = self.src.find(sym, left.end, right.start)
        start = gap if gap >= 0 else left.end
        return self.combine(node, op, left, right, (start, start + len(sym)), sym=sym)

    def combine(self, node: ast.AST, op: str, left: Node, right: Node, span: tuple[int, int], sym: str = "",
                children: list[Node] | None = None) -> Node:
        """``left @ right`` (op "matmul" or "bmm") or the broadcast of the two, sizes and names."""
        for side in (left, right):
            if side.info.get("pair"):
                raise UsageError(f"{side.text} is a (values, indices) pair in PyTorch (max/min with dim): take "
                                 f"{_short(side.text)}.values")
        mat = op in ("matmul", "bmm")
        try:
            shape = rules.matmul(left.shape, right.shape) if mat else rules.broadcast(left.shape, right.shape)
        except ShapeError as err:
            from explain.check.repair import (
                mismatch,  # lazy: only a mismatch needs the fix finder (bench_check_startup)
            )

            raise mismatch(self, err, span, left, right, mat, sym or op) from None
        names, clash = self.binop_names("matmul" if mat else op, left, right)
        if op in ("div", "mul", "add"):
            self.suspicious(op, left, right, span)
        if clash:
            from explain.check.repair import coincidence  # lazy: only a mismatch (bench_check_startup)

            raise coincidence(self, clash, span, left, right, mat) from None
        detail = ""
        if not mat and left.shape != right.shape:
            detail = f"broadcast {fmt_shape(left.shape)} with {fmt_shape(right.shape)}"
        if mat:
            contracted = left.names[-1] if left.names and left.names[-1] is not None else (
                right.names[-2] if len(right.names) > 1 else None)
            return self.make(node, op, shape, children or [left, right], detail, names=names, contracted=contracted)
        return self.make(node, op, shape, children or [left, right], detail, names=names)

    def suspicious(self, op: str, left: Node, right: Node, span: tuple[int, int]) -> None:
        """Shapes that fit but names that say the code is wrong: a scale by the √ of another axis than the one
        the scores summed, a mask added after the softmax (warnings from :mod:`explain.check.semantic`)."""
        if op in ("div", "mul") and (left.shape == () or right.shape == ()):  # a scale: √ of the summed axis?
            scale, scores = (right, left) if right.shape == () else (left, right)
            under = sqrt_claim(scale) if scores.shape else None
            made = origin(scores) if under is not None else None
            if made is not None and made.op == "matmul" and made.info.get("contracted") not in (None, under):
                from explain.check import semantic  # lazy: only a suspicious scale loads the rules

                semantic.scale(self, scores, scale, made, under)
        elif op == "add" and "mask" in (left.text + right.text) and "softmax" in (origin(left).op + origin(right).op):
            from explain.check import semantic  # lazy: only a suspicious mask loads the rules

            semantic.mask_after_softmax(self, left if "softmax" in origin(left).op else right, span)

    @staticmethod
    def binop_names(op: str, left: Node, right: Node) -> tuple[Names, str | None]:
        """The result's axis names, and where the operands' names disagree on axes whose sizes agree."""
        return binop_names(op, left.shape, left.names, right.shape, right.names)

    def attribute(self, node: ast.Attribute) -> Node:
        if isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy", "math", "torch") \
                and node.attr in ("inf", "pi", "e", "nan") and node.value.id not in self.b.arrays:
            return self.make(node, "number", ())
        if node.attr in ("T", "mT"):
            inner = self.visit(node.value)
            if node.attr == "mT" and len(inner.shape) < 2:
                raise self.fail(ShapeError(f".mT needs at least 2 axes, got {fmt_shape(inner.shape)}"),
                                *self.span(node), [inner])
            if node.attr == "mT" or (self.torch and len(inner.shape) > 2):
                if node.attr == "T":
                    raise self.fail(ShapeError(f"PyTorch's .T on a {len(inner.shape)}-D tensor reverses all its axes "
                                               f"(deprecated); to swap the last two write .transpose(-2, -1) or .mT: "
                                               f"{inner.text}.mT"),
                                    *self.span(node), [inner], fix=(*self.span(node), f"{inner.text}.mT"))
                sh, nm = inner.shape, inner.names
                return self.make(node, "transpose", sh[:-2] + (sh[-1], sh[-2]), [inner], ".mT",
                                 names=nm[:-2] + (nm[-1], nm[-2]))
            return self.make(node, "transpose", rules.transpose(inner.shape), [inner], ".T",
                             names=tuple(reversed(inner.names)))
        if node.attr in ("values", "indices"):
            inner = self.visit(node.value)
            if inner.info.get("pair"):
                return self.make(node, inner.op, inner.shape, [inner], node.attr, names=inner.names)
        if isinstance(node.value, ast.Name) and node.value.id == "self" and self.cls is not None \
                and node.attr in self.cls.arrays:  # a buffer or parameter made in __init__
            made = self.cls.arrays[node.attr]
            return self.make(node, "name", made.shape, names=made.names, was=made)
        if isinstance(node.value, ast.Name) and node.value.id in ("self", *self.configs) and node.attr in self.b.dims:
            return self.make(node, "scalar", (), detail=f"{node.attr}={self.b.dims[node.attr]}",
                             claim=self.aliases.get(node.attr, (node.attr,)))
        if isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy"):
            raise unsupported(f"{self.text(node)} without a call")
        if isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in self.unknown:
            raise UsageError(self.unknown[f"{node.value.id}.{node.attr}"])
        raise unsupported(f"the attribute .{node.attr} (only .T, .mT, .shape[i])")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The node kinds an expression may hold -> the Checker's handler for each (as explain.ops registers op kinds).
KINDS: dict[type, Callable[[Checker, Any], Node]] = {
    ast.Name: Checker.name, ast.Constant: Checker.constant, ast.UnaryOp: Checker.unary, ast.BinOp: Checker.binop,
    ast.Compare: Checker.binop, ast.Subscript: Checker.subscript, ast.Attribute: Checker.attribute,
    ast.Call: visit_call,
}


def check_expression(text: str, bindings: Bindings, torch: bool | None = None) -> Node:
    """The shape tree of the numpy expression ``text``; raises UsageError or CheckShapeError."""
    source = check_length(text)
    tree = parse_expression(source)
    ck = Checker(source, bindings, torch)
    node = ck.visit(tree.body)
    review(ck, node)
    return node


def review(ck: Checker, node: Node) -> None:
    """The checks that need the whole tree (a normalisation over the wrong axis); the warnings onto the node."""
    if ck.pending:
        from explain.check import semantic  # lazy: only a suspicious reduction loads the rules

        semantic.normalisations(ck, node)
    node.info["advice"] = list(ck.advice)
