"""The Textual app: one step screen over a trace, the stylesheet (``app.tcss``), the command palette's entries.

``ExplainApp(trace, tutorial=None)``; with ``pick=True`` the tutorial picker opens over it at start-up
(``explain tutorial`` with no name). Every action of the step screen is also a command in the palette
(Ctrl+P), built from the same key table as the Footer. With ``EXPLAIN_TUI_EXIT_AFTER_FIRST_FRAME`` set, the app
exits right after drawing its first frame (the start-up benchmark uses this).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Iterable
from functools import partial
from typing import Any

from textual.app import App, SystemCommand
from textual.command import CommandPalette
from textual.screen import Screen
from textual.widget import AwaitMount

from explain.core.names import gen_step
from explain.io.pending import discard_all
from explain.render import fit
from explain.trace import Trace
from explain.tui.keys import KEYS, NEEDS_OF, palette_title
from explain.tui.messages import RunFinished, StepSelected
from explain.tui.screens.step import StepScreen
from explain.tui.tutorial import Walkthrough

EXIT_AFTER_FIRST_FRAME = "EXPLAIN_TUI_EXIT_AFTER_FIRST_FRAME"


class Palette(CommandPalette):
    """Textual's command palette, whose PageUp/PageDown survive a terminal too short to lay its list out.

    In a terminal 4 rows high or less the list has options but no lines, and Textual 8.2's
    ``OptionList._move_page`` looks up line 0 of an empty map (``KeyError: 0``), ending the app. A page move
    there has nothing to move over, so it is dropped."""

    def _action_command_list(self, action: str) -> None:
        try:
            super()._action_command_list(action)
        except KeyError:
            pass


class ExplainApp(App[None]):
    """Step through a run of a transformer, one operation at a time."""

    CSS_PATH = "app.tcss"
    TITLE = "explain"

    def __init__(self, trace: Trace, tutorial: Walkthrough | None = None, options: dict[str, Any] | None = None,
                 start: str | None = None, pick: bool = False, cell: tuple[int, ...] | None = None,
                 then: str | None = None, stop: int | None = None) -> None:
        super().__init__()
        self.stop = stop  # the tutorial's stop to open on (0-based; a link's stop=N is N - 1)
        self.pick = pick
        self.trace = trace
        self.tutorial = tutorial
        self.options = dict(options or {})
        self.start = start
        self.cell = cell  # of the start step
        self.then = then  # the step screen's action run as it opens (explain lens: "lens", its screen)

    def get_css_variables(self) -> dict[str, str]:
        """Textual's theme variables and the layout's shared sizes (``$sidebar-mid``, …: :func:`fit.css_variables`),
        whose one home is explain/render/fit.py."""
        return {**super().get_css_variables(), **fit.css_variables()}

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False) -> Any:
        """Textual's, except once the app is ending: a key typed in the same burst as q (``q c``, ``q x``; ``q e`` in a
        tutorial) pushed a dialog that was mounted but never composed, and its on_mount ended the app with a
        traceback (NoMatches: Input). Nothing opens then: the answer is None, as if the dialog were cancelled."""
        if self._exit:  # App.exit sets it; Textual has no public flag for "ending"
            if wait_for_dismiss:
                done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                done.set_result(None)
                return done
            return AwaitMount(self.screen, [])
        return super().push_screen(screen, callback, wait_for_dismiss)

    def action_command_palette(self) -> None:
        """Ctrl+P: the command palette (:class:`Palette`, Textual's with a guard for tiny terminals)."""
        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def get_default_screen(self) -> Screen:
        options = self.options
        if self.tutorial is not None and not options:
            from explain.tui.tutorial import tour_options  # lazy: screen loaded on first use

            options = tour_options(self.tutorial, self.trace)
        screen = StepScreen(self.trace, self.tutorial, no_color=self.no_color, options=options)
        if self.start is not None and self.start in self.trace:
            view = screen.view.go(self.trace[self.start].index)
            screen.set_reactive(StepScreen.view, view if self.cell is None else view.at(self.cell))
        if self.stop is not None and screen.tour is not None:
            screen.set_reactive(StepScreen.tour, screen.tour.at(self.stop))
            screen.set_reactive(StepScreen.view, screen.tour.stop_view(screen.view))
        return screen

    def on_mount(self) -> None:
        self._signals_before = {}
        if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
            for sig in (signal.SIGTERM, signal.SIGHUP):
                self._signals_before[sig] = signal.signal(sig, self._ended_by_signal)
        if os.environ.get(EXIT_AFTER_FIRST_FRAME):
            self.call_after_refresh(self.exit)
        if self.pick:
            self.action_pick_tutorial()
        if self.then is not None:
            then = self.then
            self.call_after_refresh(lambda: isinstance(self.screen, StepScreen) and self.screen.run_action(then))

    def _ended_by_signal(self, signum: int, frame: Any) -> None:
        """SIGTERM or SIGHUP: remove the temporary files of writes under way in worker threads (``X``, the
        dialogs; they could not catch the signal themselves), then end as the signal says."""
        discard_all()
        signal.signal(signum, self._signals_before.get(signum) or signal.SIG_DFL)
        self.exit(return_code=128 + signum)

    def on_unmount(self) -> None:
        for sig, before in getattr(self, "_signals_before", {}).items():
            signal.signal(sig, before if before is not None else signal.SIG_DFL)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The step screen's keys that are the app's (M, U, D) work where that screen's run has what they need."""
        stack = self.screen_stack
        screen = stack[-1] if stack else None
        if isinstance(screen, StepScreen) and action in NEEDS_OF:
            return screen.works(action)
        return True

    def action_pick_tutorial(self) -> None:
        """The tutorial picker over the step screen; the tutorial chosen opens there."""
        from explain.tui.screens.picker import TutorialPicker  # lazy: screen loaded on first use
        from explain.tui.tutorial import shipped  # lazy: screen loaded on first use

        screen = self.screen if isinstance(self.screen, StepScreen) else self.get_default_screen()
        current = getattr(screen.tutorial, "name", None) if screen.tutorial_on else None

        def chosen(name: str | None) -> None:
            if name is not None and name != current:  # the one already on its tour stays as it is
                screen.controller.open_tutorial(name)

        self.push_screen(TutorialPicker(shipped(), current), chosen)

    def action_show_link(self) -> None:
        """U: the link to what is on screen, shown and copied (the step screen under any screen over it)."""
        from explain.tui.link import shown_link  # lazy: only when asked

        screen = next((s for s in reversed(self.screen_stack) if isinstance(s, StepScreen)), None)
        if screen is None:
            return
        url, how = shown_link(screen)
        self.copy_to_clipboard(url)
        self.notify(f"{url}\n{how}", title="link to this screen", timeout=30, markup=False)

    def action_picture(self) -> None:
        """c on every screen, and the palette's Screenshot: the screen on top as an SVG, named after what it shows
        (:func:`explain.tui.picture.save_picture`)."""
        from explain.tui.picture import save_picture  # lazy: loaded on first use

        save_picture(self.screen)

    def action_model_map(self) -> None:
        """The model map (M) over the step screen; Enter there moves the step screen to the part chosen."""
        from explain.tui.screens.model_map import ModelMapScreen  # lazy: screen loaded on first use

        screen = self.screen
        if not isinstance(screen, StepScreen):
            return

        def chosen(index: int | None) -> None:
            if index is not None:  # a tutorial says the jump left its path
                screen.post_message(StepSelected(index, "the model map"))

        self.push_screen(ModelMapScreen(screen.trace, screen.view.index), chosen)

    def action_live_sampling(self) -> None:
        """Live sampling (D) of the new token the step screen is on; Enter there shows the new run's same step
        (or the token's draw, when the new settings recorded no such step)."""
        from explain.engine.resample import token_of  # lazy: screen loaded on first use
        from explain.tui.screens.sampling import SamplingScreen  # lazy: screen loaded on first use

        screen = self.screen
        if not isinstance(screen, StepScreen):
            return
        view = screen.view
        n = token_of(view.trace, view.index)
        assert n is not None  # D needs a generation (explain.tui.needs)
        step = view.step
        b = view.lead[0] if view.lead and step.axes[:1] == ("batch",) else 0

        def chosen(trace: Trace | None) -> None:
            if trace is None:
                return
            name = step.name if step.name in trace else gen_step(n, "next")
            screen.post_message(RunFinished(trace, screen.run_options, at=name, own=False))
            screen.notify(f"new run: {trace.generation.describe()}", timeout=4)

        self.push_screen(SamplingScreen(view.trace, n, b), chosen)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own "Keys" (its key panel) beside our help ("Keys and what the panes show") made two "Keys"
        for command in super().get_system_commands(screen):
            if command.title == "Screenshot":  # Textual's wrote to a Downloads folder that need not exist ("Failed
                # to save screenshot"), under a date for a name: the same picture as c instead, on every screen
                yield SystemCommand("Screenshot", "Save the screen as an SVG picture, named after what it shows "
                                    "(key: c)", self.action_picture)
            elif command.title != "Keys" or not isinstance(screen, StepScreen):
                yield command
        if not isinstance(screen, StepScreen):
            return
        for key in KEYS:
            name = key.action.split("(")[0]
            if key.action == "quit" or screen.check_action(name, ()) is False:
                continue
            yield SystemCommand(palette_title(key), f"key: {key.shown_keys}", partial(screen.run_action, key.action))
        from explain.tui.tutorial import shipped  # lazy: screen loaded on first use

        yield SystemCommand("Tutorials: choose one", "the list of every tutorial", self.action_pick_tutorial)
        for tut in shipped():  # every shipped tutorial opens from the palette
            yield SystemCommand(f"Tutorial {tut.name}: {tut.title}", f"{len(tut.stops)} stops, model {tut.model}",
                                partial(screen.controller.open_tutorial, tut.name))
