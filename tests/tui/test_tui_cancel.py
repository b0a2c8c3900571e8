"""Long work in the TUI is cancellable (explain.tui.background): ``q`` during a backward pass (``r``) quits at
once, and the pass's thread is told to stop (it sees Cancelled at its next op). The work here is a stand-in
that would run for a minute, checking its token the way the recorder does before every op; the real GPT-2-size
figure is in bench_reliability.py."""

from __future__ import annotations

import threading
import time

from conftest import drive

import explain.engine.api
from explain.core.cancel import Cancelled, check_cancelled
from explain.tui.app import ExplainApp


def test_q_quits_during_a_backward_pass_and_stops_it(gpt_trace, monkeypatch) -> None:
    started, stopped = threading.Event(), threading.Event()

    def slow_backward(trace, **_):
        started.set()
        try:
            for _ in range(6000):  # about a minute, one 'op' every 10 ms
                check_cancelled()
                time.sleep(0.01)
        except Cancelled:
            stopped.set()
            raise
        return trace

    monkeypatch.setattr(explain.engine.api, "with_backward", slow_backward)
    app = ExplainApp(gpt_trace)
    quit_at: list[float] = []

    async def script(pilot) -> None:
        await pilot.press("r")
        for _ in range(200):
            if started.is_set():
                break
            await pilot.pause(0.01)
        assert started.is_set()
        quit_at.append(time.perf_counter())
        await pilot.press("q")

    drive(app, script, timeout=30)
    quit_took = time.perf_counter() - quit_at[0]
    assert stopped.wait(5), "the backward pass went on after the app quit"
    assert quit_took < 10, quit_took  # a hang guard only; bench_reliability measures it (target < 1 s)
