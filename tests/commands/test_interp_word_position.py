"""``--word`` asks a question the text can answer (issue 42 item 2): when the text holds the word, the lens and
the attribution read the position the word comes after (its last such place, the others named in one line on
stderr), not the last position, whose next word is the one after the word (where layer 0's rank 1 was the
embedding echoing the current token)."""

from __future__ import annotations

import json

from clitools import invoke

LENS = ("lens", "gpt", "--trained", "--text", "The cat is happy", "--word", "happy")


def test_lens_reads_where_the_word_is_next():
    out = invoke(*LENS, "--plain")
    assert out.exit_code == 0, out.output
    assert "after position 2 (is): the next word" in out.stdout
    assert out.stderr.strip() == ("reading position 2 ('is'), where 'happy' is the next token in the text; "
                                  "--position chooses another")
    doc = json.loads(invoke(*LENS, "--json").stdout)
    assert doc["position"] == 2 and doc["layers"][0]["rank"] > 1  # not the embedding echoing 'happy' itself


def test_the_other_places_are_named_and_position_still_chooses():
    out = invoke("lens", "gpt", "--trained", "--text", "the cat sat on the cat", "--word", "cat", "--json")
    assert json.loads(out.stdout)["position"] == 4
    assert "reading position 4 ('the')" in out.stderr and "also next after position 0;" in out.stderr
    last = invoke(*LENS, "--position", "-1", "--json")
    assert json.loads(last.stdout)["position"] == 3 and last.stderr == ""
    absent = invoke("lens", "gpt", "--trained", "--text", "the cat sat on the", "--word", "mat", "--json")
    assert json.loads(absent.stdout)["position"] == 4 and absent.stderr == ""  # what comes after the text


def test_attribute_reads_where_the_word_is_next():
    out = invoke("attribute", "gpt", "--trained", "--text", "The cat is happy", "--word", "happy", "--vs", "cat",
                 "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["position"] == 2 and "reading position 2 ('is')" in out.stderr


def test_a_misspelt_word_is_offered_the_near_one():
    # issue 42 item 12: '--word hapy' said 'not in the vocabulary' and nothing more
    from clitools import one_line_error

    one_line_error(invoke("lens", "gpt", "--trained", "--word", "hapy"), 1, "did you mean 'happy'?")
