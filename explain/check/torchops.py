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

from explain.check import hints, shaping
from explain.check.args import bind, int_axis, is_none, size_args, static_axis, static_bool
from explain.check.einops_ops import letters_einsum
from explain.check.names import broadcast_names, fmt_names, merge_pair
from explain.check.node import Node, origin
from explain.check.supported import ELEMENTWISE, F_FUNCTIONS, TORCH_FUNCTIONS
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def _err(ck: Checker, msg: str, span: Span, operands: list[Node], fix: tuple[int, int, str] | None = None) -> Exception:
    return ck.fail(ShapeError(msg), span[0], span[1], operands, fix=fix)


def torch_function(ck: Checker, call: ast.Call, fname: str, functional: bool, span: Span) -> Node:
    from explain.check.calls import arrays_arg, creation, unknown_function  # lazy: calls imports this module
    from explain.check.methods import visit_method  # lazy: methods imports this module

    known = F_FUNCTIONS if functional else TORCH_FUNCTIONS
    if fname not in known:
        raise unknown_function(("F." if functional else "torch.") + fname)
    if fname == "einsum":
        return letters_einsum(ck, call, span)
    if fname in ("ones", "zeros", "arange"):
        return creation(ck, call, fname, [a for a in call.args])
    if fname in ("cat", "concat", "stack"):
        args = bind(fname, call, (("tensors", "dim"), 1, ()), list(call.args), {"axis": "dim"})
        parts = arrays_arg(ck, args["tensors"], fname)
        return shaping.join(ck, call, "stack" if fname == "stack" else "cat", parts,
                            int_axis(ck, args.get("dim"), 0, fname), span)
    if fname in ("matmul", "bmm", "maximum", "where"):
        params = ("condition", "input", "other") if fname == "where" else ("input", "other")
        args = bind(fname, call, (params, len(params), ()), list(call.args))
        nodes = [ck.visit(args[p]) for p in params]
        if fname == "bmm":
            return bmm(ck, call, nodes[0], nodes[1], span)
        if fname == "where":
            both = ck.combine(call, "where", nodes[1], nodes[2], span)
            return _where_after_softmax(ck, ck.combine(call, "where", nodes[0], both, span, children=nodes), span)
        return ck.combine(call, fname, nodes[0], nodes[1], span)
    if fname == "linear":
        args = bind("F.linear", call, (("input", "weight", "bias"), 2, ()), list(call.args))
        return linear(ck, call, ck.visit(args["input"]), ck.visit(args["weight"]),
                      ck.visit(args["bias"]) if "bias" in args else None, span)
    if fname == "tensor":
        if len(call.args) != 1 or isinstance(call.args[0], (ast.List, ast.Tuple)):
            raise UsageError("torch.tensor() of a list is not followed; give a number, like torch.tensor(2.0)")
        x = ck.visit(call.args[0])
        if x.shape:
            raise UsageError("torch.tensor() of an array: write the array itself")
        return ck.make(call, "number", (), [x])
    if fname == "scaled_dot_product_attention":
        args = bind("F.scaled_dot_product_attention", call, (("query", "key", "value", "attn_mask", "dropout_p",
                                                               "is_causal", "scale"), 3, ("enable_gqa",)), list(call.args))
        q, k, v = (ck.visit(args[p]) for p in ("query", "key", "value"))
        if len(k.shape) < 2:
            raise _err(ck, f"F.scaled_dot_product_attention needs keys of at least 2 axes, got {fmt_shape(k.shape)}",
                       span, [k])
        kt = Node(f"{shaping.paren(k)}.mT", "transpose", k.shape[:-2] + (k.shape[-1], k.shape[-2]), [k], ".mT",
                  k.start, k.end, True, names=k.names[:-2] + (k.names[-1], k.names[-2]))
        scores = ck.combine(call, "matmul", q, kt, span)
        out = ck.combine(call, "matmul", scores, v, span)
        return ck.make(call, "scaled_dot_product_attention", out.shape, [q, k, v], names=out.names)
    if fname == "embedding":
        args = bind("F.embedding", call, (("input", "weight"), 2, ("padding_idx",)), list(call.args))
        idx, w = ck.visit(args["input"]), ck.visit(args["weight"])
        if len(w.shape) != 2:
            raise _err(ck, f"F.embedding needs a 2-D weight (num_embeddings, dim), got {fmt_shape(w.shape)}", span, [w])
        return ck.make(call, "embedding", idx.shape + w.shape[1:], [idx, w], names=idx.names + w.names[1:])
    if fname == "cross_entropy":
        args = bind("F.cross_entropy", call, (("input", "target"), 2, ("reduction", "ignore_index",
                                                                         "label_smoothing", "weight")), list(call.args))
        return cross_entropy(ck, call, ck.visit(args["input"]), ck.visit(args["target"]), args.get("reduction"), span)
    if fname == "layer_norm":
        args = bind("F.layer_norm", call, (("input", "normalized_shape", "weight", "bias", "eps"), 2, ()),
                    list(call.args))
        x = ck.visit(args["input"])
        sizes, _, _ = size_args(ck, [args["normalized_shape"]], "normalized_shape")
        if tuple(x.shape[len(x.shape) - len(sizes):]) != sizes or len(sizes) > len(x.shape):
            node = args["normalized_shape"]
            new = f"({shaping.paren(x)}.shape[-1],)"
            raise _err(ck, f"F.layer_norm normalizes the last {len(sizes)} axes of {fmt_shape(x.shape)}, which must "
                       f"be {fmt_shape(sizes)}; to normalize over the features pass {new}", span, [x],
                       (*ck.span(node), new))
        for p in ("weight", "bias"):
            if p in args and not is_none(args[p]):
                w = ck.visit(args[p])
                if w.shape != sizes:
                    raise _err(ck, f"F.layer_norm {p} must have shape {fmt_shape(sizes)}, got {fmt_shape(w.shape)}",
                               span, [x, w])
        node = ck.make(call, "layer_norm", x.shape, [x], names=x.names)
        if x.names and x.names[-1] is not None:
            from explain.check import semantic  # lazy: the rules load only for a named layer_norm

            semantic.layer_norm_axes(ck, node, x, len(sizes), span)
        return node
    if fname in ("softmax", "log_softmax"):
        args = bind(fname, call, (("input", "dim"), 1, ("dtype",)), list(call.args), {"axis": "dim"})
        if "dim" not in args:
            raise UsageError(f"{'F' if functional else 'torch'}.{fname}() needs dim=: without it PyTorch picks an "
                             "axis from the rank (and warns); write dim=-1 for the last axis")
        x = ck.visit(args["input"])
        dim = int_axis(ck, args["dim"], -1, fname)
        shaping.apply(ck, span, [x], rules.reduce, x.shape, dim)
        node = ck.make(call, fname, x.shape, [x], f"dim={dim}", names=x.names)
        return shaping.softmax_over(ck, node, dim, args.get("dim"), span)
    if fname in ELEMENTWISE or fname in ("relu", "gelu", "silu", "dropout", "sigmoid", "tanh"):
        x = ck.visit(call.args[0]) if call.args else None
        if x is None:
            raise UsageError(f"{fname}() needs its input tensor")
        return ck.make(call, fname, x.shape, [x], names=x.names)
    if fname in ("sum", "mean", "max", "logsumexp"):
        args = bind(fname, call, (("input", "dim"), 1, ("keepdim",)), list(call.args), {"axis": "dim"})
        x = ck.visit(args["input"])
        keep = static_bool(ck, args.get("keepdim"), "keepdim")
        node = shaping.reduce(ck, call, fname, x, static_axis(ck, args.get("dim"), None), keep, span)
        if fname == "max" and "dim" in args:
            node.info["pair"] = True
        return node
    # The rest are methods called as functions: torch.transpose(x, 1, 2) is x.transpose(1, 2).
    if not call.args:
        raise UsageError(f"torch.{fname}() needs its input tensor first")
    method = ast.Call(func=ast.Attribute(value=call.args[0], attr=fname, ctx=ast.Load()), args=call.args[1:],
                      keywords=call.keywords)
    ast.copy_location(method, call)
    method.end_lineno, method.end_col_offset = call.end_lineno, call.end_col_offset
    return visit_method(ck, method, fname, ck.visit(call.args[0]), span)


