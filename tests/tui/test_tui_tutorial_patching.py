"""Issue 42 item 8: tutorial 20 advertised P, which refused inside the tutorial ('open one with explain patch'),
and its 0.88 was on no step. The recovered fraction is now a step of the patched run (patch.recovered, stop 4),
and P opens the tutorial's layer × position sweep. Pilot at 80×24, 120×40 and 200×50."""

from __future__ import annotations

import pytest
from conftest import _until, drive

import explain
from explain.tui.app import ExplainApp
from explain.tutorial import load_tutorial, run_tutorial

SIZES = [(80, 24), (120, 40), (200, 50)]
CLEAN, CORRUPT = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"


@pytest.fixture(scope="module")
def tutorial20():
    tut = load_tutorial("20-which-position-carries-the-word")
    return tut, run_tutorial(tut)


def test_item8_the_recovered_fraction_is_a_step(tutorial20):
    # from two plain runs' logits, not from the patch code: the patched run's own logits, clean's and corrupted's
    _, trace = tutorial20
    vocab = trace.labels["vocab"]
    w, v = vocab.index("tired"), vocab.index("happy")
    diff = [t["logits"].output[0, -1, w] - t["logits"].output[0, -1, v]
            for t in (explain.run("gpt", trained=True, text=CLEAN), explain.run("gpt", trained=True, text=CORRUPT),
                      trace)]
    step = trace["patch.recovered"]
    assert float(step.output) == pytest.approx((diff[2] - diff[1]) / (diff[0] - diff[1]), abs=1e-12)
    assert round(float(step.output), 2) == 0.88
    ex = trace.explain(step, ())
    assert [r[0] for r in ex.rows] == ["clean", "corrupted", "patched"]
    assert ex.lines[-1].endswith("= 0.8788")


@pytest.mark.parametrize("size", SIZES)
def test_item8_p_opens_the_tutorials_patching(tutorial20, size):
    tut, trace = tutorial20
    app = ExplainApp(trace, tutorial=tut)

    async def script(pilot):
        await pilot.press("n", "n", "n")
        await _until(pilot, lambda: app.screen.view.step.name == "patch.recovered")
        assert app.screen.view.step.name == "patch.recovered"
        await pilot.press("P")
        await _until(pilot, lambda: type(app.screen).__name__ == "SweepScreen", tries=500)
        assert type(app.screen).__name__ == "SweepScreen", [str(n.message) for n in app._notifications]
        assert not any("explain patch" in str(n.message) for n in app._notifications)
        assert round(float(app.screen.sweep.recovered[1, 2]), 2) == 0.88  # block 1's input at position 2

    drive(app, script, size=size)
