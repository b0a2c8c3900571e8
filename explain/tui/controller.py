"""The step screen's long work, in one place and one worker style: runs (``G`` generate more, ``e`` re-run), the
backward pass (``r``), a tutorial opened, the logit lens (``y``), attribution (``A``), patching (``P``), attention
to generated tokens (``W``) and export (``x``, ``X``, ``c``).

Every job is :meth:`Controller.start`: the work in a cancellable daemon thread
(:func:`~explain.tui.background.in_background`, the recorder checks the token between ops) awaited by an
exclusive Textual worker of its group, so ``q`` quits at once whatever runs, and a newer run replaces an older
one; the result comes back on the event loop as a message to the screen (:class:`~explain.tui.messages.RunFinished`,
:class:`~explain.tui.messages.TraceExtended`, :class:`~explain.tui.messages.StepSelected`), which sets its own
state (``view``, ``tour``, ``run_options``): nothing here writes them. An
:class:`~explain.core.errors.ExplainError` is said in one line; a bug in the engine is said too, and the session goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from textual.app import App
from textual.screen import Screen

from explain.core import progress
from explain.core.errors import ExplainError
from explain.core.names import gen_step, in_backward, tokenizer_step
from explain.core.sampling import make_sampling
from explain.engine import api
from explain.engine.backward import gradient_partner
from explain.engine.request import forward_only
from explain.trace import Trace
from explain.tui import interp
from explain.tui.background import in_background
from explain.tui.export import save_export
from explain.tui.messages import RunFinished, StepSelected, TraceExtended
from explain.tui.state import Tour, View
from explain.tui.tutorial import Walkthrough, next_tutorial

GENERATE_MORE = 5  # new tokens per press of G
T = TypeVar("T")


class Host(Protocol):
    """What the controller reads of the step screen (a Screen: ``app``, ``notify``, ``run_worker``); it changes
    the screen's state only by the messages it posts."""

    @property
    def view(self) -> View: ...
    @property
    def tour(self) -> Tour | None: ...
    @property
    def run_options(self) -> dict[str, Any]: ...

    app: App
    notify: Callable[..., None]
    run_worker: Callable[..., Any]
    post_message: Callable[..., bool]


