"""Named axes: what each axis of a checked array holds, carried through every operation.

An axis's name is a tuple of atoms (``("T",)``, or ``("H", "Dh")`` for a merged axis) or None when nothing
names it (a literal size, a slice). Names come from ``--shape x=B,T,C`` and from jaxtyping annotations; the
checker moves them through transposes, keeps or drops them in matmul, broadcasting and reductions, and works
out in :func:`reshape_names` which input axes each output axis of a reshape takes its data from.

Row-major reshape only splits and merges adjacent axes in order. Each axis covers a stretch of the flattened
array, ``[lo, hi)`` in products of the sizes before it; a reshape is a clean split/merge exactly when the
boundaries of both sides, sorted, each divide the next. A reshape whose sizes fit but whose output names
put an input name somewhere else (``reshape(B, H, T, Dh)`` of ``(B, T, C)``) reorders data: that is the head
split without a transpose, and :func:`reorder_fix` writes out the two-step fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations

from explain.core.shape_rules import fmt_shape

Ax = tuple[str, ...] | None
Names = tuple[Ax, ...]

MAX_SEARCH_AXES = 6  # permutations searched for a fix: 6! = 720 reshapes of a few atoms each, instant


def unnamed(n: int) -> Names:
    return (None,) * n


def fmt_ax(ax: Ax) -> str:
    if ax is None:
        return "?"
    return ax[0] if len(ax) == 1 else "(" + " ".join(ax) + ")"


def fmt_names(names: Names) -> str:
    """``[B, T, (H Dh)]``; empty when no axis has a name (nothing worth printing)."""
    if all(a is None for a in names):
        return ""
    return "[" + ", ".join(fmt_ax(a) for a in names) + "]"


def is_atom(ax: Ax) -> bool:
    return ax is not None and len(ax) == 1


def merge_pair(x: Ax, sx: int, y: Ax, sy: int) -> tuple[Ax, str | None]:
    """The name of a broadcast axis from two aligned axes, and a conflict message if their names disagree."""
    if sx == 1 and sy != 1:
        return y, None
    if sy == 1 and sx != 1:
        return x, None
    if is_atom(x) and is_atom(y) and x != y:
        return x, f"{fmt_ax(x)} against {fmt_ax(y)}"
    return (x if x is not None else y), None


def broadcast_names(a: Sequence[int], an: Names, b: Sequence[int], bn: Names) -> tuple[Names, str | None]:
    """Names of ``broadcast(a, b)`` aligned from the right; the first axis whose names disagree, if any."""
    n = max(len(a), len(b))
    pa, pan = (1,) * (n - len(a)) + tuple(a), unnamed(n - len(a)) + tuple(an)
    pb, pbn = (1,) * (n - len(b)) + tuple(b), unnamed(n - len(b)) + tuple(bn)
    out: list[Ax] = []
    problem = None
    for i in range(n):
        name, clash = merge_pair(pan[i], pa[i], pbn[i], pb[i])
        if clash and problem is None:
            problem = f"axis {i - n} is {clash} (both size {pa[i]})"
        out.append(name)
    return tuple(out), problem


def _atoms(shape: Sequence[int], names: Names, sizes: Mapping[str, int]) -> list[tuple[str | None, int, int]]:
    """(name, size, axis) for each atom of each axis; an axis whose atoms' sizes do not multiply out is one
    unnamed atom. Size-1 atoms hold no order and are left out."""
    out: list[tuple[str | None, int, int]] = []
    for axis, (size, ax) in enumerate(zip(shape, names)):
        if ax is not None and len(ax) > 1 and all(a in sizes for a in ax):
            parts = [(a, sizes[a]) for a in ax]
            if _prod(s for _, s in parts) == size:
                out += [(a, s, axis) for a, s in parts if s != 1]
                continue
        if size != 1:
            out.append((ax[0] if is_atom(ax) else None, size, axis))
    return out


def _prod(xs: object) -> int:
    p = 1
    for x in xs:  # type: ignore[attr-defined]
        p *= x
    return p


def _spans(sizes: Sequence[int]) -> list[tuple[int, int]]:
    spans, lo = [], 1
    for s in sizes:
        spans.append((lo, lo * s))
        lo *= s
    return spans


class ReshapeView:
    """Which input axes each output axis of a reshape takes its data from, its names, and what is wrong."""

    __slots__ = ("names", "sources", "problem")

    def __init__(self, names: Names, sources: list[list[int]], problem: str | None) -> None:
        self.names, self.sources, self.problem = names, sources, problem


def reshape_names(in_shape: Sequence[int], in_names: Names, out_shape: Sequence[int], claims: Names,
                  sizes: Mapping[str, int]) -> ReshapeView:
    """Follow the data of ``reshape(in_shape -> out_shape)``; ``claims`` are the names the new sizes were
    written with (``reshape(B, H, T, Dh)``), None where a size was a literal."""
    atoms = _atoms(in_shape, in_names, sizes)
    spans = _spans([s for _, s, _ in atoms])
    out_spans = _spans(out_shape)
    bounds = sorted({x for sp in spans + out_spans for x in sp})
    chain = all(b % a == 0 for a, b in zip(bounds, bounds[1:]))
    in_label = [fmt_ax(in_names[ax]) if in_names[ax] is not None else f"axis {ax}" for _, _, ax in atoms]

    names: list[Ax] = []
    sources: list[list[int]] = []
    problem = None
    where: dict[str, list[tuple[int, int]]] = {}
    for (name, _, _), span in zip(atoms, spans):
        if name is not None:
            where.setdefault(name, []).append(span)
    for j, ((lo, hi), size) in enumerate(zip(out_spans, out_shape)):
        over = [k for k, (alo, ahi) in enumerate(spans) if alo < hi and lo < ahi] if size != 1 else []
        sources.append(sorted({atoms[k][2] for k in over}))
        whole = [k for k in over if lo <= spans[k][0] and spans[k][1] <= hi]
        exact = over and len(whole) == len(over) and spans[whole[0]][0] == lo and spans[whole[-1]][1] == hi
        derived: Ax = None
        if exact and all(atoms[k][0] is not None for k in whole):
            derived = tuple(atoms[k][0] for k in whole)  # type: ignore[misc]
        claim = claims[j] if j < len(claims) else None
        claim_ok = claim is not None and (len(claim) == 1 or _prod(sizes.get(a, 0) for a in claim) == size)
        if claim_ok and problem is None:
            # A name the input has must sit where the input has it; a new name may split or merge.
            cl_spans = _spans([size] if len(claim) == 1 else [sizes[a] for a in claim])  # type: ignore[arg-type]
            for a, (clo, chi) in zip(claim, cl_spans):  # type: ignore[arg-type]
                at = (lo * clo, lo * chi)
                if a in where and at not in where[a]:
                    got = " and ".join(dict.fromkeys(in_label[k] for k in over)) or "nothing"
                    problem = (f"output axis {j} is named {fmt_ax(claim)} but takes its data from {got}, not "
                               f"from {a}")
                    break
        if problem is None and not chain and len(over) > 1 and not exact \
                and any(atoms[k][0] is not None for k in over):
            parts = [in_label[k] if spans[k][0] >= lo and spans[k][1] <= hi else f"part of {in_label[k]}"
                     for k in over]
            problem = (f"output axis {j} (size {size}) takes its data from {' and '.join(parts)}: that is not a "
                       "split or merge of adjacent axes in order, so it mixes named data")
        names.append(claim if claim_ok else derived)
    return ReshapeView(tuple(names), sources, problem)


def reorder_fix(in_shape: Sequence[int], in_names: Names, out_shape: Sequence[int], claims: Names,
                sizes: Mapping[str, int]) -> tuple[str, tuple[int, ...]] | None:
    """The two-step fix for a reshape that reorders named data: ``("split", perm)`` means reshape to the
    output sizes taken in ``perm`` order, then transpose back with the inverse; ``("merge", perm)`` means
    transpose the input by ``perm`` first, then reshape. The fix that reorders the fewest pairs of axes wins."""
    if all(c is None for c in claims) or max(len(in_shape), len(out_shape)) > MAX_SEARCH_AXES:
        return None
    found: list[tuple[int, str, tuple[int, ...]]] = []
    for perm in permutations(range(len(out_shape))):
        moved = _inversions(perm)
        if moved and reshape_names(in_shape, in_names, [out_shape[p] for p in perm], tuple(claims[p] for p in perm),
                                   sizes).problem is None:
            found.append((moved, "split", perm))
            if moved == 1:
                break
    for perm in permutations(range(len(in_shape))):
        moved = _inversions(perm)
        if moved and reshape_names([in_shape[p] for p in perm], tuple(in_names[p] for p in perm), out_shape, claims,
                                   sizes).problem is None:
            found.append((moved, "merge", perm))
            if moved == 1:
                break
    if not found:
        return None
    # Fewest pairs reordered; on a tie, split when the reshape adds axes, merge when it removes them.
    prefer = "split" if len(out_shape) >= len(in_shape) else "merge"
    moved, kind, perm = min(found, key=lambda f: (f[0], f[1] != prefer))
    return kind, perm


def _inversions(perm: Sequence[int]) -> int:
    """How many pairs of axes a permutation puts out of order: the fix that reorders least keeps the rest in
    their order (KV before its repeats, not after)."""
    return sum(1 for i in range(len(perm)) for j in range(i + 1, len(perm)) if perm[i] > perm[j])


def inverse(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(perm.index(i) for i in range(len(perm)))


def swap_of(perm: Sequence[int]) -> tuple[int, int] | None:
    """The two axes a permutation swaps, if it swaps exactly two."""
    moved = [i for i, p in enumerate(perm) if p != i]
    return (moved[0], moved[1]) if len(moved) == 2 else None


def binop_names(op: str, ls: Sequence[int], ln: Names, rs: Sequence[int], rn: Names) -> tuple[Names, str | None]:
    """The names of ``left op right`` (op "matmul", else a broadcast), and where the operands' names disagree
    on axes whose sizes agree (the sizes fit only by coincidence)."""
    if op != "matmul":
        names, clash = broadcast_names(ls, ln, rs, rn)
        return names, clash and f"{fmt_shape(tuple(ls))} and {fmt_shape(tuple(rs))} broadcast, but {clash}"
    a, an = (tuple(ls), ln) if len(ls) > 1 else ((1,) + tuple(ls), (None,) + ln)
    b, bn = (tuple(rs), rn) if len(rs) > 1 else (tuple(rs) + (1,), rn + (None,))
    _, inner = merge_pair(an[-1], a[-1], bn[-2], b[-2])
    if inner:
        return unnamed(0), (f"matmul contracts the left's last axis with the right's second-to-last, and they "
                            f"are {inner} (size {a[-1]})")
    batch, clash = broadcast_names(a[:-2], an[:-2], b[:-2], bn[:-2])
    if clash:
        return unnamed(0), f"the matmul batch axes broadcast, but {clash}"
    names = batch + (an[-2], bn[-1])
    if len(ls) == 1:
        names = names[:-2] + names[-1:]
    if len(rs) == 1:
        names = names[:-1]
    return names, None
