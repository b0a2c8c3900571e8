"""explain's own word tokenizer step by step (:class:`explain.core.words.Tokenizer`, and the word-level
tokenizer.json ``explain train`` writes, :mod:`explain.checkpoints.wordlevel`): no merges, a word is a token or ``<unk>``."""

from __future__ import annotations

from collections.abc import Callable

from explain.core.words import SPECIALS, UNK, split_words
from explain.tokenize.walk import Piece, Walkthrough

WORD_REGEX = r"[A-Za-z0-9_']+|[^\sA-Za-z0-9_']"


def walk_words(text: str, lookup: Callable[[str], int | None], label: Callable[[int], str], grows: bool,
               unk_id: int = UNK) -> Walkthrough:
    """The walkthrough of ``text``: split into words and single other characters, lower-case, look each word up
    (``lookup``: its id, or None for a word the vocabulary lacks: ``unk_id``). ``grows``: explain's own
    tokenizer, whose vocabulary has every word of the run (it splits, then lower-cases each word); otherwise the
    word-level tokenizer.json explain train writes (it lower-cases the text, then splits: :mod:`explain.checkpoints.wordlevel`)."""
    grow = "; a word the vocabulary lacks gets the next free id" if grows else "; a word it lacks is <unk>"
    w = Walkthrough("words", text, text.lower(), ("lower-case every letter (the ids are case-insensitive)",),
                    (f"Split on the regex {WORD_REGEX}: runs of letters, digits, _ and ', and every other "
                     "character that is not white space on its own" + grow,))
    at, source = 0, text if grows else w.normalized
    for word in split_words(source):
        start = source.index(word, at)
        at = start + len(word)
        w.pieces.append(Piece(start, at, word, (word.lower(),)))
        token_id = lookup(word.lower())
        w.tokens.append((word.lower() if token_id is not None else SPECIALS[UNK],
                         token_id if token_id is not None else unk_id))
    w.labels = {i: label(i) for _, i in w.tokens}
    return w


class Words:
    """explain's word tokenizer (or the word-level file explain train writes) as a walker."""

    vocab: dict[str, int]
    ranks = None

    def __init__(self, vocab: dict[str, int], label: Callable[[int], str], grows: bool, unk_id: int = UNK) -> None:
        self.vocab, self.label, self.grows, self.unk_id = vocab, label, grows, unk_id

    def walk(self, text: str) -> Walkthrough:
        return walk_words(text, self.vocab.get, self.label, self.grows, self.unk_id)

    def encode(self, text: str) -> list[int]:
        return self.walk(text).ids
