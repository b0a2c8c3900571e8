"""WordPiece (BERT) step by step, as ``tokenizers`` runs it: BERT's normaliser (drop control characters, white space
to spaces, spaces around CJK characters, accents stripped and lower-cased for an uncased model), BERT's
pre-tokenizer (split at white space, every punctuation mark a piece of its own), then in each word the longest
prefix in the vocabulary, then the longest continuation from where it ended, written ``##…``; a word with a
stretch no candidate covers is the unknown token as a whole. The special tokens of the post-processor's template
([CLS] first, [SEP] last: BERT's ``TemplateProcessing``) are added when the checkpoint adds them (``special``), as
pieces of their own at the two ends of the text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explain.core.errors import InputError
from explain.tokenize.walk import Match, Piece, Walkthrough, frame, split_added

_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _whitespace(c: str) -> bool:
    """Rust's ``char::is_whitespace`` (the Unicode White_Space property)."""
    return c in "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" or "\u2000" <= c <= "\u200a"


def _control(c: str) -> bool:
    return c not in "\t\n\r" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn")


def _punctuation(c: str) -> bool:
    return (c.isascii() and not c.isalnum() and c.isprintable() and c != " ") or unicodedata.category(c)[0] == "P"


@dataclass
class WordPiece:
    """A WordPiece tokenizer as explain walks through it."""

    vocab: dict[str, int]
    unk: str = "[UNK]"
    prefix: str = "##"
    max_chars: int = 100
    lowercase: bool = True
    strip_accents: bool = True
    chinese: bool = True
    clean: bool = True
    label: Callable[[int], str] = str
    added: dict[str, int] = field(default_factory=dict)
    template: tuple[tuple[str, int] | None, ...] = ()  # the post-processor's single template: None is the text
    ranks = None  # no merges: WordPiece matches, it does not merge

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str, label: Callable[[int], str] = str,
                  special: bool = False) -> WordPiece:
        model, norm, pre = data.get("model") or {}, data.get("normalizer") or {}, data.get("pre_tokenizer") or {}
        if norm.get("type") != "BertNormalizer" or pre.get("type") != "BertPreTokenizer":
            raise InputError(f"{where}: explain tokenize walks through WordPiece with BERT's normaliser and "
                             f"pre-tokenizer; this one has {norm.get('type')!r} and {pre.get('type')!r}")
        lower = bool(norm.get("lowercase", True))
        strip = norm.get("strip_accents")
        return cls({str(t): int(i) for t, i in model["vocab"].items()}, str(model.get("unk_token", "[UNK]")),
                   str(model.get("continuing_subword_prefix", "##")), int(model.get("max_input_chars_per_word", 100)),
                   lower, lower if strip is None else bool(strip), bool(norm.get("handle_chinese_chars", True)),
                   bool(norm.get("clean_text", True)), label,
                   {str(a["content"]): int(a["id"]) for a in data.get("added_tokens") or []},
                   _template(data.get("post_processor"), where) if special else ())

    def normalize(self, text: str) -> str:
        if self.clean:
            text = "".join(" " if _whitespace(c) else c for c in text
                           if not (c in "\x00\ufffd" or _control(c)))
        if self.chinese:
            text = "".join(f" {c} " if any(a <= ord(c) <= b for a, b in _CJK) else c for c in text)
        if self.strip_accents:
            text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        return text.lower() if self.lowercase else text

    def describe(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        norms = [x for x, on in (("drop control characters; every white space becomes a space", self.clean),
                                 ("a space either side of every CJK character", self.chinese),
                                 ("strip accents (NFD, then drop the combining marks)", self.strip_accents),
                                 ("lower-case every letter", self.lowercase)) if on]
        return tuple(norms), ("split at white space (dropped) and around every punctuation mark",)

    def pieces(self, text: str) -> list[tuple[int, int]]:
        out, start = [], None
        for i, c in enumerate(text):
            if _whitespace(c) or _punctuation(c):
                if start is not None:
                    out.append((start, i))
                start = None
                if not _whitespace(c):
                    out.append((i, i + 1))
            elif start is None:
                start = i
        if start is not None:
            out.append((start, len(text)))
        return out

    def walk(self, text: str) -> Walkthrough:
        norms, pre = self.describe()
        w = Walkthrough("wordpiece", text, "", norms, pre)
        unk_id = self.vocab.get(self.unk, -1)
        spans, parts, at = [], [], 0
        for a, b, special in split_added(text, self.added):  # [CLS], [SEP] … in the text: matched whole, first
            seg = text[a:b] if special is not None else self.normalize(text[a:b])
            spans += [(at, at + len(seg), special)] if special is not None else \
                [(at + x, at + y, None) for x, y in self.pieces(seg)]
            parts.append(seg)
            at += len(seg)
        w.normalized = normalized = "".join(parts)
        for n, (a, b, special) in enumerate(spans):
            word = normalized[a:b]
            w.pieces.append(Piece(a, b, word, tuple(word) if special is None else (word,), special))
            if special is not None:
                w.tokens.append((word, special))
                continue
            if len(word) > self.max_chars:
                w.steps.append(Match(n, 0, None, unk_id, ("longer than max_input_chars_per_word",)))
                w.tokens.append((self.unk, unk_id))
                continue
            found, start = [], 0
            while start < len(word):
                tried, end, hit = [], len(word), None
                while start < end:
                    candidate = (self.prefix if start else "") + word[start:end]
                    if candidate in self.vocab:
                        hit = candidate
                        break
                    tried.append(candidate)
                    end -= 1
                w.steps.append(Match(n, start, hit, self.vocab[hit] if hit else unk_id, tuple(tried)))
                if hit is None:
                    found = None
                    break
                found.append(hit)
                start = end
            w.tokens.extend([(t, self.vocab[t]) for t in found] if found is not None else [(self.unk, unk_id)])
        if self.template:
            frame(w, self.template)
        w.labels = {i: self.label(i) for _, i in w.tokens}
        return w

    def encode(self, text: str) -> list[int]:
        return self.walk(text).ids


def _template(post: Any, where: str) -> tuple[tuple[str, int] | None, ...]:
    """BERT's post-processor, ``TemplateProcessing`` with a single template such as ``[CLS] $A [SEP]``, as
    (token, id) for each special token and None for the text; () when there is none."""
    if not isinstance(post, dict) or post.get("type") != "TemplateProcessing":
        if post is None:
            return ()
        raise InputError(f"{where}: explain tokenize walks through BERT's post-processor (TemplateProcessing); this "
                         f"one is {post.get('type') if isinstance(post, dict) else post!r}")
    ids = {name: (spec.get("ids") or [None])[0] for name, spec in (post.get("special_tokens") or {}).items()}
    out: list[tuple[str, int] | None] = []
    for item in post.get("single") or []:
        if "Sequence" in item:
            out.append(None)
        elif "SpecialToken" in item and isinstance(ids.get(item["SpecialToken"].get("id")), int):
            name = item["SpecialToken"]["id"]
            out.append((name, ids[name]))
        else:
            raise InputError(f"{where}: the post-processor's template item {item!r} is not one explain knows")
    return tuple(out)


__all__ = ["WordPiece"]
