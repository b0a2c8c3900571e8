"""A narration draws every word it holds (issue 42 item 4): ``<bos>`` written outside backticks was inline HTML
to the Markdown renderer, which dropped it ("the top word is now , with only 0.34" in tutorial 18), in the TUI and
in --plain alike, and ``explain tutorial check`` passed it. Golden narration: tutorial 18's stop 3."""

from __future__ import annotations

from pathlib import Path

from clitools import invoke, one_line_error

import explain.render.narration as narration

GOOD = Path(__file__).resolve().parents[1] / "data" / "tutorials" / "good_minimal.toml"


def test_tutorial_18_narrates_bos():
    out = invoke("tutorial", "18-the-logit-lens", "--plain")
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    assert ("Block 0's attention has added what each position gathered from the earlier ones. mat rises to p 0.0105 "
            "(rank 12); the top word is now <bos>, with only 0.34: the stream is in between.") in text


def test_a_teachers_token_is_drawn_and_a_dropped_word_fails_the_check(tmp_path, monkeypatch):
    mine = tmp_path / "tokens.toml"
    mine.write_text(GOOD.read_text().replace('narration = "Each row sums to 1."',
                                             'narration = "Each row sums to 1, *<eos>* too, and `<pad>`."'))
    assert invoke("tutorial", "check", str(mine)).exit_code == 0
    assert "Each row sums to 1, <eos> too, and <pad>." in invoke("tutorial", str(mine), "--plain").stdout
    monkeypatch.setattr(narration, "keep_tokens", lambda text: text)  # a renderer that drops <eos> again
    one_line_error(invoke("tutorial", "check", str(mine)), 1, "stop 2 'Softmax': the narration draws without '<eos>'")
