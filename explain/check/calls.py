"""Function calls in a checked expression: which library a name belongs to, and numpy's functions.

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
    bind,
    claim,
    int_axis,
    is_none,
    size_args,
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
    F_FUNCTIONS,
    F_NAMES,
    FUNCTIONS,
    METHODS,
    NP_NAMES,
    REDUCTIONS,
    TORCH_FUNCTIONS,
    TORCH_NAMES,
)
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError

if TYPE_CHECKING:
    from explain.check.expr import Checker, Node

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


def dotted(node: ast.expr) -> str | None:
    """``np.linalg.norm`` for a chain of names, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def unknown_function(name: str) -> UsageError:
    from difflib import get_close_matches  # lazy: only a mistake pays for difflib (bench_check_startup)

    near = get_close_matches(name.rsplit(".", 1)[-1], FUNCTIONS + F_FUNCTIONS + EINOPS_FUNCTIONS, n=1)
    maybe = f" (did you mean {near[0]}?)" if near else ""
    return UsageError(f"not supported: function {name}(){maybe}; numpy: {', '.join(FUNCTIONS)}; torch.: "
                      f"{', '.join(TORCH_FUNCTIONS)}; F.: {', '.join(F_FUNCTIONS)}; einops: "
                      f"{', '.join(EINOPS_FUNCTIONS)}")


def visit_call(ck: Checker, call: ast.Call) -> Node:
    """Check one call: find its library, bind its arguments, apply its shape rule."""
    if any(isinstance(a, ast.Starred) and not (isinstance(a.value, ast.Name) and a.value.id in ck.shapes)
           for a in call.args) or any(kw.arg is None for kw in call.keywords):
        raise UsageError(f"not supported: *args or **kwargs in {ck.text(call)!r}; write the arguments out")
    func = call.func
    start, end = ck.span(func)
    if isinstance(func, ast.Attribute):
        start = end - len(func.attr)  # the caret goes under the function's own name
    span = (start, end)
    if isinstance(func, ast.Name):
        name = func.id
        if name in ck.b.arrays or name in ck.b.dims:
            raise UsageError(f"{name} is an array or a size, not a function: did you mean {name} * (...)?")
        if ck.cls is not None and name in ck.cls.loop_modules:
            from explain.check.modulecalls import apply  # lazy: for block in self.h: x = block(x)

            if not call.args:
                raise UsageError(f"{name}() needs its input")
            return apply(ck, call, ck.cls.loop_modules[name], ck.visit(call.args[0]), span, name)
        if name in ck.unknown:
            raise ck.unknown_name(func)
        if name in ("len", "int"):
            return ck.make(call, "size", (), detail=f"= {static_int(ck, call, 'a size')}",
                           claim=claim(ck, call if name == "len" else call.args[0]) if call.args else None)
        if name == "float" and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
            return ck.make(call, "number", ())
        if name in EINOPS_FUNCTIONS and not (name == "einsum" and call.args and _is_str(call.args[0])):
            from explain.check.einops_ops import (
                einops_call,  # lazy: only PyTorch/einops lines load it (bench_check_startup)
            )

            return einops_call(ck, call, name, span)
        if name not in FUNCTIONS:
            raise unknown_function(name)
        return numpy_function(ck, call, name, span)
    if not isinstance(func, ast.Attribute):
        raise UsageError(f"not supported: calling {ck.text(func)!r}; call a function by name, like softmax(x)")
    path = dotted(func)
    if ck.cls is not None and path and path.startswith("self.") and path.count(".") > 1:
        from explain.check.modulecalls import call_self  # lazy: self.transformer.wte(idx), a module in a dict

        return call_self(ck, call, path[len("self."):], span)
    prefix = path.rsplit(".", 1)[0] if path else None
    if prefix is not None and prefix.split(".")[0] not in ck.b.arrays and prefix.split(".")[0] not in ck.env:
        if prefix in NP_NAMES:
            if func.attr not in FUNCTIONS:
                raise unknown_function(path or func.attr)
            return numpy_function(ck, call, func.attr, span)
        if prefix in TORCH_NAMES or prefix in F_NAMES:
            ck.uses_torch(f"{prefix}.{func.attr}()", "write numpy's function (np.…)")
            from explain.check.torchops import (
                torch_function,  # lazy: only PyTorch/einops lines load it (bench_check_startup)
            )

            return torch_function(ck, call, func.attr, prefix in F_NAMES, span)
        if prefix in EINOPS_NAMES:
            if func.attr not in EINOPS_FUNCTIONS:
                raise unknown_function(path or func.attr)
            from explain.check.einops_ops import (
                einops_call,  # lazy: only PyTorch/einops lines load it (bench_check_startup)
            )

            return einops_call(ck, call, func.attr, span)
        if prefix == "math" and func.attr == "sqrt" and "math" not in ck.b.arrays:
            return numpy_function(ck, call, "sqrt", span)  # math.sqrt(d_k): a number's square root
        root = prefix.split(".")[0]
        if root in (*NP_NAMES, *TORCH_NAMES, "F", "nn", "math", *EINOPS_NAMES) and root not in ck.env:
            raise unknown_function(path or func.attr)
    if isinstance(func.value, ast.Name) and func.value.id == "self" and ck.cls is not None:
        from explain.check.modulecalls import call_self  # lazy: only a method of a class calls its modules

        return call_self(ck, call, func.attr, span)
    if func.attr not in METHODS:
        raise UsageError(f"not supported: the method .{func.attr}(); supported methods: .{', .'.join(METHODS)}")
    from explain.check.methods import visit_method  # lazy: only lines with methods load it (bench_check_startup)

    return visit_method(ck, call, func.attr, ck.visit(func.value), span)


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def arrays_arg(ck: Checker, node: ast.expr, fname: str) -> list[Node]:
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        raise UsageError(f"{fname}() takes a list of arrays, like {fname}([a, b], axis=0)")
    return [ck.visit(e) for e in node.elts]


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


