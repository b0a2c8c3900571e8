"""Function and method calls in a checked expression: ``softmax(x, axis=-1)``, ``np.reshape(x, (2, -1))``,
``x.sum(axis=0, keepdims=True)``, ``np.concatenate([a, b], axis=1)``.

Arguments that are arrays are checked as sub-expressions; arguments that configure the call (axes, new
shapes, ``keepdims``) must be literals, ``--dim`` names, or simple integer arithmetic of them (``+ - * //``),
worked out here on Python ints — nothing is evaluated.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from explain import shape_rules as rules
from explain.errors import ShapeError, UsageError
from explain.shape_rules import Shape

if TYPE_CHECKING:
    from explain.check.expr import Checker, Node

from difflib import get_close_matches
from math import prod

from explain.check.supported import ELEMENTWISE, FUNCTIONS, METHODS, NP_NAMES, REDUCTIONS  # noqa: F401 - re-exported

# Function signatures: positional parameters, how many are required, keyword-only parameters.
SIGNATURES: dict[str, tuple[tuple[str, ...], int, tuple[str, ...]]] = {
    **{f: (("x",), 1, ()) for f in ELEMENTWISE},
    "softmax": (("x", "axis"), 1, ()),
    "transpose": (("a", "axes"), 1, ()),
    "reshape": (("a", "newshape"), 2, ()),
    "swapaxes": (("a", "axis1", "axis2"), 3, ()),
    "concatenate": (("arrays", "axis"), 1, ()),
    "stack": (("arrays", "axis"), 1, ()),
    **{f: (("a", "axis"), 1, ("keepdims",)) for f in REDUCTIONS},
}
METHOD_SIGNATURES: dict[str, tuple[tuple[str, ...], int, tuple[str, ...]]] = {
    "swapaxes": (("axis1", "axis2"), 2, ()),
    **{f: (("axis",), 0, ("keepdims",)) for f in REDUCTIONS},
}


def _dotted(node: ast.expr) -> str | None:
    """``np.linalg.norm`` for a chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _unknown_function(name: str) -> UsageError:
    near = get_close_matches(name.rsplit(".", 1)[-1], FUNCTIONS, n=1)
    maybe = f" (did you mean {near[0]}?)" if near else ""
    return UsageError(f"not supported: function {name}(){maybe}; supported functions: {', '.join(FUNCTIONS)} "
                      f"(np. prefix optional); methods: .{', .'.join(METHODS)}; and .T")


def _bind(fname: str, call: ast.Call, sig: tuple[tuple[str, ...], int, tuple[str, ...]],
          args: list[ast.expr]) -> dict[str, ast.expr]:
    """Match a call's arguments to a signature, like Python would, with one-line errors."""
    params, required, kwonly = sig
    if len(args) > len(params):
        raise UsageError(f"{fname}() takes at most {len(params)} positional argument(s) ({', '.join(params)}), "
                         f"got {len(args)}")
    bound = dict(zip(params, args))
    for kw in call.keywords:
        name = "newshape" if (fname == "reshape" and kw.arg == "shape") else kw.arg
        if name not in params and name not in kwonly:
            raise UsageError(f"{fname}() has no argument {kw.arg!r}; it takes {', '.join(params + kwonly)}")
        if name in bound:
            raise UsageError(f"{fname}() got {kw.arg!r} twice")
        bound[name] = kw.value  # type: ignore[index]
    for p in params[:required]:
        if p not in bound:
            raise UsageError(f"{fname}() needs its {p!r} argument")
    return bound


def static_int(ck: Checker, node: ast.expr, what: str) -> int:
    """A whole number known from the text alone: a literal, a --dim name, or + - * // of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = static_int(ck, node.operand, what)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name) and node.id in ck.b.dims:
        return ck.b.dims[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        a, b = static_int(ck, node.left, what), static_int(ck, node.right, what)
        if isinstance(node.op, ast.FloorDiv):
            if b == 0:
                raise UsageError(f"{what}: {ck.text(node)!r} divides by zero")
            return a // b
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    raise UsageError(f"{what} must be a whole number, a --dim name, or + - * // of those; "
                     f"got {ck.text(node)!r}")


def static_ints(ck: Checker, node: ast.expr, what: str) -> tuple[int, ...]:
    """A tuple of whole numbers (a bare number counts as a 1-tuple, as numpy allows)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(static_int(ck, e, what) for e in node.elts)
    return (static_int(ck, node, what),)


