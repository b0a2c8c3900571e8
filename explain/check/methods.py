"""Array methods, numpy's and PyTorch's: ``x.reshape(2, -1)``, ``x.view(B, T, H, Dh)``, ``x.transpose(1, 2)``,
``x.sum(dim=-1, keepdim=True)``, ``x.masked_fill(mask == 0, -inf)``.

The two libraries share most names. Where they disagree, the line's library decides: ``x.transpose(1, 2)``
swaps two axes in PyTorch and is an error on a 4-D numpy array, so it follows PyTorch when the expression is
PyTorch (it uses ``torch.``, ``F.``, ``.view``, ``dim=``, …, or ``--lib torch``), numpy otherwise.
``x.max(dim=d)`` in PyTorch gives a (values, indices) pair, read with ``.values`` or ``[0]``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check import shaping
from explain.check.args import bind, claim, int_axis, is_none, keep_fix, static_axis, static_bool, static_int
from explain.check.sizes import size_args
from explain.check.supported import ELEMENTWISE, IDENTITY_METHODS, REDUCTIONS
from explain.check.torchrules import bmm, gather, masked_fill
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from explain.check.expr import Checker, Node

Span = tuple[int, int]
TORCH_KW = {"dim": "axis", "keepdim": "keepdims"}
# What a method's name says about the line's library: numpy has no such method (the fix it would write).
TORCH_ONLY = {"view": "numpy writes .reshape()", "permute": "numpy writes .transpose(axes)",
              "expand": "numpy writes np.broadcast_to(x, shape)", "expand_as": "numpy writes np.broadcast_to(x, shape)",
              "repeat_interleave": "numpy writes np.repeat(x, n, axis=)",
              "masked_fill": "numpy writes np.where(mask, value, x)", "masked_fill_": "numpy writes np.where(mask, value, x)"}


def _ints(ck: Checker, args: list[ast.expr], what: str) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        args = list(args[0].elts)
    return tuple(static_int(ck, a, what) for a in args)


def visit_method(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    """Check ``this.name(...)``: the library its spelling says, then the method's rule from :data:`METHODS`."""
    kws = {kw.arg for kw in call.keywords}
    if name in ("dim", "keepdim") or "dim" in kws or "keepdim" in kws:
        word = "dim=" if "dim" in kws else "keepdim=" if "keepdim" in kws else None
        ck.uses_torch(f"{word} in .{name}()" if word else f".{name}()",
                      "numpy writes axis= and keepdims=" if word else "numpy writes x.ndim")
    if name in TORCH_ONLY:
        ck.uses_torch(f".{name}()", TORCH_ONLY[name])
    handler = METHODS.get(name)
    if handler is None:
        raise UsageError(f"not supported: the method .{name}()")
    return handler(ck, call, name, this, span)


