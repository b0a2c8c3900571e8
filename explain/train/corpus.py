"""The built-in training corpus: a small grammar of the tutorials' and the study notes' sentences, mixed with
induction sequences (a span of random words, then the same span again), and the split into training and
held-out lines.

A corpus is a list of lines, one training sequence each; the word tokenizer (:class:`explain.core.words.Tokenizer`)
reads them, and every line ends with ``<eos>``. The grammar is finite and small, so it is enumerated whole: a
tenth of its sentences are held out (never trained on), and :func:`fixed_positions` says, for a sentence,
which next words the grammar fixes (the prefix allows one word only), the positions the accuracy is measured
on. An induction line (at least a fifth of the lines) teaches copying: after ``w1 … wk w1`` comes ``w2``, which
only an induction head (look for the earlier occurrence of the current word, attend to the word after it)
can predict.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

from explain.core.words import SPECIALS, Tokenizer, split_words

# A template is a tuple of slots; a slot is one word or a tuple of choices.
_ANIMAL = ("cat", "dog", "bird", "fox")
_PERSON = ("woman", "man", "student", "teacher")
_ADJ = ("happy", "hungry", "nice", "small", "tired")
TEMPLATES: tuple[tuple, ...] = (
    ("the", ("cat", "dog"), "sat", "on", "the", "mat", "."),
    ("the", _ANIMAL, "is", _ADJ, "."),
    ("a", _ANIMAL + _PERSON, "is", _ADJ, "."),
    (("your", "my"), "journey", "starts", "with", "one", "step", "."),
    ("thinking", "machines", ("are", "were"), ("smart", "new", "here"), "."),
    ("the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "."),
    ("the", _PERSON, ("reads", "writes"), "a", ("book", "letter"), "."),
    ("the", _ANIMAL, ("eats", "wants"), "the", ("food", "fish"), "."),
    ("i", ("like", "see"), "the", _ANIMAL, "."),
    ("we", "are", _ADJ, "."),
)
HELD_OUT = 10  # every 10th sentence of the grammar (in enumeration order) is held out
INDUCTION_SHARE = 0.5  # of the lines (the issue asks for at least a fifth): half, so the induction head forms early
SPAN = (6, 10)  # words in an induction span, inclusive


def sentences() -> list[str]:
    """Every sentence the grammar makes, in a fixed order."""
    out = []
    for t in TEMPLATES:
        slots = [s if isinstance(s, tuple) else (s,) for s in t]
        out += [" ".join(words) for words in itertools.product(*slots)]
    return out


def split_sentences() -> tuple[list[str], list[str]]:
    """The grammar's sentences for training, and the held-out tenth."""
    every = sentences()
    return ([s for i, s in enumerate(every) if i % HELD_OUT != HELD_OUT - 1],
            [s for i, s in enumerate(every) if i % HELD_OUT == HELD_OUT - 1])


def vocabulary() -> list[str]:
    """The word tokenizer's vocabulary over the grammar: the specials, the built-in words, then the grammar's
    new words in order of appearance (so explain's own tokenizer gives the same ids)."""
    return Tokenizer(sentences()).words


@functools.cache  # asked once per induction line: 10,000 of them in the built-in corpus
def span_words() -> tuple[str, ...]:
    """The words an induction span is drawn from: every vocabulary word but the specials."""
    return tuple(w for w in vocabulary() if w not in SPECIALS)


def induction_line(rng: np.random.Generator) -> str:
    """A span of 6–10 distinct vocabulary words in random order, then the same span again."""
    words = span_words()
    k = int(rng.integers(SPAN[0], SPAN[1] + 1))
    span = [words[i] for i in rng.choice(len(words), size=k, replace=False)]
    return " ".join(span + span)


@dataclass(frozen=True)
class Corpus:
    """Training and held-out lines, one sequence each."""

    train: list[str]
    held_out: list[str]


def builtin_corpus(lines: int = 20000, seed: int = 0) -> Corpus:
    """The built-in corpus: ``lines`` training lines (grammar sentences drawn at random from the training
    sentences, and induction lines), and a tenth as many held-out lines (every held-out sentence, then drawn
    sentences and induction lines of their own draw)."""
    train_s, held_s = split_sentences()
    rng = np.random.default_rng([seed, 1])

    def draw(pool: list[str], n: int) -> list[str]:
        return [induction_line(rng) if rng.random() < INDUCTION_SHARE else pool[int(rng.integers(len(pool)))]
                for _ in range(n)]

    return Corpus(draw(train_s, lines), held_s + draw(held_s, lines // 10))


def corpus_from_text(text: str) -> Corpus:
    """A user's corpus: one sequence per non-empty line; every 10th line is held out."""
    lines = [ln.strip() for ln in text.splitlines() if split_words(ln)]
    return Corpus([ln for i, ln in enumerate(lines) if i % HELD_OUT != HELD_OUT - 1],
                  [ln for i, ln in enumerate(lines) if i % HELD_OUT == HELD_OUT - 1])


def fixed_positions(sentence: str) -> list[int]:
    """The positions i of ``sentence``'s words whose next word (i + 1) the grammar fixes: every sentence
    that starts with the words 0…i goes on with the same word."""
    words = sentence.split()
    nexts: dict[tuple[str, ...], set[str]] = {}
    for s in sentences():
        w = s.split()
        for i in range(len(w) - 1):
            nexts.setdefault(tuple(w[: i + 1]), set()).add(w[i + 1])
    return [i for i in range(len(words) - 1) if len(nexts.get(tuple(words[: i + 1]), ())) == 1]
