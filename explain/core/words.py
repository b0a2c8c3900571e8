"""explain's word-level tokenizer: the specials, the built-in words, :func:`split_words`. It gives
:class:`explain.checkpoints.protocol.TextTokenizer`, what every tokenizer of a run gives (a checkpoint's too)."""

from __future__ import annotations

import re

from explain.core.padding import PAD

SPECIALS = ["<bos>", "<eos>", "<unk>"]
BOS, EOS, UNK = 0, 1, 2

# The words of the shipped tutorials and a few common ones, so small runs share stable ids.
BUILTIN_WORDS = (
    "the a an is are was of to and in on at for with your my journey starts one step thinking machines "
    "cat dog mat sat happy hungry nice woman man it this that i you we they . , ! ?"
).split()

# white space as Unicode's White_Space property has it (Python's \s also counts \x1c-\x1f, which tokenizers'
# WhitespaceSplit, the split of the word-level tokenizer.json explain train writes, keeps as characters)
_SPACE = "\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_WORD = re.compile(f"[A-Za-z0-9_']+|[^{_SPACE}A-Za-z0-9_']")


def split_words(text: str) -> list[str]:
    """Words and punctuation marks, in order: ``"The cat!"`` → ["The", "cat", "!"]."""
    return _WORD.findall(text)


class Tokenizer:
    """A word-level tokenizer: specials, then the built-in words, then new words in order of appearance."""

    name = "tokenizer"
    fixed = False

    def __init__(self, extra_texts: list[str] = ()) -> None:
        self.unknown: list[str] = []  # the words of the last text encoded that became <unk>
        self.words: list[str] = list(SPECIALS)
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        for w in BUILTIN_WORDS:
            self._add(w)
        for text in extra_texts:
            for w in split_words(text):
                self._add(w.lower())

    def _add(self, word: str) -> None:
        if word not in self.index:
            self.index[word] = len(self.words)
            self.words.append(word)

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, text: str) -> list[int]:
        words = split_words(text)
        self.unknown = [w for w in words if w.lower() not in self.index]
        return [self.index.get(w.lower(), UNK) for w in words]

    def label(self, token_id: int) -> str:
        return self.words[token_id] if 0 <= token_id < len(self.words) else f"#{token_id}"

    def labels(self, text: str, ids: list[int]) -> list[str]:
        return split_words(text)  # as written (the ids are case-insensitive)

    def vocab_labels(self) -> list[str]:
        return list(self.words)

    def pad_id(self) -> int:
        """The id of ``<pad>``, added to the vocabulary (after every word) the first time a batch needs it."""
        self._add(PAD)
        return self.index[PAD]
