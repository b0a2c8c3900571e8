"""Issue 42 at the render layer: what a step's panes say agrees with the step (the issue's item number in each
test's name)."""

from __future__ import annotations

import pytest

from explain.report.predict import predictions
from explain.tutorial import load_tutorial, run_tutorial


@pytest.fixture(scope="module")
def lens_run():
    return run_tutorial(load_tutorial("18-the-logit-lens"))


def test_item1_a_lens_read_predicts_from_its_own_logits(lens_run):
    trace = lens_run
    for point, top in (("blocks.0.resid_pre", "the"), ("blocks.0.resid_mid", "<bos>"),
                       ("blocks.0.resid_post", "mat")):
        p = predictions(trace, trace[f"lens.{point}.probs"], 4)
        assert p.source == f"lens.{point}.logits" and p.top[0].token == top
    final = predictions(trace, trace["probs"], 4)
    assert final.source == "logits" and final.top[0].token == "mat" and round(final.top[0].prob, 4) == 0.9404
