"""The step screen's actions that leave the screen's state: export (``x``, ``X``) and re-run (``e``: the form,
a worker awaiting :func:`explain.run` in a daemon thread, and the result or the engine's error coming back as a message).
A mixin, so the step screen's module stays about navigation."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

from textual import work

from explain.errors import ExplainError
from explain.tui.messages import RunFailed, RunFinished
from explain.tui.widgets.step_tree import StepTree

GENERATE_MORE = 5  # new tokens per press of G


class RunActions:
    """Export and re-run, for :class:`~explain.tui.screens.step.StepScreen` (which provides trace, tutorial,
    view, run_options and the Screen methods)."""

    # -- export ----------------------------------------------------------------------------------------------
    def _export(self, steps: list[str] | None) -> None:
        from explain.tui.export import export
        from explain.tui.tutorial import narration_map

        try:
            narration = narration_map(self.trace, self.tutorial) if self.tutorial is not None else None
            if narration is not None and steps:
                narration = {k: v for k, v in narration.items() if k in steps} or None
            path = export(self.trace, steps, narration)
        except ImportError:
            self.notify("export is not available yet", severity="warning")
        except (ExplainError, OSError) as exc:
            self.notify(f"export failed: {exc}", severity="error", timeout=8)
        else:
            self.notify(f"wrote {path}", title="exported", timeout=6)

    def action_export_step(self) -> None:
        self._export([self.view.step.name])

    def action_export_run(self) -> None:
        self._export(None)

    # -- re-run ----------------------------------------------------------------------------------------------
    def action_rerun(self) -> None:
        from explain.tui.screens.rerun import RerunScreen, defaults_from

        def submitted(options: dict[str, Any] | None) -> None:
            if options is not None:
                self.notify(f"running {options['model']}…", timeout=2)
                self._run(options)

        self.app.push_screen(RerunScreen(defaults_from(self.trace, self.run_options)), submitted)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _run(self, options: dict[str, Any]) -> None:
        # The engine runs in a daemon thread that this worker awaits, not in Textual's thread worker: those
        # come from the executor that Python joins at exit, so a long run would keep the process alive after
        # 'q'. Quitting (or a newer re-run, exclusive=True) cancels this worker and abandons the thread.
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()

        def engine() -> None:
            from explain.api import run

            opts = {k: v for k, v in options.items() if k != "model"}
            try:
                result: Any = RunFinished(run(options["model"], **opts), options)
            except ExplainError as exc:
                result = RunFailed(str(exc))
            except Exception as exc:  # a bug in the engine must not take the session down with it
                result = RunFailed(f"internal error: {exc!r}")
            try:
                loop.call_soon_threadsafe(lambda: done.done() or done.set_result(result))
            except RuntimeError:  # the app has quit and its loop is closed: nobody is waiting
                pass

        threading.Thread(target=engine, name="explain-run", daemon=True).start()
        self.post_message(await done)

    # -- generate -------------------------------------------------------------------------------------------
    def action_generate(self) -> None:
        """Run this run's input again with GENERATE_MORE more new tokens (the same settings and seed, so the
        tokens already drawn come out the same), and go to the first new one."""
        from dataclasses import replace as with_

        from explain.models import MODELS
        from explain.sampling import make_sampling

        if not MODELS[self.trace.config.model].generates:
            able = ", ".join(m.name for m in MODELS.values() if m.generates)
            self.notify(f"generation needs a model that writes the next token: {able}", severity="warning")
            return
        gen = self.trace.meta.get("generation")
        if gen is None:
            sampling = with_(make_sampling(GENERATE_MORE, seed=self.trace.config.seed), eos=None)
        else:
            sampling = with_(gen["sampling"], max_new_tokens=len(gen["steps"]) + GENERATE_MORE, eos=None)
        options = {**self.run_options, "model": self.trace.config.model, "sampling": sampling}
        if "text" not in options and "tokens" not in options and "checkpoint" not in options:
            options["text"] = " ".join(self.trace.labels.get("pos") or [])
        self.notify(f"generating {sampling.max_new_tokens} tokens, {sampling.describe()}…", timeout=3)
        self._run(options)

    def on_run_failed(self, message: RunFailed) -> None:  # by name: @on is not collected from a mixin
        self.notify(message.message, title="run refused", severity="error", timeout=10)

    def on_run_finished(self, message: RunFinished) -> None:
        trace, name = message.trace, self.view.step.name
        self.trace, self.run_options = trace, message.options
        if self.tutorial is not None:
            self.notify("the run changed: the tutorial is closed", timeout=4)
            self.tutorial_on, self.tutorial, self.stop_steps = False, None, []
        self.query_one(StepTree).set_trace(trace)
        index = trace[name].index if name in trace else 0
        gen = trace.meta.get("generation")
        if gen and message.options.get("sampling") is not None:  # G: go to the first token not shown before
            old = len(self.view.trace.meta.get("generation", {}).get("steps", []))
            first = f"gen.{old}.embed" if old else "gen.0.next_logits"
            index = trace[first].index if first in trace else index
        self.view = replace(self.view, trace=trace, index=index).clamped()
        self.notify(f"{trace.config.model}: {len(trace)} steps", title="run finished", timeout=3)
        self.refresh_bindings()