def _where_after_softmax(ck: Checker, node: Node, span: Span) -> Node:
    """``where(mask, -inf, softmax(…))``: a mask applied to the weights instead of the scores."""
    soft = next((c for c in node.children[1:] if "softmax" in origin(c).op), None)
    if soft is not None:
        from explain.check import semantic  # lazy: only a mask on a softmax loads the rules

        semantic.mask_after_softmax(ck, soft, span)
    return node


def bmm(ck: Checker, call: ast.AST, a: Node, b: Node, span: Span) -> Node:
    if len(a.shape) != 3 or len(b.shape) != 3:
        fix = None
        try:
            rules.matmul(a.shape, b.shape)
            start, end = ck.span(call)
            fix = (start, end, f"torch.matmul({a.text}, {b.text})")
        except ShapeError:
            pass
        raise _err(ck, f"torch.bmm takes two 3-D tensors, got {fmt_shape(a.shape)} and {fmt_shape(b.shape)}; for "
                   f"more axes use torch.matmul (or @){': torch.matmul(' + a.text + ', ' + b.text + ')' if fix else ''}",
                   span, [a, b], fix)
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise _err(ck, f"torch.bmm of {fmt_shape(a.shape)} and {fmt_shape(b.shape)} needs equal batch sizes and "
                   f"the left's last size ({a.shape[2]}) to equal the right's middle one ({b.shape[1]}); bmm does not "
                   "broadcast", span, [a, b])
    return ck.combine(call, "bmm", a, b, span)


