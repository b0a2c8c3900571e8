"""einops's ``rearrange``, ``repeat``, ``reduce`` and ``einsum``, and the letter form of ``np.einsum`` /
``torch.einsum``, with those libraries' rules, on shapes alone (einops itself is never imported).

einops's rules, as its documentation and errors state them: every input axis is named on the left (``...``
takes the rest); a group ``(h d)`` splits an axis, with at most one length unknown and the rest given as
keywords (``h=12``); rearrange names the same axes on both sides; repeat may add axes on the right, each with
a length; reduce drops axes; names are never repeated on one side.
"""

from __future__ import annotations

import ast
import re
from itertools import permutations
from typing import TYPE_CHECKING

from explain.check.args import claim, static_int
from explain.check.names import Ax
from explain.core.errors import ShapeError, UsageError
from explain.core.limits import parse_whole

if TYPE_CHECKING:
    from collections.abc import Iterable

    from explain.check.expr import Checker, Node

Span = tuple[int, int]
Group = list[str]  # the names in one axis of a pattern; "..." is the ellipsis; "1" an anonymous axis
REDUCTIONS = ("min", "max", "sum", "mean", "prod", "any", "all")
_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def parse_side(text: str, where: str) -> list[Group]:
    groups: list[Group] = []
    open_group: Group | None = None
    for tok in _TOKEN.findall(text):
        if tok == "(":
            if open_group is not None:
                raise UsageError(f"einops pattern {where} {text.strip()!r}: brackets do not nest")
            open_group = []
        elif tok == ")":
            if open_group is None:
                raise UsageError(f"einops pattern {where} {text.strip()!r}: a ')' without its '('")
            groups.append(open_group)
            open_group = None
        elif tok == "..." or tok.isidentifier() or tok.isdigit():
            if tok.isdigit():  # '²' is a digit to str, not to int(); 5,000 digits overflow int()
                parse_whole(tok, f"einops pattern {where} {text.strip()[:40]!r}: the size")
            if open_group is not None:
                open_group.append(tok)
            else:
                groups.append([tok])
        else:
            raise UsageError(f"einops pattern {where} {text.strip()!r}: {tok!r} is not an axis name")
    if open_group is not None:
        raise UsageError(f"einops pattern {where} {text.strip()!r}: a '(' is never closed")
    names = [n for g in groups for n in g if not n.isdigit()]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise UsageError(f"einops pattern {where} {text.strip()!r} names {dup!r} twice")
    return groups


def _pattern(ck: Checker, node: ast.expr | None, fname: str) -> str:
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        raise UsageError(f"{fname}() needs its pattern as a string literal, like \"b t (h d) -> b h t d\"")
    return node.value


def einops_call(ck: Checker, call: ast.Call, fname: str, span: Span) -> Node:
    if fname == "einsum":
        if len(call.args) < 2:
            raise UsageError('einops.einsum() takes the tensors, then the pattern: einsum(q, k, "b t d, b s d -> b t s")')
        *tensors, pat = call.args
        return _einsum(ck, call, _pattern(ck, pat, fname), [ck.visit(t) for t in tensors], span, spaced=True,
                       pattern_node=pat)
    if len(call.args) < 2:
        raise UsageError(f'{fname}() takes a tensor and a pattern, like {fname}(x, "b t (h d) -> b h t d", h=12)')
    if fname == "reduce" and len(call.args) < 3 and not any(k.arg == "reduction" for k in call.keywords):
        raise UsageError('reduce() needs the reduction after the pattern, like reduce(x, "b t d -> b d", "mean")')
    x = ck.visit(call.args[0])
    pattern = _pattern(ck, call.args[1], fname)
    lengths: dict[str, tuple[int, Ax]] = {}
    for kw in call.keywords:
        if kw.arg == "reduction":
            continue
        lengths[kw.arg] = (static_int(ck, kw.value, f"axis length {kw.arg}"), claim(ck, kw.value))  # type: ignore[index]
    return apply_pattern(ck, call, fname, x, pattern, lengths, span)


