"""No drill-down numbers a key where the run has its word (issue 42 item 5): over every shipped tutorial's stops, a
softmax over the keys labels each k with its token ('1 cat'), as a softmax over the vocabulary does ('27 mat')."""

from __future__ import annotations

import pytest

from explain.tutorial import list_tutorials, run_tutorial, stop_step


@pytest.mark.parametrize("tut", list_tutorials(), ids=lambda t: t.name)
def test_softmax_over_keys_names_each_key(tut):
    trace = run_tutorial(tut)
    for stop in tut.stops:
        step = stop_step(trace, stop)
        if step.op != "softmax" or step.axes[-1:] != ("pos",) or trace.axis_labels("pos") is None:
            continue
        cell = tuple(stop.cell) if stop.cell is not None else (0,) * len(step.shape)
        ex = trace.explain(step, cell)
        bare = [r[0] for r in ex.rows if not isinstance(r[0], str) or " " not in r[0]]
        assert not bare, f"{tut.name} stop {stop.number} {step.name}: keys without words {bare[:3]}"
