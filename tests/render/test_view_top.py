"""``f`` (issue 42 item 12): a 49,152-word step opens at token 0 with the answer far off screen; View.top puts
the cursor on the row's most probable word, or on a generated token's step on the word drawn (which sampling
may have taken from below the top). Checked against numpy's argmax and the generation's own ``gen.N.next``
step; fails on the old code (View had no such move)."""

from __future__ import annotations

import numpy as np

import explain
from explain.render.view import View


def test_f_goes_to_each_rows_most_probable_word_of_a_big_vocabulary():
    trace = explain.run("gpt", d_vocab=49_152, random_weights=True, text="the cat sat on the mat")
    probs = trace["probs"]
    for row in range(probs.shape[1]):
        view, said = View(trace, probs.index).clamped().move(row, 0).top()
        best = int(np.argmax(probs.output[0, row]))
        assert view.cell == (row, best) and best > 1000  # far right of where the row opens
        assert said.startswith(f"the most probable word: {best} '")


def test_f_goes_to_the_drawn_word_on_a_new_tokens_step():
    trace = explain.generate("gpt", trained=True, text="the cat is", max_new_tokens=2, temperature=2.0, seed=4)
    drawn = int(trace["gen.1.next"].output[0, 0])
    probs = trace["gen.1.probs"]
    assert drawn != int(np.argmax(probs.output[0, -1]))  # sampling took a word below the top
    view, said = View(trace, probs.index).clamped().top()
    assert view.index_of_cell == (0, 0, drawn) and f"the token drawn here: {drawn} '" in said
    view, said = View(trace, trace["blocks.0.attn.pattern"].index).clamped().move(2, 0).top()
    pattern = trace["blocks.0.attn.pattern"].output[0, 0, 2]
    assert view.cell == (2, int(np.argmax(pattern))) and said.startswith("the row's largest value")
