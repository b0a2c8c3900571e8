"""Memory layout for PyTorch's ``.view``: which tensors are laid out in memory in their axes' order.

``y.transpose(1, 2).view(B, T, C)`` fits by size and by names, and PyTorch still raises ("view size is not
compatible with input tensor's size and stride … use .reshape(...) instead"): a transpose only swaps strides,
and a view cannot merge axes that are not next to each other in memory. The sizes are known, so the strides
are too: an input (and what a matmul, a reshape or ``.contiguous()`` makes) is contiguous, a transpose or permute
swaps its operand's strides, an elementwise function keeps them. Anything else is left unknown and never
refused. :func:`view_strides` is PyTorch's own rule (``computeStride`` in aten/src/ATen/TensorUtils.cpp).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from explain.check.names import fmt_names
from explain.check.supported import ELEMENTWISE
from explain.core.errors import ShapeError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from explain.check.expr import Checker
    from explain.check.node import Node

Strides = tuple[int, ...]
_FRESH = ("input", "matmul", "bmm", "contiguous", "linear", "embedding", "ones", "zeros", "arange", "cat", "stack",
          "concatenate", "softmax", "log_softmax", "layer_norm", "einsum", "rearrange", "repeat", "reduce", "sum",
          "mean", "max", "min", "var", "std", "amax", "logsumexp", "scaled_dot_product_attention")
_KEEP = (*ELEMENTWISE, "float", "half", "double", "to", "detach", "clone", "type_as", "neg", "pos", "pow",
         "dropout", "masked_fill")


def contiguous(shape: Sequence[int]) -> Strides:
    out, step = [], 1
    for s in reversed(shape):
        out.append(step)
        step *= s
    return tuple(reversed(out))


def strides_of(node: Node, depth: int = 0) -> Strides | None:
    """The strides of ``node``'s values, or None where the checker does not know them."""
    if depth > 200:
        return None
    was = node.info.get("was")
    if was is not None:
        return strides_of(was, depth + 1)
    if "strides" in node.info:
        return node.info["strides"]
    if node.op in _FRESH or (node.op == "name" and not node.children):
        return contiguous(node.shape)
    arrays = [c for c in node.children if c.shape]
    if node.op in _KEEP or (node.op in ("add", "sub", "mul", "div") and len(arrays) == 1):
        if len(arrays) == 1 and arrays[0].shape == node.shape:
            return strides_of(arrays[0], depth + 1)
        return None
    if node.op in ("swapaxes", "transpose", "permute") and len(node.children) == 1:
        inner = strides_of(node.children[0], depth + 1)
        order = _order(node)
        return None if inner is None or order is None else tuple(inner[i] for i in order)
    if node.op in ("view", "reshape") and len(node.children) == 1:
        inner = strides_of(node.children[0], depth + 1)
        if inner is None:
            return None
        out = view_strides(node.children[0].shape, inner, node.shape)
        return out if out is not None or node.op == "view" else contiguous(node.shape)  # reshape copies
    return None


def _order(node: Node) -> list[int] | None:
    """For a transpose-like node, which input axis each output axis is."""
    n = len(node.shape)
    swap = node.info.get("swap")
    if swap is not None:
        order = list(range(n))
        a, b = swap[0] % n, swap[1] % n
        order[a], order[b] = order[b], order[a]
        return order
    if node.detail == ".mT":
        return list(range(n - 2)) + [n - 1, n - 2]
    if node.detail == ".T" or node.detail == "":
        return list(range(n - 1, -1, -1))
    if node.detail.startswith("axes="):
        try:
            axes = [int(a) % n for a in node.detail[5:].strip("()").split(",") if a.strip()]
        except ValueError:
            return None
        return axes if len(axes) == n else None
    return None


def view_strides(old: Sequence[int], strides: Sequence[int], new: Sequence[int]) -> Strides | None:
    """The strides of ``view(new)`` of a tensor of shape ``old`` and ``strides``, or None where PyTorch refuses."""
    if not old:
        return contiguous(new)
    total = 1
    for s in old:
        total *= s
    if total == 0:
        return contiguous(new)
    out = [0] * len(new)
    view_d = len(new) - 1
    chunk = strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk = strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(out) if view_d == -1 else None


def check_view(ck: Checker, node: Node, this: Node, span: tuple[int, int]) -> None:
    """Refuse ``this.view(…)`` where PyTorch would: ``this`` was transposed and the view merges across it."""
    strides = strides_of(this)
    if strides is None or view_strides(this.shape, strides, node.shape) is not None:
        return
    order = sorted(range(len(strides)), key=lambda i: -strides[i])
    memory = tuple(this.names[i] for i in order)
    laid = f" laid out in memory as {fmt_names(memory)}" if fmt_names(memory) else " not laid out in its axes' order"
    operand = this.text if this.atomic else f"({this.text})"
    head = node.text.find(".view", len(operand) - 1)
    new = operand + ".contiguous()" + node.text[head:] if node.text.startswith(operand) and head >= 0 else None
    fix = (node.start, node.end, new) if new else None
    raise ck.fail(ShapeError(f"view of {fmt_shape(this.shape)} {fmt_names(this.names)} to {fmt_shape(node.shape)}: "
                             f"{this.text} is a transposed tensor,{laid}, and view cannot merge axes that are not "
                             "next to each other in memory (PyTorch: 'view size is not compatible with input "
                             "tensor's size and stride'); add .contiguous() first, or use .reshape"
                             + (f": {new}" if new else "")), span[0], span[1], [this], fix=fix)
