"""The step screen's tour: moving along a tutorial's stops (``n``/``p``, first and last), its narration, the
answer (``a``), wandering off its path and back (``w``, ``t``), and opening another tutorial (at the last stop,
from the palette, from the picker). A mixin for :class:`~explain.tui.screens.step.StepScreen`, which owns the
state (``view``, ``tour``) this changes."""

from __future__ import annotations

from dataclasses import replace

from textual import work

from explain.errors import ExplainError
from explain.tui.tutorial import next_tutorial
from explain.tui.widgets.narration import NarrationPane, stop_markdown
from explain.tutorial import load_tutorial, run_options, run_tutorial


class TourActions:
    """The tutorial's path, for :class:`~explain.tui.screens.step.StepScreen` (which provides view, tour,
    tutorial, tutorial_on, run_options, show_run and the Screen methods)."""

    def _narration(self) -> str:
        tour = self.tour
        if tour is None:
            return ""
        total = len(tour.stops)
        if not tour.following and tour.off_path(self.view):
            shown = (f"`{self.view.step.name}`" if self.view.trace is tour.trace
                     else f"`{self.view.step.name}` of a run of your own")
            return stop_markdown(tour.current, tour.stop, total, tour.answered, True, off_path=shown)
        next_title = None
        if tour.last and tour.following:
            nxt = next_tutorial(tour.tutorial)
            next_title = nxt.title if nxt is not None else None
        return stop_markdown(tour.current, tour.stop, total, tour.answered, wandering=not tour.following,
                             next_title=next_title)

    def _narrate(self) -> None:
        if self._composed:
            self.query_one(NarrationPane).text = self._narration()

    def _go_to_stop(self, i: int) -> None:
        tour = self.tour.at(i)
        self.run_options = dict(tour.options)
        self.view = tour.stop_view(self.view)
        self.tour = tour

    def _step_by(self, delta: int) -> None:
        if self.tutorial_on:
            if delta > 0 and self.tour.last:
                self._offer_next_tutorial()
                return
            self._go_to_stop(self.tour.stop + delta)
        else:
            self.view = self.view.go(self.view.index + delta)

    def _offer_next_tutorial(self) -> None:
        from explain.tui.screens.confirm import ConfirmScreen  # lazy: screen loaded on first use

        nxt = next_tutorial(self.tutorial)
        if nxt is None:
            self.notify("That was the last stop of the last tutorial. Press w to wander through every step, "
                        "or Ctrl+P to open another tutorial.", timeout=5)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.open_tutorial(nxt.name)

        self.app.push_screen(ConfirmScreen(f"That was the last stop. Open the next tutorial, **{nxt.title}**?",
                                           yes="Open it", no="Stay here"), answered)

    def open_tutorial(self, name: str) -> None:
        """Load, run and check a shipped tutorial, and start its tour here (a worker: runs take a moment)."""
        self.notify(f"opening {name}…", timeout=2)
        self._open_tutorial(name)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _open_tutorial(self, name: str) -> None:
        from explain.tui.background import (
            in_background,  # lazy: a screen's module loads on first use (bench_tui_startup)
        )

        try:
            tut = await in_background(lambda: load_tutorial(name))
            trace = await in_background(lambda: run_tutorial(tut))
        except ExplainError as exc:
            self.notify(str(exc), title="cannot open the tutorial", severity="error")
            return
        self.show_run(trace, run_options(tut), tut)

    def action_next(self) -> None:
        self._step_by(1)

    def action_previous(self) -> None:
        self._step_by(-1)

    def action_first(self) -> None:
        if self.tutorial_on:
            self._go_to_stop(0)
        else:
            self.view = self.view.go(0)

    def action_last(self) -> None:
        if self.tutorial_on:
            self._go_to_stop(len(self.tour.stops) - 1)
        else:
            self.view = self.view.go(len(self.trace) - 1)

    def _leave_path(self, how: str) -> None:
        """Free movement (search, go to, the tree, same op kind) leaves the tutorial's path: say so."""
        if self.tutorial_on:
            self.tour = replace(self.tour, following=False)
            self.notify(f"{how} took you off the tutorial's path — `t` returns to stop {self.tour.stop + 1}",
                        timeout=5)

    def action_scroll_narration(self, direction: int) -> None:
        if self.tutorial is None:
            self.notify("no narration: this is not a tutorial", timeout=3)
            return
        pane = self.query_one(NarrationPane)
        pane.scroll_relative(y=direction * max(1, pane.size.height // 2), animate=False)

    def action_wander(self) -> None:
        if self.tour is None:
            return
        if not self.tour.following:
            self.notify("You are already wandering: t comes back to the tutorial.", timeout=3)
            return
        self.tour = replace(self.tour, following=False)

    def action_back_to_tutorial(self) -> None:
        """Back to the stop the student left, in the tutorial's own run (after a re-run too)."""
        if self.tour is not None:
            self._go_to_stop(self.tour.stop)

    def action_answer(self) -> None:
        tour = self.tour
        if tour is None:
            return
        if not getattr(tour.current, "answer", None):
            self.notify("This stop asks no question.", timeout=3)
        elif not tour.following:
            self.notify("Press t to come back to the stop first.", timeout=3)
        else:
            self.tour = replace(tour, answered=True)