def static_axis(ck: Checker, node: ast.expr | None, default: int | None) -> int | tuple[int, ...] | None:
    """An ``axis`` argument: None, a number, or a tuple of numbers."""
    if node is None:
        return default
    if isinstance(node, ast.Constant) and node.value is None:
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        return static_ints(ck, node, "axis")
    return static_int(ck, node, "axis")


def _int_axis(ck: Checker, node: ast.expr | None, default: int, fname: str) -> int:
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


def visit_call(ck: Checker, call: ast.Call) -> Node:
    """Check one call: resolve the function or method, bind its arguments, apply its shape rule."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords):
        raise UsageError(f"not supported: *args or **kwargs in {ck.text(call)!r}; write the arguments out")
    func = call.func
    start, end = ck.span(func)
    if isinstance(func, ast.Attribute):
        start = end - len(func.attr)  # the caret goes under the function's own name
    dotted = _dotted(func)
    if isinstance(func, ast.Name):
        if func.id in ck.b.arrays or func.id in ck.b.dims:
            raise UsageError(f"{func.id} is an array or a size, not a function: did you mean {func.id} * (...)?")
        if func.id not in FUNCTIONS:
            raise _unknown_function(func.id)
        return _function(ck, call, func.id, _bind(func.id, call, SIGNATURES[func.id], call.args), (start, end))
    if not isinstance(func, ast.Attribute):
        raise UsageError(f"not supported: calling {ck.text(func)!r}; call a function by name, like softmax(x)")
    root = dotted.split(".")[0] if dotted else None
    if root in NP_NAMES and root not in ck.b.arrays:
        if dotted != f"{root}.{func.attr}" or func.attr not in FUNCTIONS:
            raise _unknown_function(dotted or func.attr)
        return _function(ck, call, func.attr, _bind(func.attr, call, SIGNATURES[func.attr], call.args), (start, end))
    if func.attr not in METHODS:
        raise UsageError(f"not supported: the method .{func.attr}(); supported methods: .{', .'.join(METHODS)}")
    this = ck.visit(func.value)
    return _method(ck, call, func.attr, this, (start, end))


def _apply(ck: Checker, span: tuple[int, int], operands: list[Node], rule: Callable[..., Shape], *args: Any) -> Shape:
    """Run a shape rule; on failure, a caret under the function's name and the operands' shapes."""
    try:
        return rule(*args)
    except ShapeError as err:
        raise ck.fail(err, span[0], span[1], operands) from None


def _function(ck: Checker, call: ast.Call, fname: str, args: dict[str, ast.expr], span: tuple[int, int]) -> Node:
    if fname in ("concatenate", "stack"):
        seq = args["arrays"]
        if not isinstance(seq, (ast.List, ast.Tuple)) or not seq.elts:
            raise UsageError(f"{fname}() takes a list of arrays, like {fname}([a, b], axis=0)")
        parts = [ck.visit(e) for e in seq.elts]
        shapes = [p.shape for p in parts]
        if fname == "stack":
            axis = _int_axis(ck, args.get("axis"), 0, fname)
            return ck.make(call, fname, _apply(ck, span, parts, rules.stack, shapes, axis), parts, f"axis={axis}")
        cat_axis = static_axis(ck, args.get("axis"), 0)
        if cat_axis is None:  # numpy flattens every array first

            return ck.make(call, fname, (sum(prod(s) for s in shapes),), parts, "axis=None (flattened)")
        if not isinstance(cat_axis, int):
            raise UsageError(f"concatenate() needs a single axis number, got {ck.text(args['axis'])}")
        return ck.make(call, fname, _apply(ck, span, parts, rules.concatenate, shapes, cat_axis), parts,
                       f"axis={cat_axis}")
    this = ck.visit(args.pop(SIGNATURES[fname][0][0]))
    if fname in ELEMENTWISE:
        return ck.make(call, fname, this.shape, [this])
    if fname == "softmax":
        axis = static_axis(ck, args.get("axis"), None)
        if axis is not None:
            _apply(ck, span, [this], rules.reduce, this.shape, axis)  # only to check the axis is in range
        return ck.make(call, fname, this.shape, [this], "" if axis is None else f"axis={axis}")
    if fname == "transpose":
        axes = None if _is_none(args.get("axes")) else static_ints(ck, args["axes"], "transpose axes")
        return _transpose(ck, call, this, axes, span)
    if fname == "reshape":
        return _reshape(ck, call, this, static_ints(ck, args["newshape"], "reshape sizes"), span)
    if fname == "swapaxes":
        return _swapaxes(ck, call, this, args, span)
    return _reduce(ck, call, fname, this, args, span)


def _method(ck: Checker, call: ast.Call, name: str, this: Node, span: tuple[int, int]) -> Node:
    if name in ("transpose", "reshape"):  # x.transpose(1, 0) and x.transpose((1, 0)) both work in numpy
        if call.keywords:
            raise UsageError(f".{name}() takes its axes or sizes positionally, like x.{name}(1, 0)")
        a = call.args
        if name == "transpose":
            axes = None if not a or (len(a) == 1 and _is_none(a[0])) else (
                static_ints(ck, a[0], "transpose axes") if len(a) == 1 else tuple(
                    static_int(ck, e, "transpose axes") for e in a))
            return _transpose(ck, call, this, axes, span)
        if not a:
            raise UsageError(".reshape() needs the new shape, like x.reshape(2, -1)")
        new = static_ints(ck, a[0], "reshape sizes") if len(a) == 1 else tuple(
            static_int(ck, e, "reshape sizes") for e in a)
        return _reshape(ck, call, this, new, span)
    args = _bind(f".{name}", call, METHOD_SIGNATURES[name], call.args)
    if name == "swapaxes":
        return _swapaxes(ck, call, this, args, span)
    return _reduce(ck, call, name, this, args, span)


def _is_none(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _transpose(ck: Checker, call: ast.Call, this: Node, axes: tuple[int, ...] | None, span: tuple[int, int]) -> Node:
    shape = _apply(ck, span, [this], rules.transpose, this.shape, axes)
    return ck.make(call, "transpose", shape, [this], "" if axes is None else f"axes={axes}")


def _reshape(ck: Checker, call: ast.Call, this: Node, new: tuple[int, ...], span: tuple[int, int]) -> Node:
    shape = _apply(ck, span, [this], rules.reshape, this.shape, new)
    return ck.make(call, "reshape", shape, [this], f"to {new}" if -1 in new else "")


def _swapaxes(ck: Checker, call: ast.Call, this: Node, args: dict[str, ast.expr], span: tuple[int, int]) -> Node:
    i = static_int(ck, args["axis1"], "swapaxes axis")
    j = static_int(ck, args["axis2"], "swapaxes axis")
    shape = _apply(ck, span, [this], rules.swapaxes, this.shape, i, j)
    return ck.make(call, "swapaxes", shape, [this], f"axes {i}, {j}")


def _reduce(ck: Checker, call: ast.Call, fname: str, this: Node, args: dict[str, ast.expr], span: tuple[int, int]) -> Node:
    axis = static_axis(ck, args.get("axis"), None)
    keepdims = static_bool(ck, args.get("keepdims"), "keepdims")
    if not this.shape and axis in (0, -1) and fname != "mean":
        # numpy's ufunc reductions (sum, max) accept a plain axis 0 or -1 on a 0-d array; mean does not.
        shape: Shape = ()
    else:
        shape = _apply(ck, span, [this], rules.reduce, this.shape, axis, keepdims)
    detail = f"axis={axis}" + (", keepdims" if keepdims else "")
    return ck.make(call, fname, shape, [this], detail, reduce=(fname, this.shape, axis, keepdims))
