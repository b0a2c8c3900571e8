"""Where a weight that a cell reads came from in its checkpoint file: the drill-down of a step that reads a
parameter of a GGUF run (the embedding's row, a projection's column, a norm's gain) ends with how that weight's
float was rebuilt from the file (its block, the block's scale and offset, the stored integer).

The trace holds the checkpoint's ``weight_origin(name, index)`` as :attr:`explain.trace.Trace.origin`; this
module picks the weight cell from the op's own linkage (:meth:`explain.ops.base.Op.feeds`) and attaches its
explanation to the cell's (:attr:`explain.ops.base.CellExplanation.origin`), so the TUI's drill-down, the
tutorials' walkthrough and any printer of a cell show it with no special case. A cell that reads a whole row or
column of the weight (a dot product) explains the weight of its largest product: the term that mattered most.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from explain import ops
from explain.core.errors import ExplainError
from explain.core.names import param_name
from explain.ops.base import CellExplanation, idx

if TYPE_CHECKING:
    from explain.trace import Step, Trace


def weight_cell(trace: Trace, step: Step, index: tuple[int, ...]) -> tuple[str, tuple[int, ...], int | None] | None:
    """(parameter name, its cell, the term k of the largest product when the cell reads a whole row or column
    of it) of the weight that output cell ``index`` of ``step`` reads, or None when the step reads no parameter
    (or reads it in a way this does not pick one cell from)."""
    import numpy as np  # lazy: numpy off the shape path

    inputs = trace.inputs_of(step)
    feeds = list(ops.get(step.op).feeds(index, inputs, **step.attrs))
    for i, name in enumerate(step.inputs):
        param = param_name(name)
        if name in trace or param not in trace.params or i >= len(feeds) or feeds[i] is None:
            continue
        feed = tuple(feeds[i])
        free = [a for a, f in enumerate(feed) if not isinstance(f, (int, np.integer))]
        if not free and len(feed) == np.ndim(inputs[i]):
            return param, tuple(int(f) for f in feed), None
        if len(free) != 1 or len(feed) != np.ndim(inputs[i]):
            continue
        weights = np.asarray(inputs[i][feed], dtype=float)
        products = np.abs(weights)
        for j, other in enumerate(inputs):  # the operand it is multiplied with, term by term
            if j != i and j < len(feeds) and feeds[j] is not None:
                partner = np.asarray(other[tuple(feeds[j])])
                if partner.shape == weights.shape and partner.dtype.kind == "f":
                    products = np.abs(partner * weights)
                    break
        k = int(np.argmax(products))
        cell = tuple(k if a == free[0] else int(f) for a, f in enumerate(feed))
        return param, cell, k
    return None


def origins(weight_origin: Callable[[str, tuple[int, ...]], CellExplanation]) -> Callable[..., CellExplanation]:
    """A run's :attr:`Trace.origin` from a checkpoint's ``weight_origin(name, index)``: what ``trace.explain``
    calls to add where the weight a cell reads came from (the trace need not know this module)."""
    return partial(with_origin, weight_origin)


def with_origin(weight_origin: Callable[[str, tuple[int, ...]], CellExplanation], trace: Trace, step: Step,
                index: tuple[int, ...], ex: CellExplanation) -> CellExplanation:
    """``ex`` with the origin of the weight its cell reads (``weight_origin``: the checkpoint's);
    a weight the file does not let explain say more about gets one line saying why."""
    if step.output is None or step.op.endswith(".grad"):
        return ex
    picked = weight_cell(trace, step, index)
    if picked is None:
        return ex
    name, cell, k = picked
    try:
        origin = weight_origin(name, cell)
    except ExplainError as exc:
        origin = CellExplanation(cell, float(trace.params[name][cell]), f"{name}{idx(cell)}", lines=[str(exc)])
    lines = ([f"(the weight of the largest product, k = {k})"] if k is not None else []) + list(origin.lines)
    origin = replace(origin, title=f"where {name}{idx(cell)} came from in the file", rows=[], columns=(),
                     lines=lines)
    # a dot product's table has one row per k, k first: a table cut to fit keeps the explained weight's row
    if k is not None and k < len(ex.rows) and ex.rows[k][:1] == (k,):
        return replace(ex, origin=origin, focus=(k, *ex.focus))
    return replace(ex, origin=origin)


__all__ = ["weight_cell", "with_origin", "origins"]
