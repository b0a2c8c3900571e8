"""What issue 26 found the screen hiding or mislabelling, pinned at the render layer: two probabilities of one
draw, each labelled (defect 3); a table of terms cut to fit shows the rows that matter, not its first and last
(defect 4)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

import explain
from explain.render.predictions import predictions_view
from explain.render.step import explanation_body, table_rows
from explain.report.predict import predictions


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


def test_a_value_that_rounds_to_zero_never_looks_like_zero():
    # defect 5: tutorial 14 quotes 1.1·10⁻⁷ where the grid showed 0.0000; defect 9: −0 read '-0.0000'
    from explain.render.tensor import NumberFormat

    nf = NumberFormat(4)
    assert nf.text(1.1253516206e-07) == "1.1e-07" and nf.text(-1.4e-08) == "-1.4e-08"
    assert nf.text(0.0) == nf.text(-0.0) == "0.0000"  # an exact zero (an ignored target's gradient) is 0
    assert nf.text(0.00012) == "0.0001"  # large enough for the decimals: unchanged
    assert NumberFormat(8).text(1.1253516206e-07) == "0.00000011"


def test_a_stop_sets_its_precision():
    from explain.tutorial.errors import TutorialError
    from explain.tutorial.loader import load_tutorial, parse_text

    tut = load_tutorial("14-backpropagation-through-attention")
    quoted = [s for s in tut.stops if "1.1·10⁻⁷" in s.narration]
    assert quoted and all(s.precision == 8 for s in quoted)
    base = 'title = "t"\nsummary = "s"\nmodel = "attention"\n[[stops]]\nstep = "attn.q"\ntitle = "a"\nnarration = "b"\n'
    assert parse_text(base + "precision = 6\n", "t", None, "t.toml").stops[0].precision == 6
    with pytest.raises(TutorialError, match="precision"):
        parse_text(base + "precision = 12\n", "t", None, "t.toml")
    with pytest.raises(TutorialError, match="precision"):
        parse_text(base + 'precision = "6"\n', "t", None, "t.toml")


def test_small_things_of_defect_9():
    from explain.render.plain import print_trace, ran_config

    # the README's `explain run gpt --lr 0.5 --plain | tail -8` ends with the loss before and after the step
    trace = explain.run("gpt", lr=0.5)
    out = io.StringIO()
    print_trace(Console(file=out, width=100, color_system=None), trace)
    last = out.getvalue().rstrip().splitlines()[-1]
    before, after = float(trace["loss"].output), float(trace["loss_after"].output)
    assert last == f"loss {before:.4f} → loss_after {after:.4f} after one SGD step (falls)" and after < before
    # the JSON's config says what ran: 'causal' is always causal, 'attention' is not unless asked
    assert ran_config(explain.run("causal"))["causal"] is True
    assert ran_config(explain.run("attention"))["causal"] is False
    assert ran_config(explain.run("attention", causal=True))["causal"] is True
    # one minus sign for numbers: a negative operand in parentheses has the hyphen every other number has
    ex = explain.run("attention", text="Thinking Machines").explain("attn.pattern", (0, 1))
    line = ex.lines[-1]
    assert "−" not in line.replace(" − ", "") and "(−" not in line, line
    # z⁽²⁾, as the tutorials write it elsewhere
    from explain.tutorial.loader import load_tutorial

    for name in ("01-attention-without-weights", "02-softmax-and-context-vectors"):
        tut = load_tutorial(name)
        texts = [tut.summary] + [f"{s.title} {s.narration} {s.question or ''}" for s in tut.stops]
        assert not any("z(2)" in t for t in texts)


def test_a_generations_header_lines_fit_80_columns():
    """Defect 9: on a generation's steps the header's formula and signature lines fit the step screen's centre
    at 80 columns (the top-p formula took 90 cells and wrapped); the first line is checked by its own test."""
    from rich.cells import cell_len

    from explain.render.fit import centre_width

    width = centre_width(80, tutorial=False)[1]
    trace = explain.generate("gpt", text="the cat is", top_k=3, top_p=0.9, temperature=0.7, max_new_tokens=2)
    long = [(s.name, line) for s in trace if s.name.startswith("gen.") for line in (s.formula, s.signature)
            if cell_len(line) > width]
    assert long == []
