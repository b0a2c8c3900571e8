"""The step screen: the whole run, one operation at a time. It owns the state as reactives, the View (trace, step,
slice, cell) and the Tour (tutorial, stop, answer, on or off its path), binds the view down to its panes and sets
the layout's classes (:mod:`explain.render.fit`); widgets post messages up. Every action is a key in :mod:`keys`: the
moves change the state here (the tour's are methods of its value); the long work is the Controller's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer

from explain.render import fit
from explain.render.measure import fit_of
from explain.trace import Trace
from explain.tui import keys, needs
from explain.tui.controller import Controller
from explain.tui.messages import CellFocused, RunFinished, StepSelected, TraceExtended
from explain.tui.screens.step_keys import StepKeys
from explain.tui.state import Tour, View, next_of_kind
from explain.tui.tutorial import Walkthrough
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.narration import NarrationPane, narration
from explain.tui.widgets.operands import Operands
from explain.tui.widgets.predictions import PredictionsPane
from explain.tui.widgets.step_info import StepInfo
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView


class StepScreen(StepKeys, Screen):
    """Step tree (or tutorial narration) | step header, operands, result matrix | drill-down."""

    BINDINGS = keys.bindings()
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (fit.SIDE_MIN, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (fit.TALL, "-tall")]

    # None of the state repaints the screen itself (that would redraw every widget on every key): it is bound
    # down, and each widget repaints only for what it draws.
    view: reactive[View] = reactive(None, repaint=False, init=False)  # type: ignore[arg-type]
    tour: reactive[Tour | None] = reactive(None, repaint=False, init=False)
    show_operands: reactive[bool | None] = reactive(None, repaint=False, init=False)  # None: when there is room
    show_sidebar: reactive[bool] = reactive(True, repaint=False, init=False)

    def __init__(self, trace: Trace, tutorial: Walkthrough | None = None, no_color: bool = False,
                 options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.run_options: dict[str, Any] = dict(options or {})  # the inputs of the run shown
        self.controller = Controller(self)
        self._composed = False
        self.fit = fit.Fit(frozenset())  # the layout's classes for this size and step (fit.step_classes)
        self._fit_key: tuple = ()
        self._footer = keys.Shown(frozenset(), more=False)  # the actions the footer shows (what fits the width)
        self._have: tuple[needs.Run, frozenset[str]] | None = None  # the run shown and what it has (needs.facts)
        self._footer_facts: frozenset[str] | None = None  # what the run had when the footer was built
        self.set_reactive(StepScreen.view, View(trace, no_color=no_color))
        if tutorial is not None:
            self.set_reactive(StepScreen.tour, Tour.start(tutorial, trace, self.run_options))
            self.set_reactive(StepScreen.view, self.tour.stop_view(self.view))

    @property
    def trace(self) -> Trace:
        return self.view.trace

    @property
    def tutorial(self) -> Walkthrough | None:
        return self.tour.tutorial if self.tour is not None else None

    @property
    def tutorial_on(self) -> bool:
        return self.tour is not None and self.tour.following

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield StepTree(self.trace, id="tree")
                yield NarrationPane(narration(self.tour, self.view), id="narration")
            with Vertical(id="centre"):
                yield StepInfo(id="info").data_bind(StepScreen.view)
                yield Operands(id="operands").data_bind(StepScreen.view)
                yield PredictionsPane(id="predictions").data_bind(StepScreen.view)
                with Horizontal(id="work"):
                    yield TensorView(id="tensor").data_bind(StepScreen.view)
                    yield CellPanel(id="cell").data_bind(StepScreen.view)
        yield Footer()

    def on_mount(self) -> None:
        self._composed = True
        self.set_class(self.tour is not None, "-has-tutorial").set_class(self.tutorial_on, "-tutorial")
        self._relayout()
        self._follow()
        self.call_after_refresh(self.query_one(StepTree).home)
        self.query_one(TensorView).focus()

    def watch_show_operands(self) -> None:
        self._relayout(force=True)

    watch_show_sidebar = watch_show_operands

    def on_resize(self) -> None:
        self._relayout(force=True)
        if self._footer_fit() != self._footer:
            self.refresh_bindings()  # the footer recomposes with the keys that fit this width

    # -- state down ------------------------------------------------------------------------------------------
    def _relayout(self, force: bool = False) -> None:
        """The layout's classes for this size and step (:func:`~explain.render.measure.fit_of`), set before the panes
        get the view, so Textual lays both out at once: one frame. Not per cell: a step's drill-downs are alike."""
        v, (width, height) = self.view, self.size
        key = (width, height, v.trace, v.index, v.lead, v.precision, v.show, self.show_operands, self.show_sidebar,
               self.tutorial_on)
        if self._composed and width > 0 and height > 0 and (force or key != self._fit_key):
            self._fit_key, self.fit = key, fit_of(v, width, height, sidebar=self.show_sidebar,
                                                  operands=self.show_operands, tutorial=self.tutorial_on)
            body = self.query_one("#body")  # not the screen, whose classes restyle the footer too: 27 ms a change
            body.set_classes((body.classes - set(fit.CLASSES)) | self.fit.classes)
            self.query_one(TensorView).hint = self.fit.hint

    def watch_view(self, old: View, view: View) -> None:
        if old is not None and old.trace is not view.trace and self._composed:
            self.query_one(StepTree).set_trace(view.trace)
            self._refresh_keys()
        self._relayout()
        self._follow()

    def watch_tour(self, old: Tour | None, tour: Tour | None) -> None:
        self.set_class(self.tour is not None, "-has-tutorial").set_class(self.tutorial_on, "-tutorial")
        if (old is not None and old.following) != (tour is not None and tour.following):
            self._relayout(force=True)  # the narration and the tree swap places
        self._follow()
        self._refresh_keys()  # the tutorial keys come or go with the tour (a refresh rebuilds the footer: a frame)

    def _follow(self) -> None:
        """The narration and the tree follow the view and the tour."""
        if self._composed:
            self.query_one(NarrationPane).text = narration(self.tour, self.view)
            if not self.tutorial_on:  # the tree is hidden on the tutorial's path: moving it would cost a frame
                self.query_one(StepTree).show_step(self.view.index)

    def _go(self, tour: Tour) -> None:
        """To the tour's current stop."""
        self.run_options = dict(tour.options)
        self.view = tour.stop_view(self.view)
        self.tour = tour

    def leave_path(self, how: str) -> None:
        """Free movement (search, go to, the tree, same op kind) leaves the tutorial's path: say so."""
        if self.tour is not None and self.tour.following:
            self.tour = self.tour.wandering()
            self.notify(f"{how} took you off the tutorial's path — `t` returns to stop {self.tour.stop + 1}", timeout=5)

    def jump(self, index: int | None, how: str) -> None:
        if index is not None and index != self.view.index:
            self.leave_path(how)
            self.view = self.view.go(index)

    # -- messages up -----------------------------------------------------------------------------------------
    @on(StepSelected)
    def _step_selected(self, message: StepSelected) -> None:
        self.jump(message.index, message.how)
        if message.cell is not None:
            self.view = self.view.at(message.cell)

    @on(RunFinished)
    def _run_finished(self, message: RunFinished) -> None:
        """Another run: a ``tutorial``'s starts its tour over; else the view moves to its step ``at``, or of the
        same name as before (if any)."""
        trace, at, self.run_options = message.trace, message.at, dict(message.options)
        if message.tutorial is not None:
            self._go(Tour.start(message.tutorial, trace, message.options))
            return
        if message.own and self.tour is not None:  # a run of the student's own: off the tutorial's path
            self.tour = self.tour.wandering()
        at = at if at is not None and at in trace else self.view.step.name
        view = replace(self.view, trace=trace, index=trace[at].index if at in trace else 0).clamped()
        self.view = view.at(message.cell) if message.cell is not None and at == message.at else view
        if message.own:
            self.notify(f"{trace.config.model}: {len(trace)} steps", title="run finished", timeout=3)

    @on(TraceExtended)
    def _trace_extended(self, message: TraceExtended) -> None:
        """The run shown, longer: the same steps at the same indices (a tutorial's stops stay valid)."""
        old, trace = message.old, message.trace
        if self.view.trace is not old:
            return
        if self.tour is not None and self.tour.trace is old:
            self.tour = replace(self.tour, trace=trace)
        self.view = replace(self.view, trace=trace).clamped()
        self.run_options = {**self.run_options, **message.options}
        if message.then is not None:
            message.then(trace)

    @on(CellFocused)
    def _cell_focused(self, message: CellFocused) -> None:
        self.view = self.view.move(message.row - self.view.cell[0], message.col - self.view.cell[1])

    # -- the tour and the steps ------------------------------------------------------------------------------
    def action_next(self) -> None:
        tour = self.tour
        if tour is not None and tour.following and tour.last:
            self.controller.offer_next_tutorial(tour.tutorial)
        else:
            self.action_step(1)

    def action_previous(self) -> None:
        self.action_step(-1)

    def action_step(self, delta: int) -> None:
        if self.tour is not None and self.tour.following:
            self._go(self.tour.at(self.tour.stop + delta))
        else:
            self.view = self.view.go(self.view.index + delta)

    def action_first(self) -> None:
        self.action_step(-len(self.trace))

    def action_last(self) -> None:
        self.action_step(len(self.trace))

    def action_next_kind(self, direction: int = 1) -> None:
        i = next_of_kind(self.trace, self.view.index, direction)
        if i is None:
            self.notify(f"no {'later' if direction > 0 else 'earlier'} {self.view.step.op} step", timeout=3)
        self.jump(i, f"{'] (next' if direction > 0 else '[ (previous'} {self.view.step.op})")

    def action_previous_kind(self) -> None:
        self.action_next_kind(-1)

    def action_wander(self) -> None:
        if self.tour is not None:
            if not self.tour.following:
                self.notify("You are already wandering: t comes back to the tutorial.", timeout=3)
            self.tour = self.tour.wandering()

    def action_back_to_tutorial(self) -> None:
        """Back to the stop the student left, in the tutorial's own run (after a re-run too)."""
        if self.tour is not None:
            self._go(self.tour.at(self.tour.stop))

    def action_answer(self) -> None:
        if self.tour is not None:
            self.tour, why = self.tour.answered_or_why()
            if why:
                self.notify(why, timeout=3)

    def action_scroll_narration(self, direction: int) -> None:
        self.query_one(NarrationPane).scroll_half(direction)

    # -- the view ---------------------------------------------------------------------------------------------
    def action_move(self, d_row: int, d_col: int) -> None:
        self.view = self.view.move(d_row, d_col)

    def action_page(self, d_row: int, d_col: int) -> None:
        rows, cols = self.query_one(TensorView).page
        self.view = self.view.move(d_row * rows, d_col * cols)

    def action_turn(self, axis: int, delta: int) -> None:
        if not self.view.step.shape[:-2]:
            self.notify("this step has no slices: it is 2-D or smaller", timeout=3)
            return
        self.view = self.view.turn(axis, delta)

    def action_cycle_show(self) -> None:
        self.view, said = self.view.next_show()
        self.notify(said, timeout=3)

    def action_cycle_scale(self) -> None:
        self.view, said = self.view.next_scale()
        self.notify(said, timeout=3)

    def action_precision(self, delta: int) -> None:
        self.view = self.view.with_precision(delta)

    def action_toggle_operands(self) -> None:
        self.show_operands = "-no-operands" in self.fit.classes
        if self.show_operands and "-no-operands" in self.fit.classes:
            self.notify(f"no room for the operands at {self.size.height} rows: the drill-down and the result "
                        "come first (make the terminal taller)", timeout=4)

    def action_toggle_sidebar(self) -> None:
        why = fit.no_room_for_sidebar(self.size.width, self.tutorial_on)
        if why:
            self.notify(why, timeout=5)
        else:
            self.show_sidebar = not self.show_sidebar

    def action_scroll_drill(self, direction: int) -> None:
        self.query_one(CellPanel).scroll_body(direction)

    def action_help(self) -> None:
        from explain.tui.screens.help import HelpScreen  # lazy: a screen loaded on first use

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()
