"""Which walkthrough a tokenizer gets: explain's word tokenizer, a checkpoint folder's tokenizer.json (byte-level
BPE, WordPiece, or the word-level file ``explain train`` writes) or a GGUF's vocabulary and merges."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from explain.core.errors import InputError
from explain.core.words import SPECIALS, UNK, Tokenizer
from explain.tokenize.bpe import BPE, GGUF_PRE, flat_sequence
from explain.tokenize.sentencepiece import SentencePieceBPE
from explain.tokenize.walk import Walker, Walkthrough, frame
from explain.tokenize.wordpiece import WordPiece
from explain.tokenize.words import Words

if TYPE_CHECKING:  # tokenize imports no checkpoint reader: it is handed an opened one
    from explain.checkpoints.protocol import Checkpoint


def gguf_json(fields: tuple[Any, str, list[str], list[str]], where: str) -> dict[str, Any]:
    """A GGUF's tokenizer (its ``tokenizer_fields()``) as the tokenizer.json document explain's GGUF reader builds
    with ``tokenizers`` (:meth:`explain.checkpoints.gguf.GGUFCheckpoint.encode`): byte-level BPE, its merges, the
    named pre-tokenizer."""
    kind, pre, tokens, merges = fields
    if kind != "gpt2":
        raise InputError(f"{where} holds a {kind!r} tokenizer; explain tokenize walks through byte-level BPE "
                         "('gpt2') GGUFs only")
    if pre not in GGUF_PRE:
        raise InputError(f"{where} names the pre-tokenizer {pre!r}, which explain does not know (it knows "
                         f"{', '.join(GGUF_PRE)})")
    return {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": GGUF_PRE[pre]},
            "added_tokens": [], "model": {"type": "BPE", "vocab": {t: i for i, t in enumerate(tokens)},
                                          "merges": merges, "ignore_merges": False}}


def tokenizer_for(source: Checkpoint | Tokenizer | None, texts: list[str] = ()) -> Walker:
    """The walker of ``source``: None (explain's word tokenizer, its vocabulary grown by ``texts`` as a run's
    is), explain's word tokenizer itself, or an opened checkpoint (what it walks through, it says:
    :class:`explain.checkpoints.protocol.Checkpoint`): one of each family's walkers (:class:`Walker`), Gemma's
    framed with its <bos> (:class:`Framed`) or built per text's characters (:class:`PerText`)."""
    if source is None or isinstance(source, Tokenizer):
        tok = source if source is not None else Tokenizer(list(texts))
        return Words(tok.index, tok.label, grows=True)
    where = f"'{source.path}'"
    fields = source.tokenizer_fields()
    if fields is not None:  # a GGUF
        if fields[0] == "llama":  # Gemma's SentencePiece pieces: the merges listed per text's characters
            return _bos_first(source, PerText(source, where))
        return BPE.from_json(gguf_json(fields, where), where, source.label)
    data = source.tokenizer_json()
    if data is None:
        raise InputError(f"checkpoint {where} has no tokenizer.json: there is no tokenizer to walk through")
    words = source.word_vocab()
    if words is not None:  # the word-level file explain train wrote
        unk_id = words.get(SPECIALS[UNK], UNK)
        return Words(words, source.label, grows=False, unk_id=unk_id)
    kind = (data.get("model") or {}).get("type")
    if kind == "WordPiece":
        return WordPiece.from_json(data, where, source.label, source.special_tokens)
    if kind == "BPE" and not any(p.get("type") == "ByteLevel" for p in flat_sequence(data.get("pre_tokenizer"))):
        return _bos_first(source, SentencePieceBPE.from_json(data, where, source.label))  # characters and ▁
    return _bos_first(source, BPE.from_json(data, where, source.label))


class PerText:
    """A GGUF's SentencePiece vocabulary, walked as the tokenizer explain builds for each text's characters
    (:meth:`explain.checkpoints.gguf.GGUFCheckpoint.sentencepiece_json`): the last one is kept."""

    ranks: dict = {}

    def __init__(self, source: Checkpoint, where: str) -> None:
        self.source, self.where, self.label = source, where, source.label
        self._chars: frozenset[str] = frozenset()
        self._walker: SentencePieceBPE | None = None

    def _for(self, text: str) -> SentencePieceBPE:
        chars = frozenset(text.replace(" ", "▁"))
        if self._walker is None or not chars <= self._chars:
            self._chars = self._chars | chars
            data = self.source.sentencepiece_json("".join(sorted(self._chars)))
            self._walker = SentencePieceBPE.from_json(data, self.where, self.label)
        return self._walker

    @property
    def vocab(self) -> dict[str, int]:
        return self._for("").vocab

    def walk(self, text: str) -> Walkthrough:
        walker = self._for(text)
        self.ranks = walker.ranks
        return walker.walk(text)


class Framed:
    """A walker whose checkpoint puts a token before every text (Gemma's <bos>): the walkthrough ends with the ids
    the run reads."""

    def __init__(self, inner: Any, template: tuple[tuple[str, int] | None, ...]) -> None:
        self.inner, self.template = inner, template

    @property
    def vocab(self) -> dict[str, int]:
        return self.inner.vocab

    @property
    def ranks(self) -> Any:
        return self.inner.ranks

    def walk(self, text: str) -> Walkthrough:
        w = self.inner.walk(text)
        frame(w, self.template)
        w.labels.update({i: self.inner.label(i) for _, i in w.tokens})
        return w

    def encode(self, text: str) -> list[int]:
        return self.walk(text).ids


def _bos_first(source: Checkpoint, walker: Walker) -> Walker:
    """``walker`` with the checkpoint's <bos> before every text, when its encode puts one there (its ``bos()``)."""
    bos = source.bos()
    return walker if bos is None else Framed(walker, ((source.label(bos), bos), None))


def walker(source: Checkpoint | Tokenizer | None, texts: list[str] = ()) -> Callable[[str], Walkthrough]:
    """A function from a text to its walkthrough (:func:`tokenizer_for`'s ``walk``)."""
    return tokenizer_for(source, texts).walk


__all__ = ["Walker", "gguf_json", "tokenizer_for", "walker"]
