"""Sizes written in the code: ``view(B, T, H, Dh)``, ``view(new_shape)``, ``view(*shape, -1)``,
``view(x.size()[:-1] + (H, Dh))``, and the arrays made from sizes (``ones``, ``zeros``, ``arange``).

Each size keeps the axis name it stands for (:func:`explain.check.args.claim`), so a shape held by a name claims
names as the sizes written out do. Shapes assigned to names in a function are kept by :mod:`explain.check.values`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.args import claim, static_int
from explain.check.names import Ax
from explain.core.errors import ExplainError, UsageError

if TYPE_CHECKING:
    from explain.check.expr import Checker
    from explain.check.node import Node

Entry = tuple[int, Ax, str]  # a size, the axis name it stands for, how to write it


def static_shape(ck: Checker, node: ast.expr) -> list[Entry] | None:
    """The entries of a shape written in the code, or None if ``node`` is not one."""
    if isinstance(node, ast.Name) and node.id in ck.shapes:
        return ck.shapes[node.id]
    if isinstance(node, ast.Attribute) and node.attr == "shape" or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
            and not node.args and not node.keywords):
        base = node.value if isinstance(node, ast.Attribute) else node.func.value  # type: ignore[union-attr]
        if isinstance(base, ast.Name) and base.id in ck.configs:
            return None
        arr = ck.visit(base)
        text = ck.text(base)
        return [(s, a, f"{text}.shape[{i}]") for i, (s, a) in enumerate(zip(arr.shape, arr.names))]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        inner = static_shape(ck, node.value)
        if inner is None:
            return None
        bounds = [None if b is None else static_int(ck, b, "a slice bound")
                  for b in (node.slice.lower, node.slice.upper, node.slice.step)]
        return inner[slice(*bounds)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = static_shape(ck, node.left), static_shape(ck, node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Tuple):
        out: list[Entry] = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                inner = static_shape(ck, e.value)
                if inner is None:
                    return None
                out += inner
            else:
                try:
                    out.append((static_int(ck, e, "a size"), claim(ck, e), ck.text(e)))
                except ExplainError:
                    return None
        return out
    return None


def is_shape_text(node: ast.expr) -> bool:
    """Cheap: could ``node`` be a shape (so it is worth trying :func:`static_shape`)?"""
    return isinstance(node, (ast.Tuple, ast.BinOp, ast.Subscript)) or (
        isinstance(node, ast.Attribute) and node.attr == "shape") or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"
        and not node.args)


def expand_shape_args(ck: Checker, args: list[ast.expr]) -> tuple[tuple[int, ...], tuple[Ax, ...], list[str]] | None:
    """``view(new_shape)`` / ``view(*shape, -1)`` / ``view(x.size()[:-1] + (H, Dh))``: the sizes, names and
    texts, or None when the arguments hold no shape value."""
    entries: list[Entry] = []
    if len(args) == 1 and not isinstance(args[0], ast.Starred) and is_shape_text(args[0]) or (
            len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id in ck.shapes):
        found = static_shape(ck, args[0])
        if found is None:
            return None
        entries = found
    elif any(isinstance(a, ast.Starred) for a in args):
        for a in args:
            if isinstance(a, ast.Starred):
                found = static_shape(ck, a.value)
                if found is None:
                    raise UsageError(f"not supported: *{ck.text(a.value)}: only a shape can be unpacked here")
                entries += found
            else:
                entries.append((static_int(ck, a, "a size"), claim(ck, a), ck.text(a)))
    else:
        return None
    return tuple(s for s, _, _ in entries), tuple(a for _, a, _ in entries), [t for _, _, t in entries]


def size_args(ck: Checker, args: list[ast.expr], what: str) -> tuple[tuple[int, ...], tuple[Ax, ...], list[str]]:
    """Sizes written as ``f(2, T, -1)``, ``f((2, T, -1))`` or ``f(x.shape)``: the sizes, the names they claim,
    and each size's source text (to write a fix with)."""
    if any(isinstance(a, ast.Starred) for a in args) or (len(args) == 1 and (isinstance(
            args[0], (ast.BinOp, ast.Subscript)) or (isinstance(args[0], ast.Name) and args[0].id in ck.shapes))):
        found = expand_shape_args(ck, args)
        if found is not None:
            return found
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    elif len(args) == 1 and isinstance(args[0], ast.Attribute) and args[0].attr == "shape":
        arr = ck.visit(args[0].value)
        return arr.shape, arr.names, [f"{ck.text(args[0])}[{i}]" for i in range(len(arr.shape))]
    elif len(args) == 1 and isinstance(args[0], ast.Call) and isinstance(args[0].func, ast.Attribute) \
            and args[0].func.attr == "size" and not args[0].args:
        arr = ck.visit(args[0].func.value)
        return arr.shape, arr.names, [f"{ck.text(args[0].func.value)}.shape[{i}]" for i in range(len(arr.shape))]
    sizes = tuple(static_int(ck, a, what) for a in args)
    return sizes, tuple(claim(ck, a) for a in args), [ck.text(a) for a in args]


def creation(ck: Checker, call: ast.Call, fname: str, args: list[ast.expr]) -> Node:
    """ones/zeros (sizes as a tuple or, in PyTorch, one by one) and arange: names come from the sizes."""
    if fname == "arange":
        nums = [static_int(ck, a, "arange bounds") for a in args[:3]]
        start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
        if step == 0:
            raise UsageError("arange() step must not be 0")
        size = max(0, -(-(stop - start) // step))
        return ck.make(call, "arange", (size,), names=(claim(ck, args[0]) if len(nums) == 1 else None,))
    sizes, claims, _ = size_args(ck, args, f"{fname}() sizes")
    if any(s < 0 for s in sizes):
        raise UsageError(f"{fname}() sizes must not be negative, got {sizes}")
    return ck.make(call, fname, sizes, names=claims)
