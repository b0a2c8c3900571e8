"""Words a student reads beside numbers, as the issue 42 tryout found them missing or ragged on the render layer:
a drill-down's ``index word`` column aligned (tutorial 18's softmax showed ``  0 <bos>`` two columns left of
``    3 the``), a loss's positions labelled by the token each is scored on (tutorial 16 stop 5's ``token_loss``
had bare 0…10 above its numbers), and the lens's predictions pane saying where it reads in words ("the lens
the embeddings")."""

from __future__ import annotations

from rich.console import Console

from explain.interp.names import point_phrase
from explain.ops.base import CellExplanation
from explain.render.step import axis_labels, explanation_body
from explain.tutorial import list_tutorials, run_tutorial


def drawn(renderable, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def test_index_word_labels_line_up():
    """Fails on the old code: the labels were right-justified whole, so 'the' began two columns after '<bos>'."""
    ex = CellExplanation(index=(0, 0, 3), value=0.68, title="p[0, 0, 3]", columns=("k", "score", "weight"),
                         rows=[("0 <bos>", 6.36, 0.18), ("1 <eos>", 0.62, 0.0006), ("3 the", 7.68, 0.68),
                               ("27 mat", -0.94, 0.0001)])
    lines = drawn(explanation_body(ex))
    words = {w: next(line for line in lines if f" {w} " in line) for w in ("<bos>", "<eos>", "the", "mat")}
    starts = {w: line.index(f" {w} ") + 1 for w, line in words.items()}
    assert len(set(starts.values())) == 1, starts  # every word starts in one column
    ends = {w: line.index(f" {w} ") for w, line in words.items()}  # and every index ends in one column
    assert len(set(ends.values())) == 1, ends


def test_plain_index_column_stays_right_justified():
    """A column of bare numbers (a table over features) is not touched: its numbers still end in one column."""
    ex = CellExplanation(index=(0,), value=1.0, title="x", columns=("k", "x"), rows=[(0, 1.0), (10, 2.0)])
    lines = [line for line in drawn(explanation_body(ex)) if line.strip()[:2] in ("0 ", "10")]
    assert len(lines) == 2 and lines[0].index("0 ") == lines[1].index("10 ") + 1


def test_a_loss_axis_names_the_token_each_position_is_scored_on():
    """Fails on the old code (None: the axis is one shorter than the words, so it had no labels at all)."""
    tut = next(t for t in list_tutorials() if t.name == "16-inside-a-trained-model")
    trace = run_tutorial(tut)
    words = trace.axis_labels("pos", 0)
    for name in ("token_loss", "correct_log_probs"):
        step = trace[name]
        assert axis_labels(trace, step, len(step.shape) - 1, (0,)) == [f"→{w}" for w in words[1:]], name


def test_every_lens_point_reads_as_a_place():
    """Fails on the old code, which said "the lens the embeddings" for the first read."""
    for point in ("blocks.0.resid_pre", "blocks.0.resid_mid", "blocks.1.resid_post"):
        assert point_phrase(point).split()[0] in ("at", "after"), point
