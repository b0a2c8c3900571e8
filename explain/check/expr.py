"""The expression form: ``"softmax(Q @ K.T / sqrt(d_k)) @ V"`` over named shapes, parsed and never evaluated.

:func:`check_expression` parses the text with :mod:`ast` (``mode="eval"``) and walks the tree, giving every
sub-expression a shape with the rules in :mod:`explain.shape_rules`. The result is a :class:`Node` tree. A
shape mismatch is a :class:`CheckShapeError` whose display puts a caret under the failing operator; anything
the checker does not understand is a one-line ``not supported: …`` :class:`UsageError` listing what is.
Function calls are handled in :mod:`explain.check.calls`, fix suggestions in :mod:`explain.check.hints`.
"""

from __future__ import annotations

import ast
import warnings
from difflib import get_close_matches
from typing import Any

from explain import shape_rules as rules
from explain.check import hints
from explain.check.calls import FUNCTIONS, NP_NAMES, visit_call
from explain.check.errors import CheckShapeError, caret_lines
from explain.check.parse import Bindings, check_length
from explain.check.supported import supported_text
from explain.errors import ShapeError, UsageError
from explain.shape_rules import Shape, fmt_shape

# Deep enough for any real formula; shallow enough that walking, rendering and JSON never hit Python's
# recursion limit.
MAX_DEPTH = 100

SUPPORTED = supported_text()

BINOPS: dict[type, tuple[str, str]] = {
    ast.MatMult: ("@", "matmul"), ast.Add: ("+", "add"), ast.Sub: ("-", "sub"),
    ast.Mult: ("*", "mul"), ast.Div: ("/", "div"), ast.Pow: ("**", "pow"),
}

# What to call a node kind in a "not supported" message.
KIND_NAMES: dict[str, str] = {
    "Subscript": "indexing (x[...])", "Compare": "comparisons", "BoolOp": "and/or", "Lambda": "lambda",
    "IfExp": "if-else", "ListComp": "comprehensions", "GeneratorExp": "comprehensions",
    "DictComp": "comprehensions", "SetComp": "comprehensions", "Dict": "dicts", "Set": "sets",
    "List": "a list outside concatenate/stack", "Tuple": "a tuple outside a function's arguments",
    "JoinedStr": "f-strings", "NamedExpr": ":=", "Starred": "*unpacking", "Slice": "slices",
    "FloorDiv": "the // operator", "Mod": "the % operator", "LShift": "the << operator", "RShift": "the >> operator",
    "BitOr": "the | operator", "BitAnd": "the & operator", "BitXor": "the ^ operator", "Invert": "the ~ operator",
    "Not": "not", "Await": "await", "Yield": "yield", "YieldFrom": "yield",
}


class Node:
    """One sub-expression: its source text, the operation, its shape, and the sub-expressions it uses."""

    # A plain class, not a dataclass: building a dataclass costs startup time this command does not have.
    __slots__ = ("text", "op", "shape", "children", "detail", "start", "end", "atomic", "info")

    def __init__(self, text: str, op: str, shape: Shape, children: list[Node] | None = None, detail: str = "",
                 start: int = 0, end: int = 0, atomic: bool = True, info: dict[str, Any] | None = None) -> None:
        self.text, self.op, self.shape = text, op, shape
        self.children: list[Node] = children or []
        self.detail = detail
        self.start, self.end = start, end  # columns in the source, for carets
        self.atomic = atomic  # needs no parentheses to be an operand (a name, a call, an attribute)
        self.info: dict[str, Any] = info or {}  # how it was made, for fix suggestions

    def __repr__(self) -> str:
        return f"Node({self.text!r}, {self.op!r}, {self.shape})"


def unsupported(what: str) -> UsageError:
    """The one-line error for anything outside the supported subset."""
    return UsageError(f"not supported: {what}; supported: {SUPPORTED}")


