"""Issue 42 item 12: a sum of parts beside the whole printed its float64 rounding as '9.7e-17' where the narration
says they agree; a residue below 1e-12 reads as 0, with the rounding beside it."""

from __future__ import annotations

from explain.ops.numbers import residue
from explain.tutorial import load_tutorial, run_tutorial


def test_rounding_reads_as_zero_and_a_real_difference_does_not():
    assert residue(0.0) == "0"
    assert residue(9.7e-17) == "0 (float64 rounding: 9.7e-17)"
    assert residue(-2.2e-16).startswith("0 (float64 rounding")
    assert residue(3e-9) == "3.0e-09"


def test_the_bert_pair_total_says_zero():
    # tutorial 27: the pair's parts add up to the cosine; their difference is float64 rounding
    tut = load_tutorial("27-what-bert-sees")
    trace = run_tutorial(tut)
    step = next(s for s in trace if s.op == "pair_total")
    line = trace.explain(step, ()).lines[-1]
    assert "difference 0" in line and "e-1" not in line.split("(")[0], line