def masked_fill(ck: Checker, call: ast.AST, x: Node, mask: Node, span: Span) -> Node:
    try:
        out = rules.broadcast(x.shape, mask.shape)
    except ShapeError as err:
        hint, fix = hints.slice_hint(mask, x)
        if fix is None:
            hint, fix = hints.align_hint(mask, x)
        raise _err(ck, f"masked_fill: the mask {fmt_shape(mask.shape)} must broadcast to the tensor "
                   f"{fmt_shape(x.shape)}: {err}{hint}", span, [x, mask], fix) from None
    names, clash = broadcast_names(x.shape, x.names, mask.shape, mask.names)
    if clash:
        raise _err(ck, f"masked_fill: the sizes fit only by coincidence: {clash}", span, [x, mask])
    node = ck.make(call, "masked_fill", out, [x, mask], names=names)
    if "softmax" in origin(x).op:
        from explain.check import semantic  # lazy: only a mask on a softmax loads the rules

        semantic.mask_after_softmax(ck, x, span, node)
    return node


def gather(ck: Checker, call: ast.AST, x: Node, idx: Node, dim: int, span: Span, numpy: bool = False) -> Node:
    what = "take_along_axis" if numpy else "gather"
    if len(idx.shape) != len(x.shape):
        fix = None
        if len(idx.shape) + 1 == len(x.shape) and dim in (-1, len(x.shape) - 1):
            if "rearrange(" in ck.src:
                letters = " ".join(f"a{j}" for j in range(len(idx.shape)))
                new = f'rearrange({idx.text}, "{letters} -> {letters} 1")'
            else:
                new = f"{shaping.paren(idx)}.unsqueeze(-1)" if not numpy else f"{shaping.paren(idx)}[..., None]"
            fix = (idx.start, idx.end, new)
        raise _err(ck, f"{what}: the index {fmt_shape(idx.shape)} must have as many axes as the input "
                   f"{fmt_shape(x.shape)}; give it the gathered axis with size 1"
                   + (f": {fix[2]}" if fix else f", like .unsqueeze({dim}) (or [..., None])"), span, [x, idx], fix)
    k = shaping.apply(ck, span, [x], rules.normalize_axis, dim, len(x.shape))  # type: ignore[arg-type]
    if numpy:
        shape = shaping.apply(ck, span, [x, idx], rules.broadcast, x.shape[:k] + (1,) + x.shape[k + 1:], idx.shape)
        return ck.make(call, what, shape, [x, idx], f"axis={dim}", names=idx.names)
    for i, (s, t) in enumerate(zip(x.shape, idx.shape)):
        if i != k and t > s:
            raise _err(ck, f"gather: index size {t} on axis {i} is larger than the input's {s}", span, [x, idx])
    return ck.make(call, what, idx.shape, [x, idx], f"dim={dim}", names=idx.names)


