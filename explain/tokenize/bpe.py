"""Byte-level BPE (GPT-2, SmolLM2, Llama 3, Qwen2) step by step, from the vocabulary and merges a tokenizer.json or
a GGUF carries.

The algorithm is ``tokenizers``' own (its ``BPE`` model with a ``ByteLevel`` pre-tokenizer): split the text with
the pre-tokenizers (:mod:`explain.tokenize.pretokenize`), write each piece's UTF-8 bytes as characters of GPT-2's
alphabet, then inside each piece merge, again and again, the adjacent pair whose merge rule has the lowest rank
(the rule learnt earliest), the leftmost when one rule applies at two places, until no rule applies. With
``ignore_merges`` (Llama 3) a piece that is a token as a whole is taken at once. Added tokens
(``<|endoftext|>``) are matched in the text first and never split.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explain.core.errors import InputError
from explain.tokenize.pretokenize import (
    GPT2,
    LLAMA3,
    QWEN2,
    char_bytes,
    split_digits,
    split_isolated,
    to_byte_level,
)
from explain.tokenize.walk import Merge, Piece, Walkthrough, shown, split_added

MAX_TEXT = 20_000  # characters a walkthrough takes: every merge records every pair beside it
_NORMAL_FORMS = {"NFC", "NFKC", "NFD", "NFKD"}
# the pre-tokenizers a GGUF names (tokenizer.ggml.pre), as the model's own tokenizer.json has them
GGUF_PRE: dict[str, list[dict[str, Any]]] = {
    "smollm": [{"type": "Digits", "individual_digits": True},
               {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}],
    "gpt-2": [{"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}],
    "llama-bpe": [{"type": "Split", "pattern": {"Regex": LLAMA3}, "behavior": "Isolated"},
                  {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}],
    "qwen2": [{"type": "Split", "pattern": {"Regex": QWEN2}, "behavior": "Isolated"},
              {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}],
}


def flat_sequence(node: Any) -> list[dict[str, Any]]:
    if not isinstance(node, dict):
        return []
    inner = node.get("pretokenizers") or node.get("normalizers")
    return [x for n in inner for x in flat_sequence(n)] if node.get("type") == "Sequence" else [node]


def _refuse(where: str, what: str) -> InputError:
    return InputError(f"{where}: explain tokenize walks through byte-level BPE, WordPiece and explain's word "
                      f"tokenizer; this tokenizer has {what}. Its ids still come from 'tokenizers' in a run")


@dataclass
class BPE:
    """A byte-level BPE tokenizer as explain walks through it."""

    vocab: dict[str, int]
    ranks: dict[tuple[str, str], int]
    pre: list[dict[str, Any]]  # the pre-tokenizers, in order
    normalizers: list[str] = field(default_factory=list)  # "NFC", "Lowercase"
    added: dict[str, int] = field(default_factory=dict)  # added tokens, matched whole
    ignore_merges: bool = False
    label: Callable[[int], str] = str

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str, label: Callable[[int], str] = str) -> BPE:
        """From a parsed tokenizer.json whose model is byte-level BPE, or a one-line InputError saying what it has."""
        model = data.get("model") or {}
        if model.get("type") != "BPE":
            raise _refuse(where, f"a {model.get('type')!r} model")
        pre = flat_sequence(data.get("pre_tokenizer"))
        for p in pre:
            kind = p.get("type")
            ok = kind == "ByteLevel" or (kind == "Digits" and p.get("individual_digits")) or (
                kind == "Split" and str(p.get("behavior", "")).lower() == "isolated" and not p.get("invert")
                and isinstance(p.get("pattern"), dict))
            if not ok:
                raise _refuse(where, f"a {kind!r} pre-tokenizer")
        if not any(p.get("type") == "ByteLevel" for p in pre):
            raise _refuse(where, "no byte-level pre-tokenizer (a SentencePiece-style BPE)")
        norms = [n.get("type") for n in flat_sequence(data.get("normalizer"))]
        if any(n not in _NORMAL_FORMS | {"Lowercase"} for n in norms):
            raise _refuse(where, f"a {next(n for n in norms if n not in _NORMAL_FORMS | {'Lowercase'})!r} normalizer")
        added = {}
        for a in data.get("added_tokens") or []:
            if a.get("lstrip") or a.get("rstrip") or a.get("single_word"):
                raise _refuse(where, f"an added token with lstrip/rstrip/single_word ({a.get('content')!r})")
            added[str(a["content"])] = int(a["id"])
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges") or []]
        ranks: dict[tuple[str, str], int] = {}
        for r, m in enumerate(merges):
            ranks.setdefault((str(m[0]), str(m[1])), r)
        vocab = {str(t): int(i) for t, i in (model.get("vocab") or {}).items()}
        return cls(vocab, ranks, pre, norms, added, bool(model.get("ignore_merges")), label)

    family = "bpe"  # byte-level; explain.tokenize.sentencepiece's subclass says "sentencepiece"

    @property
    def unk_id(self) -> int:
        return -1

    def symbols(self, piece: str) -> tuple[str, ...]:
        """The symbols a piece starts from: one character of GPT-2's alphabet per UTF-8 byte."""
        return tuple(to_byte_level(piece))

    # -- the stages ------------------------------------------------------------------------------------------
    def normalize(self, text: str) -> str:
        for n in self.normalizers:
            text = text.lower() if n == "Lowercase" else unicodedata.normalize(n, text)
        return text

    def describe(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(what the normaliser does, what the pre-tokenizer does): one line per stage."""
        norms = tuple({"Lowercase": "lower-case every letter"}.get(n, f"Unicode normal form {n}")
                      for n in self.normalizers) or ("none: the text is used as it is",)
        pre = []
        for p in self.pre:
            if p["type"] == "Digits":
                pre.append("Digits: every digit is a piece of its own")
            elif p["type"] == "Split":
                pre.append(f"Split on the regex {p['pattern'].get('Regex', p['pattern'].get('String'))}")
            elif p.get("use_regex", True):
                pre.append(f"ByteLevel: split on GPT-2's regex {GPT2}, then each UTF-8 byte becomes one character "
                           "(space Ġ, newline Ċ)")
            else:
                pre.append("ByteLevel: each UTF-8 byte becomes one character (space Ġ, newline Ċ)")
        return norms, tuple(pre)

    def _pre_tokenize(self, text: str, base: int) -> list[tuple[int, int]]:
        spans = [(0, len(text))]
        for p in self.pre:
            if p["type"] == "Digits":
                cut = split_digits
            elif p["type"] == "Split":
                pattern = p["pattern"]
                regex = pattern["Regex"] if "Regex" in pattern else re.escape(pattern["String"])
                cut = lambda t, r=regex: split_isolated(r, t)  # noqa: E731
            elif p.get("use_regex", True):
                cut = lambda t: split_isolated(GPT2, t)  # noqa: E731
            else:
                continue
            spans = [(a + x, a + y) for a, b in spans for x, y in cut(text[a:b])]
        return [(base + a, base + b) for a, b in spans]

    # -- the model -------------------------------------------------------------------------------------------
    def merge(self, piece: int, symbols: list[str], steps: list[Merge] | None) -> list[str]:
        """Merge the best-ranked adjacent pair until none has a rule; each merge appended to ``steps``."""
        ranks = self.ranks
        while len(symbols) > 1:
            pairs = [(ranks.get(p), i, p) for i, p in enumerate(zip(symbols, symbols[1:]))]
            live = [(r, i) for r, i, _ in pairs if r is not None]
            if not live:
                break
            r, i = min(live)
            merged = symbols[i] + symbols[i + 1]
            if steps is not None:
                rivals = tuple((j, a, b, rank) for rank, j, (a, b) in pairs if j != i)
                steps.append(Merge(piece, tuple(symbols), i, r, self.vocab.get(merged, -1), rivals))
            symbols[i:i + 2] = [merged]
        return symbols

    def walk(self, text: str, record: bool = True) -> Walkthrough:
        """Every stage of encoding ``text``; ``record`` False skips the merges' records (encode only)."""
        if len(text) > MAX_TEXT:
            raise InputError(f"the text has {len(text):,} characters; explain tokenize walks through at most "
                             f"{MAX_TEXT:,} (every merge is recorded): give a shorter text")
        norms, pre = self.describe()
        w = Walkthrough(self.family, text, "", norms, pre)
        normalized_parts = []
        at = 0
        for a, b, special in split_added(text, self.added):
            if special is not None:
                w.pieces.append(Piece(at, at + b - a, text[a:b], (text[a:b],), special))
                normalized_parts.append(text[a:b])
                at += b - a
                continue
            seg = self.normalize(text[a:b])
            normalized_parts.append(seg)
            for x, y in self._pre_tokenize(seg, 0):
                w.pieces.append(Piece(at + x, at + y, seg[x:y], self.symbols(seg[x:y])))
            at += len(seg)
        w.normalized = "".join(normalized_parts)
        w.vocab_ids = {c: self.vocab.get(c, -1) for p in w.pieces if p.special is None for c in p.symbols}
        steps: list[Merge] | None = [] if record else None
        for n, p in enumerate(w.pieces):
            if p.special is not None:
                w.tokens.append((p.text, p.special))
                continue
            whole = "".join(p.symbols)
            if self.ignore_merges and whole in self.vocab:
                symbols = [whole]
            else:
                symbols = self.merge(n, list(p.symbols), steps)
            w.tokens.extend((s, self.vocab.get(s, self.unk_id)) for s in symbols)
        w.steps = steps or []
        w.labels = {i: self.label(i) for _, i in w.tokens}
        for s in w.steps:
            w.labels.setdefault(s.new_id, self.label(s.new_id))
        return w

    def encode(self, text: str) -> list[int]:
        return self.walk(text, record=False).ids


def symbol_text(symbol: str) -> str:
    """A byte-level symbol as text, whitespace visible (``Ġcapital`` → ``␣capital``); bytes that are part of a
    longer UTF-8 character as ``\\xe6``."""
    table = char_bytes()
    raw = bytes(table[c] for c in symbol) if all(c in table for c in symbol) else symbol.encode()
    return shown(raw.decode("utf-8", errors="backslashreplace"))


__all__ = ["BPE", "GGUF_PRE", "MAX_TEXT", "symbol_text"]
