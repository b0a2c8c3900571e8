"""Activation patching (explain.interp.patching): every sweep cell equals a torch-hooks implementation on the
tiny GPT-2 (tests/data/make_interp_expected.py, float64) to 1e-10; the recorded patched run says of every cell
where it came from; a sweep computes only the steps after each patch point (counted by hand below); a patch
that changes nothing says so; bad choices are refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explain.core.errors import InputError, StepNotFound, UsageError
from explain.interp.patching import patch, prepare, sweep_runs

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)

CKPT = str(DATA / "gpt2_tiny")
EXPECTED = DATA / "interp" / "gpt2_tiny_expected.npz"
ARGS = ("gpt", "The cat is", "The step is", " happy", " the")
# the steps of one gpt block after its input: ln1, q, k, v, scores, scaled, masked, pattern, z, concat, attn_out,
# resid_mid, ln2, mlp.pre, mlp.post, mlp_out, resid_post; and after a block's z: concat … resid_post
BLOCK, AFTER_Z = 17, 8


@pytest.fixture(scope="module")
def runs():
    return prepare(*ARGS, checkpoint=CKPT)


@pytest.mark.parametrize("kind, key", [("resid", "patch_resid"), ("heads", "patch_head"), ("mlp", "patch_mlp")])
def test_sweeps_equal_torch_hooks(runs, kind, key):
    exp = np.load(EXPECTED)
    np.testing.assert_array_equal(runs.clean["tokens"].output[0], exp["clean_ids"])
    np.testing.assert_allclose(runs.clean["logits"].output[0], exp["logits_clean"], rtol=0, atol=1e-10)
    s = sweep_runs(runs, kind)
    np.testing.assert_allclose(s.diffs, exp[key], rtol=0, atol=1e-10)
    clean = exp["logits_clean"][-1]
    corrupt = exp["logits_corrupt"][-1]
    w, v = int(exp["word"]), int(exp["vs"])
    want = (exp[key] - (corrupt[w] - corrupt[v])) / ((clean[w] - clean[v]) - (corrupt[w] - corrupt[v]))
    np.testing.assert_allclose(s.recovered, want, rtol=0, atol=1e-10)


def test_an_opened_cell_is_its_patched_run_recorded(runs):
    s = sweep_runs(runs, "mlp")
    for r, c in [(0, 1), (1, 2)]:
        one = s.open(r, c)
        assert one.diff == pytest.approx(s.diffs[r, c], abs=1e-10)
        name = f"patch.blocks.{r}.mlp_out"
        step = one.trace[name]
        assert step.op == "patch" and step.inputs == (f"blocks.{r}.mlp_out", f"patch.clean.blocks.{r}.mlp_out")
        later = one.trace[f"blocks.{r}.resid_post"]
        assert name in later.inputs  # every later step reads the patched value
        took = one.trace.explain(name, (0, c, 3)).lines[0]
        kept = one.trace.explain(name, (0, (c + 1) % 3, 3)).lines[0]
        assert took.startswith(f"from the clean run's blocks.{r}.mlp_out[0, {c}, 3]")
        assert kept.startswith(f"the corrupted run's own blocks.{r}.mlp_out")
        assert step.output[0, c, 3] == runs.clean[f"blocks.{r}.mlp_out"].output[0, c, 3]


def test_a_sweep_computes_only_the_steps_after_each_patch_point(runs):
    """Counted by hand: patching block 0's input recomputes both blocks, block 1's input one block; a head's z
    the rest of its block (and every later block). Nothing before the patch point, nothing after the final
    residual (the last row's logits are computed apart, from it)."""
    T, L = 3, 2
    for kind, per_row in (("resid", [2 * BLOCK, BLOCK]), ("heads", [AFTER_Z + BLOCK, AFTER_Z]),
                          ("mlp", [1 + BLOCK, 1])):
        executed: list[str] = []
        s = sweep_runs(runs, kind, executed)
        cols = 2 if kind == "heads" else T
        assert len(executed) == s.executed == cols * sum(per_row), kind
        final = runs.corrupt["ln_final"].index
        names = runs.corrupt.names()
        assert all(runs.corrupt[n].index < final for n in executed)
        assert "ln_final" not in executed and "logits" not in executed and L == len(s.steps)
        if kind == "resid":  # each patch point: exactly the steps between it and the final norm, in order
            for row, start in enumerate(s.steps):
                first = sum(per_row[:row]) * cols
                between = names[runs.corrupt[start].index + 1:final]
                assert executed[first:first + per_row[row]] == between


def test_a_patch_that_changes_nothing_says_so(runs):
    from explain.interp.patching import patch_runs

    same = patch_runs(runs, "blocks.0.resid_pre", ((1, 0),))  # position 0, 'The' in both texts
    assert same.cells_changed == 0 and same.diff == runs.corrupt_diff
    assert same.notes == ["the patch changes nothing: the clean and corrupted runs agree at every patched cell"]
    late = patch_runs(runs, "blocks.1.resid_post", ((1, 1),))  # the final residual, not the last position
    assert late.cells_changed > 0 and late.diff == runs.corrupt_diff
    assert "not the logit difference" in late.notes[0]
    real = patch_runs(runs, "blocks.0.resid_pre", ((1, 1),))
    assert real.notes == [] and real.recovered == pytest.approx(1.0, abs=1e-12)


def test_patch_a_head_on_gpt():
    one = patch("gpt", "The cat is happy", "The dog is happy", "happy", "dog", "blocks.1.attn.z", head=1)
    assert one.where == ((1, 1),) and "head 1" in one.trace["patch.blocks.1.attn.z"].formula
    z = one.trace["patch.blocks.1.attn.z"].output
    np.testing.assert_array_equal(z[0, 1], one.runs.clean["blocks.1.attn.z"].output[0, 1])
    np.testing.assert_array_equal(z[0, 0], one.runs.corrupt["blocks.1.attn.z"].output[0, 0])


@pytest.mark.parametrize("call, error, needle", [
    (lambda: prepare("gpt", "The cat is", "The dog is", " happy", " the", checkpoint=CKPT), InputError,
     "3 tokens and the corrupted one 5"),
    (lambda: patch(*ARGS, "blocks.7.mlp_out", checkpoint=CKPT), StepNotFound, "no step named 'blocks.7.mlp_out'"),
    (lambda: prepare("gpt", "The cat is", "The step is", " Paris", " the", checkpoint=CKPT), InputError,
     "' Paris' is 5 tokens"),
    (lambda: prepare("gpt", "The cat", "The dog", "Paris", "cat"), InputError, "not in the vocabulary"),
    (lambda: patch(*ARGS, "blocks.0.mlp_out", head=0, checkpoint=CKPT), UsageError, "--head needs a step with a head"),
    (lambda: patch(*ARGS, "blocks.0.mlp_out", position=5, checkpoint=CKPT), UsageError, "--position 5 is outside"),
    (lambda: patch(*ARGS, "tokens", checkpoint=CKPT), UsageError, "is a given input"),
    (lambda: prepare("encoder", "a b", "a c", "a", "b"), UsageError, "post-LN"),
])
def test_bad_choices_are_refused(call, error, needle):
    with pytest.raises(error, match=needle.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_positions_whose_words_differ_are_labelled_clean_slash_corrupted():
    """The patched run and the sweep labelled every position with the corrupted text's words, so the clean step
    patch.clean.blocks.0.resid_post showed tired's residual in a row '2 happy' (tutorial 20, stop 1). Where the
    texts differ the label is now both words, clean first (as a batch's differing items are labelled)."""
    clean, corrupt = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"
    want = ["fish", "book", "tired/happy", "cat", "man", "hungry", "fish", "book"]
    runs = prepare("gpt", clean, corrupt, "tired", "happy", trained=True)
    assert runs.words() == want
    assert sweep_runs(runs, "resid").columns == want and sweep_runs(runs, "heads").columns[:1] == ["head 0"]
    one = patch("gpt", clean, corrupt, "tired", "happy", "blocks.0.resid_post", position=2, trained=True)
    assert one.trace.axis_labels("pos") == want and one.trace.tokens_text() == " ".join(want)
    assert one.first_cell() == (0, 2, 0)  # where explain patch --step opens its TUI: a patched cell, not (0, 0, 0)
    np.testing.assert_array_equal(one.trace["patch.clean.blocks.0.resid_post"].output,
                                  runs.clean["blocks.0.resid_post"].output)


def test_runs_that_barely_differ_are_said_to():
    """The README's old example (The cat/dog is happy, happy vs dog): the differences are −1.6794 and −1.6636, 0.016
    apart, and the sweep's fractions (−4.15, 2.48) are ratios of small numbers. A note says so (gap under 0.1, the
    odds of W against W2 changing by under 11 %), in the sweep's JSON and a patched run's notes; tutorial 20's
    runs (1.2528 against −0.0705, independent of this note) get none."""
    small = prepare("gpt", "The cat is happy", "The dog is happy", "happy", "dog", trained=True)
    gap = abs(small.clean_diff - small.corrupt_diff)
    assert gap == pytest.approx(0.0158, abs=5e-4)
    assert len(small.notes()) == 1 and f"only {gap:.2g} apart" in small.notes()[0]
    assert sweep_runs(small, "resid").to_dict()["notes"] == small.notes()
    one = patch("gpt", "The cat is happy", "The dog is happy", "happy", "dog", "blocks.1.attn.z", head=0, trained=True)
    assert one.notes[:1] == small.notes()
    big = prepare("gpt", "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book",
                  "tired", "happy", trained=True)
    assert big.clean_diff - big.corrupt_diff == pytest.approx(1.2528 + 0.0705, abs=1e-3) and big.notes() == []