def _fail(ck: Checker, msg: str, span: Span, x: Node, fix: tuple[int, int, str] | None = None) -> Exception:
    return ck.fail(ShapeError(msg + (f"; {fix[2]}" if fix else "")), span[0], span[1], [x], fix=fix)


def _with_length(ck: Checker, call: ast.AST, names: list[str]) -> tuple[int, int, str] | None:
    """The call with ``h=H`` added, when one of the lengths einops could not infer matches a --dim name."""
    if not isinstance(call, ast.Call):
        return None
    for n in names:
        dim = next((d for d in ck.b.dims if d == n or d.lower() == n.lower()), None)
        if dim is not None:
            start, end = ck.span(call)
            return start, end, f"{ck.src[start:end - 1].rstrip()}, {n}={dim})"
    return None


def _without_length(ck: Checker, call: ast.AST, group: list[str], have: int,
                    lengths: dict[str, tuple[int, Ax]]) -> tuple[int, int, str] | None:
    """The call without the one keyword length that makes a group not fit, when einops could infer it."""
    if not isinstance(call, ast.Call):
        return None
    for n in reversed(group):
        rest = 1
        for m in group:
            rest *= int(m) if m.isdigit() else lengths[m][0] if m != n and m in lengths else 1
        kw = next((k for k in call.keywords if k.arg == n), None)
        if kw is None or not rest or have % rest:
            continue
        start, end = ck.span(call)
        k_start, k_end = ck.span(kw.value)
        k_start = ck.src.rfind(",", start, k_start)
        return start, end, ck.src[start:k_start] + ck.src[k_end:end]
    return None


def apply_pattern(ck: Checker, call: ast.AST, fname: str, x: Node, pattern: str,
                  lengths: dict[str, tuple[int, Ax]], span: Span) -> Node:
    """``x`` through an einops pattern: the left side read against x's axes, the right side written out."""
    left, right = _sides(fname, pattern, lengths)
    n_fixed = sum(1 for g in left if g != ["..."])
    ell = any("..." in g for g in left)
    if len(x.shape) != n_fixed and not (ell and len(x.shape) >= n_fixed):
        raise _fail(ck, f"einops {fname}: the pattern's left side {pattern.split('->')[0].strip()!r} has {n_fixed} "
                    f"axes{' or more' if ell else ''}, but the input is {len(x.shape)}-D {x.shape}", span, x)
    size: dict[str, int] = {k: v for k, (v, _) in lengths.items()}
    name: dict[str, Ax] = {k: c for k, (_, c) in lengths.items() if c is not None}
    ell_axes = _read_left(ck, call, fname, x, left, lengths, size, name, span)
    if fname == "repeat":
        new = sorted({n for g in right for n in g if not n.isdigit() and n not in size} - {"..."})
        if new:
            raise UsageError(f"einops repeat: specify sizes for new axes {new}, like {new[0]}=N")
    shape: list[int] = []
    names: list[Ax] = []
    for g in right:
        if g == ["..."]:
            shape += ell_axes[0]
            names += ell_axes[1]
            continue
        shape.append(_prod(int(n) if n.isdigit() else size[n] for n in g))
        atoms = [name.get(n) for n in g]
        names.append(tuple(x for a in atoms for x in a) if g and all(a is not None for a in atoms) else None)
    node = ck.make(call, fname, tuple(shape), [x], repr(pattern), names=tuple(names))
    if any(c is not None for _, c in lengths.values()) or any(len(g) > 1 for g in left + right):
        from explain.check import headsplit  # lazy: only named lengths and groups load the rules

        headsplit.einops_lengths(ck, call, left, right, lengths, size, span, x)
    return node