def linear(ck: Checker, call: ast.AST, x: Node, w: Node, b: Node | None, span: Span) -> Node:
    if len(w.shape) not in (1, 2) or not x.shape:
        raise _err(ck, f"F.linear needs a weight of shape (out_features, in_features), got {fmt_shape(w.shape)}",
                   span, [x, w])
    if x.shape[-1] != w.shape[-1]:
        fix = None
        if len(w.shape) == 2 and x.shape[-1] == w.shape[0]:
            undo = w.op == "transpose" and w.detail == ".T"  # F.linear(h, W_E.T) for a tied (V, C) weight
            fix = (w.start, w.end, shaping.paren(w.children[0]) if undo else f"{shaping.paren(w)}.T")
        hint = f"; pass {fix[2]}, stored as (out, in)" if fix else ""
        raise _err(ck, f"F.linear multiplies by the weight transposed, so x's last size ({x.shape[-1]}) must equal "
                   f"the weight's last ({w.shape[-1]}); the weight is (out_features, in_features){hint}",
                   span, [x, w], fix)
    _, clash = merge_pair(x.names[-1], x.shape[-1], w.names[-1], w.shape[-1])
    if clash:
        raise _err(ck, f"F.linear: the sizes fit only by coincidence: x's last axis against the weight's is {clash}",
                   span, [x, w])
    shape = x.shape[:-1] + w.shape[:-1]
    names = x.names[:-1] + w.names[:-1]
    if b is not None:
        out = shaping.apply(ck, span, [b], rules.broadcast, shape, b.shape)
        if out != shape:
            raise _err(ck, f"F.linear bias {fmt_shape(b.shape)} must broadcast to {fmt_shape(shape)}", span, [b])
    return ck.make(call, "linear", shape, [x, w] + ([b] if b else []), names=names)


def cross_entropy(ck: Checker, call: ast.AST, x: Node, t: Node, reduction: ast.expr | None, span: Span) -> Node:
    """Classes on axis 1: input (N, C, d…) with class-index targets (N, d…), or probabilities of x's shape."""
    if not x.shape:
        raise _err(ck, "F.cross_entropy needs logits with a class axis, got a scalar", span, [x])
    want = x.shape[1:] if len(x.shape) == 1 else (x.shape[0],) + x.shape[2:]
    if len(x.shape) == 1:
        want = ()
    if t.shape not in (want, x.shape):
        fix = None
        hint = ""
        if len(x.shape) == 2 and len(t.shape) > 1 and _prod(t.shape) == x.shape[0]:
            if "rearrange(" in ck.src:
                letters = " ".join(f"a{j}" for j in range(len(t.shape)))
                new = f'rearrange({t.text}, "{letters} -> ({letters})")'
            else:
                new = f"{shaping.paren(t)}.view(-1)"
            fix = (t.start, t.end, new)
            hint = f"; flatten the targets like the logits: {new}"
        elif len(x.shape) == 3 and t.shape == x.shape[:2]:
            last = x.names[-1][0] if x.names[-1] and len(x.names[-1]) == 1 and x.names[-1][0] in ck.b.dims \
                else x.shape[-1]
            xv, tv = f"{shaping.paren(x)}.view(-1, {last})", f"{shaping.paren(t)}.view(-1)"
            start, end = ck.span(call)
            if x.end <= t.start:
                fix = (start, end, ck.src[start:x.start] + xv + ck.src[x.end:t.start] + tv + ck.src[t.end:end])
            hint = (f"; F.cross_entropy wants classes on axis 1, so logits {fmt_shape(x.shape)} read as "
                    f"(N={x.shape[0]}, C={x.shape[1]}, d={x.shape[2]}): flatten both, F.cross_entropy({xv}, {tv})")
        raise _err(ck, f"F.cross_entropy with input {fmt_shape(x.shape)} {fmt_names(x.names)} needs class-index "
                   f"targets of shape {fmt_shape(want)} (or probabilities of the input's shape), got "
                   f"{fmt_shape(t.shape)}{hint}", span, [x, t], fix)
    none = isinstance(reduction, ast.Constant) and reduction.value == "none"
    shape, names = (want, (x.names[:1] + x.names[2:]) if len(x.shape) > 1 else ()) if none else ((), ())
    return ck.make(call, "cross_entropy", shape, [x, t], "reduction=none" if none else "mean", names=names)


def _prod(shape: tuple[int, ...]) -> int:
    total = 1
    for s in shape:
        total *= s
    return total