def _same(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    """Casts, copies and elementwise functions: the shape and names pass through."""
    return ck.make(call, name, this.shape, [this], names=this.names)


def _reshape(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    if not call.args:
        raise UsageError(f".{name}() needs the new shape, like x.{name}(2, -1)")
    sizes, claims, texts = size_args(ck, list(call.args), f"{name} sizes")
    return shaping.reshape(ck, call, this, sizes, claims, texts, span, method=name)


def _transpose(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    a = call.args
    if call.keywords:
        raise UsageError(".transpose() takes its axes positionally, like x.transpose(1, 0)")
    if not a or (len(a) == 1 and is_none(a[0])):
        return shaping.transpose(ck, call, this, None, span)
    axes = _ints(ck, list(a), "transpose axes")
    if len(a) == 2 and ck.torch:
        return shaping.swapaxes(ck, call, this, axes[0], axes[1], span)
    if len(axes) == 2 and len(this.shape) != 2:
        raise ck.fail(ShapeError(f"numpy's transpose of a {len(this.shape)}-D array needs all "
                                 f"{len(this.shape)} axes, got 2; in PyTorch x.transpose({axes[0]}, {axes[1]}) "
                                 f"swaps two axes: in numpy write x.swapaxes({axes[0]}, {axes[1]}) (or pass "
                                 "--lib torch)"), *span, [this])
    return shaping.transpose(ck, call, this, axes, span)


def _permute(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    return shaping.transpose(ck, call, this, _ints(ck, list(call.args), "permute dims"), span, op="permute")


def _swapaxes(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".swapaxes", call, (("axis0", "axis1"), 2, ()), list(call.args), {"dim0": "axis0", "dim1": "axis1"})
    return shaping.swapaxes(ck, call, this, static_int(ck, args["axis0"], "axis"),
                            static_int(ck, args["axis1"], "axis"), span)


def _unsqueeze(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".unsqueeze", call, (("dim",), 1, ()), list(call.args))
    return shaping.unsqueeze(ck, call, this, static_int(ck, args["dim"], "dim"), span)


def _squeeze(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".squeeze", call, (("dim",), 0, ()), list(call.args), {"axis": "dim"})
    dim = static_axis(ck, args.get("dim"), None)
    dims = None if dim is None else dim if isinstance(dim, tuple) else (dim,)
    return shaping.squeeze(ck, call, this, dims, span, torch=ck.torch)


def _expand(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    if name == "expand_as":
        other = ck.visit(call.args[0])
        return shaping.expand(ck, call, this, other.shape, other.names, span)
    sizes, claims, _ = size_args(ck, list(call.args), "expand sizes")
    return shaping.expand(ck, call, this, sizes, claims, span)


def _flatten(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".flatten", call, (("start_dim", "end_dim"), 0, ()), list(call.args))
    n = len(this.shape)
    try:
        s = rules.normalize_axis(static_int(ck, args["start_dim"], "dim") if "start_dim" in args else 0, max(n, 1))
        e = rules.normalize_axis(static_int(ck, args["end_dim"], "dim") if "end_dim" in args else -1, max(n, 1))
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], [this]) from None
    total = 1
    for d in this.shape[s:e + 1]:
        total *= d
    merged = tuple(x for ax in this.names[s:e + 1] for x in (ax or ("?",)))
    names = this.names[:s] + ((None if "?" in merged else merged),) + this.names[e + 1:]
    return ck.make(call, "flatten", this.shape[:s] + (total,) + this.shape[e + 1:], [this], names=names)


def _repeat_interleave(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".repeat_interleave", call, (("repeats", "dim"), 1, ("output_size",)), list(call.args))
    dim = static_axis(ck, args.get("dim"), None)
    if isinstance(dim, tuple):
        raise UsageError("repeat_interleave() takes one dim")
    return shaping.repeat_interleave(ck, call, this, static_int(ck, args["repeats"], "repeats"), dim, span)


def _masked_fill(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(f".{name}", call, (("mask", "value"), 2, ()), list(call.args))
    return masked_fill(ck, call, this, ck.visit(args["mask"]), span)


def _softmax(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(f".{name}", call, (("dim",), 1, ("dtype",)), list(call.args), {"axis": "dim"})
    dim = int_axis(ck, args["dim"], -1, name)
    shaping.apply(ck, span, [this], rules.reduce, this.shape, dim)
    node = ck.make(call, name, this.shape, [this], f"dim={dim}", names=this.names)
    return shaping.softmax_over(ck, node, dim, args.get("dim"), span)


def _matmul(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    other = ck.visit(call.args[0]) if len(call.args) == 1 else None
    if other is None:
        raise UsageError(f".{name}() takes one tensor, like x.{name}(y)")
    return bmm(ck, call, this, other, span) if name == "bmm" else ck.combine(call, "matmul", this, other, span)


def _size(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    if not call.args and not call.keywords:
        raise UsageError(".size() with no axis is a shape, not an array: use .size(i) for one axis")
    return ck.make(call, "size", (), detail=f"= {static_int(ck, call, 'a size')}", claim=claim(ck, call))


def _gather(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(".gather", call, (("dim", "index"), 2, ()), list(call.args))
    return gather(ck, call, this, ck.visit(args["index"]), static_int(ck, args["dim"], "dim"), span)


def _triangle(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    if len(this.shape) < 2:
        raise ck.fail(ShapeError(f"{name} needs at least 2 axes, got {this.shape}"), *span, [this])
    return ck.make(call, name, this.shape, [this], names=this.names)


def _reduce(ck: Checker, call: ast.Call, name: str, this: Node, span: Span) -> Node:
    args = bind(f".{name}", call, (("axis",), 0, ("keepdims", "ddof", "unbiased", "correction")), list(call.args),
                TORCH_KW)
    axis = static_axis(ck, args.get("axis"), None)
    word = "keepdim" if ck.torch else "keepdims"
    keepdims = static_bool(ck, args.get("keepdims"), word)
    node = shaping.reduce(ck, call, name, this, axis, keepdims, span, keep_fix=keep_fix(ck, call, word))
    if ck.torch and name in ("max", "min") and axis is not None:
        node.info["pair"] = True  # torch.max(x, dim) returns (values, indices)
    return node


# Method name -> its rule; supported.METHODS lists the same names for the messages and --help.
METHODS: dict[str, Callable[[Checker, ast.Call, str, Node, Span], Node]] = {
    **dict.fromkeys((*IDENTITY_METHODS, *ELEMENTWISE, "pow"), _same),
    "reshape": _reshape, "view": _reshape, "transpose": _transpose, "permute": _permute, "swapaxes": _swapaxes,
    "unsqueeze": _unsqueeze, "squeeze": _squeeze, "expand": _expand, "expand_as": _expand, "flatten": _flatten,
    "repeat_interleave": _repeat_interleave, "masked_fill": _masked_fill, "masked_fill_": _masked_fill,
    "softmax": _softmax, "log_softmax": _softmax, "matmul": _matmul, "bmm": _matmul, "size": _size,
    "gather": _gather, "tril": _triangle, "triu": _triangle, **dict.fromkeys(REDUCTIONS, _reduce),
}