def numpy_function(ck: Checker, call: ast.Call, fname: str, span: tuple[int, int]) -> Node:
    if fname == "einsum":
        from explain.check.einops_ops import (
            letters_einsum,  # lazy: only PyTorch/einops lines load it (bench_check_startup)
        )

        return letters_einsum(ck, call, span)
    args = bind(fname, call, SIGNATURES[fname], call.args, {"shape": "newshape"} if fname == "reshape" else None)
    if fname in ("ones", "zeros", "arange"):
        return creation(ck, call, fname, [args[p] for p in ("start", "stop", "step", "shape") if p in args])
    if fname in ("concatenate", "stack"):
        parts = arrays_arg(ck, args["arrays"], fname)
        axis = static_axis(ck, args.get("axis"), 0)
        if fname == "stack" or axis is not None:
            axis = int_axis(ck, args.get("axis"), 0, fname)
        return shaping.join(ck, call, fname, parts, axis, span)  # type: ignore[arg-type]
    if fname in ("matmul", "maximum"):
        return ck.combine(call, "matmul" if fname == "matmul" else "maximum", ck.visit(args["a"]),
                          ck.visit(args["b"]), span)
    if fname == "where":
        cond = ck.visit(args["condition"])
        both = ck.combine(call, "where", ck.visit(args["x"]), ck.visit(args["y"]), span)
        node = ck.combine(call, "where", cond, both, span, children=[cond, *both.children])
        if any("softmax" in origin(c).op for c in both.children):
            from explain.check.torchops import _where_after_softmax  # lazy: only a mask on a softmax

            return _where_after_softmax(ck, node, span)
        return node
    first = SIGNATURES[fname][0][0]
    this = ck.visit(args.pop(first))
    if fname in ELEMENTWISE:
        return ck.make(call, fname, this.shape, [this], names=this.names)
    if fname in ("softmax", "log_softmax"):
        axis = static_axis(ck, args.get("axis"), None)
        if axis is not None:
            shaping.apply(ck, span, [this], rules.reduce, this.shape, axis)  # only to check the axis is in range
        node = ck.make(call, fname, this.shape, [this], "" if axis is None else f"axis={axis}", names=this.names)
        return shaping.softmax_over(ck, node, axis, args.get("axis"), span) if isinstance(axis, int) else node
    if fname in ("tril", "triu"):
        if len(this.shape) < 2:
            raise ck.fail(ShapeError(f"{fname} needs at least 2 axes, got {this.shape}"), *span, [this])
        return ck.make(call, fname, this.shape, [this], names=this.names)
    if fname == "transpose":
        axes = None if is_none(args.get("axes")) else static_ints(ck, args["axes"], "transpose axes")
        return shaping.transpose(ck, call, this, axes, span)
    if fname == "reshape":
        sizes, claims, texts = size_args(ck, [args["newshape"]], "reshape sizes")
        return shaping.reshape(ck, call, this, sizes, claims, texts, span)
    if fname == "swapaxes":
        i, j = static_int(ck, args["axis1"], "swapaxes axis"), static_int(ck, args["axis2"], "swapaxes axis")
        return shaping.swapaxes(ck, call, this, i, j, span)
    if fname == "expand_dims":
        return shaping.unsqueeze(ck, call, this, int_axis(ck, args["axis"], 0, fname), span)
    if fname == "squeeze":
        axis = static_axis(ck, args.get("axis"), None)
        return shaping.squeeze(ck, call, this, None if axis is None else (axis if isinstance(axis, tuple) else (axis,)),
                               span, torch=False)
    if fname == "repeat":  # numpy's repeat is PyTorch's repeat_interleave
        axis = static_axis(ck, args.get("axis"), None)
        if isinstance(axis, tuple):
            raise UsageError("repeat() takes one axis")
        return shaping.repeat_interleave(ck, call, this, static_int(ck, args["repeats"], "repeats"), axis, span)
    if fname == "take_along_axis":
        from explain.check.torchops import gather  # lazy: gather's rule lives with PyTorch's (bench_check_startup)

        return gather(ck, call, this, ck.visit(args["indices"]), int_axis(ck, args["axis"], 0, fname), span, numpy=True)
    axis = static_axis(ck, args.get("axis"), None)
    keepdims = static_bool(ck, args.get("keepdims"), "keepdims")
    return shaping.reduce(ck, call, fname, this, axis, keepdims, span, keep_fix=_keep_fix(ck, call, "keepdims"))


def _keep_fix(ck: Checker, call: ast.Call, word: str) -> tuple[int, int, str] | None:
    """The call rewritten with ``keepdims=True`` (or PyTorch's ``keepdim=True``), for the keepdims hint."""
    if any(kw.arg in ("keepdims", "keepdim") for kw in call.keywords):
        return None
    start, end = ck.span(call)
    inner = ck.src[start:end - 1].rstrip()
    sep = "" if inner.endswith("(") else ", "
    return start, end, f"{inner}{sep}{word}=True)"