def _depth(tree: ast.AST) -> int:
    """The nesting depth of ``tree``, without recursion (the tree is what may be too deep)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _longest_chain(tree: ast.AST) -> int:
    """The most binary operators in one left-nested chain (``a + b + c`` is two), without recursion."""
    longest = 0
    for node in ast.walk(tree):
        n = 0
        while isinstance(node, ast.BinOp):
            n, node = n + 1, node.left
        longest = max(longest, n)
    return longest


class Checker:
    """Walks one parsed expression; holds the source (for text and carets) and the bindings."""

    def __init__(self, source: str, bindings: Bindings) -> None:
        self.src = source
        self.b = bindings
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
             detail: str = "", **info: Any) -> Node:
        start, end = self.span(node)
        atomic = isinstance(node, (ast.Name, ast.Call, ast.Attribute, ast.Constant))
        return Node(self.src[start:end], op, tuple(shape), children or [], detail, start, end, atomic, info)

    def fail(self, err: ShapeError, start: int, end: int, operands: list[Node], hint: str = "",
             labels: tuple[str, ...] = ()) -> CheckShapeError:
        """A CheckShapeError: the caret display, the operands' shapes, then the rule's message and a hint."""
        lines = caret_lines(self.src, start, end)
        labels = labels or ("input",) * len(operands)
        width = max((len(_short(n.text)) for n in operands), default=0)
        for label, n in zip(labels, operands):
            lines.append(f"  {label + ':':<7}{_short(n.text):<{width}}  {fmt_shape(n.shape)}")
        return CheckShapeError(f"{err}{hint}", lines)

    # --- the node kinds ---------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return self.make(node, "number", ())
            raise unsupported(f"the constant {self.text(node)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.visit(node.operand)
            return self.make(node, "neg" if isinstance(node.op, ast.USub) else "pos", inner.shape, [inner])
        if isinstance(node, ast.BinOp):
            return self.binop(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Call):
            return visit_call(self, node)
        kind = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
        raise unsupported(KIND_NAMES.get(kind, kind) + f" in {_short(self.text(node))!r}")

    def name(self, node: ast.Name) -> Node:
        name = node.id
        if name in self.b.arrays:
            written = self.b.written.get(name, ())
            named = any(isinstance(d, str) for d in written)
            detail = "input (" + ", ".join(map(str, written)) + ")" if named else "input"
            return self.make(node, "input", self.b.arrays[name], detail=detail)
        if name in self.b.dims:
            return self.make(node, "scalar", (), detail=f"{name}={self.b.dims[name]}")

        if name in FUNCTIONS or name in NP_NAMES:
            raise UsageError(f"{name} is a function or module, not an array: call it, like {name}(x)"
                             if name in FUNCTIONS else f"{name} on its own is not an array: use {name}.FUNCTION(x)")

        near = get_close_matches(name, list(self.b.arrays) + list(self.b.dims), n=1)
        maybe = f" (did you mean {near[0]}?)" if near else ""
        raise UsageError(f"unknown name '{name}'{maybe}: give its shape with --shape {name}=DIMS, or its size "
                         f"with --dim {name}=N to use it as a number")

    def binop(self, node: ast.BinOp) -> Node:
        if type(node.op) not in BINOPS:
            raise unsupported(KIND_NAMES.get(type(node.op).__name__, type(node.op).__name__))
        sym, op = BINOPS[type(node.op)]
        left, right = self.visit(node.left), self.visit(node.right)
        # ast does not record where the operator is; it is the only symbol between the operands (plus parens).
        gap = self.src.find(sym, left.end, right.start)
        start = gap if gap >= 0 else left.end
        try:
            shape = rules.matmul(left.shape, right.shape) if op == "matmul" else rules.broadcast(left.shape, right.shape)
        except ShapeError as err:
            hint = hints.matmul_hint(left, right) if op == "matmul" else hints.broadcast_hint(left, right, sym)
            raise self.fail(err, start, start + len(sym), [left, right], hint, ("left", "right")) from None
        detail = ""
        if op != "matmul" and left.shape != right.shape:
            detail = f"broadcast {fmt_shape(left.shape)} with {fmt_shape(right.shape)}"
        return self.make(node, op, shape, [left, right], detail)

    def attribute(self, node: ast.Attribute) -> Node:
        if node.attr == "T":
            inner = self.visit(node.value)
            return self.make(node, "transpose", rules.transpose(inner.shape), [inner], ".T")
        if isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy"):
            raise unsupported(f"{self.text(node)} without a call")
        raise unsupported(f"the attribute .{node.attr} (only .T)")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_expression(text: str, bindings: Bindings) -> Node:
    """The shape tree of the numpy expression ``text``; raises UsageError or CheckShapeError."""
    source = check_length(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences in a string: we report our own errors
            tree = ast.parse(source, mode="eval")
    except SyntaxError as err:
        where = f" at column {err.offset}" if err.offset else ""
        raise UsageError(f"cannot parse the expression: {err.msg}{where}; check its parentheses and "
                         "operators") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise UsageError(f"cannot parse the expression: {err}") from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        terms = _longest_chain(tree) + 1
        if terms >= depth - 2:  # a flat a + b + … is a left-nested chain to ast, not nesting the user wrote
            raise UsageError(f"the expression chains {terms:,} terms with binary operators; explain checks at "
                             f"most {MAX_DEPTH}: check it in pieces")
        raise UsageError(f"the expression nests {depth:,} levels deep; the limit is {MAX_DEPTH}: check it in pieces")
    return Checker(source, bindings).visit(tree.body)
