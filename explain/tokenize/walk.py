"""A tokenizer's walkthrough of one text, as data: what each stage did, in order.

:class:`Walkthrough` holds the text, its normalised form, the pieces the pre-tokenizer cut (each with its bytes
and, for byte-level BPE, the characters those bytes stand for), every model step in the order it happened (a
BPE :class:`Merge` with its rank and the pairs it beat, a WordPiece :class:`Match` with the longer candidates it
tried first) and the tokens with their ids. The families fill it in (:mod:`explain.tokenize.bpe`,
:mod:`explain.tokenize.wordpiece`, :mod:`explain.tokenize.words`); the command, the recorded steps and the export
only read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from explain.core.text import visible

_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "▁": "␣"}


def shown(text: str) -> str:
    """A piece or token as a student reads it: a space '␣', a newline '⏎', a tab '⇥', control characters
    escaped."""
    return visible("".join(_VISIBLE.get(c, c) for c in text))


def split_added(text: str, added: dict[str, int]) -> list[tuple[int, int, int | None]]:
    """(start, end, added token id or None) covering ``text``: the added tokens (``<|endoftext|>``, ``[SEP]``) found
    leftmost, the longest first, as ``tokenizers`` finds them before anything else; the stretches between them."""
    out: list[tuple[int, int, int | None]] = []
    at, i = 0, 0
    names = sorted(added, key=len, reverse=True)
    while i < len(text) and names:
        hit = next((n for n in names if text.startswith(n, i)), None)
        if hit is None:
            i += 1
            continue
        if i > at:
            out.append((at, i, None))
        out.append((i, i + len(hit), added[hit]))
        i = at = i + len(hit)
    if at < len(text):
        out.append((at, len(text), None))
    return out


@dataclass(frozen=True)
class Piece:
    """One piece of the pre-tokenized text: where it stands, its text, its UTF-8 bytes and the symbols the model
    starts from (byte-level BPE: one alphabet character per byte; WordPiece and words: the text)."""

    start: int  # offsets in the normalised text
    end: int
    text: str
    symbols: tuple[str, ...]
    special: int | None = None  # an added token's id: matched whole, before any other stage

    @property
    def raw(self) -> bytes:
        return self.text.encode("utf-8")


@dataclass(frozen=True)
class Merge:
    """One BPE merge: in piece ``piece``, the adjacent pair at ``position`` (of the symbols ``before``) had the
    best rank, ``rank`` (the lowest: merges learnt earlier win), and became ``merged`` (id ``new_id``).
    ``rivals`` are the other adjacent pairs and their ranks (None: no merge rule for that pair)."""

    piece: int
    before: tuple[str, ...]
    position: int
    rank: int
    new_id: int
    rivals: tuple[tuple[int, str, str, int | None], ...]  # (position, left, right, rank)

    @property
    def pair(self) -> tuple[str, str]:
        return self.before[self.position], self.before[self.position + 1]

    @property
    def merged(self) -> str:
        return "".join(self.pair)

    @property
    def after(self) -> tuple[str, ...]:
        b, i = self.before, self.position
        return b[:i] + (self.merged,) + b[i + 2:]

    def why(self, show: Callable[[str], str] = str) -> str:
        """Why this pair came first: its rank against the ranks of the other pairs of the piece (``show``
        writes a symbol as the reader sees it)."""
        ranked = sorted((r, p, a, b) for p, a, b, r in self.rivals if r is not None)
        if not ranked:
            return "the only pair with a merge rule"
        if ranked[0][0] == self.rank:  # the same rule again further right: the leftmost goes first
            return f"the same rule also applies at position {ranked[0][1]}: the leftmost goes first"
        seen: dict[tuple[str, str], int] = {}
        for r, _, a, b in ranked:
            seen.setdefault((a, b), r)
        rivals = [f"{show(a)}+{show(b)} {r}" for (a, b), r in seen.items()]
        return "lowest rank; beats " + ", ".join(rivals[:5]) + (" …" if len(rivals) > 5 else "")


@dataclass(frozen=True)
class Match:
    """One WordPiece step: in piece ``piece`` from character ``start``, the longest candidate in the vocabulary
    was ``token`` (``##`` marks a piece inside a word); ``tried`` longer candidates were not in it. ``token``
    None: no candidate at all, so the whole word is the unknown token."""

    piece: int
    start: int
    token: str | None
    token_id: int
    tried: tuple[str, ...] = ()


@dataclass
class Walkthrough:
    """What a tokenizer did to one text, stage by stage."""

    family: str  # "bpe" (byte-level), "sentencepiece" (characters and ▁), "wordpiece", "words"
    text: str
    normalized: str
    normalizers: tuple[str, ...]  # what the normaliser does, one line each ("lowercase", "NFC")
    pretokenizers: tuple[str, ...]  # what the pre-tokenizer does, one line each (with its regex)
    pieces: list[Piece] = field(default_factory=list)
    steps: list[Any] = field(default_factory=list)  # Merge or Match, in the order they happened
    tokens: list[tuple[str, int]] = field(default_factory=list)  # (token as the vocabulary spells it, id)
    labels: dict[int, str] = field(default_factory=dict)  # a readable label per id used
    vocab_ids: dict[str, int] = field(default_factory=dict)  # the id of every first symbol of a piece (BPE)

    @property
    def ids(self) -> list[int]:
        return [i for _, i in self.tokens]

    def label(self, token_id: int) -> str:
        return self.labels.get(token_id, f"#{token_id}")

    def to_json(self) -> dict[str, Any]:
        """The walkthrough as one JSON document (``explain tokenize --json``)."""
        out: dict[str, Any] = {"family": self.family, "text": self.text, "normalized": self.normalized,
                               "normalizers": list(self.normalizers), "pretokenizers": list(self.pretokenizers)}
        out["pieces"] = [{"start": p.start, "end": p.end, "text": p.text, "bytes": list(p.raw),
                          "symbols": list(p.symbols), "special": p.special} for p in self.pieces]
        steps = []
        for s in self.steps:
            if isinstance(s, Merge):
                steps.append({"kind": "merge", "piece": s.piece, "before": list(s.before), "position": s.position,
                              "pair": list(s.pair), "rank": s.rank, "merged": s.merged, "id": s.new_id,
                              "rivals": [{"position": p, "pair": [a, b], "rank": r} for p, a, b, r in s.rivals],
                              "why": s.why()})
            else:
                steps.append({"kind": "match", "piece": s.piece, "start": s.start, "token": s.token,
                              "id": s.token_id, "tried": list(s.tried)})
        out["steps"] = steps
        out["tokens"] = [{"token": t, "id": i, "label": self.label(i)} for t, i in self.tokens]
        out["ids"] = self.ids
        return out


@runtime_checkable
class Walker(Protocol):
    """What every family's walker gives (:func:`explain.tokenize.family.tokenizer_for` picks one): the walkthrough
    of a text, and the vocabulary and merge ranks an exported script needs (``ranks`` None: no merges)."""

    @property
    def vocab(self) -> dict[str, int]: ...

    @property
    def ranks(self) -> dict[tuple[str, str], int] | None: ...

    def walk(self, text: str) -> Walkthrough: ...


def frame(w: Walkthrough, template: tuple[tuple[str, int] | None, ...]) -> None:
    """The special tokens a checkpoint puts around every text (BERT's [CLS] … [SEP], Gemma's <bos> first), as
    ``template`` gives them ((token, id) each, None for the text): pieces of their own (empty spans at the text's
    two ends, as they stand in no character of it), the steps' piece numbers moved past those put first."""
    at = template.index(None) if None in template else len(template)
    before, after = [t for t in template[:at] if t], [t for t in template[at + 1:] if t]
    end = len(w.normalized)
    w.pieces = ([Piece(0, 0, t, (t,), i) for t, i in before] + w.pieces
                + [Piece(end, end, t, (t,), i) for t, i in after])
    w.steps = [replace(s, piece=s.piece + len(before)) for s in w.steps]
    w.tokens = list(before) + w.tokens + list(after)
