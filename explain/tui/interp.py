"""The step screen's interpretability keys, as the :class:`~explain.tui.controller.Controller` runs them: the logit
lens (``y``), attribution (``A``), a patching sweep (``P``, on a run opened by ``explain patch``) and attention to
generated tokens (``W``, on a generation). The lens and the attribution are recorded after the run's steps the
first time (its steps are not run again), as one of the controller's jobs; each opens its screen, and Enter
there shows the cell's recorded step on the step screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.screen import Screen

from explain.core.names import gen_number
from explain.core.text import quoted
from explain.interp.names import LENS, attr
from explain.interp.names import patched as patched_step
from explain.ops.base import num
from explain.trace import Trace
from explain.tui.messages import RunFinished


class Controller(Protocol):
    """What these use of :class:`explain.tui.controller.Controller` (which calls them)."""

    host: Any
    trace: Trace

    def record(self, what: str, record: Callable[[Trace], Trace], then: Callable[[Trace], None]) -> None: ...
    def start(self, work: Callable[[], Any], done: Callable[[Any], None]) -> None: ...
    def open_interp(self, screen: Screen) -> None: ...


def lens(ctl: Controller) -> None:
    from explain.interp.lens import record_lens  # lazy: numpy's tools loaded on first use
    from explain.tui.screens.lens import LensScreen  # lazy: a screen loaded on first use

    if any(s.group[:1] == (LENS,) for s in ctl.trace):  # recorded already
        ctl.open_interp(LensScreen(ctl.trace))
    else:
        ctl.record("the logit lens", record_lens, lambda t: ctl.open_interp(LensScreen(t)))


def attribution(ctl: Controller) -> None:
    """Which part writes the model's top word, against its runner-up, at the last position; a run that holds an
    attribution already (``explain attribute --word W --vs W2``, or ``A`` pressed before) shows that one."""
    from explain.interp.attribution import (  # lazy: numpy's tools loaded on first use
        record_attribution,
        summary,
        without_attribution,
    )
    from explain.tui.screens.attribution import AttributionScreen  # lazy: a screen loaded on first use

    vocab = ctl.trace.labels.get("vocab")

    def text(i: int | None) -> str:
        return "" if i is None else vocab[i] if vocab else str(i)

    if attr("total") in ctl.trace:  # the words asked for are kept: recording anew would replace them
        done = ctl.trace[attr("total")].attrs
        ctl.open_interp(AttributionScreen(summary(ctl.trace, done["word"], done["vs"], done["pos"],
                                                  text(done["word"]), text(done["vs"]))))
        return
    order = ctl.trace["logits"].output[0, -1].argsort()[::-1]
    word, vs = int(order[0]), int(order[1])
    names = (text(word), text(vs))
    ctl.record("the attribution", lambda t: record_attribution(without_attribution(t), word, vs),
               lambda t: ctl.open_interp(AttributionScreen(summary(t, word, vs, -1, *names))))


def patching(ctl: Controller) -> None:
    """The sweep of a run opened by ``explain patch``; Enter there shows that patched run on the step screen. On one
    patch (``explain patch --step``, which opens the TUI with this), its logit differences and recovered fraction;
    in a tutorial that patches, the layer × position sweep of its two runs too."""
    host = ctl.host
    sweep = ctl.trace.sweep
    one = ctl.trace.patched
    if sweep is None and one is not None:
        r = one.runs
        host.notify("\n".join([f"clean {num(r.clean_diff, 4)}, corrupted {num(r.corrupt_diff, 4)}, patched "
                               f"{num(one.diff, 4)}: recovered fraction {num(one.recovered, 4)}", *one.notes]),
                    title=f"patch: logit[{quoted(r.word_text)}] − logit[{quoted(r.vs_text)}]", timeout=15)
        if ctl.trace.tutorial is not None:  # a tutorial's patch (tutorial 20): P opens the heatmap its narration shows
            from explain.interp.patching import sweep_runs  # lazy: numpy's tools loaded on first use

            ctl.start(lambda: sweep_runs(one.runs, "resid"), lambda done: _sweep_screen(ctl, done))
        return
    if sweep is not None:  # else neither: P needs a patch or a sweep (explain.tui.needs)
        _sweep_screen(ctl, sweep)


def _sweep_screen(ctl: Controller, sweep: Any) -> None:
    """The sweep's heatmap; Enter on a cell shows that patched run on the step screen."""
    from explain.tui.screens.sweep import SweepScreen  # lazy: a screen loaded on first use

    host = ctl.host

    def opened(patched: Any) -> None:
        if patched is None:
            return
        trace = patched.trace
        trace.sweep = sweep
        host.post_message(RunFinished(trace, dict(host.run_options), at=patched_step(patched.step),
                                      cell=patched.first_cell(), own=False))
        for note in patched.notes:
            host.notify(note, title="patch", timeout=8)

    host.app.push_screen(SweepScreen(sweep), opened)


def generated(ctl: Controller) -> None:
    from explain.tui.screens.generated import GeneratedScreen  # lazy: a screen loaded on first use

    ctl.open_interp(GeneratedScreen(lambda: ctl.trace))


def experts(ctl: Controller) -> None:
    """The router's choices in the mixture layer of the step shown (or the pass's first), as a tokens × experts
    grid; Enter there shows the choice step at that cell."""
    from explain.tui.screens.experts import ExpertsScreen  # lazy: a screen loaded on first use

    view = ctl.host.view
    here = view.step
    kept = [s for s in ctl.trace if s.op == "keep" and gen_number(s.name) == gen_number(here.name)]
    if not kept:
        ctl.host.notify("this run has no mixture of experts (run llama with --experts N)", timeout=4)
        return

    def shared(s):  # how much of its place in the step tree a mixture layer shares with the step shown
        return next((i for i, (a, b) in enumerate(zip(s.group, here.group)) if a != b), min(len(s.group), len(here.group)))

    at = max(range(len(kept)), key=lambda i: (shared(kept[i]), -i))
    item = view.lead[0] if view.lead and "batch" in here.axes[:1] else 0
    ctl.open_interp(ExpertsScreen(ctl.trace, kept, at, item))
