"""The calls that move, split, merge, add or drop axes, with numpy's and PyTorch's rules, carrying axis names.

Each takes the checked operand (a :class:`~explain.check.expr.Node`) and the call's static arguments and
returns the result node. Where numpy and PyTorch differ the caller says which library's rule applies:
``squeeze(d)`` of an axis that is not 1 is an error in numpy and a no-op in PyTorch; ``repeat_interleave``
and ``expand`` are PyTorch's. A reshape whose sizes fit but whose names say it reorders data raises with
the two-step fix (:func:`explain.check.names.reorder_fix`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from explain.check.args import bind, claim, int_axis, static_int
from explain.check.names import Ax, Names, fmt_ax, inverse, reorder_fix, reshape_names, swap_of
from explain.check.node import Node
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError
from explain.core.shape_rules import Shape, fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def apply(ck: Checker, span: Span, operands: list[Node], rule: Callable[..., Shape], *args: Any) -> Shape:
    """Run a shape rule; on failure, a caret under the function's name and the operands' shapes."""
    try:
        return rule(*args)
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], operands) from None


def softmax_over(ck: Checker, node: Node, axis: int, arg: ast.expr | None, span: Span) -> Node:
    """A softmax's node, its axis checked by name when it is not the last (attention normalises over the keys,
    a classifier over the vocabulary: the last axis, nearly always)."""
    n = len(node.shape)
    if n > 1 and axis % n != n - 1 and node.names[axis % n] is not None:
        from explain.check import semantic  # lazy: only a softmax off the last axis loads the rules

        semantic.softmax_axis(ck, node, axis % n, arg, span)
    return node


def paren(node: Node) -> str:
    return node.text if node.atomic else f"({node.text})"


def transpose(ck: Checker, call: ast.AST, this: Node, axes: tuple[int, ...] | None, span: Span,
              op: str = "transpose") -> Node:
    shape = apply(ck, span, [this], rules.transpose, this.shape, axes)
    order = range(len(this.shape) - 1, -1, -1) if axes is None else [a % len(this.shape) for a in axes]
    names = tuple(this.names[i] for i in order)
    return ck.make(call, op, shape, [this], "" if axes is None else f"axes={axes}", names=names)


def swapaxes(ck: Checker, call: ast.AST, this: Node, i: int, j: int, span: Span) -> Node:
    shape = apply(ck, span, [this], rules.swapaxes, this.shape, i, j)
    names = list(this.names)
    a, b = i % len(names), j % len(names)
    names[a], names[b] = names[b], names[a]
    return ck.make(call, "swapaxes", shape, [this], f"axes {i}, {j}", names=tuple(names), swap=(i, j))


def _fix_text(ck: Checker, this: Node, method: str, texts: list[str], kind: str, perm: tuple[int, ...]) -> str:
    """The two-step fix, in the spelling of the library the line is written in."""
    torch = ck.torch or method == "view"
    if kind == "split":
        back = inverse(perm)
        swap = swap_of(back)
        move = f".transpose({swap[0]}, {swap[1]})" if torch and swap else (
            f".permute({', '.join(map(str, back))})" if torch else f".transpose({', '.join(map(str, back))})")
        return f"{paren(this)}.{method}({', '.join(texts[p] for p in perm)}){move}"
    swap = swap_of(perm)
    move = f".transpose({swap[0]}, {swap[1]})" if torch and swap else (
        f".permute({', '.join(map(str, perm))})" if torch else f".transpose({', '.join(map(str, perm))})")
    then = ".contiguous().view" if method == "view" else f".{method}"
    return f"{paren(this)}{move}{then}({', '.join(texts)})"


def reshape(ck: Checker, call: ast.AST, this: Node, new: tuple[int, ...], claims: tuple[Ax, ...],
            texts: list[str], span: Span, method: str = "reshape") -> Node:
    try:
        shape = rules.reshape(this.shape, new)
    except ShapeError as err:
        raise ck.fail(ShapeError(f"{err}{_width_hint(ck, this, new, claims)}"), span[0], span[1], [this]) from None
    view = reshape_names(this.shape, this.names, shape, claims, ck.sizes)
    if view.problem:
        fix = reorder_fix(this.shape, this.names, shape, claims, ck.sizes)
        hint, repl = "", None
        if fix:
            repl = _fix_text(ck, this, method, texts, *fix)
            kind, perm = fix
            how = (f"reshape to ({', '.join(texts[p] for p in perm)}) first, then move the axes" if kind == "split"
                   else f"move the axes to ({', '.join(fmt_ax(this.names[p]) for p in perm)}) first, then reshape")
            hint = f"; {how}: {repl}"
        start, end = ck.span(call)
        raise ck.fail(ShapeError(f"{method} of {fmt_shape(this.shape)} to {fmt_shape(shape)} fits by size, but "
                                 f"{view.problem}{hint}"), span[0], span[1], [this],
                      fix=(start, end, repl) if repl else None) from None
    parts = []
    for j, src in enumerate(view.sources):
        if view.names[j] is not None and [this.names[i] for i in src] != [view.names[j]]:
            parts.append(f"{fmt_ax(view.names[j])}←{'·'.join(fmt_ax(this.names[i]) for i in src) or '1'}")
    detail = ", ".join(parts) if parts else (f"to {new}" if -1 in new else "")
    node = ck.make(call, method, shape, [this], detail, names=view.names)
    if method == "view":
        from explain.check.layout import check_view  # lazy: only .view() needs the strides (bench_check_startup)

        check_view(ck, node, this, span)
    if any(len(src) > 1 for src in view.sources) or len({tuple(s) for s in view.sources if s}) < sum(
            1 for s in view.sources if s):
        from explain.check import headsplit  # lazy: only a split or merge loads the rules (bench_check_startup)

        headsplit.reshape_order(ck, node, this, view.sources, claims, texts, method, span)
    return node


def _width_hint(ck: Checker, this: Node, new: tuple[int, ...], claims: tuple[Ax, ...]) -> str:
    """For ``x.reshape(B, T, H, Dh)`` with H·Dh ≠ C: the arithmetic, and the width that would fit."""
    names = [fmt_ax(a) if a is not None else None for a in this.names]
    outs = [fmt_ax(c) if c is not None else None for c in claims]
    i = 0
    while i < min(len(names), len(outs)) and names[i] is not None and names[i] == outs[i]:
        i += 1
    rest_in, rest_out = names[i:], outs[i:]
    if len(rest_in) != 1 or len(rest_out) < 2 or None in rest_in or None in rest_out or -1 in new:
        return ""
    c, parts = this.shape[i], new[i:]
    prod = 1
    for p in parts:
        prod *= p
    text = f"; {'·'.join(rest_out)} = {'·'.join(map(str, parts))} = {prod} ≠ {rest_in[0]} = {c}"  # type: ignore[arg-type]
    others = 1
    for p in parts[:-1]:
        others *= p
    if c % others == 0:
        text += f"; {rest_out[-1]} = {rest_in[0]} / {'·'.join(rest_out[:-1])} = {c // others}"  # type: ignore[arg-type]
    return text


def reduce(ck: Checker, call: ast.AST, fname: str, this: Node, axis: int | tuple[int, ...] | None, keepdims: bool,
           span: Span, keep_fix: tuple[int, int, str] | None = None) -> Node:
    if not this.shape and axis in (0, -1) and fname != "mean":
        # numpy's ufunc reductions (sum, max) accept a plain axis 0 or -1 on a 0-d array; mean does not.
        shape: Shape = ()
    else:
        shape = apply(ck, span, [this], rules.reduce, this.shape, axis, keepdims)
    n = len(this.shape)
    gone = set(range(n)) if axis is None or not n else {a % n for a in (axis if isinstance(axis, tuple) else (axis,))}
    names: Names = tuple(None if i in gone else a for i, a in enumerate(this.names)) if keepdims else tuple(
        a for i, a in enumerate(this.names) if i not in gone)
    detail = f"axis={axis}" + (", keepdims" if keepdims else "")
    node = ck.make(call, fname, shape, [this], detail, names=names, reduce=(fname, this.shape, axis, keepdims),
                   keepdims_fix=keep_fix)
    if fname in ("mean", "var", "std") and n > 1 and any(i != n - 1 and this.names[i] is not None for i in gone):
        ck.pending.append(node)  # a statistic over a named axis that is not the last: reviewed as a normalisation
    return node


def unsqueeze(ck: Checker, call: ast.AST, this: Node, dim: int, span: Span) -> Node:
    n = len(this.shape) + 1
    try:
        k = rules.normalize_axis(dim, n)
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], [this]) from None
    return ck.make(call, "unsqueeze", this.shape[:k] + (1,) + this.shape[k:], [this], f"dim={dim}",
                   names=this.names[:k] + (None,) + this.names[k:])


def squeeze(ck: Checker, call: ast.AST, this: Node, dims: tuple[int, ...] | None, span: Span, torch: bool) -> Node:
    n = len(this.shape)
    if dims is None:
        keep = [i for i in range(n) if this.shape[i] != 1]
    else:
        try:
            picked = {rules.normalize_axis(d, max(n, 1)) for d in dims}
        except ShapeError as err:
            raise ck.fail(err, span[0], span[1], [this]) from None
        bad = [d for d in picked if d < n and this.shape[d] != 1]
        if bad and not torch:
            raise ck.fail(ShapeError(f"cannot squeeze axis {bad[0]} of {fmt_shape(this.shape)}: its size is "
                                     f"{this.shape[bad[0]]}, not 1"), span[0], span[1], [this])
        # PyTorch leaves an axis that is not 1 in place (silently): numpy refuses.
        keep = [i for i in range(n) if i not in picked or this.shape[i] != 1]
    return ck.make(call, "squeeze", tuple(this.shape[i] for i in keep), [this], "" if dims is None else f"{dims}",
                   names=tuple(this.names[i] for i in keep))


def expand(ck: Checker, call: ast.AST, this: Node, sizes: tuple[int, ...], claims: tuple[Ax, ...], span: Span) -> Node:
    """PyTorch's ``expand``: new axes only in front; -1 keeps a size; only size-1 axes grow."""
    lead = len(sizes) - len(this.shape)
    if lead < 0:
        raise ck.fail(ShapeError(f"expand to {len(sizes)} sizes cannot drop axes of {fmt_shape(this.shape)}"),
                      span[0], span[1], [this])
    out, names = [], []
    for i, s in enumerate(sizes):
        old = this.shape[i - lead] if i >= lead else None
        if s == -1:
            if old is None:
                raise ck.fail(ShapeError(f"expand: -1 is not allowed for the new leading axis {i}"), *span, [this])
            out.append(old)
            names.append(this.names[i - lead])
        elif old is None or old == 1 or old == s:
            out.append(s)
            names.append(claims[i] if claims[i] is not None or old in (None, 1) else this.names[i - lead])
        else:
            raise ck.fail(ShapeError(f"expand of {fmt_shape(this.shape)} to {fmt_shape(sizes)}: axis {i} has size "
                                     f"{old}, and only axes of size 1 can be expanded (to {s})"), *span, [this])
    return ck.make(call, "expand", tuple(out), [this], names=tuple(names))


