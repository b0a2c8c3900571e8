"""What the step screen shows, as one immutable value (:class:`View`), and the pure functions that move it:
clamping a cell and a slice to a step's shape, converting between a 2-D cursor and an output index, finding
the next step of an op kind, matching step names. No Textual here, so all of it is testable without an app."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from explain.render.colour import SCALE_MODES, SCALE_NAMES
from explain.trace import Step, Trace
from explain.trace.slices import full_index, lead_shape, matrix_shape, slice_label, split_index  # noqa: F401 - the view's
from explain.tui.tutorial import Walkthrough, WalkthroughStop, resolve_stops

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


def changed(old: View | None, new: View | None, fields: tuple[str, ...]) -> bool:
    """Whether any of ``fields`` differs between two views (a widget repaints only for what it draws)."""
    if old is None or new is None:
        return old is not new
    return any(getattr(old, f) is not getattr(new, f) and getattr(old, f) != getattr(new, f) for f in fields)


def next_of_kind(trace: Trace, index: int, direction: int) -> int | None:
    """The index of the next (or previous) step with the same op kind, or None."""
    kind = trace[index].op
    i = index + direction
    while 0 <= i < len(trace):
        if trace[i].op == kind:
            return i
        i += direction
    return None


def match_steps(trace: Trace, query: str, limit: int = 200) -> list[Step]:
    """Steps whose name or op kind contains every word of ``query`` (``soft`` finds the softmax steps), names
    starting with it first."""
    words = query.lower().split()
    if not words:
        return list(trace)[:limit]
    hits = [s for s in trace if all(w in s.name.lower() or w in s.op for w in words)]
    hits.sort(key=lambda s: (not s.name.lower().startswith(words[0]), s.index))
    return hits[:limit]


@dataclass(frozen=True)
class Tour:
    """Where the student is in a tutorial: the tutorial, its own run (kept while the student looks at another
    run, so ``t`` can come back to it), the step of every stop, the current stop, whether its answer is shown,
    and whether the student follows the stops (n/p move stop to stop) or has left the path. Its moves are its
    methods: each returns the tour moved."""

    tutorial: Walkthrough
    trace: Trace
    options: dict[str, Any]
    stops: tuple[int, ...]
    stop: int = 0
    answered: bool = False
    following: bool = True

    @classmethod
    def start(cls, tutorial: Walkthrough, trace: Trace, options: dict[str, Any]) -> Tour:
        """The tour of ``tutorial`` over its run ``trace`` (run with ``options``), at its first stop."""
        return cls(tutorial, trace, dict(options), tuple(resolve_stops(trace, tutorial)))

    @property
    def current(self) -> WalkthroughStop:
        return self.tutorial.stops[self.stop]

    @property
    def last(self) -> bool:
        return self.stop == len(self.stops) - 1

    def at(self, stop: int) -> Tour:
        """This tour at stop ``stop`` (clamped), following, its answer hidden."""
        return replace(self, stop=max(0, min(stop, len(self.stops) - 1)), answered=False, following=True)

    def wandering(self) -> Tour:
        """This tour off its path (the stop kept, for ``t``)."""
        return replace(self, following=False)

    def answered_or_why(self) -> tuple[Tour, str | None]:
        """This tour with the stop's answer shown, or unchanged and why not."""
        if not getattr(self.current, "answer", None):
            return self, "This stop asks no question."
        if not self.following:
            return self, "Press t to come back to the stop first."
        return replace(self, answered=True), None

    def off_path(self, view: View) -> bool:
        """Whether ``view`` shows something other than the current stop's step of the tutorial's run."""
        return view.trace is not self.trace or view.index != self.stops[self.stop]

    def stop_view(self, view: View) -> View:
        """``view`` moved to the current stop: the tutorial's run, the stop's step and its cell."""
        moved = replace(view, trace=self.trace).go(self.stops[self.stop])
        digits = getattr(self.current, "precision", None)
        if digits is not None:  # the stop's own decimals (its narration quotes 1.1·10⁻⁷)
            moved = replace(moved, precision=digits)
        cell = getattr(self.current, "cell", None)
        return moved.at(tuple(cell)) if cell is not None else moved
