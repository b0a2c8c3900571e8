"""What a GGUF says of its tokenizer, rebuilt with ``tokenizers``: the pre-tokenizer a byte-level BPE file only names
(``tokenizer.ggml.pre``: :func:`pre_tokenizer`, :data:`PRE_TOKENIZERS`, each as that model's own tokenizer.json
has it), and a SentencePiece vocabulary (``tokenizer.ggml.model`` = ``llama``: pieces, scores and types;
:func:`build`), the way transformers rebuilds Gemma's (``integrations/gguf``'s ``gemma_tokenizer`` and its
``GemmaTokenizer``), so the ids are Hugging Face's for the same file:

- a piece of two or more spaces is stored with real spaces but looked up as ``▁▁…``: respelled first;
- the file holds no merges: every split of a piece into two pieces of the vocabulary is a merge, ranked by the
  position of the piece it makes (the file's order is SentencePiece's merge order; Gemma's scores are not), then by
  the longer left part, then the longer right part (``generate_merges``' order);
- spaces become ``▁`` (no prefix space), unknown bytes fall back to ``<0x..>`` pieces;
- control pieces (type 3: ``<bos>``, ``<eos>``, …) are special tokens, user-defined ones (type 4: runs of newlines
  or tabs, HTML tags) are matched whole before anything else.

The merges of a whole 262,144-piece vocabulary (515,000 of them) take seconds to list and to load, so the tokenizer
is built for the characters of the text it encodes (``chars``): a merge whose pieces hold a character the text has
not can never apply to it, and the others keep their order, so the ids are the same as with every merge. A text
with a new character builds it again (:class:`explain.checkpoints.gguf_gemma.GemmaGGUF` keeps the last one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explain.core.errors import InputError

# HF splits of Llama 3 and Qwen2 (their tokenizer.json's Split regex), then byte-level without its own regex
_LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
           r"|\s+(?!\S)|\s+")
_QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
PRE_TOKENIZERS = ("smollm", "gpt-2", "llama-bpe", "qwen2")

CONTROL, USER_DEFINED = 3, 4


def pre_tokenizer(name: str, where: str) -> Any:
    """The ``tokenizers`` pre-tokenizer of a GGUF's ``tokenizer.ggml.pre`` name."""
    from tokenizers import Regex  # lazy: optional dependency (the gguf extra)
    from tokenizers import pre_tokenizers as pt  # lazy: optional dependency (the gguf extra)

    if name == "smollm":  # SmolLM2: each digit apart, then GPT-2's byte-level split
        return pt.Sequence([pt.Digits(individual_digits=True), pt.ByteLevel(add_prefix_space=False, use_regex=True)])
    if name == "gpt-2":
        return pt.ByteLevel(add_prefix_space=False, use_regex=True)
    if name in ("llama-bpe", "qwen2"):
        split = _LLAMA3 if name == "llama-bpe" else _QWEN2
        return pt.Sequence([pt.Split(Regex(split), behavior="isolated"),
                            pt.ByteLevel(add_prefix_space=False, use_regex=False)])
    raise InputError(f"{where} names the pre-tokenizer {name!r}, which explain does not know (it knows "
                     f"{', '.join(PRE_TOKENIZERS)}); give --tokens (ids) instead of --text")


def respelled(tokens: Sequence[str]) -> list[str]:
    """The pieces with a run of spaces spelled as SentencePiece spells it, ``▁`` for each space."""
    return ["▁" * len(t) if " " in t and not t.strip() else t for t in tokens]


