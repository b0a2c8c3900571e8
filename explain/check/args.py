"""The arguments of a checked call that configure it rather than being arrays: axes, sizes, flags.

They must be known from the text alone: literals, ``--dim`` names, ``x.shape[i]`` / ``x.size(i)`` / ``len(x)``
of a checked array, and ``+ - * //`` of those, worked out on Python ints (nothing is evaluated). A size
written with a name also *claims* that name for the axis it makes (:func:`claim`), which is how a reshape
knows that ``reshape(B, H, T, Dh)`` means to put T third.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.names import Ax
from explain.core.errors import ShapeError, UsageError
from explain.core.shape_rules import normalize_axis

if TYPE_CHECKING:
    from explain.check.expr import Checker
    from explain.check.node import Node

Signature = tuple[tuple[str, ...], int, tuple[str, ...]]  # positional parameters, how many required, keyword-only


def bind(fname: str, call: ast.Call, sig: Signature, args: list[ast.expr],
         rename: dict[str, str] | None = None) -> dict[str, ast.expr]:
    """Match a call's arguments to a signature, like Python would, with one-line errors."""
    params, required, kwonly = sig
    if len(args) > len(params):
        raise UsageError(f"{fname}() takes at most {len(params)} positional argument(s) ({', '.join(params)}), "
                         f"got {len(args)}")
    bound = dict(zip(params, args))
    for kw in call.keywords:
        name = (rename or {}).get(kw.arg or "", kw.arg)
        if name not in params and name not in kwonly:
            raise UsageError(f"{fname}() has no argument {kw.arg!r}; it takes {', '.join(params + kwonly)}")
        if name in bound:
            raise UsageError(f"{fname}() got {kw.arg!r} twice")
        bound[name] = kw.value  # type: ignore[index]
    for p in params[:required]:
        if p not in bound:
            raise UsageError(f"{fname}() needs its {p!r} argument")
    return bound


def _axis_of(ck: Checker, node: ast.expr) -> tuple[int, Ax] | None:
    """``x.shape[i]``, ``x.size(i)``, ``x.size(dim=i)`` or ``len(x)``: the size and name of that axis."""
    base = index = None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        base, index = node.value.value, node.slice
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and len(node.args) + len(node.keywords) == 1:
        base, index = node.func.value, node.args[0] if node.args else node.keywords[0].value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
            and len(node.args) == 1 and not node.keywords:
        base, index = node.args[0], ast.Constant(0)
    if base is None or index is None:
        return None
    arr = ck.visit(base)
    i = static_int(ck, index, "an axis number")
    try:
        k = normalize_axis(i, len(arr.shape))
    except ShapeError as err:
        raise ck.fail(err, *ck.span(node), [arr]) from None
    return arr.shape[k], arr.names[k]


