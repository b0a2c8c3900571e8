"""Function calls in a checked expression: which library a name belongs to, and numpy's functions.

The dispatch is two tables, as :mod:`explain.ops` registers its op kinds: :data:`LIBRARIES` (a prefix such as
``np.``/``torch.``/``F.`` -> the library's handler) and :data:`NUMPY` (a numpy function -> its rule).
``self.X(...)`` in a class method goes to :data:`SELF_CALLS`, which :mod:`explain.check.modulecalls` fills when
it loads: checking a submodule's forward checks a function, a layer above this one.

``softmax(x, axis=-1)``, ``np.reshape(x, (2, -1))``, ``np.concatenate([a, b], axis=1)`` are checked here;
``torch.``/``F.`` functions go to :mod:`explain.check.torchops`, einops's to :mod:`explain.check.einops_ops`,
methods (``x.view(...)``) to :mod:`explain.check.methods`. Arguments that are arrays are checked as
sub-expressions; arguments that configure the call are read by :mod:`explain.check.args`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check import shaping
from explain.check.args import (
    Signature,
    arrays_arg,
    bind,
    claim,
    int_axis,
    is_none,
    keep_fix,
    static_axis,
    static_bool,
    static_int,
    static_ints,
)
from explain.check.node import origin
from explain.check.supported import (
    EINOPS_FUNCTIONS,
    EINOPS_NAMES,
    ELEMENTWISE,
    F_NAMES,
    FUNCTIONS,
    METHODS,
    NP_NAMES,
    REDUCTIONS,
    TORCH_NAMES,
    dotted,
    unknown_function,
)
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from explain.check.expr import Checker, Node

Span = tuple[int, int]

SIGNATURES: dict[str, Signature] = {
    **{f: (("x",), 1, ()) for f in ELEMENTWISE},
    "softmax": (("x", "axis"), 1, ()),
    "log_softmax": (("x", "axis"), 1, ()),
    "transpose": (("a", "axes"), 1, ()),
    "reshape": (("a", "newshape"), 2, ("order",)),
    "swapaxes": (("a", "axis1", "axis2"), 3, ()),
    "concatenate": (("arrays", "axis"), 1, ()),
    "stack": (("arrays", "axis"), 1, ()),
    **{f: (("a", "axis"), 1, ("keepdims", "ddof")) for f in REDUCTIONS},
    "matmul": (("a", "b"), 2, ()),
    "maximum": (("a", "b"), 2, ()),
    "where": (("condition", "x", "y"), 3, ()),
    "tril": (("m", "k"), 1, ()),
    "triu": (("m", "k"), 1, ()),
    "ones": (("shape",), 1, ("dtype",)),
    "zeros": (("shape",), 1, ("dtype",)),
    "arange": (("start", "stop", "step"), 1, ("dtype",)),
    "expand_dims": (("a", "axis"), 2, ()),
    "squeeze": (("a", "axis"), 1, ()),
    "take_along_axis": (("arr", "indices", "axis"), 3, ()),
    "repeat": (("a", "repeats", "axis"), 2, ()),
}

# "self.<path>" and "loop" (for block in self.h: x = block(x)) -> the handler; filled by explain.check.modulecalls.
SELF_CALLS: dict[str, Callable[..., Node]] = {}


def visit_call(ck: Checker, call: ast.Call) -> Node:
    """Check one call: find its library, bind its arguments, apply its shape rule."""
    if any(isinstance(a, ast.Starred) and not (isinstance(a.value, ast.Name) and a.value.id in ck.shapes)
           for a in call.args) or any(kw.arg is None for kw in call.keywords):
        raise UsageError(f"not supported: *args or **kwargs in {ck.text(call)!r}; write the arguments out")
    func = call.func
    start, end = ck.span(func)
    if isinstance(func, ast.Attribute):
        start = end - len(func.attr)  # the caret goes under the function's own name
    if isinstance(func, ast.Name):
        return _bare_call(ck, call, func, (start, end))
    if not isinstance(func, ast.Attribute):
        raise UsageError(f"not supported: calling {ck.text(func)!r}; call a function by name, like softmax(x)")
    return _dotted_call(ck, call, func, (start, end))


def _bare_call(ck: Checker, call: ast.Call, func: ast.Name, span: Span) -> Node:
    """``softmax(x)``, ``len(x)``, ``rearrange(...)``, or a module bound by a loop over ``self.h``."""
    name = func.id
    if name in ck.b.arrays or name in ck.b.dims:
        raise UsageError(f"{name} is an array or a size, not a function: did you mean {name} * (...)?")
    if ck.cls is not None and name in ck.cls.loop_modules:
        if not call.args:
            raise UsageError(f"{name}() needs its input")
        return SELF_CALLS["loop"](ck, call, ck.cls.loop_modules[name], ck.visit(call.args[0]), span, name)
    if name in ck.unknown:
        raise ck.unknown_name(func)
    if name in ("len", "int"):
        return ck.make(call, "size", (), detail=f"= {static_int(ck, call, 'a size')}",
                       claim=claim(ck, call if name == "len" else call.args[0]) if call.args else None)
    if name == "float" and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
        return ck.make(call, "number", ())
    if name in EINOPS_FUNCTIONS and not (name == "einsum" and call.args and _is_str(call.args[0])):
        return _einops(ck, call, name, "einops", span)
    if name not in FUNCTIONS:
        raise unknown_function(name)
    return numpy_function(ck, call, name, span)


def _dotted_call(ck: Checker, call: ast.Call, func: ast.Attribute, span: Span) -> Node:
    """``np.f(x)``, ``torch.f(x)``, ``F.f(x)``, ``einops.f(x)``, ``self.proj(x)`` or a method, ``x.view(...)``."""
    path = dotted(func)
    if ck.cls is not None and path and path.startswith("self.") and path.count(".") > 1:
        return SELF_CALLS["self"](ck, call, path[len("self."):], span)  # self.transformer.wte(idx)
    prefix = path.rsplit(".", 1)[0] if path else None
    if prefix is not None and prefix.split(".")[0] not in ck.b.arrays and prefix.split(".")[0] not in ck.env:
        library = LIBRARIES.get(prefix)
        if library is not None:
            return library(ck, call, func.attr, prefix, span)
        if prefix == "math" and func.attr == "sqrt" and "math" not in ck.b.arrays:
            return numpy_function(ck, call, "sqrt", span)  # math.sqrt(d_k): a number's square root
        root = prefix.split(".")[0]
        if root in (*NP_NAMES, *TORCH_NAMES, "F", "nn", "math", *EINOPS_NAMES) and root not in ck.env:
            raise unknown_function(path or func.attr)
    if isinstance(func.value, ast.Name) and func.value.id == "self" and ck.cls is not None:
        return SELF_CALLS["self"](ck, call, func.attr, span)  # only a method of a class calls its modules
    if func.attr not in METHODS:
        raise UsageError(f"not supported: the method .{func.attr}(); supported methods: .{', .'.join(METHODS)}")
    from explain.check.methods import visit_method  # lazy: only lines with methods load it (bench_check_startup)

    return visit_method(ck, call, func.attr, ck.visit(func.value), span)


def _numpy(ck: Checker, call: ast.Call, fname: str, prefix: str, span: Span) -> Node:
    """``np.fname(...)``: numpy's rules."""
    if fname not in FUNCTIONS:
        raise unknown_function(f"{prefix}.{fname}")
    return numpy_function(ck, call, fname, span)


