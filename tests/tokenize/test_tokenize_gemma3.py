"""explain tokenize on Gemma 3 270M's GGUF (the catalogue's gemma3-270m, fetched once per run, tests/helpers/gemma3_270m.py):
its SentencePiece vocabulary walked as the tokenizer explain builds for it with ``tokenizers`` (the merges listed
for the text's characters; ▁ for a space; bytes where a character is missing; <bos> first). The walkthrough's
ids equal the checkpoint's encode on a part of the battery (the whole of it takes minutes: every new character
lists the merges again); "The capital of France is" is 2 818 5279 529 7001 563.

Marked ``network``: it FAILS, never skips, when the registry cannot be reached."""

from __future__ import annotations

import pytest
from gemma3_270m import gemma3_gguf_or_fail
from tokenize_battery import HAND

from explain.checkpoints.open import open_checkpoint
from explain.tokenize.family import tokenizer_for

pytestmark = pytest.mark.network


def test_gemma3_walkthrough_equals_its_encode() -> None:
    ck = open_checkpoint(str(gemma3_gguf_or_fail()))
    tok = tokenizer_for(ck)
    w = tok.walk("The capital of France is")
    assert w.ids == [2, 818, 5279, 529, 7001, 563] == ck.encode("The capital of France is")
    assert w.family == "sentencepiece" and w.pieces[0].special == 2 and w.steps
    sample = HAND[:40]  # empty, spaces, newlines, digits, apostrophes, non-ASCII
    assert [tok.walk(t).ids for t in sample] == [ck.encode(t) for t in sample]
