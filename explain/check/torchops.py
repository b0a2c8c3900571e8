"""PyTorch's functions (``torch.X`` and ``F.X``) with PyTorch's own shape rules.

Where PyTorch's rule differs from numpy's it is PyTorch's here: ``torch.bmm`` takes exactly 3-D tensors with
equal batch sizes (no broadcasting); ``masked_fill``'s mask and tensor broadcast together (the in-place ``masked_fill_`` would need the mask to fit the tensor);
``gather``'s index has the tensor's rank and gives its own shape; ``F.linear`` takes the weight as
(out_features, in_features); ``F.cross_entropy`` wants classes on axis 1 ((N, C) or (N, C, d1, …));
``F.softmax`` without ``dim`` is refused (PyTorch picks an axis by rank and warns).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check import shaping
from explain.check.args import arrays_arg, bind, int_axis, is_none, static_axis, static_bool
from explain.check.einops_ops import letters_einsum
from explain.check.methods import visit_method
from explain.check.node import Node
from explain.check.sizes import creation, size_args
from explain.check.supported import ELEMENTWISE, F_FUNCTIONS, TORCH_FUNCTIONS, unknown_function
from explain.check.torchrules import bmm, cross_entropy, fail, linear, where_after_softmax
from explain.core import shape_rules as rules
from explain.core.errors import UsageError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from collections.abc import Callable

    from explain.check.expr import Checker

Span = tuple[int, int]


def torch_function(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    """Check ``torch.fname(...)`` or ``F.fname(...)`` with the rule in :data:`TORCH`; the rest are methods called
    as functions (``torch.transpose(x, 1, 2)`` is ``x.transpose(1, 2)``)."""
    if fname not in (F_FUNCTIONS if functional else TORCH_FUNCTIONS):
        raise unknown_function(("F." if functional else "torch.") + fname)
    handler = TORCH.get(fname)
    if handler is not None:
        return handler(ck, call, fname, functional, span)
    if not call.args:
        raise UsageError(f"torch.{fname}() needs its input tensor first")
    method = ast.Call(func=ast.Attribute(value=call.args[0], attr=fname, ctx=ast.Load()), args=call.args[1:],
                      keywords=call.keywords)
    ast.copy_location(method, call)
    method.end_lineno, method.end_col_offset = call.end_lineno, call.end_col_offset
    return visit_method(ck, method, fname, ck.visit(call.args[0]), span)


def _einsum(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    return letters_einsum(ck, call, span)


def _creation(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    return creation(ck, call, fname, list(call.args))


def _join(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind(fname, call, (("tensors", "dim"), 1, ()), list(call.args), {"axis": "dim"})
    parts = arrays_arg(ck, args["tensors"], fname)
    return shaping.join(ck, call, "stack" if fname == "stack" else "cat", parts,
                        int_axis(ck, args.get("dim"), 0, fname), span)


def _pairwise(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    """matmul, bmm, maximum, and where (a condition, then two tensors)."""
    params = ("condition", "input", "other") if fname == "where" else ("input", "other")
    args = bind(fname, call, (params, len(params), ()), list(call.args))
    nodes = [ck.visit(args[p]) for p in params]
    if fname == "bmm":
        return bmm(ck, call, nodes[0], nodes[1], span)
    if fname == "where":
        both = ck.combine(call, "where", nodes[1], nodes[2], span)
        return where_after_softmax(ck, ck.combine(call, "where", nodes[0], both, span, children=nodes), span)
    return ck.combine(call, fname, nodes[0], nodes[1], span)


def _linear(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind("F.linear", call, (("input", "weight", "bias"), 2, ()), list(call.args))
    return linear(ck, call, ck.visit(args["input"]), ck.visit(args["weight"]),
                  ck.visit(args["bias"]) if "bias" in args else None, span)


def _tensor(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    if len(call.args) != 1 or isinstance(call.args[0], (ast.List, ast.Tuple)):
        raise UsageError("torch.tensor() of a list is not followed; give a number, like torch.tensor(2.0)")
    x = ck.visit(call.args[0])
    if x.shape:
        raise UsageError("torch.tensor() of an array: write the array itself")
    return ck.make(call, "number", (), [x])


def _attention(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    """``F.scaled_dot_product_attention(q, k, v)``: checked as ``softmax(q @ k.mT) @ v``."""
    args = bind("F.scaled_dot_product_attention", call, (("query", "key", "value", "attn_mask", "dropout_p",
                                                           "is_causal", "scale"), 3, ("enable_gqa",)), list(call.args))
    q, k, v = (ck.visit(args[p]) for p in ("query", "key", "value"))
    if len(k.shape) < 2:
        raise fail(ck, f"F.scaled_dot_product_attention needs keys of at least 2 axes, got {fmt_shape(k.shape)}",
                   span, [k])
    kt = Node(f"{shaping.paren(k)}.mT", "transpose", k.shape[:-2] + (k.shape[-1], k.shape[-2]), [k], ".mT",
              k.start, k.end, True, names=k.names[:-2] + (k.names[-1], k.names[-2]))
    scores = ck.combine(call, "matmul", q, kt, span)
    out = ck.combine(call, "matmul", scores, v, span)
    return ck.make(call, "scaled_dot_product_attention", out.shape, [q, k, v], names=out.names)


def _embedding(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind("F.embedding", call, (("input", "weight"), 2, ("padding_idx",)), list(call.args))
    idx, w = ck.visit(args["input"]), ck.visit(args["weight"])
    if len(w.shape) != 2:
        raise fail(ck, f"F.embedding needs a 2-D weight (num_embeddings, dim), got {fmt_shape(w.shape)}", span, [w])
    return ck.make(call, "embedding", idx.shape + w.shape[1:], [idx, w], names=idx.names + w.names[1:])


def _cross_entropy(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind("F.cross_entropy", call, (("input", "target"), 2, ("reduction", "ignore_index",
                                                                     "label_smoothing", "weight")), list(call.args))
    return cross_entropy(ck, call, ck.visit(args["input"]), ck.visit(args["target"]), args.get("reduction"), span)


def _layer_norm(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind("F.layer_norm", call, (("input", "normalized_shape", "weight", "bias", "eps"), 2, ()),
                list(call.args))
    x = ck.visit(args["input"])
    sizes, _, _ = size_args(ck, [args["normalized_shape"]], "normalized_shape")
    if tuple(x.shape[len(x.shape) - len(sizes):]) != sizes or len(sizes) > len(x.shape):
        new = f"({shaping.paren(x)}.shape[-1],)"
        raise fail(ck, f"F.layer_norm normalizes the last {len(sizes)} axes of {fmt_shape(x.shape)}, which must "
                   f"be {fmt_shape(sizes)}; to normalize over the features pass {new}", span, [x],
                   (*ck.span(args["normalized_shape"]), new))
    for p in ("weight", "bias"):
        if p in args and not is_none(args[p]):
            w = ck.visit(args[p])
            if w.shape != sizes:
                raise fail(ck, f"F.layer_norm {p} must have shape {fmt_shape(sizes)}, got {fmt_shape(w.shape)}",
                           span, [x, w])
    node = ck.make(call, "layer_norm", x.shape, [x], names=x.names)
    if x.names and x.names[-1] is not None:
        from explain.check import semantic  # lazy: the rules load only for a named layer_norm

        semantic.layer_norm_axes(ck, node, x, len(sizes), span)
    return node


def _softmax(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind(fname, call, (("input", "dim"), 1, ("dtype",)), list(call.args), {"axis": "dim"})
    if "dim" not in args:
        raise UsageError(f"{'F' if functional else 'torch'}.{fname}() needs dim=: without it PyTorch picks an "
                         "axis from the rank (and warns); write dim=-1 for the last axis")
    x = ck.visit(args["input"])
    dim = int_axis(ck, args["dim"], -1, fname)
    shaping.apply(ck, span, [x], rules.reduce, x.shape, dim)
    node = ck.make(call, fname, x.shape, [x], f"dim={dim}", names=x.names)
    return shaping.softmax_over(ck, node, dim, args.get("dim"), span)


def _elementwise(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    if not call.args:
        raise UsageError(f"{fname}() needs its input tensor")
    x = ck.visit(call.args[0])
    return ck.make(call, fname, x.shape, [x], names=x.names)


def _reduce(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    args = bind(fname, call, (("input", "dim"), 1, ("keepdim",)), list(call.args), {"axis": "dim"})
    x = ck.visit(args["input"])
    keep = static_bool(ck, args.get("keepdim"), "keepdim")
    node = shaping.reduce(ck, call, fname, x, static_axis(ck, args.get("dim"), None), keep, span)
    if fname == "max" and "dim" in args:
        node.info["pair"] = True  # torch.max(x, dim) returns (values, indices)
    return node


# torch./F. function name -> its rule; the names not here are methods called as functions (torch.transpose).
TORCH: dict[str, Callable[[Checker, ast.Call, str, bool, Span], Node]] = {
    "einsum": _einsum, **dict.fromkeys(("ones", "zeros", "arange"), _creation),
    **dict.fromkeys(("cat", "concat", "stack"), _join),
    **dict.fromkeys(("matmul", "bmm", "maximum", "where"), _pairwise),
    "linear": _linear, "tensor": _tensor, "scaled_dot_product_attention": _attention, "embedding": _embedding,
    "cross_entropy": _cross_entropy, "layer_norm": _layer_norm, "softmax": _softmax, "log_softmax": _softmax,
    **dict.fromkeys((*ELEMENTWISE, "relu", "gelu", "silu", "dropout", "sigmoid", "tanh"), _elementwise),
    **dict.fromkeys(("sum", "mean", "max", "logsumexp"), _reduce),
}
