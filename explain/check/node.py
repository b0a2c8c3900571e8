"""The checker's tree: :class:`Node`, one sub-expression with its text, operation, shape and axis names.

In a module of its own so the modules that build nodes (the calls, shaping, hints) import it without importing
the checker that walks the expression (:mod:`explain.check.expr`), which imports them.
"""

from __future__ import annotations

from typing import Any

from explain.check.names import Names, unnamed
from explain.core.shape_rules import Shape


class Node:
    """One sub-expression: its source text, the operation, its shape, and the sub-expressions it uses."""

    # A plain class, not a dataclass: building a dataclass costs startup time this command does not have.
    __slots__ = ("text", "op", "shape", "children", "detail", "start", "end", "atomic", "info", "names")

    def __init__(self, text: str, op: str, shape: Shape, children: list[Node] | None = None, detail: str = "",
                 start: int = 0, end: int = 0, atomic: bool = True, info: dict[str, Any] | None = None,
                 names: Names | None = None) -> None:
        self.text, self.op, self.shape = text, op, shape
        self.names: Names = names if names is not None and len(names) == len(shape) else unnamed(len(shape))
        self.children: list[Node] = children or []
        self.detail = detail
        self.start, self.end = start, end  # columns in the source, for carets
        self.atomic = atomic  # needs no parentheses to be an operand (a name, a call, an attribute)
        self.info: dict[str, Any] = info or {}  # how it was made, for fix suggestions

    def __repr__(self) -> str:
        return f"Node({self.text!r}, {self.op!r}, {self.shape})"
