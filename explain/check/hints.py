"""Fix suggestions for a failed ``@`` or broadcast, tried on shapes alone.

Each hint is a likely mistake re-checked with the same rules: a missing or extra transpose in a matmul (``K``
where ``K.T`` was meant), a reduction that dropped the axis it needed to keep (``keepdims=True``), a missing
trailing axis of size 1 (a per-row value added to a matrix), or ``*`` where ``@`` was meant. A hint is offered only when the changed expression really fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from explain import shape_rules as rules
from explain.errors import ShapeError
from explain.shape_rules import Shape, fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Node


def _paren(node: Node) -> str:
    text = node.text if len(node.text) <= 40 else node.text[:39] + "…"
    return text if node.atomic else f"({text})"


def transposed(node: Node) -> tuple[str, Shape] | None:
    """The operand with its last two axes swapped (or a ``.T`` removed), as text and shape."""
    if node.op == "transpose" and node.detail == ".T":
        inner = node.children[0]
        return _paren(inner), inner.shape
    if len(node.shape) < 2:
        return None
    swapped = node.shape[:-2] + (node.shape[-1], node.shape[-2])
    suffix = ".T" if len(node.shape) == 2 else ".swapaxes(-1, -2)"
    return _paren(node) + suffix, swapped


def _fits(rule: Callable[[Shape, Shape], Shape], a: Shape, b: Shape) -> Shape | None:
    try:
        return rule(a, b)
    except ShapeError:
        return None


def _transpose_hint(left: Node, right: Node, sym: str, rule: Callable[[Shape, Shape], Shape]) -> str:
    # The right operand first: `Q @ K` for `Q @ K.T` is the classic attention mistake.
    for side in ("right", "left"):
        alt = transposed(right if side == "right" else left)
        if alt is None:
            continue
        a, b = (left.shape, alt[1]) if side == "right" else (alt[1], right.shape)
        out = _fits(rule, a, b)
        if out is not None:
            lt, rt = (_paren(left), alt[0]) if side == "right" else (alt[0], _paren(right))
            return f"; did you mean {lt} {sym} {rt}? transposing the {side} operand makes it fit, giving {fmt_shape(out)}"
    return ""


def matmul_hint(left: Node, right: Node) -> str:
    """A transpose of one operand that would make ``left @ right`` fit, if there is one."""
    if not left.shape or not right.shape:
        return ""  # the rule's own message already says to use * for scalars
    return _transpose_hint(left, right, "@", rules.matmul)


def broadcast_hint(left: Node, right: Node, sym: str) -> str:
    """keepdims=True, a transpose, or @ instead of *, whichever would make ``left sym right`` fit."""
    for this, other in ((left, right), (right, left)):
        made = this.info.get("reduce")
        if made and not made[3]:
            fname, shape, axis, _ = made
            kept = rules.reduce(shape, axis, keepdims=True)
            out = _fits(rules.broadcast, kept, other.shape)
            if out is not None:
                return (f"; pass keepdims=True to {fname}: {_paren(this)} would keep the reduced axis as size 1, "
                        f"shape {fmt_shape(kept)}, and broadcast to {fmt_shape(out)}")
    if sym == "*":
        out = _fits(rules.matmul, left.shape, right.shape)
        if out is not None and left.shape and right.shape:
            return f"; did you mean {_paren(left)} @ {_paren(right)} (matrix product)? it gives {fmt_shape(out)}"
    for this, other in ((left, right), (right, left)):
        # One value per row of the other operand: it lines up once it has a trailing axis of size 1.
        if this.shape and len(this.shape) < len(other.shape):
            column = this.shape + (1,)
            if _fits(rules.broadcast, column, other.shape) == other.shape:
                sizes = ", ".join(map(str, column))
                return (f"; to line {_paren(this)} up with axis {-len(column)} of {_paren(other)}, give it a trailing "
                        f"axis of size 1: {_paren(this)}.reshape({sizes}) broadcasts to {fmt_shape(other.shape)}")
    return ""
