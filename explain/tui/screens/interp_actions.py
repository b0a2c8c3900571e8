"""The step screen's interpretability keys (a mixin of :class:`~explain.tui.screens.step.StepScreen`): the logit
lens (``y``), attribution (``A``), a patching sweep (``P``, on a run opened by ``explain patch``) and attention to
generated tokens (``W``, on a generation). The lens and the attribution are recorded after the run's steps the
first time (its steps are not run again), in a thread; each opens its screen, and Enter there shows the cell's
recorded step here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from textual import work

from explain.errors import ExplainError
from explain.interp.names import ATTR, LENS
from explain.interp.stream import check_model
from explain.trace import Trace
from explain.tui.messages import RunFailed


class InterpActions:
    """Actions for :mod:`explain.tui.keys`; needs the step screen's ``view``, ``trace``, ``tour``, ``app``."""

    view: Any
    tour: Any
    trace: Trace

    def _pre_norm(self) -> bool:
        try:
            check_model(self.trace.config.model)
        except ExplainError as exc:
            self.notify(str(exc), severity="warning", timeout=8)  # type: ignore[attr-defined]
            return False
        return True

    def action_lens(self) -> None:
        from explain.interp.lens import record_lens  # lazy: numpy's tools loaded on first use
        from explain.tui.screens.lens import LensScreen  # lazy: a screen loaded on first use

        if self._pre_norm():
            self._with_recorded(record_lens, lambda t: self._open_interp(LensScreen(t)), "the logit lens")

    def action_attribution(self) -> None:
        from explain.interp.attribution import record_attribution, summary  # lazy: numpy's tools loaded on first use
        from explain.tui.screens.attribution import AttributionScreen  # lazy: a screen loaded on first use

        if not self._pre_norm():
            return
        logits = self.trace["logits"].output[0, -1]
        order = logits.argsort()[::-1]
        word, vs = int(order[0]), int(order[1])  # the model's top word against its runner-up
        vocab = self.trace.labels.get("vocab")

        def record(t: Trace) -> Trace:
            return record_attribution(_without_attr(t), word, vs)

        def show(t: Trace) -> None:
            self._open_interp(AttributionScreen(summary(t, word, vs, -1, vocab[word] if vocab else str(word),
                                                 vocab[vs] if vocab else str(vs))))

        self._with_recorded(record, show, "the attribution", always=True)

    def action_patching(self) -> None:
        from explain.tui.screens.sweep import SweepScreen  # lazy: a screen loaded on first use

        sweep = self.trace.meta.get("sweep")
        if sweep is None:
            self.notify("patching compares two runs: open one with explain patch MODEL --text CLEAN --corrupt TEXT "  # type: ignore[attr-defined]
                        "--word W --vs W2 --sweep resid", timeout=8)
            return

        def opened(patched: Any) -> None:
            if patched is None:
                return
            trace = patched.trace
            trace.meta["sweep"] = sweep
            self.show_run(trace, dict(self.run_options))  # type: ignore[attr-defined]
            self.view = self.view.go(trace[f"patch.{patched.step}"].index)
            for note in patched.notes:
                self.notify(note, title="patch", timeout=8)  # type: ignore[attr-defined]

        self.app.push_screen(SweepScreen(sweep), opened)  # type: ignore[attr-defined]

    def action_generated(self) -> None:
        from explain.tui.screens.generated import GeneratedScreen  # lazy: a screen loaded on first use

        if self.trace.generation is None:
            self.notify("this run generated nothing: press G to write five new tokens first", timeout=5)  # type: ignore[attr-defined]
            return
        self._open_interp(GeneratedScreen(lambda: self.trace))

    # -- helpers ------------------------------------------------------------------------------------------
    def _open_interp(self, screen: Any) -> None:
        def chosen(cell: tuple[str, tuple[int, ...]] | None) -> None:
            if cell is None or cell[0] not in self.trace:
                return
            self._leave_path("an interpretability view")  # type: ignore[attr-defined]
            self.view = self.view.go(self.trace[cell[0]].index).at(cell[1])

        self.app.push_screen(screen, chosen)  # type: ignore[attr-defined]

    def _with_recorded(self, record: Callable[[Trace], Trace], then: Callable[[Trace], None], what: str,
                       always: bool = False) -> None:
        """Record (in a thread) unless already there, put the longer trace in the view, then ``then``."""
        if not always and _has(self.trace, what):
            then(self.trace)
            return
        self.notify(f"recording {what}…", timeout=2)  # type: ignore[attr-defined]
        self._record_interp(self.trace, record, then)

    @work(thread=True, exclusive=True, group="run", exit_on_error=False)
    def _record_interp(self, trace: Trace, record: Callable[[Trace], Trace], then: Callable[[Trace], None]) -> None:
        try:
            done = record(trace)
        except ExplainError as exc:
            self.app.call_from_thread(self.post_message, RunFailed(str(exc)))  # type: ignore[attr-defined]
        except Exception as exc:  # a bug in the engine must not take the session down with it
            self.app.call_from_thread(self.post_message, RunFailed(f"internal error: {exc!r}"))  # type: ignore[attr-defined]
        else:
            self.app.call_from_thread(self._recorded, trace, done, then)  # type: ignore[attr-defined]

    def _recorded(self, old: Trace, trace: Trace, then: Callable[[Trace], None]) -> None:
        if self.view.trace is not old:  # another run came in meanwhile: it wins
            return
        if self.tour is not None and self.tour.trace is old:
            self.tour = replace(self.tour, trace=trace)
        self.view = replace(self.view, trace=trace).clamped()
        then(trace)


def _has(trace: Trace, what: str) -> bool:
    return what == "the logit lens" and any(s.group[:1] == (LENS,) for s in trace)


def _without_attr(trace: Trace) -> Trace:
    """The trace without an earlier attribution's steps (a new one replaces it)."""
    if not any(s.group[:1] == (ATTR,) for s in trace):
        return trace
    keep = [s for s in trace if s.group[:1] != (ATTR,)]
    out = Trace(trace.config, [replace(s, index=i) for i, s in enumerate(keep)], trace.params, trace.specs,
                trace.labels, trace.shape_only, trace.batch_labels)
    out.meta = dict(trace.meta)
    return out
