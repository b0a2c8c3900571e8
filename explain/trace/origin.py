"""Where each weight of a run came from in its checkpoint file, as data on the trace (:attr:`Trace.origin`).

A GGUF file stores its weights quantized, in its own names and layout; the run reads them dequantized, under the
registry's names. :class:`WeightOrigins` says, per parameter, where it sits in the file (:class:`WeightSource`:
the stored tensor, its type, how an index of the run's parameter maps to the stored row and column) or why the
file does not let explain say more (:class:`Unexplained`). The checkpoint reader builds it
(:meth:`explain.checkpoints.gguf.GGUFCheckpoint.weight_origins`); the trace holds it and nothing callable.

:func:`with_origin` is what ``Trace.explain`` ends a cell's explanation with: it picks the weight cell the output
cell reads from the op's own linkage (:meth:`explain.ops.base.Op.feeds`) and attaches how that weight's float was
rebuilt from the file (:func:`explain_weight`, from :mod:`explain.ops.quantized`) as
:attr:`explain.ops.base.CellExplanation.origin`, so the TUI's drill-down, the tutorials' walkthrough and any
printer of a cell (``render/``) show it with no special case. A cell that reads a whole row or column of the weight
(a dot product) explains the weight of its largest product: the term that mattered most.

It imports no numpy at import time (the trace's module does not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from explain import ops
from explain.core.errors import ExplainError, InputError
from explain.core.names import param_name
from explain.ops.base import CellExplanation, idx, num

if TYPE_CHECKING:
    from explain.trace.trace import Step, Trace

# How an index of the run's parameter maps to the stored tensor (row, column): "vector" [i] is value i (a norm's
# gain); "rows" [i, j] is row i, column j (the embedding); "columns" [i, j] is row j, column i (a matrix the run
# reads transposed); "heads" [s, i, j] is row s·d_head + j, column i (a projection split into heads).
Cells = Literal["vector", "rows", "columns", "heads"]


@dataclass(frozen=True, eq=False)
class WeightSource:
    """Where parameter ``param`` sits in its checkpoint file (``file``)."""

    param: str
    file: str
    tensor: str  # the stored tensor's name: blk.0.attn_q.weight
    qtype: str  # how it is stored: Q8_0, Q4_0, Q4_1 (blocks explain explains), F32, F16 (read as is), or another
    data: Any = field(repr=False)  # the stored tensor as the file holds it (memory-mapped): block bytes or floats
    cells: Cells
    d_head: int = 0  # "heads": the width of a head
    permuted: bool = False  # the q/k rows are stored permuted for interleaved RoPE (llama.cpp's converter)
    order: tuple[int, ...] = ()  # a run in the interleaved layout: the reader's column of each run column of the
    # last axis (explain.checkpoints.layout)
    plus_one: bool = False  # the file stores 1 + w (Gemma's norm gains): the run's w is the stored value − 1


@dataclass(frozen=True)
class Unexplained:
    """A parameter the file does not let explain say more about, and why (one line)."""

    param: str
    reason: str


@dataclass(frozen=True)
class WeightOrigins:
    """Where every weight of a run came from: the file, and per parameter name its source or why there is none."""

    file: str
    sources: Mapping[str, WeightSource | Unexplained]


def stored_cell(source: WeightSource, index: tuple[int, ...]) -> tuple[int | None, int]:
    """(row, column) in the stored tensor of the reader's cell ``index`` (row None: a vector)."""
    if source.cells == "vector":
        return None, index[0]
    if source.cells == "rows":
        return index[0], index[1]
    if source.cells == "columns":
        return index[1], index[0]
    m = source.d_head
    s, i, j = index
    if source.permuted:  # Hugging Face's row j of head s sits at row 2j (j < m/2) or 2(j − m/2) + 1 in the file
        return s * m + (2 * j if j < m // 2 else 2 * (j - m // 2) + 1), i
    return s * m + j, i


def explain_weight(source: WeightSource, index: tuple[int, ...]) -> CellExplanation:
    """How the float of ``source.param`` at ``index`` (the run's cell) was rebuilt from the file: its stored row,
    block, scale, offset and integer for a quantized tensor; for a float one (F32, F16: the norms), that it is read
    as is. Refused in one line for another tensor type."""
    from explain.ops.quantized import BLOCK_BYTES, explain_cell, explain_float  # lazy: numpy off the shape path

    index = tuple(index)
    if source.order:  # the run's column of a reordered weight is the reader's column order[c]
        index = (*index[:-1], source.order[index[-1]])
    row, col = stored_cell(source, index)
    tensor, qtype, name = source.tensor, source.qtype, source.param
    stored = f"value {col} of {tensor}" if row is None else f"row {row} of {tensor}, column {col}"
    note = "(its q/k rows are stored permuted for interleaved RoPE)" if source.permuted else ""
    if qtype in ("F32", "F16"):
        data = source.data if row is None else source.data[row]
        ex = explain_float(float(data[col]), qtype, col, name, index, stored, note)
    elif qtype in BLOCK_BYTES:
        ex = explain_cell(source.data[row], qtype, col, name, index, stored, note)
    else:
        raise InputError(f"'{tensor}' is stored as {qtype}: explain explains Q8_0, Q4_0 and Q4_1 blocks")
    if not source.plus_one:
        return ex
    kept = ex.value
    return CellExplanation(ex.index, kept - 1.0, ex.title, lines=[
        *ex.lines, f"the file stores 1 + w (llama.cpp's converter added the 1): w = {num(kept, 8)} − 1 = "
                   f"{num(kept - 1.0, 8)}; the run's RMSNorm adds the 1 back, once"])


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


def with_origin(origins: WeightOrigins, trace: Trace, step: Step, index: tuple[int, ...],
                ex: CellExplanation) -> CellExplanation:
    """``ex`` with the origin of the weight its cell reads (from ``origins``, the trace's); a weight the file does
    not let explain say more about gets one line saying why."""
    if step.output is None or step.op.endswith(".grad"):
        return ex
    picked = weight_cell(trace, step, index)
    if picked is None:
        return ex
    name, cell, k = picked
    source = origins.sources.get(name)
    try:
        if not isinstance(source, WeightSource):
            raise InputError(source.reason if source is not None else f"'{name}' is no weight of '{origins.file}'")
        origin = explain_weight(source, cell)
    except ExplainError as exc:
        origin = CellExplanation(cell, float(trace.params[name][cell]), f"{name}{idx(cell)}", lines=[str(exc)])
    lines = ([f"(the weight of the largest product, k = {k})"] if k is not None else []) + list(origin.lines)
    origin = replace(origin, title=f"where {name}{idx(cell)} came from in the file", rows=[], columns=(),
                     lines=lines)
    # a dot product's table has one row per k, k first: a table cut to fit keeps the explained weight's row
    if k is not None and k < len(ex.rows) and ex.rows[k][:1] == (k,):
        return replace(ex, origin=origin, focus=(k, *ex.focus))
    return replace(ex, origin=origin)


__all__ = ["Unexplained", "WeightOrigins", "WeightSource", "explain_weight", "stored_cell", "weight_cell",
           "with_origin"]
