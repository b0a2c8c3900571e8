"""The step screen's state beyond what it shows: the tutorial's :class:`Tour` (its stops, the current one, on or off
its path), and the pure functions over a run that its keys use (the next step of an op kind, matching step
names). :class:`~explain.render.view.View`, what the screen shows, lives in render (the pure measures read it) and
is re-exported here. No Textual here, so all of it is testable without an app."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from explain.render.view import MAX_PRECISION, MIN_PRECISION, SHOW_MODES, View  # noqa: F401 - the screen's names
from explain.trace import Step, Trace
from explain.trace.slices import full_index, lead_shape, matrix_shape, slice_label, split_index  # noqa: F401 - the view's
from explain.tui.tutorial import Walkthrough, WalkthroughStop, resolve_stops


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