def static_int(ck: Checker, node: ast.expr, what: str) -> int:
    """A whole number known from the text alone: a literal, a --dim name, an axis size, or + - * // of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = static_int(ck, node.operand, what)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in ck.b.dims:
        return ck.b.dims[node.id]
    key = _dim_key(ck, node)
    if key is not None:  # self.n_head in a method, config.n_embd, cfg["emb_dim"]: --dim gives it
        return ck.b.dims[key]
    if isinstance(node, ast.Name) and node.id in ck.unknown:
        raise ck.unknown_name(node)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            f"{node.value.id}.{node.attr}" in ck.unknown:  # self.n_head that __init__ could not size
        raise UsageError(ck.unknown[f"{node.value.id}.{node.attr}"])
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        a, b = static_int(ck, node.left, what), static_int(ck, node.right, what)
        if isinstance(node.op, ast.FloorDiv):
            if b == 0:
                raise UsageError(f"{what}: {ck.text(node)!r} divides by zero")
            return a // b
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" \
            and len(node.args) == 1 and not node.keywords:
        inner = node.args[0]
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):  # int(hidden_size / num_heads)
            a, b = static_int(ck, inner.left, what), static_int(ck, inner.right, what)
            if b == 0:
                raise UsageError(f"{what}: {ck.text(node)!r} divides by zero")
            return int(a / b)
        return static_int(ck, inner, what)
    found = _axis_of(ck, node)
    if found is not None:
        return found[0]
    raise UsageError(f"{what} must be a whole number, a --dim name, x.shape[i], or + - * // of those; "
                     f"got {ck.text(node)!r}")


def claim(ck: Checker, node: ast.expr) -> Ax:
    """The axis name a size expression stands for: ``H`` -> (H,), ``H * Dh`` -> (H, Dh), ``x.shape[1]`` -> the
    name of x's axis 1; None for a literal, -1 or arithmetic that names nothing."""
    if isinstance(node, ast.Name) and node.id in ck.b.dims:
        return ck.aliases.get(node.id, (node.id,))
    key = _dim_key(ck, node)
    if key is not None:
        return ck.aliases.get(key, (key,))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        a, b = claim(ck, node.left), claim(ck, node.right)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        # C // n_head: the head width, named after what it divides (d_model/n_head), when it divides evenly
        a, b = claim(ck, node.left), claim(ck, node.right)
        num, den = static_int(ck, node.left, "a size"), static_int(ck, node.right, "a size")
        if a is None or b is None or len(a) != 1 or len(b) != 1 or not den or num % den:
            return None
        name = f"{a[0]}/{b[0]}"
        ck.sizes[name] = num // den
        return (name,)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and len(node.args) == 1:
        inner = node.args[0]
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):
            return claim(ck, ast.BinOp(left=inner.left, op=ast.FloorDiv(), right=inner.right))
        return claim(ck, inner)
    if isinstance(node, (ast.Subscript, ast.Call)):
        found = _axis_of(ck, node)
        return found[1] if found else None
    return None


def _dim_key(ck: Checker, node: ast.expr) -> str | None:
    """The --dim name of ``self.n_head``, ``config.n_embd`` or ``cfg["emb_dim"]`` (a config object an
    ``__init__`` was given), if it has one."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in ck.b.dims and (
            node.value.id == "self" or node.value.id in ck.configs):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ck.configs and \
            isinstance(node.slice, ast.Constant) and node.slice.value in ck.b.dims:
        return node.slice.value  # type: ignore[no-any-return]
    return None


def static_ints(ck: Checker, node: ast.expr, what: str) -> tuple[int, ...]:
    """A tuple of whole numbers (a bare number counts as a 1-tuple, as numpy allows)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(static_int(ck, e, what) for e in node.elts)
    return (static_int(ck, node, what),)


def static_axis(ck: Checker, node: ast.expr | None, default: int | None) -> int | tuple[int, ...] | None:
    """An ``axis``/``dim`` argument: None, a number, or a tuple of numbers."""
    if node is None:
        return default
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        return static_ints(ck, node, "axis")
    return static_int(ck, node, "axis")


def int_axis(ck: Checker, node: ast.expr | None, default: int, fname: str) -> int:
    axis = static_axis(ck, node, default)
    if not isinstance(axis, int):
        raise UsageError(f"{fname}() needs a single axis number here, got {ck.text(node) if node else 'None'}")
    return axis


def static_bool(ck: Checker, node: ast.expr | None, what: str) -> bool:
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    raise UsageError(f"{what} must be True or False, got {ck.text(node)!r}")


def is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def arrays_arg(ck: Checker, node: ast.expr, fname: str) -> list[Node]:
    """The arrays of ``concatenate([a, b])`` / ``torch.cat((a, b))``, each checked."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        raise UsageError(f"{fname}() takes a list of arrays, like {fname}([a, b], axis=0)")
    return [ck.visit(e) for e in node.elts]


def keep_fix(ck: Checker, call: ast.Call, word: str) -> tuple[int, int, str] | None:
    """The call rewritten with ``keepdims=True`` (or PyTorch's ``keepdim=True``), for the keepdims hint."""
    if any(kw.arg in ("keepdims", "keepdim") for kw in call.keywords):
        return None
    start, end = ck.span(call)
    inner = ck.src[start:end - 1].rstrip()
    sep = "" if inner.endswith("(") else ", "
    return start, end, f"{inner}{sep}{word}=True)"
