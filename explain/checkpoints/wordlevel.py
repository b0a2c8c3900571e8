"""explain's word tokenizer written as a ``tokenizers`` WordLevel tokenizer.json, and read back without the
``tokenizers`` package.

``explain train`` saves its vocabulary this way (:func:`tokenizer_json`), so transformers and ``tokenizers``
can load the folder; explain itself recognises its own file (:func:`is_word_level`) and encodes with
:func:`explain.core.words.split_words`, the same split (a test holds the two to the same ids over the corpus), so
the core install, which has no ``tokenizers``, opens a trained model. Nothing here imports numpy.
"""

from __future__ import annotations

from typing import Any

from explain.core.words import SPECIALS, UNK, split_words

# explain's split (explain.core.words.split_words) after lower-casing: runs of [A-Za-z0-9_'], and every other
# character that is not whitespace on its own.
WORD_PATTERN = r"[A-Za-z0-9_']+|[^\sA-Za-z0-9_']"
_PRE_TOKENIZER = {"type": "Sequence", "pretokenizers": [
    {"type": "WhitespaceSplit"},
    {"type": "Split", "pattern": {"Regex": WORD_PATTERN}, "behavior": "Isolated", "invert": False}]}


def tokenizer_json(words: list[str]) -> dict[str, Any]:
    """A WordLevel tokenizer.json: lower-case, split at whitespace, then words and single other characters;
    a word not in ``words`` is <unk>."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Lowercase"}, "pre_tokenizer": _PRE_TOKENIZER,
            "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)},
                      "unk_token": SPECIALS[UNK]}}


def is_word_level(data: Any) -> bool:
    """Whether a parsed tokenizer.json is one :func:`tokenizer_json` wrote."""
    try:
        return (data["model"]["type"] == "WordLevel" and data["pre_tokenizer"] == _PRE_TOKENIZER
                and data["normalizer"] == {"type": "Lowercase"} and not data.get("added_tokens"))
    except (KeyError, TypeError):
        return False


def word_vocab(data: Any) -> dict[str, int] | None:
    """The vocabulary of a parsed tokenizer.json that :func:`tokenizer_json` wrote, else None."""
    return {str(w): int(i) for w, i in data["model"]["vocab"].items()} if is_word_level(data) else None


def encode(vocab: dict[str, int], text: str) -> tuple[list[int], list[str]]:
    """The ids of ``text`` and the words the vocabulary lacks (each once, in order), which became <unk>. The text
    is lower-cased before it is split, as the tokenizer.json's normaliser does ('İ' lower-cases to 'i' and a
    combining dot, two pieces)."""
    unk_id = vocab.get(SPECIALS[UNK], UNK)
    ids, unknown = [], []
    for w in split_words(text.lower()):
        i = vocab.get(w)
        if i is None:
            i = unk_id
            if w not in unknown:
                unknown.append(w)
        ids.append(i)
    return ids, unknown