def repeat_interleave(ck: Checker, call: ast.AST, this: Node, repeats: int, dim: int | None, span: Span) -> Node:
    if dim is None:  # PyTorch flattens first
        total = 1
        for s in this.shape:
            total *= s
        return ck.make(call, "repeat_interleave", (total * repeats,), [this], "flattened")
    try:
        k = rules.normalize_axis(dim, len(this.shape))
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], [this]) from None
    shape = this.shape[:k] + (this.shape[k] * repeats,) + this.shape[k + 1:]
    return ck.make(call, "repeat_interleave", shape, [this], f"×{repeats} on axis {dim}",
                   names=this.names[:k] + (None,) + this.names[k + 1:])


def join(ck: Checker, call: ast.AST, fname: str, parts: list[Node], axis: int | None, span: Span) -> Node:
    """concatenate/cat (axis None: numpy flattens every array first) and stack."""
    shapes = [p.shape for p in parts]
    if fname == "stack":
        shape = apply(ck, span, parts, rules.stack, shapes, axis or 0)
        k = (axis or 0) % (len(parts[0].shape) + 1)
        return ck.make(call, fname, shape, parts, f"axis={axis}", names=parts[0].names[:k] + (None,)
                       + parts[0].names[k:])
    if axis is None:
        return ck.make(call, fname, (sum(_size(s) for s in shapes),), parts, "axis=None (flattened)")
    shape = apply(ck, span, parts, rules.concatenate, shapes, axis)
    k = axis % len(shape)
    names = tuple(None if i == k else a for i, a in enumerate(parts[0].names))
    return ck.make(call, fname, shape, parts, f"axis={axis}", names=names)