def _torch(ck: Checker, call: ast.Call, fname: str, prefix: str, span: Span) -> Node:
    """``torch.fname(...)`` / ``F.fname(...)``: PyTorch's rules from here on in this line."""
    ck.uses_torch(f"{prefix}.{fname}()", "write numpy's function (np.…)")
    from explain.check.torchops import torch_function  # lazy: only PyTorch lines load it (bench_check_startup)

    return torch_function(ck, call, fname, prefix in F_NAMES, span)


def _einops(ck: Checker, call: ast.Call, fname: str, prefix: str, span: Span) -> Node:
    """``einops.fname(...)`` or a bare ``rearrange(...)``: the pattern read on shapes alone."""
    if fname not in EINOPS_FUNCTIONS:
        raise unknown_function(f"{prefix}.{fname}")
    from explain.check.einops_ops import einops_call  # lazy: only einops lines load it (bench_check_startup)

    return einops_call(ck, call, fname, span)


# A call's prefix (what comes before the function's name) -> its library's handler.
LIBRARIES: dict[str, Callable[[Checker, ast.Call, str, str, Span], Node]] = {
    **dict.fromkeys(NP_NAMES, _numpy), **dict.fromkeys((*TORCH_NAMES, *F_NAMES), _torch),
    **dict.fromkeys(EINOPS_NAMES, _einops),
}


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def numpy_function(ck: Checker, call: ast.Call, fname: str, span: Span) -> Node:
    """Check numpy's ``fname(...)``: bind the arguments to its signature, then its rule from :data:`NUMPY`."""
    if fname == "einsum":
        from explain.check.einops_ops import letters_einsum  # lazy: only einsum lines load it (bench_check_startup)

        return letters_einsum(ck, call, span)
    args = bind(fname, call, SIGNATURES[fname], call.args, {"shape": "newshape"} if fname == "reshape" else None)
    return NUMPY.get(fname, _reduce)(ck, call, fname, args, span)


Bound = dict[str, ast.expr]


