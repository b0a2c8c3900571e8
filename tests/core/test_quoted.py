"""Words in quotes as a reader wants them (explain.core.text.quoted): the lens, attribution and patching titles
quote the word asked about. They used repr, which doubles the backslash of a byte token's label, so the llama
fixture's attribution screen read ``logit['\\\\xd1']`` for the token shown everywhere else as ``\\xd1``."""

from __future__ import annotations

from dataclasses import replace

from explain.core.text import quoted
from explain.interp import attribute


def test_quoted_writes_a_word_once_in_quotes() -> None:
    assert quoted("cat") == "'cat'"
    assert quoted("'s") == '"\'s"'  # a single quote inside: double quotes around, as repr does
    assert quoted("\\xd1") == "'\\xd1'"  # one backslash, as the label is written elsewhere
    assert quoted("a\x1bb") == "'a\\x1bb'"  # a control character is escaped, never sent to the terminal


def test_an_attribution_titles_a_byte_token_as_its_label() -> None:
    a = replace(attribute("gpt", "happy", trained=True, text="The cat is happy"), word_text="\\xd1")
    assert "logit['\\xd1']" in str(a) and "\\\\xd1" not in str(a)  # the old repr gave logit['\\\\xd1']
