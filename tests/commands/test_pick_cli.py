"""``--match``, ``--slice`` and ``--cell`` with ``--plain`` and ``--json`` (issue 26): the steps, the slice and the
one drill-down they print are checked against the run's own arrays (``explain.engine.api.run``) and, for the softmax
cell, against a softmax of the scores computed here; every bad pattern, slice or cell is a one-line error."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clitools import invoke, one_line_error

from explain.engine.api import run

MH = ("run", "multihead", "--heads", "4", "--d-model", "16")


def test_json_slice_is_the_runs_own_slice() -> None:
    res = invoke(*MH, "--json", "--match", "attn.pattern", "--slice", "head=3")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    (step,) = doc["steps"]  # --match kept one step, and nothing follows it (no predictions: multihead has none)
    want = run("multihead", n_heads=4, d_model=16)["attn.pattern"].output[3]
    assert step["name"] == "attn.pattern" and step["slice"] == {"head": 3} and step["shape"] == [4, 6, 6]
    np.testing.assert_allclose(np.array(step["values"]), want, rtol=0, atol=1e-15)  # JSON round-trips floats
    assert step["stats"]["max"] == pytest.approx(want.max(), abs=1e-15)


def test_plain_slice_names_the_slice_and_match_keeps_only_matching_steps() -> None:
    res = invoke(*MH, "--plain", "--match", "attn.*", "--slice", "head=2")
    assert res.exit_code == 0, res.output
    trace = run("multihead", n_heads=4, d_model=16)
    want = [s.name for s in trace if s.name.startswith("attn.")]
    shown = [ln.split()[1] for ln in res.output.splitlines() if ln[:1].isdigit() and "/11" in ln.split()[0]]
    assert shown == want
    assert res.output.count("slice: head 2 of 4") == sum(len(trace[n].shape) == 3 for n in want)
    pat = trace["attn.pattern"].output[2]
    assert f"{pat[0, 0]:.4f}" in res.output.split("attn.pattern  [softmax]")[1]


def test_cell_prints_one_drill_down_whose_weight_is_a_softmax_of_the_scores() -> None:
    text = "Thinking Machines"
    res = invoke("run", "attention", "--text", text, "--json", "--match", "attn.pattern", "--cell", "0,1")
    assert res.exit_code == 0, res.output
    (step,) = json.loads(res.output)["steps"]
    trace = run("attention", text=text)
    scores = trace["attn.scaled"].output[0]
    weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()  # by hand, not by the op
    assert step["cell"] == [0, 1] and "values" not in step
    assert step["value"] == pytest.approx(weights[1], abs=1e-12)
    ex = step["explanation"]
    assert [r[-1] for r in ex["rows"]] == pytest.approx(list(weights), abs=1e-12)
    assert ex["lines"][-1].endswith(f"= {weights[1]:.4f}")

    plain = invoke("run", "attention", "--text", text, "--plain", "--match", "attn.pattern", "--cell", "0,1").output
    assert "cell [0, 1]" in plain and plain.rstrip().endswith(f"= {weights[1]:.4f}")  # nothing after the drill-down


def test_generate_takes_them_too() -> None:
    res = invoke("generate", "gpt", "--text", "the cat", "--max-new-tokens", "1", "--json", "--match",
                 "gen.0.probs", "--cell", "0,0,3")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert [s["name"] for s in doc["steps"]] == ["gen.0.probs"] and "generation" not in doc
    assert doc["steps"][0]["cell"] == [0, 0, 3]


@pytest.mark.parametrize(("args", "needles"), [
    (("--plain", "--match", "nope"), ("--match 'nope'", "names look like")),
    (("--plain", "--slice", "head3"), ("AXIS=INDEX",)),
    (("--plain", "--slice", "head=1,head=2"), ("twice",)),
    (("--plain", "--slice", "lane=1"), ("'lane'", "head")),
    (("--plain", "--match", "attn", "--slice", "head=9"), ("head 0 to 3", "head=3 or less")),
    (("--plain", "--cell", "0,x"), ("one index per axis",)),
    (("--plain", "--match", "attn.pattern", "--cell", "0,5"), ("not a cell of 'attn.pattern'", "pos 6")),
    (("--plain", "--cell", "0,1"), ("not a cell of", "--match")),
    (("--plain", "--slice", "head=1", "--cell", "0,1"), ("not both",)),
    (("--match", "attn"), ("add one of them",)),
])
def test_bad_pick_is_a_one_line_usage_error(args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    one_line_error(invoke(*MH, *args), 2, *needles)
