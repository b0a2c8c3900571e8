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
    from explain.check.names import Names

# A hint: the words appended to the error, and the fix as (start, end, replacement) in the source, if one.
Hint = tuple[str, tuple[int, int, str] | None]
NO_HINT: Hint = ("", None)


def _paren(node: Node) -> str:
    text = node.text if len(node.text) <= 40 else node.text[:39] + "…"
    return text if node.atomic else f"({text})"


def transposed(node: Node) -> list[tuple[str, Shape, Names]]:
    """The operand with its last two axes swapped, as text, shape and names: a ``.T`` removed, or (on more
    than 2 axes, where ``.T`` reverses them all) ``.T`` replaced by ``.swapaxes(-1, -2)``, or one added."""
    out = []
    if node.op == "transpose" and node.detail == ".T":
        inner = node.children[0]
        out.append((_paren(inner), inner.shape, inner.names))
        if len(inner.shape) > 2:
            sw = inner.shape[:-2] + (inner.shape[-1], inner.shape[-2])
            out.append((_paren(inner) + ".swapaxes(-1, -2)", sw, inner.names[:-2] + (inner.names[-1], inner.names[-2])))
        return out
    if len(node.shape) >= 2:
        swapped = node.shape[:-2] + (node.shape[-1], node.shape[-2])
        suffix = ".T" if len(node.shape) == 2 else ".swapaxes(-1, -2)"
        out.append((_paren(node) + suffix, swapped, node.names[:-2] + (node.names[-1], node.names[-2])))
    return out


def _fits(rule: Callable[[Shape, Shape], Shape], a: Shape, b: Shape) -> Shape | None:
    try:
        return rule(a, b)
    except ShapeError:
        return None


def matmul_hint(left: Node, right: Node) -> Hint:
    """A transpose of one operand that makes ``left @ right`` fit, sizes and names, if there is one."""
    from explain.check.expr import Checker
    from explain.check.expr import Node as N

    if not left.shape or not right.shape:
        return NO_HINT  # the rule's own message already says to use * for scalars
    # The right operand first: `Q @ K` for `Q @ K.T` is the classic attention mistake.
    for side, this in (("right", right), ("left", left)):
        for text, shape, names in transposed(this):
            alt = N(text, "alt", shape, names=names)
            a, b = (left, alt) if side == "right" else (alt, right)
            out = _fits(rules.matmul, a.shape, b.shape)
            if out is None or Checker.binop_names("matmul", a, b)[1]:
                continue
            lt, rt = (_paren(left), text) if side == "right" else (text, _paren(right))
            return (f"; did you mean {lt} @ {rt}? transposing the {side} operand makes it fit, giving "
                    f"{fmt_shape(out)}", (this.start, this.end, text))
    return NO_HINT


def broadcast_hint(left: Node, right: Node, sym: str) -> Hint:
    """keepdims=True, a transpose, or @ instead of *, whichever would make ``left sym right`` fit."""
    for this, other in ((left, right), (right, left)):
        made = this.info.get("reduce")
        if made and not made[3]:
            fname, shape, axis, _ = made
            kept = rules.reduce(shape, axis, keepdims=True)
            out = _fits(rules.broadcast, kept, other.shape)
            if out is not None:
                return (f"; pass keepdims=True to {fname}: {_paren(this)} would keep the reduced axis as size 1, "
                        f"shape {fmt_shape(kept)}, and broadcast to {fmt_shape(out)}", this.info.get("keepdims_fix"))
    if sym == "*":
        out = _fits(rules.matmul, left.shape, right.shape)
        if out is not None and left.shape and right.shape:
            return (f"; did you mean {_paren(left)} @ {_paren(right)} (matrix product)? it gives {fmt_shape(out)}",
                    None)
    for this, other in ((left, right), (right, left)):
        # One value per row of the other operand: it lines up once it has a trailing axis of size 1.
        if this.shape and len(this.shape) < len(other.shape):
            column = this.shape + (1,)
            if _fits(rules.broadcast, column, other.shape) == other.shape:
                sizes = ", ".join(map(str, column))
                return (f"; to line {_paren(this)} up with axis {-len(column)} of {_paren(other)}, give it a trailing "
                        f"axis of size 1: {_paren(this)}.reshape({sizes}) broadcasts to {fmt_shape(other.shape)}",
                        None)
    return NO_HINT