def _sides(fname: str, pattern: str, lengths: dict[str, tuple[int, Ax]]) -> tuple[list[Group], list[Group]]:
    """The pattern's two sides, with einops's own checks of which names may be on which side."""
    if pattern.count("->") != 1:
        raise UsageError(f"einops pattern {pattern!r} needs exactly one '->'")
    left_text, right_text = pattern.split("->")
    left, right = parse_side(left_text, "left side"), parse_side(right_text, "right side")
    lnames = {n for g in left for n in g if not n.isdigit()}
    rnames = {n for g in right for n in g if not n.isdigit()}
    if fname == "rearrange" and lnames != rnames:
        raise UsageError(f"einops: identifiers only on one side of {pattern!r} (should be on both): "
                         f"{sorted(lnames ^ rnames)}")
    if fname == "repeat" and not lnames <= rnames:
        raise UsageError(f"einops repeat: {sorted(lnames - rnames)} on the left of {pattern!r} are missing on the right")
    if fname == "reduce" and not rnames <= lnames:
        raise UsageError(f"einops reduce: {sorted(rnames - lnames)} on the right of {pattern!r} are not on the left")
    if ("..." in lnames) != ("..." in rnames):
        raise UsageError(f"einops: the ellipsis in {pattern!r} must be on both sides")
    unknown = set(lengths) - lnames - rnames
    if unknown:
        raise UsageError(f"einops: axis length given for {sorted(unknown)}, which {pattern!r} does not name")
    return left, right


def _read_left(ck: Checker, call: ast.AST, fname: str, x: Node, left: list[Group],
               lengths: dict[str, tuple[int, Ax]], size: dict[str, int], name: dict[str, Ax],
               span: Span) -> tuple[tuple[int, ...], tuple[Ax, ...]]:
    """Match the left side's groups to x's axes, filling ``size`` and ``name``; the axes ``...`` stands for."""
    n_fixed = sum(1 for g in left if g != ["..."])
    axis = 0
    ell: tuple[tuple[int, ...], tuple[Ax, ...]] = ((), ())
    for g in left:
        if g == ["..."]:
            k = len(x.shape) - n_fixed
            ell = x.shape[axis:axis + k], x.names[axis:axis + k]
            axis += k
            continue
        have = x.shape[axis]
        known = _prod(int(n) if n.isdigit() else size[n] for n in g if n.isdigit() or n in size)
        missing = [n for n in g if not n.isdigit() and n not in size]
        if len(missing) > 1:
            raise _fail(ck, f"einops {fname}: could not infer sizes for {missing}: give all but one as keywords, like "
                        f"{missing[0]}=N", span, x, _with_length(ck, call, missing))
        if missing:
            if known == 0 or have % known:
                raise _fail(ck, f"einops {fname}: can't divide axis {axis} of length {have} in chunks of {known} "
                            f"({' '.join(g)})", span, x)
            size[missing[0]] = have // known
        elif known != have:
            raise _fail(ck, f"einops {fname}: shape mismatch on axis {axis}: {' · '.join(g)} = {known}, but the "
                        f"axis has length {have}", span, x, _without_length(ck, call, g, have, lengths))
        if len(g) == 1 and not g[0].isdigit():
            name.setdefault(g[0], x.names[axis])
        axis += 1
    return ell


def _prod(sizes: Iterable[int]) -> int:
    total = 1
    for s in sizes:
        total *= s
    return total


def letters_einsum(ck: Checker, call: ast.Call, span: Span) -> Node:
    if not call.args or not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        raise UsageError('einsum() needs its subscripts as a string literal first, like einsum("ij,jk->ik", a, b)')
    ops = call.args[1:]
    if len(ops) == 1 and isinstance(ops[0], (ast.List, ast.Tuple)):
        ops = list(ops[0].elts)  # torch.einsum also takes the operands as one list
    return _einsum(ck, call, call.args[0].value, [ck.visit(o) for o in ops], span, spaced=False,
                   pattern_node=call.args[0])


def _sizes_fit(terms: list[list[str]], tensors: list[Node]) -> bool:
    size: dict[str, int] = {}
    for t, x in zip(terms, tensors):
        if len(t) != len(x.shape):
            return False
        for n, s in zip(t, x.shape):
            if size.setdefault(n, s) != s:
                return False
    return True


