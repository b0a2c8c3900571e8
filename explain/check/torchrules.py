"""PyTorch's shape rules where they differ from numpy's, shared by its functions and methods.

``torch.bmm`` takes exactly 3-D tensors with equal batch sizes (no broadcasting); ``masked_fill``'s mask and
tensor broadcast together; ``gather``'s index has the tensor's rank and gives its own shape (numpy's
``take_along_axis`` broadcasts it); ``F.linear`` takes the weight as (out_features, in_features);
``F.cross_entropy`` wants classes on axis 1 ((N, C) or (N, C, d1, …)). Below both :mod:`explain.check.torchops`
(``torch.X``/``F.X``) and :mod:`explain.check.methods` (``x.bmm(y)``), which spell the calls.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check import hints, shaping
from explain.check.names import broadcast_names, fmt_names, merge_pair
from explain.check.node import Node, origin
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Checker

Span = tuple[int, int]


def fail(ck: Checker, msg: str, span: Span, operands: list[Node], fix: tuple[int, int, str] | None = None) -> Exception:
    """A mismatch from one of these rules, with the operands under the caret."""
    return ck.fail(ShapeError(msg), span[0], span[1], operands, fix=fix)


def where_after_softmax(ck: Checker, node: Node, span: Span) -> Node:
    """``where(mask, -inf, softmax(…))``: a mask applied to the weights instead of the scores."""
    soft = next((c for c in node.children[1:] if "softmax" in origin(c).op), None)
    if soft is not None:
        from explain.check import semantic  # lazy: only a mask on a softmax loads the rules

        semantic.mask_after_softmax(ck, soft, span)
    return node


def bmm(ck: Checker, call: ast.AST, a: Node, b: Node, span: Span) -> Node:
    """``torch.bmm``: two 3-D tensors with equal batch sizes; no broadcasting."""
    if len(a.shape) != 3 or len(b.shape) != 3:
        fix = None
        try:
            rules.matmul(a.shape, b.shape)
            start, end = ck.span(call)
            fix = (start, end, f"torch.matmul({a.text}, {b.text})")
        except ShapeError:
            pass
        raise fail(ck, f"torch.bmm takes two 3-D tensors, got {fmt_shape(a.shape)} and {fmt_shape(b.shape)}; for "
                   f"more axes use torch.matmul (or @){': torch.matmul(' + a.text + ', ' + b.text + ')' if fix else ''}",
                   span, [a, b], fix)
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise fail(ck, f"torch.bmm of {fmt_shape(a.shape)} and {fmt_shape(b.shape)} needs equal batch sizes and "
                   f"the left's last size ({a.shape[2]}) to equal the right's middle one ({b.shape[1]}); bmm does not "
                   "broadcast", span, [a, b])
    return ck.combine(call, "bmm", a, b, span)


def masked_fill(ck: Checker, call: ast.AST, x: Node, mask: Node, span: Span) -> Node:
    """``x.masked_fill(mask, v)``: the mask broadcasts to the tensor; after a softmax, a warning."""
    try:
        out = rules.broadcast(x.shape, mask.shape)
    except ShapeError as err:
        hint, fix = hints.slice_hint(mask, x)
        if fix is None:
            hint, fix = hints.align_hint(mask, x)
        raise fail(ck, f"masked_fill: the mask {fmt_shape(mask.shape)} must broadcast to the tensor "
                   f"{fmt_shape(x.shape)}: {err}{hint}", span, [x, mask], fix) from None
    names, clash = broadcast_names(x.shape, x.names, mask.shape, mask.names)
    if clash:
        raise fail(ck, f"masked_fill: the sizes fit only by coincidence: {clash}", span, [x, mask])
    node = ck.make(call, "masked_fill", out, [x, mask], names=names)
    if "softmax" in origin(x).op:
        from explain.check import semantic  # lazy: only a mask on a softmax loads the rules

        semantic.mask_after_softmax(ck, x, span, node)
    return node


def gather(ck: Checker, call: ast.AST, x: Node, idx: Node, dim: int, span: Span, numpy: bool = False) -> Node:
    """``x.gather(dim, idx)`` / ``np.take_along_axis``: the index has the input's rank."""
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
        raise fail(ck, f"{what}: the index {fmt_shape(idx.shape)} must have as many axes as the input "
                   f"{fmt_shape(x.shape)}; give it the gathered axis with size 1"
                   + (f": {fix[2]}" if fix else f", like .unsqueeze({dim}) (or [..., None])"), span, [x, idx], fix)
    k = shaping.apply(ck, span, [x], rules.normalize_axis, dim, len(x.shape))  # type: ignore[arg-type]
    if numpy:
        shape = shaping.apply(ck, span, [x, idx], rules.broadcast, x.shape[:k] + (1,) + x.shape[k + 1:], idx.shape)
        return ck.make(call, what, shape, [x, idx], f"axis={dim}", names=idx.names)
    for i, (s, t) in enumerate(zip(x.shape, idx.shape)):
        if i != k and t > s:
            raise fail(ck, f"gather: index size {t} on axis {i} is larger than the input's {s}", span, [x, idx])
    return ck.make(call, what, idx.shape, [x, idx], f"dim={dim}", names=idx.names)


def linear(ck: Checker, call: ast.AST, x: Node, w: Node, b: Node | None, span: Span) -> Node:
    """``F.linear(x, W, b)``: the weight is (out_features, in_features)."""
    if len(w.shape) not in (1, 2) or not x.shape:
        raise fail(ck, f"F.linear needs a weight of shape (out_features, in_features), got {fmt_shape(w.shape)}",
                   span, [x, w])
    if x.shape[-1] != w.shape[-1]:
        fix = None
        if len(w.shape) == 2 and x.shape[-1] == w.shape[0]:
            undo = w.op == "transpose" and w.detail == ".T"  # F.linear(h, W_E.T) for a tied (V, C) weight
            fix = (w.start, w.end, shaping.paren(w.children[0]) if undo else f"{shaping.paren(w)}.T")
        hint = f"; pass {fix[2]}, stored as (out, in)" if fix else ""
        raise fail(ck, f"F.linear multiplies by the weight transposed, so x's last size ({x.shape[-1]}) must equal "
                   f"the weight's last ({w.shape[-1]}); the weight is (out_features, in_features){hint}",
                   span, [x, w], fix)
    _, clash = merge_pair(x.names[-1], x.shape[-1], w.names[-1], w.shape[-1])
    if clash:
        raise fail(ck, f"F.linear: the sizes fit only by coincidence: x's last axis against the weight's is {clash}",
                   span, [x, w])
    shape = x.shape[:-1] + w.shape[:-1]
    names = x.names[:-1] + w.names[:-1]
    if b is not None:
        out = shaping.apply(ck, span, [b], rules.broadcast, shape, b.shape)
        if out != shape:
            raise fail(ck, f"F.linear bias {fmt_shape(b.shape)} must broadcast to {fmt_shape(shape)}", span, [b])
    return ck.make(call, "linear", shape, [x, w] + ([b] if b else []), names=names)


def cross_entropy(ck: Checker, call: ast.AST, x: Node, t: Node, reduction: ast.expr | None, span: Span) -> Node:
    """Classes on axis 1: input (N, C, d…) with class-index targets (N, d…), or probabilities of x's shape."""
    if not x.shape:
        raise fail(ck, "F.cross_entropy needs logits with a class axis, got a scalar", span, [x])
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
        raise fail(ck, f"F.cross_entropy with input {fmt_shape(x.shape)} {fmt_names(x.names)} needs class-index "
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
