"""Every model the registry says has a pre-norm residual stream (gpt, llama, ...) on its default seeded config:
the lens's last read is its logits exactly, the attribution's parts sum to the logit difference to 1e-10, and
patching block 0's input at the one position where the texts differ recovers the clean run exactly."""

from __future__ import annotations

import numpy as np
import pytest

from explain.core.registry import able
from explain.interp import logit_lens
from explain.interp.attribution import attribute
from explain.interp.patching import prepare, sweep_runs

PRE_NORM = able("pre_norm")
CLEAN, CORRUPT = "The cat is happy", "The dog is happy"


def test_the_registry_names_pre_norm_models():
    assert "gpt" in PRE_NORM


@pytest.mark.parametrize("model", PRE_NORM)
def test_lens_last_read_is_the_logits(model):
    result = logit_lens(model, "happy", text=CLEAN)
    np.testing.assert_array_equal(result.trace[result.rows[-1].step].output, result.trace["logits"].output)
    assert len(result.rows) == 2 * result.trace.config.n_layers + 1


@pytest.mark.parametrize("model", PRE_NORM)
def test_attribution_sums_to_the_logit(model):
    a = attribute(model, "happy", "cat", text=CLEAN, position=-1)  # the last position, as the reference reads
    logits = a.trace["logits"].output[0, -1]
    assert abs(sum(v for _, v in a.parts) - (logits[a.word] - logits[a.vs])) <= 1e-10
    stack = a.trace["attrib.parts"].output
    final = a.trace[a.trace["ln_final"].inputs[0]].output[0, -1]
    np.testing.assert_allclose(stack.sum(axis=0), final, rtol=0, atol=1e-10)


@pytest.mark.parametrize("model", PRE_NORM)
def test_patching_the_changed_position_recovers_the_clean_run(model):
    runs = prepare(model, CLEAN, CORRUPT, "happy", "dog")
    s = sweep_runs(runs, "resid")
    assert s.recovered[0, 1] == pytest.approx(1.0, abs=1e-12)  # position 1: 'cat' for 'dog', nothing else differs
    assert (s.recovered[0, [0, 2, 3]] == 0).all()  # the other positions hold the same token in both runs
