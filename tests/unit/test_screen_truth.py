"""What issue 26 found the screen hiding or mislabelling, pinned at the render layer: two probabilities of one
draw, each labelled (defect 3); a table of terms cut to fit shows the rows that matter, not its first and last
(defect 4)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

import explain
from explain.predict import predictions
from explain.render.predictions import predictions_view
from explain.render.step import explanation_body, table_rows


def plain(renderable, width: int = 200) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable, crop=False, soft_wrap=True)
    return console.file.getvalue()


@pytest.fixture(scope="module")
def top_k_run():
    return explain.generate("gpt", text="the cat is", top_k=3, max_new_tokens=2)


def test_a_draw_labels_the_models_probability_and_the_one_it_used(top_k_run):
    trace = top_k_run
    drawn = int(trace["gen.0.next"].output[0, 0])
    z = trace["gen.0.next_logits"].output[0, 0]
    model = float(np.exp(z[drawn] - z.max()) / np.exp(z - z.max()).sum())  # softmax of the logits, by hand
    p = predictions(trace, trace["gen.0.probs"], -1, 0)
    used = float(trace["gen.0.probs"].output[0, 0, drawn])  # after the top-k filter
    assert p.actual is not None and p.actual.id == drawn
    assert p.actual.prob == pytest.approx(model, abs=1e-12)
    assert p.used == pytest.approx(used, abs=1e-12) and p.used > p.actual.prob  # top-k renormalised it upwards
    text = plain(predictions_view(p))
    assert "p model" in text
    assert f"p = {p.actual.prob:.4g} (the model's, before sampling)" in text
    assert f"the draw used p = {used:.4g}: sampled at temperature 1, top-k 3" in text
    ex = trace.explain("gen.0.next", (0, 0))
    assert "P (used)" in ex.columns


def test_predictions_without_a_draw_have_one_unlabelled_p():
    trace = explain.run("gpt")
    text = plain(predictions_view(predictions(trace, trace["probs"], 0, 0)))
    assert "p model" not in text and "the draw used" not in text


def test_a_cut_table_shows_the_survivors_not_the_masked_ends():
    # tutorial 12's stop 5: softmax over 45 tokens after top-k, two survivors (ids 29 and 30) in the middle
    trace = explain.generate("gpt", text="the cat is", top_k=2, max_new_tokens=1)
    ex = trace.explain("gen.0.probs", (0, 0, int(trace["gen.0.next"].output[0, 0])))
    live = [k for k, row in enumerate(ex.rows) if np.isfinite(row[1])]
    assert len(live) == 2 and 0 not in live and 44 not in live
    body = plain(explanation_body(ex, max_rows=2))
    table = body.split("weight", 1)[1].split("max of the row")[0]
    assert [int(line.split()[0]) for line in table.strip().splitlines() if line.split()[0] != "⋮"] == live
    assert "−inf" not in table  # no masked row among them


def test_table_rows_keep_the_focus_and_mark_every_gap():
    assert table_rows(45, 2, (29, 30)) == [None, 29, 30, None]
    assert table_rows(45, 5, (29, 26)) == [None, 26, 27, 28, 29, None]
    assert table_rows(10, 4) == [0, 1, None, 8, 9]  # no focus: numpy's first and last
    assert table_rows(5, 12, (3,)) == [0, 1, 2, 3, 4]  # room for all: all
