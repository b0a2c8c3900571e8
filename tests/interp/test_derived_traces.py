"""A trace derived from another (a backward pass, the logit lens, an attribution and a second one that replaces
it, a patched run, a redrawn token) is the same run: it keeps which weights it shows, the words read as <unk>,
where the weights came from and the caller's meta, so the step screen's header says the same after ``r``, ``y``,
``A``, ``P`` or ``D``. Before, an attribution's trace said nothing of its weights (its header lost
"trained: gpt-tiny")."""

from __future__ import annotations

import pytest

import explain
from explain.core.sampling import Sampling
from explain.engine.api import with_backward
from explain.engine.resample import resample
from explain.interp.attribution import record_attribution, without_attribution
from explain.interp.lens import record_lens
from explain.interp.patching import patch_runs, prepare, where_of

TEXT = "the cat sat on the zebra"


@pytest.fixture(scope="module")
def trained():
    trace = explain.run("gpt", text=TEXT)
    assert trace.weights == "trained: gpt-tiny" and trace.unknown_words == ["zebra"]
    trace.tutorial = "kept"  # as a tutorial marks its run
    return trace


def same_run(derived, source) -> None:
    assert derived is not source
    assert derived.weights == source.weights
    assert derived.unknown_words == source.unknown_words and derived.unknown_words is not source.unknown_words
    assert derived.origin is source.origin
    assert derived.tutorial == source.tutorial and derived.checks == source.checks


def test_backward_lens_and_attribution_keep_the_run(trained) -> None:
    same_run(with_backward(trained), trained)
    same_run(record_lens(trained), trained)
    assert record_lens(trained).tutorial == "kept"
    once = record_attribution(without_attribution(trained), 27, 3)
    same_run(once, trained)
    again = record_attribution(without_attribution(once), 3, 27)  # A pressed again: the first one is replaced
    same_run(again, trained)
    assert len(again) == len(once)


def test_a_second_attribution_on_a_generation_keeps_the_generation() -> None:
    gen = explain.generate("gpt", text="the cat sat on the", sampling=Sampling(max_new_tokens=2, greedy=True))
    once = record_attribution(without_attribution(gen), 27, 3)
    stripped = without_attribution(once)
    assert stripped.generation is gen.generation and len(stripped) == len(gen)
    same_run(stripped, gen)


def test_a_redrawn_token_and_a_patched_run_keep_the_run(trained) -> None:
    gen = explain.generate("gpt", text="the cat sat on the zebra", sampling=Sampling(max_new_tokens=2, seed=1))
    same_run(resample(gen, 0, Sampling(max_new_tokens=2, temperature=0.5, seed=4)), gen)
    runs = prepare("gpt", "the cat sat on the", "the dog sat on the", "mat", "lazy")
    step = "blocks.0.resid_pre"
    patched = patch_runs(runs, step, where_of(runs.corrupt[step], position=1))
    same_run(patched.trace, runs.corrupt)
