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


# Calls that pass their input through unchanged, for what a value was made from (dropout is the identity in shape).
PASS_THROUGH = ("name", "dropout", "contiguous", "float", "half", "double", "to", "detach", "clone", "type_as", "pos")


def origin(node: Node) -> Node:
    """The node that made ``node``'s values: through a name assigned earlier, dropout and dtype casts."""
    for _ in range(50):
        was = node.info.get("was")
        if was is not None:
            node = was
        elif node.op in PASS_THROUGH and len(node.children) == 1 and node.children[0].shape == node.shape:
            node = node.children[0]
        else:
            break
    return node


def sqrt_claim(node: Node) -> tuple[str, ...] | None:
    """The axis name under a square root (``sqrt(d_k)``, ``k.size(-1) ** 0.5``, ``1 / math.sqrt(Dh)``,
    ``Dh ** -0.5``), or None when ``node`` is not such a scale."""
    node = origin(node)
    if node.shape != ():
        return None
    if node.op in ("sqrt", "rsqrt") and len(node.children) == 1:
        return node.children[0].info.get("claim")
    if node.op == "pow" and len(node.children) == 2 and node.children[1].text.replace(" ", "") in ("0.5", "-0.5",
                                                                                                  "(-0.5)"):
        return origin(node.children[0]).info.get("claim")
    if node.op == "div" and len(node.children) == 2 and node.children[0].op == "number":
        return sqrt_claim(node.children[1])
    return None
