"""The step screen's actions that leave the screen's state: export (``x``, ``X``), a picture of the screen
(``c``) and re-run (``e``: the form,
which runs :func:`explain.run` itself and comes back with the new run and its inputs).
A mixin, so the step screen's module stays about navigation."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work

from explain import api
from explain.backward import gradient_partner
from explain.errors import ExplainError
from explain.names import gen_step, in_backward
from explain.registry import MODELS
from explain.sampling import make_sampling
from explain.tui.background import in_background
from explain.tui.messages import RunFailed, RunFinished

GENERATE_MORE = 5  # new tokens per press of G


class RunActions:
    """Export and re-run, for :class:`~explain.tui.screens.step.StepScreen` (which provides trace, tutorial,
    view, tour, run_options, show_run and the Screen methods)."""

    # -- export ----------------------------------------------------------------------------------------------
    def _export(self, steps: list[str] | None) -> None:
        """A numpy script of the step or the run, named by the user."""
        from explain.tui.export import default_name  # lazy: screen loaded on first use

        what = f"step {steps[0]}" if steps else "the whole run"
        self._save(f"Export {what} as a numpy script", default_name(self.trace, steps), ".py",
                   lambda path, overwrite: self._write(steps, path, overwrite))

    def _save(self, what: str, default: str, suffix: str, write: Any) -> None:
        """Ask for the file name (prefilled, in the working directory; checked as the CLI checks ``-o``, the
        message shown beside the field), ask again before replacing a file, then ``write(path, overwrite)``,
        which says where the file went."""

        from explain.tui.export import (
            check_name,  # lazy: a screen's module loads on first use (bench_tui_startup)
            target_path,  # lazy: a screen's module loads on first use (bench_tui_startup)
        )
        from explain.tui.screens.prompt import (
            PromptScreen,  # lazy: a screen's module loads on first use (bench_tui_startup)
        )

        def named(name: str | None) -> None:
            if name is None:
                return
            path = target_path(name, suffix=suffix)
            if not os.path.lexists(path):
                write(path, False)
                return
            from explain.tui.screens.confirm import ConfirmScreen  # lazy: screen loaded on first use

            def answered(yes: bool | None) -> None:
                if yes:
                    write(path, True)
                else:
                    self.notify("nothing written", timeout=3)

            self.app.push_screen(ConfirmScreen(f"`{path}` exists. Replace it?", yes="Replace", no="Keep it"),
                                 answered)

        self.app.push_screen(PromptScreen(f"{what}. File name (in {Path.cwd()}):", default,
                                          lambda name: check_name(name, suffix=suffix)), named)

    def action_picture(self) -> None:
        """The screen as it is now, as an SVG (Textual's screenshot), taken before the file-name dialog opens so
        the dialog is not in the picture."""
        from explain.tui.export import (  # lazy: screen loaded on first use
            picture_name,
            write_picture,
        )

        svg = self.app.export_screenshot(title=f"explain: {self.view.step.name}")

        def write(path: Path, overwrite: bool) -> None:
            try:
                written = write_picture(svg, path, overwrite)
            except (ExplainError, OSError) as exc:
                self.notify(f"picture not saved: {exc}", severity="error", timeout=8)
            except Exception as exc:  # a bug must not end the session
                self.notify(f"picture not saved: internal error: {exc!r}", severity="error", timeout=8)
            else:
                self.notify(f"wrote {written.resolve()}", title="picture saved", timeout=8)

        self._save("Save the screen as an SVG picture", picture_name(self.view.step.name), ".svg", write)

    @work(group="export", exit_on_error=False)
    async def _write(self, steps: list[str] | None, path: Path, overwrite: bool) -> None:
        """In a cancellable background thread: a big run's export does not freeze the screen, and ``q`` quits
        at once (the write is atomic: an abandoned one leaves the old file, its temporary swept later)."""
        from explain.tui.export import export  # lazy: a screen's module loads on first use (bench_tui_startup)
        from explain.tui.tutorial import narration_map  # lazy: a screen's module loads on first use (bench_tui_startup)

        try:
            narration = narration_map(self.trace, self.tutorial) if self._tutorial_run() else None
            if narration is not None and steps:
                narration = {k: v for k, v in narration.items() if k in steps} or None
            trace = self.trace
            written = await in_background(lambda: export(trace, steps, narration, path, overwrite=overwrite))
        except (ExplainError, OSError) as exc:
            self.notify(f"export failed: {exc}", severity="error", timeout=8)
        except Exception as exc:  # a bug must not end the session
            self.notify(f"export failed: internal error: {exc!r}", severity="error", timeout=8)
        else:
            self.notify(f"wrote {written.resolve()}", title="exported", timeout=8)

    def _tutorial_run(self) -> bool:
        """Whether the run shown is the tutorial's own (its narration goes along with an export)."""
        return self.tour is not None and self.trace is self.tour.trace

    def action_export_step(self) -> None:
        self._export([self.view.step.name])

    def action_export_run(self) -> None:
        self._export(None)

    # -- backward (r) ----------------------------------------------------------------------------------------
    def action_gradient(self) -> None:
        """From a value to its gradient and back; on a run without a backward pass, record it first (after the
        forward steps, which are not run again)."""
        if self.trace.backward is None:
            self.notify("recording the backward pass…", timeout=2)
            self._record_backward(self.trace)
            return
        target, why = gradient_partner(self.trace, self.view.step)
        if target is None:
            self.notify(why, timeout=5)
            return
        self._leave_path("r (a value ↔ its gradient)")
        self.view = self.view.go(self.trace[target].index)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _record_backward(self, trace) -> None:
        """In a cancellable background thread (:mod:`explain.tui.background`): ``q`` quits at once, and the
        pass stops at its next op."""
        try:
            done = await in_background(lambda: api.with_backward(trace))
        except ExplainError as exc:
            self.post_message(RunFailed(str(exc)))
        except Exception as exc:  # a bug in the engine must not take the session down with it
            self.post_message(RunFailed(f"internal error: {exc!r}"))
        else:
            self._backward_recorded(trace, done)

    def _backward_recorded(self, old, trace) -> None:
        """The same forward steps at the same indices (a tutorial's stops stay valid), then the gradients; the
        view goes to the gradient of the step shown."""
        if self.view.trace is not old:  # another run came in meanwhile: it wins
            return
        self.run_options = {**self.run_options, "backward": True}
        if self.tour is not None and self.tour.trace is old:  # the tutorial's run, now with its gradients
            self.tour = replace(self.tour, trace=trace)
        target, _ = gradient_partner(trace, self.view.step)
        self.view = replace(self.view, trace=trace).clamped()
        if target is not None:
            self._leave_path("r (a value ↔ its gradient)")
            self.view = self.view.go(trace[target].index)
        added = sum(1 for s in trace if in_backward(s.group))
        self.notify(f"{added} backward steps recorded; r jumps between a value and its gradient",
                    title="backward pass", timeout=4)

    # -- re-run ----------------------------------------------------------------------------------------------
    def action_rerun(self) -> None:
        """The form over the inputs of the run shown; in a tutorial, first ask whether to leave it (its run is
        kept: ``t`` comes back to it)."""
        if not self.tutorial_on:
            self._open_form()
            return
        from explain.tui.screens.confirm import ConfirmScreen  # lazy: screen loaded on first use

        def answered(yes: bool | None) -> None:
            if yes:
                self._open_form()

        self.app.push_screen(ConfirmScreen(
            "Re-running leaves the tutorial for a run of your own. The tutorial's run is kept: "
            f"`t` brings you back to stop {self.stop_index + 1}. Continue?", yes="Re-run", no="Stay"), answered)

    def _open_form(self) -> None:
        from explain.tui.screens.rerun import RerunScreen  # lazy: screen loaded on first use

        def finished(result: tuple[Any, dict[str, Any]] | None) -> None:
            if result is None:
                return
            trace, inputs = result
            if self.tour is not None:  # the tutorial stays, off its path, with its own run kept
                self.tour = replace(self.tour, following=False)
            self.show_run(trace, inputs)
            self.notify(f"{trace.config.model}: {len(trace)} steps", title="run finished", timeout=3)
            self.refresh_bindings()

        note = f"From the tutorial '{self.tutorial.title}': its inputs are filled in." if self.tutorial_on else ""
        self.app.push_screen(RerunScreen(self.trace, self.run_options, note), finished)

    # -- generate -------------------------------------------------------------------------------------------
    def action_generate(self) -> None:
        """Run this run's input again with GENERATE_MORE more new tokens (the same settings and seed, so the
        tokens already drawn come out the same), and go to the first new one."""
        if not MODELS[self.trace.config.model].generates:
            able = ", ".join(m.name for m in MODELS.values() if m.generates)
            self.notify(f"generation needs a model that writes the next token: {able}", severity="warning")
            return
        gen = self.trace.generation
        if gen is None:
            sampling = replace(make_sampling(GENERATE_MORE, seed=self.trace.config.seed), eos=None)
        else:
            sampling = replace(gen.sampling, max_new_tokens=len(gen.steps) + GENERATE_MORE, eos=None)
        options = {**self.run_options, "model": self.trace.config.model, "sampling": sampling}
        if "text" not in options and "tokens" not in options and "checkpoint" not in options:
            options["text"] = " ".join(self.trace.labels.get("pos") or [])
        self.notify(f"generating {sampling.max_new_tokens} tokens, {sampling.describe()}…", timeout=3)
        self._run(options)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _run(self, options: dict[str, Any]) -> None:
        opts = {k: v for k, v in options.items() if k != "model"}
        try:
            message: Any = RunFinished(await in_background(lambda: api.run(options["model"], **opts)), options)
        except ExplainError as exc:
            message = RunFailed(str(exc))
        except Exception as exc:  # a bug in the engine must not take the session down with it
            message = RunFailed(f"internal error: {exc!r}")
        self.post_message(message)

    def on_run_failed(self, message: RunFailed) -> None:  # by name: @on is not collected from a mixin
        self.notify(message.message, title="run refused", severity="error", timeout=10)

    def on_run_finished(self, message: RunFinished) -> None:
        trace, old = message.trace, self.view.trace
        if self.tour is not None and self.tutorial_on:  # a generation from a tutorial leaves its path
            self.tour = replace(self.tour, following=False)
        self.show_run(trace, {k: v for k, v in message.options.items() if k != "model"})
        if trace.generation is not None and message.options.get("sampling") is not None:  # G: the first new token
            before = len(old.generation.steps) if old.generation is not None else 0
            first = gen_step(before, "embed") if before else gen_step(0, "next_logits")
            if first in trace:
                self.view = self.view.go(trace[first].index)
        self.notify(f"{trace.config.model}: {len(trace)} steps", title="run finished", timeout=3)
