"""Indexing, with numpy's rules (PyTorch follows them): ``x[..., :d // 2]``, ``mask[None, None, :T, :T]``,
``W_E[tokens]``, ``logp[np.arange(N), targets]``, and ``x.shape[i]`` as a size.

Whole numbers drop an axis, slices with bounds known from the text keep it at the length Python's slice
gives, ``None`` adds an axis of size 1, ``...`` stands for the axes not indexed, and arrays (integer index
arrays) broadcast together; their axes go where the first of them stood if they are next to each other,
else in front, as numpy documents for advanced indexing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from explain.check.args import claim, static_int
from explain.check.names import Ax, broadcast_names
from explain.core import shape_rules as rules
from explain.core.errors import ShapeError, UsageError
from explain.core.shape_rules import fmt_shape

if TYPE_CHECKING:
    from collections.abc import Callable

    from explain.check.expr import Checker, Node

    Fail = Callable[[str, list[Node]], Exception]  # an error under the index's brackets


def _is_static(ck: Checker, node: ast.expr) -> bool:
    """An index known from the text alone (a number, a --dim name, arithmetic of those), not an array."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return node.id in ck.b.dims and node.id not in ck.env and node.id not in ck.b.arrays
    if isinstance(node, ast.UnaryOp):
        return _is_static(ck, node.operand)
    if isinstance(node, ast.BinOp):
        return _is_static(ck, node.left) and _is_static(ck, node.right)
    if isinstance(node, ast.Subscript):  # x.shape[0]
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"


def visit_subscript(ck: Checker, node: ast.Subscript) -> Node:
    """``x[i]``, ``x[:, :T]``, ``x[..., None]``, ``x[idx]``: numpy's basic and advanced indexing, on shapes."""
    if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return ck.make(node, "size", (), detail=f"= {static_int(ck, node, 'a size')}", claim=claim(ck, node))
    this = ck.visit(node.value)
    if this.info.get("pair") and isinstance(node.slice, ast.Constant) and node.slice.value in (0, 1):
        return ck.make(node, this.op, this.shape, [this], "values" if node.slice.value == 0 else "indices",
                       names=this.names)
    span = (ck.span(node.value)[1], ck.span(node)[1])  # the caret goes under the brackets

    def fail(msg: str, operands: list[Node]) -> Exception:
        return ck.fail(ShapeError(msg), span[0], span[1], operands)

    items, gap = _spelled_out(ck, node, this, fail)
    arrays = [(j, ck.visit(i)) for j, i in enumerate(items)
              if not isinstance(i, ast.Slice) and not (isinstance(i, ast.Constant) and i.value is None)
              and not _is_static(ck, i)]
    for _, a in arrays:
        if a.op in ("eq", "ne", "lt", "gt", "le", "ge", "and", "or", "not"):
            raise UsageError(f"not supported: indexing with a boolean mask ({a.text}): the result's length depends "
                             "on the data; use np.where / masked_fill to keep the shape")
    out, adv_pos = _axes(ck, node, this, items, dict(arrays), fail)
    flat = _place_advanced(out, adv_pos, gap, [a for _, a in arrays], fail) if arrays else out
    return ck.make(node, "index", tuple(s for s, _ in flat), [this] + [a for _, a in arrays],  # type: ignore[misc]
                   names=tuple(a for _, a in flat))  # type: ignore[misc]