def _einsum_fix(ck: Checker, spec: str, terms: list[list[str]], tensors: list[Node], spaced: bool,
                node: ast.expr | None) -> tuple[int, int, str] | None:
    """One operand's axis names reordered (``v d`` for ``d v``: a weight stored the other way round) so the
    einsum fits; the pattern rewritten with it."""
    if node is None:
        return None
    lhs, _, rhs = spec.partition("->")
    for i, t in reversed(list(enumerate(terms))):  # the operand where the clash showed first
        if len(t) > 4:
            continue
        for perm in permutations(t):
            if list(perm) == t:
                continue
            trial = terms[:i] + [list(perm)] + terms[i + 1:]
            if _sizes_fit(trial, tensors):
                sep = " " if spaced else ""
                pieces = [sep.join(x) for x in trial]
                new = (", " if spaced else ",").join(pieces) + (f" -> {rhs.strip()}" if spaced else f"->{rhs}")
                start, end = ck.span(node)
                quote = ck.src[start]
                return start, end, f"{quote}{new}{quote}"
    return None


def _einsum(ck: Checker, call: ast.AST, spec: str, tensors: list[Node], span: Span, spaced: bool,
            pattern_node: ast.expr | None = None) -> Node:
    if "." in spec:
        raise UsageError(f"not supported: the ellipsis in einsum {spec!r}; name every axis")
    lhs, arrow, rhs = spec.partition("->")
    terms = [t.split() if spaced else list(t.replace(" ", "")) for t in lhs.split(",")]
    if len(terms) != len(tensors):
        raise UsageError(f"einsum {spec!r} has {len(terms)} operand(s) but is given {len(tensors)} tensor(s)")
    for t in terms:
        for n in t:
            if not (n.isidentifier() if spaced else n.isalpha()):
                raise UsageError(f"einsum {spec!r}: {n!r} is not an axis {'name' if spaced else 'letter'}")
    if arrow:
        out = rhs.split() if spaced else list(rhs.replace(" ", ""))
    else:  # implicit output: the letters that appear once, in alphabetical order
        flat = [n for t in terms for n in t]
        out = sorted(n for n in dict.fromkeys(flat) if flat.count(n) == 1)
    size: dict[str, int] = {}
    name: dict[str, Ax] = {}
    first: dict[str, int] = {}  # the operand that set each axis's size
    for i, (t, x) in enumerate(zip(terms, tensors)):
        if len(t) != len(x.shape):
            raise ck.fail(ShapeError(f"einsum operand {i} is written with {len(t)} axes ({' '.join(t)}) but has shape "
                                     f"{x.shape}"), span[0], span[1], tensors)
        here: dict[str, int] = {}
        for n, s, a in zip(t, x.shape, x.names):
            if here.get(n, s) != s:
                raise ck.fail(ShapeError(f"einsum {spec!r}: {n} repeats in operand {i} with sizes {here[n]} and {s}; "
                                         "a repeated axis takes the diagonal, so both must be equal"),
                              span[0], span[1], tensors)
            here[n] = s
            if n in size and size[n] != s and 1 not in (size[n], s):
                fix = _einsum_fix(ck, spec, terms, tensors, spaced, pattern_node) if "->" in spec else None
                raise ck.fail(ShapeError(f"einsum {spec!r}: axis {n} has size {size[n]} in operand {first[n]} and {s} in "
                                         f"operand {i}" + (f"; did you mean {fix[2]}?" if fix else "")),
                              span[0], span[1], tensors, fix=fix)
            if size.get(n, 1) == 1:
                size[n], first[n] = s, i
            if a is not None:
                name.setdefault(n, a)
    bad = [n for n in out if n not in size]
    if bad:
        raise UsageError(f"einsum {spec!r}: output axis {bad[0]!r} appears in no operand")
    return ck.make(call, "einsum", tuple(size[n] for n in out), tensors, repr(spec),
                   names=tuple(name.get(n) for n in out))
