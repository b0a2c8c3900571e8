"""Fix suggestions for a failed ``@`` or broadcast, tried on shapes alone.

Each hint is a likely mistake re-checked with the same rules: a missing or extra transpose in a matmul (``K``
where ``K.T`` was meant), a reduction that dropped the axis it needed to keep (``keepdims=True``), a missing
trailing axis of size 1 (a per-row value added to a matrix), or ``*`` where ``@`` was meant. A hint is offered only when the changed expression really fits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from explain.check.names import binop_names
from explain.check.node import Node
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError
from explain.core.shape_rules import Shape, fmt_shape

if TYPE_CHECKING:
    from explain.check.names import Names

# A hint: the words appended to the error, and the fix as (start, end, replacement) in the source, if one.
Hint = tuple[str, tuple[int, int, str] | None]
NO_HINT: Hint = ("", None)


def _paren(node: Node) -> str:
    return node.text if node.atomic else f"({node.text})"  # whole: a fix must be substitutable as written


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
    swap = node.info.get("swap")
    if node.op in ("swapaxes", "transpose") and swap and {a % len(node.shape) for a in swap} == {
            len(node.shape) - 1, len(node.shape) - 2}:
        inner = node.children[0]
        return [(_paren(inner), inner.shape, inner.names)]  # the swap of the last two axes removed
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
    if not left.shape or not right.shape:
        return NO_HINT  # the rule's own message already says to use * for scalars
    # The right operand first: `Q @ K` for `Q @ K.T` is the classic attention mistake.
    for side, this in (("right", right), ("left", left)):
        for text, shape, names in transposed(this):
            alt = Node(text, "alt", shape, names=names)
            a, b = (left, alt) if side == "right" else (alt, right)
            out = _fits(rules.matmul, a.shape, b.shape)
            if out is None or binop_names("matmul", a.shape, a.names, b.shape, b.names)[1]:
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
                fix = this.info.get("keepdims_fix")
                return (f"; pass keepdims=True to {fname}: {fix[2] if fix else _paren(this)} keeps the reduced axis "
                        f"as size 1, shape {fmt_shape(kept)}, and broadcasts to {fmt_shape(out)}", fix)
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


def _index_text(node: Node, items: list[str]) -> str:
    while items and items[-1] == ":" and len(items) > 1 and items[-2] != "None":
        items.pop()  # trailing full slices say nothing
    return f"{_paren(node)}[{', '.join(items)}]"


def align_hint(this: Node, other: Node) -> Hint:
    """Index ``this`` so its axes line up under the same names in ``other``: ``mask[:, None, None, :]`` for a
    (B, T) padding mask against (B, H, T, T) scores (matched from the right, so T is the keys' axis),
    ``cos[:, None, :]`` for RoPE on (B, T, H, Dh). An axis with no name matches one of the same size."""
    axes = [i for i, s in enumerate(this.shape) if not (this.names[i] is None and s == 1)]
    if not axes:
        return NO_HINT
    pos: dict[int, int] = {}
    nxt = len(other.shape) - 1
    for i in reversed(axes):
        a, s = this.names[i], this.shape[i]
        while nxt >= 0 and not (other.shape[nxt] == s and (a is None or other.names[nxt] in (a, None))):
            nxt -= 1
        if nxt < 0:
            return NO_HINT
        pos[i] = nxt
        nxt -= 1
    items: list[str] = []
    prev = None
    for i in range(len(this.shape)):
        if i not in pos:
            items.append("0")  # an unnamed axis of size 1: dropped, the Nones below place the rest
            continue
        if prev is not None:
            items += ["None"] * (pos[i] - prev - 1)
        items.append(":")
        prev = pos[i]
    items += ["None"] * (len(other.shape) - 1 - (prev if prev is not None else 0))
    text = _index_text(this, items)
    if text == _paren(this):
        return NO_HINT
    return (f"; line {_paren(this)}'s axes up with {_paren(other)}'s (by name, else by size): {text}", (this.start, this.end, text))


def slice_hint(this: Node, other: Node) -> Hint:
    """``W_pos[:T]`` when ``this`` has a longer axis (a table for every position) where ``other`` has T."""
    n = max(len(this.shape), len(other.shape))
    a = (1,) * (n - len(this.shape)) + this.shape
    b = (1,) * (n - len(other.shape)) + other.shape
    bn = (None,) * (n - len(other.shape)) + other.names
    bad = [i for i in range(n) if a[i] != b[i] and 1 not in (a[i], b[i])]
    if len(bad) != 1 or a[bad[0]] < b[bad[0]] or bn[bad[0]] is None or len(bn[bad[0]]) != 1:  # type: ignore[arg-type]
        return NO_HINT
    an = (None,) * (n - len(this.shape)) + this.names
    if any(an[i] == bn[bad[0]] and bn[i] != an[i] for i in range(n)):
        return NO_HINT  # this has that axis somewhere else: the axes are misplaced, not too long
    axis = bad[0] - (n - len(this.shape))
    items = [":"] * axis + [f":{bn[bad[0]][0]}"]  # type: ignore[index]
    text = _index_text(this, items)
    return (f"; {_paren(this)} has {a[bad[0]]} rows where {_paren(other)} has {b[bad[0]]}: take the first "
            f"{bn[bad[0]][0]}, {text}", (this.start, this.end, text))  # type: ignore[index]


def repeat_hint(this: Node, other: Node, torch: bool, einops: bool) -> Hint:
    """Grouped-query attention: K/V with KV heads against Q with H heads, H a multiple of KV: repeat each
    K/V head H // KV times along that axis (``repeat_interleave``, numpy's ``repeat``, einops's ``repeat``)."""
    n = max(len(this.shape), len(other.shape))
    if len(this.shape) != n:
        return NO_HINT
    ob = (1,) * (n - len(other.shape)) + other.shape
    on = (None,) * (n - len(other.shape)) + other.names
    bad = [i for i in range(n - 2) if this.shape[i] != ob[i] and 1 not in (this.shape[i], ob[i])]
    if len(bad) != 1:
        return NO_HINT
    i = bad[0]
    small, big = this.shape[i], ob[i]
    if small >= big or big % small:
        return NO_HINT
    sn, bn = this.names[i], on[i]
    if sn and bn and sn != bn and (bn in this.names or sn in on):
        return NO_HINT  # the axes are misplaced (a transpose forgotten: T where n should be), not heads to share
    times = f"{bn[0]} // {sn[0]}" if sn and bn and len(sn) == 1 and len(bn) == 1 else str(big // small)
    if einops:
        letters = [f"a{j}" for j in range(n)]
        out = letters[:i] + [f"({letters[i]} g)"] + letters[i + 1:]
        text = f'repeat({this.text}, "{" ".join(letters)} -> {" ".join(out)}", g={times})'
    elif torch:
        text = f"{_paren(this)}.repeat_interleave({times}, dim={i})"
    else:
        text = f"np.repeat({this.text}, {times}, axis={i})"
    return (f"; {_paren(this)} has {small} heads on axis {i} where {_paren(other)} has {big}: repeat each "
            f"{big // small} times (grouped-query attention), {text}", (this.start, this.end, text))


def names_hint(left: Node, right: Node, torch: bool, einops: bool, mat: bool) -> Hint:
    """The first fix that makes the operands line up: heads repeated, a table sliced, axes placed by name."""
    tries = []
    if mat:
        tries += [lambda: repeat_hint(right, left, torch, einops), lambda: repeat_hint(left, right, torch, einops)]
    else:
        for a, b in ((right, left), (left, right)):
            tries += [lambda a=a, b=b: slice_hint(a, b)]
        if len(left.shape) != len(right.shape) or left.names != right.names:
            small, big = (left, right) if len(left.shape) <= len(right.shape) else (right, left)
            tries += [lambda: align_hint(small, big)]
        tries += [lambda: repeat_hint(right, left, torch, einops), lambda: repeat_hint(left, right, torch, einops)]
    for t in tries:
        hint = t()
        if hint[1] is not None:
            return hint
    return NO_HINT
