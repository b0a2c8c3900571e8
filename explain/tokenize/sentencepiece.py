"""SentencePiece-style BPE (Gemma, Llama 2, Mistral) step by step, as ``tokenizers`` runs a tokenizer.json of that
kind: the normaliser writes every space as ``▁`` (and may prepend one), the pre-tokenizer cuts after each ``▁``
(or not at all), and the model merges characters, not bytes. A character the vocabulary lacks falls back to its
UTF-8 bytes as ``<0xE6>`` tokens (``byte_fallback``), or becomes the unknown token, runs of which are fused into
one (``fuse_unk``). The merges are the same as byte-level BPE's: the pair with the lowest rank first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explain.core.errors import InputError
from explain.tokenize.bpe import BPE, flat_sequence


def _refuse(where: str, what: str) -> InputError:
    return InputError(f"{where}: explain tokenize walks through SentencePiece-style BPE with Replace/Prepend "
                      f"normalisers and a Split on a string; this tokenizer has {what}")


@dataclass
class SentencePieceBPE(BPE):
    """A SentencePiece-style BPE tokenizer.json (no byte-level alphabet: characters, ▁ for a space)."""

    steps: list[dict[str, Any]] = field(default_factory=list)  # the normaliser's steps, in order
    byte_fallback: bool = False
    fuse_unk: bool = False
    unk: str | None = None

    family = "sentencepiece"

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str, label: Callable[[int], str] = str) -> SentencePieceBPE:
        model = data.get("model") or {}
        if model.get("type") != "BPE" or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise _refuse(where, f"a {model.get('type')!r} model with prefixes or suffixes")
        steps = flat_sequence(data.get("normalizer"))
        for n in steps:
            ok = n.get("type") == "Prepend" or (n.get("type") == "Replace" and "String" in (n.get("pattern") or {}))
            if not ok:
                raise _refuse(where, f"a {n.get('type')!r} normaliser")
        pre = flat_sequence(data.get("pre_tokenizer"))
        for p in pre:
            if p.get("type") != "Split" or "String" not in (p.get("pattern") or {}) or p.get("invert") or \
                    str(p.get("behavior", "")).lower() not in ("isolated", "mergedwithprevious"):
                raise _refuse(where, f"a {p.get('type')!r} pre-tokenizer")
        base = BPE.from_json({**data, "normalizer": None, "pre_tokenizer": {"type": "ByteLevel"}}, where, label)
        return cls(base.vocab, base.ranks, pre, [], base.added, base.ignore_merges, label, steps,
                   bool(model.get("byte_fallback")), bool(model.get("fuse_unk")), model.get("unk_token"))

    @property
    def unk_id(self) -> int:
        return self.vocab.get(self.unk, -1) if self.unk is not None else -1

    def normalize(self, text: str) -> str:
        for n in self.steps:
            if n["type"] == "Prepend":
                text = n["prepend"] + text if text else text
            else:
                text = text.replace(n["pattern"]["String"], n["content"])
        return text

    def describe(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        norms = tuple(f"prepend {n['prepend']!r}" if n["type"] == "Prepend" else
                      f"replace {n['pattern']['String']!r} with {n['content']!r}" for n in self.steps)
        pre = tuple(f"Split after every {p['pattern']['String']!r}" if str(p.get("behavior")).lower() ==
                    "mergedwithprevious" else f"Split around every {p['pattern']['String']!r}" for p in self.pre)
        model = "characters, not bytes: a character the vocabulary lacks " + (
            "falls back to its UTF-8 bytes, <0xE6> …" if self.byte_fallback else "is the unknown token")
        return norms or ("none: the text is used as it is",), (*pre, model) if pre else ("none: the whole text "
                                                                                         "is one piece", model)

    def _pre_tokenize(self, text: str, base: int) -> list[tuple[int, int]]:
        spans = [(0, len(text))]
        for p in self.pre:
            d, merged = p["pattern"]["String"], str(p.get("behavior")).lower() == "mergedwithprevious"
            out = []
            for a, b in spans:
                at, i = a, text.find(d, a, b) if d else -1
                while i != -1:
                    cut = i + len(d) if merged else i
                    if cut > at:
                        out.append((at, cut))
                    if not merged:
                        out.append((i, i + len(d)))
                    at = i + len(d)
                    i = text.find(d, at, b)
                if at < b:
                    out.append((at, b))
            spans = out
        return [(base + a, base + b) for a, b in spans]

    def symbols(self, piece: str) -> tuple[str, ...]:
        out: list[str] = []
        for ch in piece:
            raw = [f"<0x{b:02X}>" for b in ch.encode("utf-8")]
            if ch in self.vocab:
                out.append(ch)
            elif self.byte_fallback and all(t in self.vocab for t in raw):
                out.extend(raw)
            elif not (self.fuse_unk and out and out[-1] == self.unk):
                out.append(self.unk or ch)
        return tuple(out)


__all__ = ["SentencePieceBPE"]