def _creation(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    from explain.check.sizes import creation  # lazy: only ones/zeros/arange read sizes (bench_check_startup)

    return creation(ck, call, fname, [args[p] for p in ("start", "stop", "step", "shape") if p in args])


def _join(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    parts = arrays_arg(ck, args["arrays"], fname)
    axis = static_axis(ck, args.get("axis"), 0)
    if fname == "stack" or axis is not None:
        axis = int_axis(ck, args.get("axis"), 0, fname)
    return shaping.join(ck, call, fname, parts, axis, span)  # type: ignore[arg-type]


def _pairwise(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    return ck.combine(call, fname, ck.visit(args["a"]), ck.visit(args["b"]), span)


def _where(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    cond = ck.visit(args["condition"])
    both = ck.combine(call, "where", ck.visit(args["x"]), ck.visit(args["y"]), span)
    node = ck.combine(call, "where", cond, both, span, children=[cond, *both.children])
    if any("softmax" in origin(c).op for c in both.children):
        from explain.check.torchrules import where_after_softmax  # lazy: only a mask on a softmax

        return where_after_softmax(ck, node, span)
    return node


def _this(ck: Checker, fname: str, args: Bound) -> Node:
    """The array a one-array function works on (its first parameter), checked."""
    return ck.visit(args.pop(SIGNATURES[fname][0][0]))


def _elementwise(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    return ck.make(call, fname, this.shape, [this], names=this.names)


def _softmax(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    axis = static_axis(ck, args.get("axis"), None)
    if axis is not None:
        shaping.apply(ck, span, [this], rules.reduce, this.shape, axis)  # only to check the axis is in range
    node = ck.make(call, fname, this.shape, [this], "" if axis is None else f"axis={axis}", names=this.names)
    return shaping.softmax_over(ck, node, axis, args.get("axis"), span) if isinstance(axis, int) else node


def _triangle(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    if len(this.shape) < 2:
        raise ck.fail(ShapeError(f"{fname} needs at least 2 axes, got {this.shape}"), *span, [this])
    return ck.make(call, fname, this.shape, [this], names=this.names)


def _transpose(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    axes = None if is_none(args.get("axes")) else static_ints(ck, args["axes"], "transpose axes")
    return shaping.transpose(ck, call, this, axes, span)


def _reshape(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    from explain.check.sizes import size_args  # lazy: only a reshape reads sizes (bench_check_startup)

    this = _this(ck, fname, args)
    sizes, claims, texts = size_args(ck, [args["newshape"]], "reshape sizes")
    return shaping.reshape(ck, call, this, sizes, claims, texts, span)


def _swapaxes(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    i, j = static_int(ck, args["axis1"], "swapaxes axis"), static_int(ck, args["axis2"], "swapaxes axis")
    return shaping.swapaxes(ck, call, this, i, j, span)


def _expand_dims(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    return shaping.unsqueeze(ck, call, this, int_axis(ck, args["axis"], 0, fname), span)


def _squeeze(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    axis = static_axis(ck, args.get("axis"), None)
    return shaping.squeeze(ck, call, this, None if axis is None else (axis if isinstance(axis, tuple) else (axis,)),
                           span, torch=False)


def _repeat(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    """numpy's repeat is PyTorch's repeat_interleave."""
    this = _this(ck, fname, args)
    axis = static_axis(ck, args.get("axis"), None)
    if isinstance(axis, tuple):
        raise UsageError("repeat() takes one axis")
    return shaping.repeat_interleave(ck, call, this, static_int(ck, args["repeats"], "repeats"), axis, span)


def _take_along_axis(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    from explain.check.torchrules import gather  # lazy: gather's rule lives with PyTorch's (bench_check_startup)

    this = _this(ck, fname, args)
    return gather(ck, call, this, ck.visit(args["indices"]), int_axis(ck, args["axis"], 0, fname), span, numpy=True)


def _reduce(ck: Checker, call: ast.Call, fname: str, args: Bound, span: Span) -> Node:
    this = _this(ck, fname, args)
    axis = static_axis(ck, args.get("axis"), None)
    keepdims = static_bool(ck, args.get("keepdims"), "keepdims")
    return shaping.reduce(ck, call, fname, this, axis, keepdims, span, keep_fix=keep_fix(ck, call, "keepdims"))


# numpy function -> its rule (the reductions, REDUCTIONS, fall to _reduce).
NUMPY: dict[str, Callable[[Checker, ast.Call, str, Bound, Span], Node]] = {
    **dict.fromkeys(("ones", "zeros", "arange"), _creation), "concatenate": _join, "stack": _join,
    "matmul": _pairwise, "maximum": _pairwise, "where": _where, **dict.fromkeys(ELEMENTWISE, _elementwise),
    "softmax": _softmax, "log_softmax": _softmax, "tril": _triangle, "triu": _triangle, "transpose": _transpose,
    "reshape": _reshape, "swapaxes": _swapaxes, "expand_dims": _expand_dims, "squeeze": _squeeze, "repeat": _repeat,
    "take_along_axis": _take_along_axis, **dict.fromkeys(REDUCTIONS, _reduce),
}
