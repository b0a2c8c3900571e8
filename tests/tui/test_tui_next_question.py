"""The question after a tutorial's last stop keeps the next tutorial's title as written (issue 42 tryout: at
80x24 tutorial 19's last stop asked "Open the next tutorial, Which position carries the word? Activation
patching?", the second sentence of the title turned into a question). A pure function: no Pilot needed."""

from __future__ import annotations

from explain.tui.controller import next_question
from explain.tutorial import list_tutorials


def test_a_two_sentence_title_stays_as_written():
    """Fails on the old code (there was no function; the f-string appended '?' to the title)."""
    q = next_question("Which position carries the word? Activation patching.")
    assert "**Which position carries the word? Activation patching.**" in q
    assert q.endswith("Open it?")


def test_every_shipped_title_ends_its_sentence_once():
    for tut in list_tutorials():
        q = next_question(tut.title)
        said = q.split("**")[1]
        assert said.startswith(tut.title) and said[-1] in ".?!" and not said.endswith(("?.", "..", "!.")), said