def merges(vocab: dict[str, int], chars: set[str] | None = None) -> list[tuple[str, str]]:
    """Every (left, right) with both in ``vocab`` and left + right in it, best first: the piece made earlier in the
    vocabulary first, then the longer left part, then the longer right part; among equals, the order of the
    pieces' ids (left, right). With ``chars``, only the pieces made of those characters."""
    found: list[tuple[int, int, int, int, int, str, str]] = []
    get = vocab.get
    items = vocab.items() if chars is None else ((p, i) for p, i in vocab.items() if chars.issuperset(p))
    for piece, index in items:
        for k in range(1, len(piece)):
            left = get(piece[:k])
            if left is None:
                continue
            right = get(piece[k:])
            if right is not None:
                found.append((index, -k, k - len(piece), left, right, piece[:k], piece[k:]))
    found.sort()
    return [(f[5], f[6]) for f in found]


def text_chars(text: str) -> set[str]:
    """The characters a text's pieces can hold: its own, with a space as SentencePiece's ``▁``."""
    return set(text.replace(" ", "▁"))


def build(tokens: Sequence[str], types: Sequence[int], unk: str = "<unk>", chars: set[str] | None = None) -> Any:
    """The ``tokenizers.Tokenizer`` of a SentencePiece vocabulary (see the module's docstring); with ``chars``,
    for texts made of those characters (:func:`text_chars`) only."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers  # lazy: optional

    pieces = respelled(tokens)
    vocab = {t: i for i, t in enumerate(pieces)}  # a repeated piece keeps its last id, as transformers' dict does
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges(vocab, chars), fuse_unk=True, unk_token=unk, byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t, kind in zip(tokens, types) if kind == CONTROL])
    tok.add_tokens([AddedToken(t, normalized=False, special=False)
                    for t, kind in zip(tokens, types) if kind == USER_DEFINED and t in vocab])
    return tok


def as_json(tokens: Sequence[str], types: Sequence[int], chars: set[str], unk: str = "<unk>") -> dict[str, Any]:
    """:func:`build`'s tokenizer as a tokenizer.json document, for texts made of ``chars``: what explain tokenize
    walks through (it reads no ``tokenizers``)."""
    pieces = respelled(tokens)
    vocab = {t: i for i, t in enumerate(pieces)}  # a repeated piece keeps its last id, as build's dict does
    added = [{"id": vocab.get(t, i), "content": t, "special": kind == CONTROL}
             for i, (t, kind) in enumerate(zip(tokens, types)) if kind == CONTROL or (kind == USER_DEFINED and t in vocab)]
    return {"normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            "pre_tokenizer": {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious"},
            "added_tokens": added,
            "model": {"type": "BPE", "vocab": vocab, "merges": [list(m) for m in merges(vocab, chars)],
                      "unk_token": unk, "fuse_unk": True, "byte_fallback": True}}


__all__ = ["PRE_TOKENIZERS", "as_json", "build", "merges", "pre_tokenizer", "respelled", "text_chars"]


def bpe_merges(where: str, merges: Any) -> list[tuple[str, str]]:
    """tokenizer.ggml.merges as pairs: each entry two tokens separated by one space, or a one-line error."""
    for i, m in enumerate(merges if isinstance(merges, list) else [merges]):
        if not isinstance(m, str) or len(m.split(" ")) != 2 or "" in m.split(" "):
            raise InputError(f"{where}: tokenizer.ggml.merges[{i}] is {str(m)[:40]!r}, not two tokens separated by "
                             "one space; give --tokens (ids)")
    return [tuple(m.split(" ", 1)) for m in merges]


def byte_level_bpe(where: str, tokens: list[str], merges: list[tuple[str, str]], pre: Any, Tokenizer: Any,
                   models: Any, decoders: Any) -> Any:
    """A byte-level BPE tokenizer (``tokenizers``' classes passed in, imported where they are optional) from a
    file's vocabulary and merges, or a one-line error when they do not make one."""
    vocab = {t: i for i, t in enumerate(tokens)}
    try:  # merges naming tokens the vocabulary lacks: tokenizers' own Exception, a traceback before
        tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=False))
    except Exception as exc:
        raise InputError(f"{where}: its tokens and merges do not make a tokenizer ({str(exc)[:80]}); give "
                         "--tokens (ids)") from None
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    return tok
