"""A tutorial's [interp] table: the logit lens, an attribution and a patched run recorded after its run, so its
stops show those steps and check them like any other; every bad table is refused with its field and a fix."""

from __future__ import annotations

import numpy as np
import pytest

from explain.tutorial import TutorialError
from explain.tutorial.loader import parse_text
from explain.tutorial.runner import check_tutorial

HEAD = '''title = "t"
summary = "s"
model = "gpt"

[options]
random_weights = true
text = "The cat is happy"
'''
STOP = '''
[[stops]]
step = "{step}"
title = "x"
narration = "y"
'''


def tutorial(interp: str, step: str = "logits"):
    return parse_text(HEAD + interp + STOP.format(step=step), "t", None, "t.toml")


def test_lens_attribution_and_patch_are_recorded():
    t = tutorial('''
[interp]
lens = true
attribute = ["happy", "cat"]

[interp.patch]
corrupt = "The dog is happy"
word = "happy"
vs = "dog"
step = "blocks.0.resid_post"
position = 1
''', "attrib.total")
    trace = check_tutorial(t).trace
    assert trace.tokens_text() == "The cat/dog is happy"  # the corrupted run, patched: clean/corrupted where they differ
    patched = trace["patch.blocks.0.resid_post"].output
    assert "patch.clean.blocks.0.resid_post" in trace and "lens.blocks.1.resid_post.probs" in trace
    np.testing.assert_array_equal(patched[0, 1], trace["patch.clean.blocks.0.resid_post"].output[0, 1])
    logits = trace["logits"].output[0, -1]
    assert abs(float(trace["attrib.total"].output) - (logits[trace.labels["vocab"].index("happy")]
                                                     - logits[trace.labels["vocab"].index("cat")])) < 1e-10


@pytest.mark.parametrize("interp, needle", [
    ('[interp]\nlense = true\n', "lense"),
    ('[interp]\nlens = "yes"\n', "must be true or false"),
    ('[interp]\nattribute = 3\n', "must be a word or [word, other word]"),
    ('[interp]\nattribute = ["happy", "Paris"]\n', "not in the vocabulary"),
    ('[interp.patch]\nword = "happy"\nvs = "dog"\nstep = "blocks.0.resid_post"\n', "corrupt"),
    ('[interp.patch]\ncorrupt = "The dog is"\nword = "happy"\nvs = "dog"\nstep = "blocks.0.resid_post"\n',
     "same length"),
    ('[interp.patch]\ncorrupt = "The dog is happy"\nword = "happy"\nvs = "dog"\nstep = "blocks.0.resid_post"\n'
     'position = -1\n', "position"),
])
def test_a_bad_table_is_refused_with_its_field(interp, needle):
    with pytest.raises(TutorialError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        check_tutorial(tutorial(interp))


def test_a_patch_runs_with_the_tutorials_own_weights():
    """The clean and corrupted runs are the tutorial's run (issue 38: one request). On the old code they were made
    from [options] alone: random_weights, dropped once [weights] gives some, was missing, so gpt's two runs opened
    the shipped trained model (64 wide) while the tutorial showed its own 8-wide weights."""
    t = parse_text(HEAD + '''
[weights]
"ln_final.w" = { shape = [8], fill = 2.0 }

[interp.patch]
corrupt = "The dog is happy"
word = "happy"
vs = "dog"
step = "blocks.0.resid_post"
''' + STOP.format(step="logits"), "t", None, "t.toml")
    trace = check_tutorial(t).trace
    for run in (trace, trace.patched.runs.clean, trace.patched.runs.corrupt):
        np.testing.assert_array_equal(run.params["ln_final.w"], np.full(8, 2.0))
