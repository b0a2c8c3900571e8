"""What the step screen shows, as one immutable value (:class:`View`: trace, step, slice, cell, how cells are drawn)
and the pure moves of it: clamping a cell and a slice to a step's shape, converting between a 2-D cursor and an
output index. Here, below the TUI, because the pure measures of the panes (:mod:`explain.render.measure`) are
functions of it; :mod:`explain.tui.state` adds the tutorial's tour."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from explain.core.names import gen_number
from explain.ops.base import num
from explain.render.colour import SCALE_MODES, SCALE_NAMES
from explain.trace import Step, Trace
from explain.trace.slices import full_index, lead_shape, matrix_shape, split_index

SHOW_MODES = ("both", "colours", "values")  # what a matrix cell shows: value on a heat colour, colour, value
MIN_PRECISION, MAX_PRECISION = 0, 8


def _clamp(i: int, n: int) -> int:
    return max(0, min(i, n - 1))


@dataclass(frozen=True)
class View:
    """The state of the step screen: which step, which slice, which cell, and how cells are drawn."""

    trace: Trace
    index: int = 0
    lead: tuple[int, ...] = ()
    cell: tuple[int, int] = (0, 0)
    show: str = "both"
    precision: int = 4
    no_color: bool = False
    scale: str = "fixed"  # the colour scale: fixed, row or slice (explain.render.colour.SCALE_MODES)

    @property
    def step(self) -> Step:
        return self.trace[self.index]

    @property
    def values(self) -> bool:
        """Whether cells show their values (always under NO_COLOR, where there are no colours)."""
        return self.show != "colours" or self.no_color

    @property
    def heat(self) -> bool:
        return self.show != "values" and not self.no_color

    @property
    def index_of_cell(self) -> tuple[int, ...]:
        return full_index(self.step, self.lead, self.cell)

    def matrix(self) -> Any:
        """The 2-D array shown: the step's output at this slice (a view, no copy)."""
        out = self.step.output
        if out is None:
            return None
        mat = out[self.lead] if self.lead else out
        if mat.ndim == 0:
            return mat.reshape(1, 1)
        if mat.ndim == 1:
            return mat.reshape(1, -1)
        return mat

    def clamped(self) -> View:
        """This view with the slice and cell moved inside the current step's shape (kept where they fit, so
        moving from q to k to scores stays on the same head and cell)."""
        step = self.step
        dims = lead_shape(step)
        lead = tuple(_clamp(self.lead[i] if i < len(self.lead) else 0, n) for i, n in enumerate(dims))
        rows, cols = matrix_shape(step)
        cell = (_clamp(self.cell[0], rows), _clamp(self.cell[1], cols))
        return replace(self, lead=lead, cell=cell) if (lead, cell) != (self.lead, self.cell) else self

    def go(self, index: int) -> View:
        return replace(self, index=_clamp(index, len(self.trace))).clamped()

    def move(self, d_row: int, d_col: int) -> View:
        rows, cols = matrix_shape(self.step)
        return replace(self, cell=(_clamp(self.cell[0] + d_row, rows), _clamp(self.cell[1] + d_col, cols)))

    def at(self, index: tuple[int, ...]) -> View:
        """This view on the cell ``index`` of the current step's output."""
        lead, cell = split_index(self.step, index)
        return replace(self, lead=lead, cell=cell).clamped()

    def top(self) -> tuple[View, str]:
        """The cursor on its row's drawn token (``f``) when the step is a generated token's pass over the
        vocabulary, else on the row's largest value (a vocabulary's most probable word: a 49,152-word row opens
        at token 0, the answer far off screen); and what it says."""
        v = self.clamped()  # the slice fits the step, so the matrix is 2-D
        mat = v.matrix()
        if mat is None or mat.size == 0 or mat.dtype.kind not in "iuf":
            return v, "no values to look for on this step"
        row = mat[v.cell[0]]
        vocab = v.trace.labels.get("vocab") or []
        words = v.step.axes[-1:] == ("vocab",) and len(vocab) == row.shape[-1]
        gen, n, axes = v.trace.generation, gen_number(v.step.name), v.step.axes
        if words and gen is not None and n is not None and n < len(gen.steps) and gen.steps[n] in v.trace:
            batch = v.lead[axes.index("batch")] if "batch" in axes[:len(v.lead)] else 0
            col = int(v.trace[gen.steps[n]].output[batch, 0])
            return replace(v, cell=(v.cell[0], col)), f"the token drawn here: {col} '{vocab[col]}'"
        col = int(row.argmax())
        what = f"the most probable word: {col} '{vocab[col]}'" if words else f"the row's largest value: column {col}"
        return replace(v, cell=(v.cell[0], col)), f"{what} = {num(float(row[col]), v.precision)}"

    def turn(self, axis: int, delta: int) -> View:
        """The next (delta=1) or previous slice along leading axis ``axis`` (negative counts from the last)."""
        dims = lead_shape(self.step)
        if not dims:
            return self
        axis = axis % len(dims)
        lead = list(self.lead)
        lead[axis] = (lead[axis] + delta) % dims[axis]
        return replace(self, lead=tuple(lead))

    def next_show(self) -> tuple[View, str]:
        """The next of SHOW_MODES (``v``), and what it says; unchanged under NO_COLOR."""
        if self.no_color:
            return self, "NO_COLOR is set: cells always show values"
        view = replace(self, show=SHOW_MODES[(SHOW_MODES.index(self.show) + 1) % len(SHOW_MODES)])
        return view, f"cells show: {dict(both='values on colours', colours='colours', values='values')[view.show]}"

    def next_scale(self) -> tuple[View, str]:
        """The next colour scale (``V``), and what it says; unchanged without colours."""
        if not self.heat:
            return self, f"no colours to scale: {'NO_COLOR is set' if self.no_color else 'v turns them on'}"
        view = replace(self, scale=SCALE_MODES[(SCALE_MODES.index(self.scale) + 1) % len(SCALE_MODES)])
        return view, f"colour scale: {SCALE_NAMES[view.scale]}"

    def with_precision(self, delta: int) -> View:
        return replace(self, precision=max(MIN_PRECISION, min(MAX_PRECISION, self.precision + delta)))