def _spelled_out(ck: Checker, node: ast.Subscript, this: Node, fail: Fail) -> tuple[list[ast.expr], int]:
    """The index with one item per axis (``...`` and the missing trailing axes as full slices), and where an
    ellipsis stood when it stands for no axis (-1 if none): it still separates advanced indices."""
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    n_ell = sum(1 for i in items if isinstance(i, ast.Constant) and i.value is Ellipsis)
    if n_ell > 1:
        raise UsageError(f"an index can have only one ellipsis (...), got {n_ell} in {ck.text(node)!r}")
    consumes = [i for i in items if not (isinstance(i, ast.Constant) and i.value in (None, Ellipsis))]
    if len(consumes) > len(this.shape):
        raise fail(f"too many indices: {len(consumes)} for an array of {len(this.shape)} axes {fmt_shape(this.shape)}",
                   [this])
    if not n_ell:
        return items + [ast.Slice()] * (len(this.shape) - len(consumes)), -1
    k = next(j for j, i in enumerate(items) if isinstance(i, ast.Constant) and i.value is Ellipsis)
    gap = k if len(this.shape) == len(consumes) else -1
    return items[:k] + [ast.Slice()] * (len(this.shape) - len(consumes)) + items[k + 1:], gap


def _axes(ck: Checker, node: ast.Subscript, this: Node, items: list[ast.expr], arrays: dict[int, Node],
          fail: Fail) -> tuple[list[tuple[int, Ax] | str], list[int]]:
    """Each item's axes in the result: a kept or sliced axis, a new one for None, "ADV" where the advanced
    (array) indices go; and the items' positions that are advanced."""
    out: list[tuple[int, Ax] | str] = []
    axis = 0
    adv_pos: list[int] = []
    for j, item in enumerate(items):
        if isinstance(item, ast.Constant) and item.value is None:
            out.append((1, None))
            continue
        size, name = this.shape[axis], this.names[axis]
        if isinstance(item, ast.Slice):
            out.append(_sliced(ck, node, item, size, name))
        elif arrays and (j in arrays or _is_static(ck, item)):
            adv_pos.append(j)
            if j not in arrays:
                _check_int(ck, item, size, axis, fail, this)
            if not out or out[-1] != "ADV":
                out.append("ADV")
        else:
            _check_int(ck, item, size, axis, fail, this)
        axis += 1
    return out, adv_pos


def _sliced(ck: Checker, node: ast.Subscript, item: ast.Slice, size: int, name: Ax) -> tuple[int, Ax]:
    """An axis of ``size`` sliced by ``item``: its new length, and its name (x[:T] is T long: the bound names it)."""
    bounds = [None if b is None else static_int(ck, b, "a slice bound") for b in (item.lower, item.upper,
                                                                                 item.step)]
    if bounds[2] == 0:
        raise UsageError(f"slice step cannot be zero in {ck.text(node)!r}")
    new = len(range(*slice(*bounds).indices(size)))
    if bounds == [None, None, None]:
        return new, name
    upto = claim(ck, item.upper) if item.upper is not None and bounds[0] in (None, 0) \
        and bounds[2] in (None, 1) and bounds[1] == new else None
    return new, upto


def _place_advanced(out: list[tuple[int, Ax] | str], adv_pos: list[int], gap: int, idx_nodes: list[Node],
                    fail: Fail) -> list[tuple[int, Ax]]:
    """numpy's rule: the index arrays broadcast together; their axes go where they stand if they are adjacent,
    else first."""
    shape, names = idx_nodes[0].shape, idx_nodes[0].names
    for other in idx_nodes[1:]:
        try:
            shape2 = rules.broadcast(shape, other.shape)
        except ShapeError:
            raise fail(f"index arrays {fmt_shape(shape)} and {fmt_shape(other.shape)} do not broadcast together",
                       idx_nodes) from None
        names, _ = broadcast_names(shape, names, other.shape, other.names)
        shape = shape2
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos))) and not (
        adv_pos[0] < gap <= adv_pos[-1])
    adv = list(zip(shape, names))
    if not adjacent:
        return adv + [o for o in out if o != "ADV"]  # type: ignore[misc]
    flat: list[tuple[int, Ax]] = []
    for o in out:
        flat += adv if o == "ADV" else [o]  # type: ignore[list-item]
    return flat


def _check_int(ck: Checker, item: ast.expr, size: int, axis: int, fail: Fail, this: Node) -> None:
    i = static_int(ck, item, "an index")
    if not -size <= i < size:
        raise fail(f"index {i} is out of range for axis {axis} of size {size}", [this])
