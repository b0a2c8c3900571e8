"""Operands of one symbol are told apart by their step names (found trying tutorial
20-which-position-carries-the-word.toml as a new user: the recovered fraction's three operands were all titled
'logits', so a student could not tell the clean, corrupted and patched runs apart)."""

from __future__ import annotations

from explain.interp import patch
from explain.render.panes import told_apart

CLEAN, CORRUPT = "fish book tired cat man hungry fish book", "fish book happy cat man hungry fish book"


def test_three_logits_read_by_the_recovered_fraction_are_told_apart() -> None:
    names = ["logits", "patch.clean.logits", "patch.corrupt.logits"]  # the patched run's own, then the others
    assert told_apart(names, ["logits"] * 3) == ["logits", "logits clean", "logits corrupt"]


def test_different_symbols_and_one_step_read_twice_are_kept() -> None:
    assert told_apart(["blocks.0.attn.q", "blocks.0.attn.k"], ["Q", "K"]) == ["Q", "K"]
    assert told_apart(["x", "x"], ["X", "X"]) == ["X", "X"]  # X·Xᵀ: one operand twice
    assert told_apart(["a", "b"], ["", ""]) == ["a", "b"]  # no symbol: the name


def test_a_patched_runs_recovered_step_titles_its_logits_three_ways() -> None:
    trace = patch("gpt", CLEAN, CORRUPT, "tired", "happy", "blocks.0.resid_post", position=2, trained=True).trace
    step = next(s for s in trace.steps if s.op == "recovered")
    logits = [i for i, n in enumerate(step.inputs) if n.endswith("logits")]
    shown = told_apart(list(step.inputs), list(step.syms.ins))
    assert len(logits) == 3 and len({shown[i] for i in logits}) == 3, (step.inputs, step.syms.ins, shown)
