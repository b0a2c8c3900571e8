"""Fixes named from the axes when an operand's axes are in the wrong order, or a reduction on an earlier line
dropped the axis a later line needs: inside a function, the fix goes on the line that made the operand.

``q @ k.transpose(-2, -1)`` with q ``[B, H, T, Dh]`` and k ``[B, T, H, Dh]`` does not fit (the batch axes are
(B, H) and (B, T)), and no transpose of the last two axes helps. The names say what does: k's axes 1 and 2 are
swapped. In a nanoGPT-style function k was made on an earlier line (``k = k.view(B, T, n_head, hs)``), and the
fix is there: that line is missing ``.transpose(1, 2)`` (or, if it ends with one, has one too many). Loaded only
when a mismatch found no other fix (bench_check_startup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from explain.check import hints
from explain.check.errors import CheckShapeError
from explain.check.names import Names, binop_names, fmt_ax, fmt_names
from explain.check.node import Node, origin
from explain.check.spelling import EINOPS
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError

if TYPE_CHECKING:
    from explain.check.expr import Checker

Edit = tuple[int, str, str]  # (line, text on that line, replacement)
Repair = tuple[str, "tuple[int, int, str] | None", list[Edit]]


def _paren(node: Node) -> str:
    return node.text if node.atomic else f"({node.text})"


def _swaps_last_two(node: Node) -> bool:
    n = len(node.shape)
    swap = node.info.get("swap")
    if node.op in ("swapaxes", "transpose") and swap is not None and n >= 2:
        return {a % n for a in swap} == {n - 1, n - 2}
    return node.op == "transpose" and node.detail == ".mT"


def _fits(mat: bool, a: Node | tuple, an: Names, b: tuple, bn: Names) -> bool:
    ashape = a.shape if isinstance(a, Node) else a
    try:
        (rules.matmul if mat else rules.broadcast)(ashape, b)
    except ShapeError:
        return False
    return binop_names("matmul" if mat else "add", ashape, an, b, bn)[1] is None


def _lined_up(mine: Names, theirs: Names, mat: bool) -> bool:
    """The batch axes of a matmul (every axis of a broadcast), aligned from the right, carry the same names."""
    a, b = (mine[:-2], theirs[:-2]) if mat else (mine, theirs)
    pairs = list(zip(reversed(a), reversed(b)))
    return bool(pairs) and all(x == y for x, y in pairs if x is not None and y is not None) and any(
        x is not None and x == y for x, y in pairs)


def swapped_axes(ck: Checker, left: Node, right: Node, mat: bool) -> Repair | None:
    """Two axes of one operand swapped (found by the names): the hint, an in-place fix, and line edits."""
    for side, other, is_right in ((right, left, True), (left, right, False)):
        n = len(side.shape)
        if n < (3 if mat else 2) or sum(a is not None for a in side.names) < 2:
            continue
        base, flips = side, 0
        while mat and _swaps_last_two(base) and base.children:
            base, flips = base.children[0], flips + 1
        for i in range(n):
            for j in range(i + 1, n):
                if base.names[i] is None or base.names[j] is None or base.names[i] == base.names[j]:
                    continue
                shape, names = list(base.shape), list(base.names)
                shape[i], shape[j], names[i], names[j] = shape[j], shape[i], names[j], names[i]
                wanted = tuple(names)
                if flips % 2:
                    shape[-1], shape[-2], names[-1], names[-2] = shape[-2], shape[-1], names[-2], names[-1]
                a, an, b, bn = ((other.shape, other.names, tuple(shape), tuple(names)) if is_right else
                                (tuple(shape), tuple(names), other.shape, other.names))
                if not _fits(mat, a, an, b, bn) or not _lined_up(tuple(names), other.names, mat):
                    continue
                return _explain(ck, base, other, i, j, wanted)
    return None


def _swap(names: Names, i: int, j: int) -> Names:
    out = list(names)
    out[i], out[j] = out[j], out[i]
    return tuple(out)


def _explain(ck: Checker, base: Node, other: Node, i: int, j: int, wanted: Names) -> Repair:
    move = f".transpose({i}, {j})" if ck.torch else f".swapaxes({i}, {j})"
    said = (f"; {base.text} is {fmt_names(base.names)} where {fmt_names(wanted)} lines up with "
            f"{_paren(other)} {fmt_names(other.names)}: its axes {i} and {j} ({fmt_ax(base.names[i])}, "
            f"{fmt_ax(base.names[j])}) are swapped")
    made = base.info.get("was")
    if base.op == "name" and made is not None and "line" in made.info and made.info.get("src") != ck.src:
        line = made.info["line"]
        swap = made.info.get("swap")
        if made.op in ("swapaxes", "transpose") and swap is not None and {s % len(made.shape) for s in swap} == {i, j} \
                and made.children:
            new = made.children[0].text
            return f"{said}; line {line} swaps them once too often: {new}", None, [(line, made.text, new)]
        if made.op == "rearrange" and made.detail.startswith("'"):
            new = _rearranged(made, i, j)
            if new is not None:
                return f"{said}; line {line}'s pattern puts them the other way: {new}", None, [(line, made.text, new)]
        new = f"{_paren(made)}{move}"
        return f"{said}; line {line} is missing {move}: {new}", None, [(line, made.text, new)]
    swap = base.info.get("swap")
    if base.op in ("swapaxes", "transpose") and swap is not None and base.children and \
            {s % len(base.shape) for s in swap} == {i, j}:
        new = base.children[0].text
        return f"{said} by {base.text}, one transpose too many: {new}", (base.start, base.end, new), []
    new = f"{_paren(base)}{move}"
    return f"{said}: {new}", (base.start, base.end, new), []


def _rearranged(made: Node, i: int, j: int) -> str | None:
    """The rearrange call with output axes i and j swapped in its pattern."""
    pattern = made.detail[1:-1]
    left, arrow, right = pattern.partition("->")
    from explain.check.einops_ops import parse_side  # lazy: the pattern reader

    groups = parse_side(right, "right side")
    if max(i, j) >= len(groups):
        return None
    groups[i], groups[j] = groups[j], groups[i]
    new_right = " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)
    new_pattern = f"{left.strip()} -> {new_right}"
    return made.text.replace(pattern, new_pattern, 1) if pattern in made.text else None


def repaired(ck: Checker, err: ShapeError, span: tuple[int, int], left: Node, right: Node, mat: bool, hint: str,
             fix: tuple[int, int, str] | None) -> CheckShapeError:
    """The error for ``left op right``; when the hints found no fix, the names are asked which axes are swapped."""
    edits: list[Edit] = []
    if fix is None:
        found = swapped_axes(ck, left, right, mat)
        if found is not None:
            hint, fix, edits = found
    out = ck.fail(err, span[0], span[1], [left, right], hint, ("left", "right"), fix)
    out.edits = edits
    return out


def moved_last(ck: Checker, x: Node, k: int, what: str, span: tuple[int, int]) -> CheckShapeError:
    """``x`` has the size a module wants last on axis ``k``: undo the transpose that put it there, or add one."""
    n = len(x.shape)
    made = x.info.get("was", x)
    swap = made.info.get("swap")
    label = fmt_ax(x.names[k]) if x.names[k] is not None else f"axis {k}"
    msg = f"{what}, but {x.text} is {fmt_names(x.names) or x.shape} with it on axis {k} ({label})"
    if made.op in ("swapaxes", "transpose") and swap is not None and {s % n for s in swap} == {k, n - 1} \
            and made.children:
        new = made.children[0].text
        msg += f": one transpose too many, {made.text} should be {new}"
    else:
        made = x
        new = f"{_paren(x)}.{'transpose' if ck.torch else 'swapaxes'}({k}, -1)"
        msg += f": move it last, {new}"
    here = made is x or made.info.get("src") in (None, ck.src)
    err = ck.fail(ShapeError(msg), span[0], span[1], [x], fix=(made.start, made.end, new) if here else None)
    if not here:
        err.edits = [(made.info["line"], made.text, new)]
    return err


def kept_axis(ck: Checker, left: Node, right: Node) -> Repair | None:
    """A reduction on an earlier line that dropped the axis this line broadcasts over: keep it there."""
    for this, other in ((left, right), (right, left)):
        made = origin(this)
        info = made.info.get("reduce")
        fix = made.info.get("keepdims_fix")
        if made is this or not info or info[3] or fix is None or "line" not in made.info:
            continue
        fname, shape, axis, _ = info
        try:
            kept = rules.reduce(shape, axis, keepdims=True)
            rules.broadcast(kept, other.shape)
        except ShapeError:
            continue
        line = made.info["line"]
        return (f"; {this.text} is {made.text} from line {line}, which dropped the reduced axis: keep it there, "
                f"{fix[2]}", None, [(line, made.text, fix[2])])
    return None


def mismatch(ck: Checker, err: ShapeError, span: tuple[int, int], left: Node, right: Node, mat: bool,
             sym: str) -> CheckShapeError:
    """``left @ right`` or ``left sym right`` does not fit: the error with the likeliest fix (an operand
    transposed, a reduction on an earlier line that should keep its axis, axes moved by name)."""
    einops = EINOPS.search(ck.src) is not None
    if mat:
        hint, fix = hints.matmul_hint(left, right)
        if fix is None:
            hint, fix = hints.names_hint(left, right, ck.torch, einops, True)
        return repaired(ck, err, span, left, right, mat, hint, fix)
    hint, fix = hints.broadcast_hint(left, right, sym)
    if fix is None and ("was" in left.info or "was" in right.info):  # a reduction on an earlier line
        kept = kept_axis(ck, left, right)
        if kept is not None:
            out = ck.fail(err, span[0], span[1], [left, right], kept[0], ("left", "right"))
            out.edits = kept[2]
            return out
    if fix is None:
        hint, fix = hints.names_hint(left, right, ck.torch, einops, False) or (hint, fix)
        if fix is None:
            hint = hints.broadcast_hint(left, right, sym)[0]
    return repaired(ck, err, span, left, right, mat, hint, fix)


def coincidence(ck: Checker, clash: str, span: tuple[int, int], left: Node, right: Node,
                mat: bool) -> CheckShapeError:
    """The sizes fit but the axis names say they are different axes: an error, with a fix when names show one."""
    hint, fix = hints.matmul_hint(left, right) if mat else hints.NO_HINT
    if fix is None:
        hint, fix = hints.names_hint(left, right, ck.torch, EINOPS.search(ck.src) is not None, mat)
    return repaired(ck, ShapeError(f"the sizes fit only by coincidence: {clash}"), span, left, right, mat, hint, fix)
