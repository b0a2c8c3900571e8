"""The operand panes mark the cells that fed the cell under the cursor, from the op's own ``feeds``: S[i, j]
marks row i of Q and row j of K; a layer norm its row; an embedding the token's row of W_E (its slice followed);
marks are a style (bold underline), so they read without colour too."""

from __future__ import annotations

import explain
from explain import ops
from explain.tui.state import View
from explain.tui.widgets.operands import operand_view


def marked_lines(text) -> dict[int, str]:
    """{line number: the characters of that line drawn underlined}."""
    plain = text.plain
    starts = [0] + [i + 1 for i, ch in enumerate(plain) if ch == "\n"]
    out: dict[int, str] = {}
    for span in text.spans:
        if "underline" not in str(span.style) or "yellow" in str(span.style):
            continue
        line = max(i for i, s in enumerate(starts) if s <= span.start)
        out[line] = out.get(line, "") + plain[span.start:span.end]
    return out


def view_at(trace, name, index) -> View:
    return View(trace).go(trace[name].index).at(index)


def feeds(view):
    step = view.step
    return ops.get(step.op).feeds(view.index_of_cell, view.trace.inputs_of(step), **step.attrs)


def test_scores_mark_row_i_of_q_and_row_j_of_k():
    t = explain.run("gpt", random_weights=True)
    view = view_at(t, "blocks.0.attn.scores", (0, 1, 1, 2))
    fq, fk = feeds(view)
    q = operand_view(view, "blocks.0.attn.q", "Q", 60, fq)
    k = operand_view(view, "blocks.0.attn.k", "K", 60, fk)
    # title, slice line, ruler, then rows 0..3: row 1 of Q is line 4, row 2 of K is line 5
    assert set(marked_lines(q)) == {4} and set(marked_lines(k)) == {5}
    qv = t["blocks.0.attn.q"].output[0, 1, 1]
    assert all(f"{v:.4f}" in marked_lines(q)[4] for v in qv)
    assert "head 1" in q.plain  # the fed slice is the one shown


def test_layer_norm_marks_its_row_and_embed_the_tokens_row():
    t = explain.run("gpt", random_weights=True)
    view = view_at(t, "blocks.0.ln1", (0, 2, 3))
    x = operand_view(view, t["blocks.0.ln1"].inputs[0], "x", 200, feeds(view)[0])
    assert set(marked_lines(x)) == {2 + 2 + 1}  # title, slice line, ruler, rows 0, 1, then row 2
    view = view_at(t, "embed", (0, 1, 0))
    tok = int(t["tokens"].output[0, 1])
    w = operand_view(view, "W_E", "W_E", 200, feeds(view)[1])
    lines = w.plain.splitlines()
    (line, text), = marked_lines(w).items()
    assert lines[line].split()[0] == str(tok) and len(text.split()) == 1  # W_E[token, 0]: one cell


def test_a_short_pane_keeps_the_marked_row_on_screen():
    """A pane with room for two rows of a 6-row operand shows the row the cursor's cell reads (row 5), not rows
    0 and 1 with the mark below the fold."""
    t = explain.run("causal", text="Your journey starts with one step")
    view = view_at(t, "attn.pattern", (5, 2))
    (f,) = feeds(view)
    text = operand_view(view, "attn.masked", "Sₘ", 60, f, height=4)  # title, ruler, two rows
    rows = [line.split()[0] for line in text.plain.splitlines()[2:]]
    assert rows[-1] == "5" and "0" not in rows, text.plain
    row5 = text.plain.splitlines().index(next(li for li in text.plain.splitlines() if li.startswith("5 ")))
    assert set(marked_lines(text)) == {row5}, text.plain  # every cell of row 5 marked, on screen


def test_operands_share_the_width_by_need():
    from explain.tui.widgets.operands import split_widths

    assert split_widths([50, 15], 80) == [50, 15]  # both fit: each its own
    assert split_widths([70, 15], 60) == [43, 15]  # the narrow one whole, the wide one the rest
    assert split_widths([70, 70], 60) == [29, 29]  # two wide ones halve it
    assert sum(split_widths([30, 200, 12], 100)) + 2 * 2 <= 100
