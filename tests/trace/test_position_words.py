"""A drill-down's sentences name a position with its token (issue 42 tryout): the router's "position 0 goes to
expert 2" (tutorial 24 stop 3), the position embedding's "position 1 uses row 1 of W_pos" and the mask's "key
position 2 comes after query position 1" (run gpt) numbered positions the grid beside them labels with words.
Each case fails on the old code (the sentence without the quoted word)."""

from __future__ import annotations

import pytest

import explain
from explain.tutorial import list_tutorials, run_tutorial


@pytest.fixture(scope="module")
def gpt():
    return explain.run("gpt", trained=True, text="the cat is happy")


@pytest.mark.parametrize("step, cell, said", [
    ("pos_embed", (1, 1), "position 1 'cat' uses row 1"),
    ("blocks.0.attn.masked", (0, 0, 1, 2), "key position 2 'is' comes after query position 1 'cat'"),
    ("blocks.0.attn.masked", (0, 0, 1, 2), "query 1 'cat', key 2 'is'"),
])
def test_gpt_drill_downs_name_their_positions(gpt, step, cell, said):
    ex = gpt.explain(step, cell)
    assert said in "\n".join([ex.title, *ex.lines])


def test_the_router_says_which_token_goes_where():
    tut = next(t for t in list_tutorials() if t.name == "24-which-expert-reads-this-word")
    trace = run_tutorial(tut)
    ex = trace.explain("blocks.0.mlp.choice", (0, 0, 2))
    assert "position 0 'the' goes to expert 2" in ex.title


def test_a_loss_axis_keeps_the_number_alone(gpt):
    """token_loss is one position shorter than the words: position t is not the word at t, so its title keeps the
    number alone."""
    ex = gpt.explain("token_loss", (0, 1))
    assert "'" not in ex.title


def test_a_loss_entry_says_which_token_it_scores(gpt):
    """token_loss's drill-down has no table for with_words to label: its line names the token read and the one
    scored (fails on the old code, which said only 'ℓ[0, 1] = −log p(y)[0, 1]')."""
    ex = gpt.explain("token_loss", (0, 1))
    assert "position 1 reads 'cat' and is scored on the next token, 'is'" in ex.lines
