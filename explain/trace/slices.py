"""The 2-D slice of a tensor, in one place: a step's output of any rank is shown as a matrix (a vector is one row,
a scalar one cell) selected by its leading indices (batch, head), the ``lead``. The render layer, the TUI and the
plain printer all take their slice, its shape, its label and the conversions between a 2-D cell and an output
index from here. No numpy at import."""

from __future__ import annotations

from typing import Any

from explain.trace import Step, Trace


def lead_shape(step: Step) -> tuple[int, ...]:
    """The sizes of the axes that select a 2-D slice (batch, head): all but the last two."""
    return tuple(step.shape[:-2])


def matrix_shape(step: Step) -> tuple[int, int]:
    """Rows and columns of the 2-D view: a vector is one row, a scalar one cell."""
    shape = step.shape
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return 1, shape[0]
    return shape[-2], shape[-1]


def full_index(step: Step, lead: tuple[int, ...], cell: tuple[int, int]) -> tuple[int, ...]:
    """The output index of cell (row, col) of slice ``lead``."""
    nd = len(step.shape)
    if nd == 0:
        return ()
    if nd == 1:
        return (cell[1],)
    return tuple(lead) + tuple(cell)


def split_index(step: Step, index: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, int]]:
    """The slice and the 2-D cell of an output index (the inverse of :func:`full_index`)."""
    nd = len(step.shape)
    if nd == 0:
        return (), (0, 0)
    if nd == 1:
        return (), (0, index[0])
    return tuple(index[:-2]), (index[-2], index[-1])


def as_matrix(step: Step, value: Any, lead: tuple[int, ...]) -> tuple[Any, int, int]:
    """The 2-D view of a step's output for the given leading indices; vectors become one row, scalars 1×1."""
    import numpy as np  # lazy: numpy off the shape path

    arr = np.asarray(value[lead] if lead else value)
    if arr.ndim < 2:  # a vector is one row, a scalar one cell (matrix_shape)
        arr = arr.reshape(1, -1) if arr.ndim == 1 else arr.reshape(1, 1)
    return arr, arr.shape[0], arr.shape[1]


def slice_label(step: Step, lead: tuple[int, ...], trace: Trace | None = None, sep: str = " · ") -> str:
    """``batch 1 of 2 (The dog is happy) · head 1 of 2``: the slice a 2-D view shows, by axis name; a batch
    item of several is named by its words when the trace is given."""
    parts = []
    for axis, i, n in zip(step.axes, lead, step.shape):
        words = f" ({trace.item_text(i)})" if trace is not None and axis == "batch" and n > 1 else ""
        parts.append(f"{axis} {i} of {n}{words}")
    return sep.join(parts)
