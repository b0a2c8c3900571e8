"""The step screen: the whole run, one operation at a time.

It owns the state (the :class:`~explain.tui.state.View` and the :class:`~explain.tui.state.Tour`, as
reactives) and hands it down to its widgets as attributes; widgets post messages up (StepSelected, CellFocused). Every action is
a key in :mod:`explain.tui.keys`. Modal screens (search, re-run, help, heads) are imported when opened.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer

from explain.errors import ExplainError
from explain.trace import Trace
from explain.tui import keys, layout
from explain.tui.messages import CellFocused, StepSelected
from explain.tui.screens.run_actions import RunActions
from explain.tui.state import MAX_PRECISION, MIN_PRECISION, SHOW_MODES, Tour, View, next_of_kind
from explain.tui.tutorial import next_tutorial, resolve_stops
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.narration import NarrationPane, stop_markdown
from explain.tui.widgets.operands import Operands, operands_height
from explain.tui.widgets.predictions import PredictionsPane
from explain.tui.widgets.step_info import StepInfo
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView


class StepScreen(RunActions, Screen):
    """Step tree (or tutorial narration) | step header, operands, result matrix | drill-down."""

    BINDINGS = keys.bindings()
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]

    # State, as values with one owner (this screen): the view (the run's trace, step, slice, cell) and the
    # tour (tutorial, stop, answer, on or off its path). None of it repaints the screen itself (that would
    # redraw every widget on every key): watchers hand it down, and each widget repaints only for what it draws.
    view: reactive[View] = reactive(None, repaint=False, init=False)  # type: ignore[arg-type]
    tour: reactive[Tour | None] = reactive(None, repaint=False, init=False)
    show_operands: reactive[bool | None] = reactive(None, repaint=False, init=False)  # None: when there is room
    show_sidebar: reactive[bool] = reactive(True, repaint=False, init=False)

    def __init__(self, trace: Trace, tutorial: Any = None, no_color: bool = False,
                 options: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.run_options: dict[str, Any] = dict(options or {})  # the inputs of the run shown
        self._composed = False
        self._layout: layout.Layout | None = None
        self._layout_key: tuple = ()
        self._enabled: tuple[bool | None, ...] = ()  # the tutorial keys enabled when the footer was built
        view = View(trace, no_color=no_color)
        self.set_reactive(StepScreen.view, view)
        if tutorial is not None:
            tour = Tour(tutorial, trace, dict(self.run_options), tuple(resolve_stops(trace, tutorial)))
            self.set_reactive(StepScreen.tour, tour)
            self.set_reactive(StepScreen.view, tour.stop_view(view))

    # read-only names for the parts of the state that widgets and tests ask about
    @property
    def trace(self) -> Trace:
        return self.view.trace

    @property
    def tutorial(self) -> Any:
        return self.tour.tutorial if self.tour is not None else None

    @property
    def tutorial_on(self) -> bool:
        return self.tour is not None and self.tour.following

    @property
    def stop_index(self) -> int:
        return self.tour.stop if self.tour is not None else 0

    @property
    def answer_shown(self) -> bool:
        return self.tour is not None and self.tour.answered

    # -- layout ------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar"):
                yield StepTree(self.trace, id="tree")
                yield NarrationPane(self._narration(), id="narration")
            with Vertical(id="centre"):
                yield StepInfo(id="info")
                yield Operands(id="operands")
                yield PredictionsPane(id="predictions")
                with Horizontal(id="work"):
                    yield TensorView(id="tensor")
                    yield CellPanel(id="cell")
        yield Footer()

    def on_mount(self) -> None:
        self._composed = True
        self._enabled = self._tutorial_keys()
        self._sync_classes()
        self._push(self.view)
        self.call_after_refresh(self._tree_home)
        self.query_one(TensorView).focus()

    def _tree_home(self) -> None:
        """The tree opens at its root (moving the cursor to the first step scrolled it one line down)."""
        tree = self.query_one(StepTree)
        if tree.cursor_line < tree.scrollable_content_region.height:
            tree.scroll_home(animate=False, immediate=True)

    def _sync_classes(self) -> None:
        self.set_class(self.tour is not None, "-has-tutorial")
        self.set_class(self.tutorial_on, "-tutorial")

    def watch_show_operands(self) -> None:
        self._relayout(force=True)

    def watch_show_sidebar(self) -> None:
        self._relayout(force=True)

    def on_resize(self) -> None:
        self._relayout(force=True)

    def _needs(self, view: View, centre: int) -> layout.Needs:
        """What the panes need for ``view`` at a centre column ``centre`` wide."""
        info = self.query_one(StepInfo).height_at(view, centre)
        matrix_w, matrix_h = self.query_one(TensorView).needs(view, centre)
        panel = self.query_one(CellPanel)
        drill_w, _, _ = panel.needs(view, centre)
        beside_w = max(layout.DRILL_MIN_W, min(drill_w, centre - matrix_w - 1))
        if centre >= matrix_w + max(layout.DRILL_MIN_W, min(drill_w, 56)) + 1:
            _, drill_h, drill_min = panel.needs(view, beside_w)
        else:
            _, drill_h, drill_min = panel.needs(view, centre)
            drill_h, drill_min = drill_h + 1, drill_min + 1  # the rule above the drill-down
        mat = view.matrix()
        rows = min(mat.shape[0], 500) if mat is not None else 1  # as TensorView.needs counts them
        return layout.Needs(info, matrix_w, matrix_h, drill_w, drill_h, drill_min, operands_height(view),
                            tutorial=self.tutorial is not None and self.tutorial_on,
                            predictions_h=self.query_one(PredictionsPane).needs(view),
                            matrix_min_h=matrix_h - rows + 1)

    def _relayout(self, force: bool = False) -> None:
        """Compute the layout for this size and step, and apply what changed."""
        if not self._composed:
            return
        view, (width, height) = self.view, self.size
        if width <= 0 or height <= 0:
            return
        # not the cell: cells of one step have drill-downs of one shape (and one that differs scrolls), so moving
        # the cursor costs no layout
        key = (width, height, view.trace, view.index, view.lead, view.precision, view.show,
               self.show_operands, self.show_sidebar, self.tutorial_on)
        if key == self._layout_key and not force:
            return
        self._layout_key = key
        _, centre = layout.centre_width(width, self.tutorial is not None and self.tutorial_on, self.show_sidebar)
        plan = layout.plan(width, height, self._needs(view, centre), sidebar=self.show_sidebar,
                           operands=self.show_operands)
        if plan == self._layout:
            return
        self._layout = plan
        self._apply(plan)

    def _apply(self, plan: layout.Layout) -> None:
        sidebar = self.query_one("#sidebar")
        sidebar.styles.display = "block" if plan.sidebar_w else "none"
        if plan.sidebar_w:
            sidebar.styles.width = plan.sidebar_w
        self.query_one(StepInfo).styles.height = plan.info_h
        ops = self.query_one(Operands)
        ops.styles.display = "block" if plan.operands_h else "none"
        if plan.operands_h:
            ops.styles.height = plan.operands_h
        preds = self.query_one(PredictionsPane)
        preds.styles.display = "block" if plan.predictions_h else "none"
        if plan.predictions_h:
            preds.styles.height = plan.predictions_h
        work, tensor, cell = self.query_one("#work"), self.query_one(TensorView), self.query_one(CellPanel)
        work.styles.layout = "horizontal" if plan.side_by_side else "vertical"
        self.set_class(plan.side_by_side, "-beside")
        if plan.side_by_side:
            tensor.styles.height = "1fr"
            cell.styles.width = plan.drill_w
            cell.styles.height = "1fr"
        else:
            tensor.styles.height = plan.matrix_h
            cell.styles.width = "1fr"
            cell.styles.height = "1fr"
        hints = []
        if "operands" in plan.hidden:
            hints.append("operands hidden: no room (i)" if self.show_operands is None
                         else "operands: no room")
        if "sidebar" in plan.hidden:
            hints.append("tree hidden (T)")
        if "predictions" in plan.hidden:
            hints.append("predictions: no room")
        tensor.hint = " · ".join(hints)

    # -- state down ----------------------------------------------------------------------------------------
    def watch_view(self, old: View, view: View) -> None:
        if old is not None and old.trace is not view.trace and self._composed:
            self.query_one(StepTree).set_trace(view.trace)
        self._push(view)
        self._narrate()

    def watch_tour(self, old: Tour | None, tour: Tour | None) -> None:
        self._sync_classes()
        if (old is not None and old.following) != (tour is not None and tour.following):
            self._relayout(force=True)  # the narration and the tree swap places
        self._narrate()
        if self._composed and not self.tutorial_on:
            self.query_one(StepTree).show_step(self.view.index)
        # The footer rebuilds (a second frame) on every refresh of the bindings: only when the tutorial keys
        # that are enabled change, not on every stop.
        enabled = self._tutorial_keys()
        if enabled != self._enabled:
            self._enabled = enabled
            self.refresh_bindings()

    def _tutorial_keys(self) -> tuple[bool | None, ...]:
        return tuple(self.check_action(a, ()) for a in sorted(keys.TUTORIAL_ACTIONS))

    def _push(self, view: View) -> None:
        if not self._composed:
            return
        self._relayout()
        for widget in (self.query_one(StepInfo), self.query_one(Operands), self.query_one(TensorView),
                       self.query_one(CellPanel), self.query_one(PredictionsPane)):
            widget.view = view
        if not self.tutorial_on:  # the tree is hidden on the tutorial's path: moving it would cost a frame
            self.query_one(StepTree).show_step(view.index)

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

    def show_run(self, trace: Trace, options: dict[str, Any], tutorial: Any = None) -> None:
        """Show another run (a re-run, another tutorial): the view moves to it, at the step of the same name
        when there is one; with ``tutorial``, a new tour starts at its first stop."""
        self.run_options = dict(options)
        if tutorial is not None:
            self.tour = Tour(tutorial, trace, dict(options), tuple(resolve_stops(trace, tutorial)))
            self._go_to_stop(0)
            return
        name = self.view.step.name
        self.view = replace(self.view, trace=trace, index=trace[name].index if name in trace else 0).clamped()

    # -- messages up ---------------------------------------------------------------------------------------
    @on(StepSelected)
    def _step_selected(self, message: StepSelected) -> None:
        if message.index != self.view.index:
            self._leave_path("the tree")
            self.view = self.view.go(message.index)

    @on(CellFocused)
    def _cell_focused(self, message: CellFocused) -> None:
        self.view = self.view.move(message.row - self.view.cell[0], message.col - self.view.cell[1])

    # -- actions ---------------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The tutorial keys are there for the whole tour (each says when it has nothing to do): a footer that
        # changed from stop to stop would be rebuilt, a second frame on every step.
        if action in keys.TUTORIAL_ACTIONS:
            return self.tour is not None
        return True

    def _step_by(self, delta: int) -> None:
        if self.tutorial_on:
            if delta > 0 and self.tour.last:
                self._offer_next_tutorial()
                return
            self._go_to_stop(self.tour.stop + delta)
        else:
            self.view = self.view.go(self.view.index + delta)

    def _offer_next_tutorial(self) -> None:
        from explain.tui.screens.confirm import ConfirmScreen

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
        from explain.tui.screens.rerun import in_daemon_thread
        from explain.tutorial import load_tutorial, run_options, run_tutorial

        try:
            tut = await in_daemon_thread(lambda: load_tutorial(name))
            trace = await in_daemon_thread(lambda: run_tutorial(tut))
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

    def _kind(self, direction: int) -> None:
        i = next_of_kind(self.trace, self.view.index, direction)
        if i is None:
            self.notify(f"no {'later' if direction > 0 else 'earlier'} {self.view.step.op} step", timeout=3)
            return
        self._leave_path(f"{'] (next' if direction > 0 else '[ (previous'} {self.view.step.op})")
        self.view = self.view.go(i)

    def action_next_kind(self) -> None:
        self._kind(1)

    def action_previous_kind(self) -> None:
        self._kind(-1)

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
        if self.view.no_color:
            self.notify("NO_COLOR is set: cells always show values", timeout=3)
            return
        mode = SHOW_MODES[(SHOW_MODES.index(self.view.show) + 1) % len(SHOW_MODES)]
        self.view = replace(self.view, show=mode)
        self.notify(f"cells show: {dict(both='values on colours', colours='colours', values='values')[mode]}",
                    timeout=2)

    def action_precision(self, delta: int) -> None:
        p = max(MIN_PRECISION, min(MAX_PRECISION, self.view.precision + delta))
        self.view = replace(self.view, precision=p)

    def action_toggle_operands(self) -> None:
        shown = bool(self._layout and self._layout.operands_h)
        self.show_operands = not shown
        if self.show_operands and self._layout and not self._layout.operands_h:
            self.notify(f"no room for the operands at {self.size.height} rows: the drill-down and the result "
                        "come first (make the terminal taller)", timeout=4)

    def action_toggle_sidebar(self) -> None:
        tutorial = self.tutorial is not None and self.tutorial_on
        if not layout.centre_width(self.size.width, tutorial)[0]:
            need = 80 if tutorial else layout.SIDE_MIN
            self.notify(f"the {'narration' if tutorial else 'step tree'} needs {need} columns; this terminal has "
                        f"{self.size.width}. / searches the steps and g goes to one by name.", timeout=5)
            return
        self.show_sidebar = not self.show_sidebar

    def action_scroll_drill(self, direction: int) -> None:
        self.query_one(CellPanel).scroll_body(direction)

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

    def action_search(self) -> None:
        self._open_search("search")

    def action_goto(self) -> None:
        self._open_search("goto")

    def _open_search(self, mode: str) -> None:
        from explain.tui.screens.search import SearchScreen

        def chosen(index: int | None) -> None:
            if index is not None and index != self.view.index:
                self._leave_path("search" if mode == "search" else "go to")
                self.view = self.view.go(index)

        self.app.push_screen(SearchScreen(self.trace, mode, current=self.view.index), chosen)

    def action_heads(self) -> None:
        from explain.tui.screens.heads import HeadsScreen, pattern_step

        step = pattern_step(self.trace, self.view.index)
        if step is None:
            self.notify("this run has no attention pattern with heads", timeout=3)
            return
        self.app.push_screen(HeadsScreen(self.view.go(step.index)))

    def action_help(self) -> None:
        from explain.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    def action_quit(self) -> None:
        self.app.exit()
