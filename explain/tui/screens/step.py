"""The step screen: the whole run, one operation at a time.

It owns the state (the :class:`~explain.tui.state.View` and the :class:`~explain.tui.state.Tour`, as
reactives) and hands it down to its widgets as attributes; widgets post messages up (StepSelected, CellFocused). Every action is
a key in :mod:`explain.tui.keys`; the actions live in mixins by what they change: the tour
(:mod:`~explain.tui.screens.tour_actions`), the view (:mod:`~explain.tui.screens.view_actions`), the run
(:mod:`~explain.tui.screens.run_actions`). Modal screens (search, re-run, help, heads) are imported when opened.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer

from explain.trace import Trace
from explain.tui import keys, layout
from explain.tui.messages import CellFocused, StepSelected
from explain.tui.screens.interp_actions import InterpActions
from explain.tui.screens.run_actions import RunActions
from explain.tui.screens.tour_actions import TourActions
from explain.tui.screens.view_actions import ViewActions
from explain.tui.state import Tour, View
from explain.tui.tutorial import resolve_stops
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.narration import NarrationPane
from explain.tui.widgets.operands import Operands, operands_height
from explain.tui.widgets.predictions import PredictionsPane
from explain.tui.widgets.step_info import StepInfo
from explain.tui.widgets.step_tree import StepTree
from explain.tui.widgets.tensor_view import TensorView


class StepScreen(TourActions, ViewActions, RunActions, InterpActions, Screen):
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
        self._footer: frozenset[str] = frozenset()  # the actions the footer shows (what fits the width)
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
        if self._footer_fit() != self._footer:
            self.refresh_bindings()  # the footer recomposes with the keys that fit this width

    # -- footer ----------------------------------------------------------------------------------------------
    def _footer_fit(self) -> frozenset[str]:
        return keys.footer_actions(self.size.width or 80, lambda name: self.check_action(name, ()) is not False)

    @property
    def active_bindings(self) -> dict[str, Any]:
        """Textual's active bindings, less the keys that do not fit the footer at this width: the Footer is
        their only reader (key presses go through the binding chain, not this map), so a key left out here
        still works, and help (``?``) and the palette list every key."""
        self._footer = self._footer_fit()
        actions = {k.action for k in keys.KEYS}
        return {key: b for key, b in super().active_bindings.items()
                if b.binding.action not in actions or b.binding.action in self._footer}

    def _needs(self, view: View, centre: int) -> layout.Needs:
        """What the panes need for ``view`` at a centre column ``centre`` wide."""
        return needs_of(view, centre, self.tutorial is not None and self.tutorial_on, self.query_one(StepInfo),
                        self.query_one(TensorView), self.query_one(CellPanel), self.query_one(PredictionsPane))

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
        cell.plan_size(*drill_content_size(plan))
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


def needs_of(view: View, centre: int, tutorial: bool, info: StepInfo, tensor: TensorView, panel: CellPanel,
             predictions: PredictionsPane) -> layout.Needs:
    """What the panes need for ``view`` at a centre column ``centre`` wide, from the widgets' own measures
    (none needs to be mounted: a test lays out a step at any size without an app)."""
    info_h = info.height_at(view, centre)
    matrix_w, matrix_h = tensor.needs(view, centre)
    drill_w, _, _ = panel.needs(view, centre)
    beside_w = max(layout.DRILL_MIN_W, min(drill_w, centre - matrix_w - 1))
    if centre >= matrix_w + max(layout.DRILL_MIN_W, min(drill_w, 56)) + 1:
        _, drill_h, drill_min = panel.needs(view, beside_w)
    else:
        _, drill_h, drill_min = panel.needs(view, centre)
        drill_h, drill_min = drill_h + 1, drill_min + 1  # the rule above the drill-down
    mat = view.matrix()
    rows = min(mat.shape[0], 500) if mat is not None else 1  # as TensorView.needs counts them
    return layout.Needs(info_h, matrix_w, matrix_h, drill_w, drill_h, drill_min, operands_height(view),
                        tutorial=tutorial, predictions_h=predictions.needs(view), matrix_min_h=matrix_h - rows + 1)


def drill_content_size(plan: layout.Layout) -> tuple[int, int]:
    """The drill-down's content size in a layout: the pane less its padding (0 1) and its rule (left beside,
    top below)."""
    if plan.side_by_side:
        return plan.drill_w - 3, plan.matrix_h
    return plan.drill_w - 2, plan.drill_h - 1