class Controller:
    """The long work of one step screen; :class:`~explain.tui.screens.step_keys.StepKeys` makes its methods keys."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @property
    def trace(self) -> Trace:
        return self.host.view.trace

    def start(self, work: Callable[[], T], done: Callable[[T], None], refused: str = "run refused",
              group: str = "run") -> None:
        """``work()`` in a cancellable thread under an exclusive worker of ``group``, then ``done(result)``."""
        self.host.run_worker(self._job(work, done, refused), group=group, exclusive=group == "run",
                             exit_on_error=False)

    async def _job(self, work: Callable[[], T], done: Callable[[T], None], refused: str) -> None:
        try:
            result = await in_background(work)
        except (ExplainError, OSError) as exc:
            self.host.notify(str(exc), title=refused, severity="error", timeout=10)
        except Exception as exc:  # a bug in the engine must not take the session down with it
            self.host.notify(f"internal error: {exc!r}", title=refused, severity="error", timeout=10)
        else:
            done(result)

    def go(self, index: int | None, how: str, cell: tuple[int, ...] | None = None) -> None:
        """Ask the screen to show step ``index`` (its ``cell``), leaving a tutorial's path by ``how``."""
        if index is not None:
            self.host.post_message(StepSelected(index, how, cell))

    # -- runs --------------------------------------------------------------------------------------------------
    def show(self, trace: Trace, options: dict[str, Any], at: str | None = None) -> None:
        """A run of the student's own on the screen (at step ``at``): a tutorial stays, off its path, its own run
        kept for ``t``."""
        self.host.post_message(RunFinished(trace, options, at=at))

    def generate(self) -> None:
        """This run's input again with GENERATE_MORE more new tokens (the same settings and seed, so the tokens
        already drawn come out the same); the view goes to the first new one."""
        trace = self.trace  # a model that generates: G needs it (explain.tui.needs)
        gen = trace.generation
        if gen is None:
            sampling = replace(make_sampling(GENERATE_MORE, seed=trace.config.seed), eos=None)
        else:
            sampling = replace(gen.sampling, max_new_tokens=len(gen.steps) + GENERATE_MORE, eos=None)
        kept, backward = forward_only(self.host.run_options)  # after r: said in the TUI's terms, never as flags
        opts = {**{k: v for k, v in kept.items() if k != "model"}, "sampling": sampling}
        if "text" not in opts and "tokens" not in opts and "checkpoint" not in opts:
            opts["text"] = " ".join(trace.labels.get("pos") or [])
        before = len(gen.steps) if gen is not None else 0
        first = gen_step(before, "embed") if before else gen_step(0, "next_logits")

        def done(new: Trace) -> None:
            self.show(new, opts, first if new.generation is not None else None)

        past = " from the forward pass (a generation has no backward pass)" if backward or trace.backward else ""
        self.host.notify(f"generating {sampling.max_new_tokens} tokens, {sampling.describe()}{past}…", timeout=3)
        self.start(lambda: api.run(trace.config.model, **opts), done)

    def tokenizer(self) -> None:
        """How the text became ids: to the tokenizer's first step; on a run without them, the run again with
        --tokenizer-steps (its tokenizer's steps first), then there."""
        host, trace = self.host, self.trace
        first = tokenizer_step("text")
        if first in trace:
            self.go(trace[first].index, "o (the tokenizer's steps)")
            return
        options = {k: v for k, v in host.run_options.items() if k != "model"}  # text: o needs it (tui.needs)
        options["tokenizer_steps"] = True

        host.notify("running again with the tokenizer's steps first…", timeout=2)
        self.start(lambda: api.run(trace.config.model, **options), lambda new: self.show(new, options, first))

    def gradient(self) -> None:
        """From a value to its gradient and back; on a run without a backward pass, record it first (after the
        forward steps, which are not run again), then go to the gradient of the step shown."""
        host, trace = self.host, self.trace
        if trace.backward is not None:
            target, why = gradient_partner(trace, host.view.step)
            if target is None:
                host.notify(why, timeout=5)
                return
            self.go(trace[target].index, "r (a value ↔ its gradient)")
            return

        def then(new: Trace) -> None:  # the screen shows the longer trace: to the gradient of the step shown
            target, _ = gradient_partner(new, host.view.step)
            if target is not None:
                self.go(new[target].index, "r (a value ↔ its gradient)")
            added = sum(1 for s in new if in_backward(s.group))
            host.notify(f"{added} backward steps recorded; r jumps between a value and its gradient",
                        title="backward pass", timeout=4)

        host.notify("recording the backward pass…", timeout=2)
        self.start(lambda: api.with_backward(trace),
                   lambda new: host.post_message(TraceExtended(trace, new, {"backward": True}, then)))

    def rerun(self) -> None:
        """The form over the inputs of the run shown (it runs the model itself); in a tutorial, first ask whether
        to leave it (its run is kept: ``t`` comes back to it)."""
        from explain.tui.screens.confirm import ConfirmScreen  # lazy: a screen loaded on first use
        from explain.tui.screens.rerun import RerunScreen  # lazy: a screen loaded on first use

        host, tour = self.host, self.host.tour
        following = tour is not None and tour.following

        def form(yes: bool | None = True) -> None:
            if yes:
                note = f"From the tutorial '{tour.tutorial.title}': its inputs are filled in." if following else ""
                host.app.push_screen(RerunScreen(self.trace, host.run_options, note),
                                     lambda result: self.show(*result) if result is not None else None)

        if not following:
            form()
            return
        assert tour is not None
        host.app.push_screen(ConfirmScreen(
            "Re-running leaves the tutorial for a run of your own. The tutorial's run is kept: "
            f"`t` brings you back to stop {tour.stop + 1}. Continue?", yes="Re-run", no="Stay"), form)

    # -- tutorials ---------------------------------------------------------------------------------------------
    def open_tutorial(self, name: str) -> None:
        """Load, run and check a shipped tutorial, and start its tour on the screen."""
        from explain.tutorial import load_tutorial, run_options, run_tutorial, to_fetch  # lazy: bench_tui_startup

        try:
            fetching = to_fetch(load_tutorial(name))
        except ExplainError:  # said by the worker below, as any tutorial that cannot open
            fetching = None

        def work() -> tuple[Walkthrough, Trace]:
            tutorial = load_tutorial(name)
            with progress.reporting(progress.Plain(quiet=True)):  # bars and notes on stderr would tear the screen
                return tutorial, run_tutorial(tutorial)

        def done(result: tuple[Walkthrough, Trace]) -> None:
            tutorial, trace = result
            self.host.post_message(RunFinished(trace, run_options(tutorial), tutorial, own=False))  # type: ignore[arg-type]

        if fetching:  # a catalogue model not here yet: seconds to a minute, once
            self.host.notify(f"opening {name}: {fetching}…", timeout=30)
        else:
            self.host.notify(f"opening {name}…", timeout=2)
        self.start(work, done, refused="cannot open the tutorial")

    def offer_next_tutorial(self, tutorial: Walkthrough) -> None:
        """After the last stop: the next shipped tutorial, if the student wants it."""
        from explain.tui.screens.confirm import ConfirmScreen  # lazy: a screen loaded on first use

        nxt = next_tutorial(tutorial)
        if nxt is None:
            self.host.notify("That was the last stop of the last tutorial. Press w to wander through every step, "
                             "or Ctrl+P to open another tutorial.", timeout=5)
            return
        self.host.app.push_screen(
            ConfirmScreen(next_question(nxt.title), yes="Open it", no="Stay here"),
            lambda yes: self.open_tutorial(nxt.name) if yes else None)

    def record(self, what: str, record: Callable[[Trace], Trace], then: Callable[[Trace], None]) -> None:
        """``record`` the run's ``what`` after its steps in the thread, put the longer trace in the view, then
        ``then(trace)``."""
        trace = self.trace
        self.host.notify(f"recording {what}…", timeout=2)
        self.start(lambda: record(trace), lambda new: self.host.post_message(TraceExtended(trace, new, then=then)))

    # -- screens whose choice moves the view here -----------------------------------------------------------
    def search(self, mode: str = "search") -> None:
        from explain.tui.screens.search import SearchScreen  # lazy: a screen loaded on first use

        how = "search" if mode == "search" else "go to"
        self.host.app.push_screen(SearchScreen(self.trace, mode, current=self.host.view.index),
                                  lambda i: self.go(i, how))

    def goto(self) -> None:
        self.search("goto")

    def heads(self) -> None:
        """Every layer × head pattern; Enter on a tile: that head's pattern here, at the grid's cell."""
        from explain.tui.screens.heads import HeadsScreen, pattern_step  # lazy: a screen loaded on first use

        host = self.host
        step = pattern_step(self.trace, host.view.index)
        assert step is not None  # m needs a run with an attention pattern (explain.tui.needs)

        def opened(view: View | None) -> None:
            if view is not None:
                self.go(view.index, "the heads view", view.index_of_cell)

        host.app.push_screen(HeadsScreen(host.view.go(step.index)), opened)

    def open_interp(self, screen: Screen) -> None:
        """An interpretability screen (explain.tui.interp); Enter there shows the cell's recorded step here."""
        def chosen(cell: tuple[str, tuple[int, ...]] | None) -> None:
            if cell is not None and cell[0] in self.trace:
                self.go(self.trace[cell[0]].index, "an interpretability view", cell[1])

        self.host.app.push_screen(screen, chosen)

    def lens(self) -> None:
        interp.lens(self)

    def attribution(self) -> None:
        interp.attribution(self)

    def patching(self) -> None:
        interp.patching(self)

    def generated(self) -> None:
        interp.generated(self)

    def experts(self) -> None:
        interp.experts(self)

    # -- export (explain.tui.export asks for the file name; the writing is a job here) ---------------------------
    def export_step(self) -> None:
        save_export(self, [self.host.view.step.name])

    def export_run(self) -> None:
        save_export(self, None)

    def wrote(self, path: Path, title: str = "exported") -> None:
        self.host.notify(f"wrote {path.resolve()}", title=title, timeout=8)


def next_question(title: str) -> str:
    """The question after a tutorial's last stop, the next one's title whole: asked as "Open the next tutorial,
    TITLE?", tutorial 19 ended with "Which position carries the word? Activation patching?" (a title that is
    two sentences, the second turned into a question)."""
    said = title if title[-1:] in ".?!" else f"{title}."
    return f"That was the last stop. The next tutorial is **{said}** Open it?"