def _size(shape: Shape) -> int:
    total = 1
    for s in shape:
        total *= s
    return total



def split(ck: Checker, tree: ast.Call, want: int | None) -> list[Node]:
    """PyTorch's ``t.split(size_or_sizes, dim)`` and ``t.chunk(n, dim)``, unpacked into ``want`` pieces; a
    piece split off with a size name (``split(C, dim=2)``) is named by it."""
    assert isinstance(tree.func, ast.Attribute)
    this = ck.visit(tree.func.value)
    kind = tree.func.attr
    params = ("split_size", "dim") if kind == "split" else ("chunks", "dim")
    args = bind(f".{kind}", tree, (params, 1, ()), list(tree.args), {"split_size_or_sections": "split_size",
                                                                     "axis": "dim"})
    span = (ck.span(tree.func)[1] - len(kind), ck.span(tree.func)[1])
    try:
        k = rules.normalize_axis(int_axis(ck, args.get("dim"), 0, kind), len(this.shape))
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], [this]) from None
    n = this.shape[k]
    first = args[params[0]]
    if kind == "split" and isinstance(first, (ast.List, ast.Tuple)):
        sizes = [static_int(ck, e, "split sizes") for e in first.elts]
        names = [claim(ck, e) for e in first.elts]
    else:
        step = static_int(ck, first, "split size")
        if kind == "chunk":
            step = -(-n // step) if step > 0 else 0
        if step <= 0:
            raise UsageError(f"{kind}() needs a positive size, got {step}")
        sizes = [min(step, n - i) for i in range(0, n, step)]
        names = [claim(ck, first) if kind == "split" else None] * len(sizes)
    if sum(sizes) != n or len(sizes) != (want or len(sizes)):
        raise ck.fail(ShapeError(f"{kind} of axis {k} (size {n}) gives {len(sizes)} pieces of sizes {sizes}, but "
                                 f"{want} names receive them"), span[0], span[1], [this])
    return [Node(ck.text(tree), kind, this.shape[:k] + (size,) + this.shape[k + 1:], [this],
                 names=this.names[:k] + (name,) + this.names[k + 1:]) for size, name in zip(sizes, names)]
