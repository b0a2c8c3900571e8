"""Pre-tokenization in plain Python: the regexes of GPT-2, Llama 3 and Qwen2 in Python's ``re``, SmolLM2's digit
split, and GPT-2's byte-to-character map.

``tokenizers`` runs these regexes with Oniguruma, whose ``\\p{L}`` (a letter), ``\\p{N}`` (a number) and ``\\s``
Python's ``re`` does not spell: :func:`translate` writes each as an explicit character class built once from
:mod:`unicodedata` (letters: categories L*; numbers: N*; white space: tab to carriage return, U+0085 and the
separators Z*). Everything else in those patterns (alternation, ``(?!\\S)``, ``(?i:…)``) means the same in both.

Byte-level BPE works on bytes, not characters: each UTF-8 byte of a piece is shown as one printable character
(:func:`byte_chars`), so a space is ``Ġ``, a newline ``Ċ``, and é is ``Ã©`` (its two bytes). Nothing here imports
numpy.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# the patterns a checkpoint's tokenizer names (explain.checkpoints.tokenizer_guard holds the same three)
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
          r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
         r"""\s*[\r\n]+|\s+(?!\S)|\s+""")


def _span(a: int, b: int) -> str:
    return f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"


@lru_cache(maxsize=1)
def classes() -> dict[str, str]:
    """The contents of the classes ``\\p{L}``, ``\\p{N}`` and ``\\s`` as Python ``re`` ranges, built once from
    :mod:`unicodedata` (a pass over every code point: about a fifth of a second)."""
    runs: dict[str, list[list[int]]] = {"L": [], "N": [], "s": []}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))[0]
        key = "s" if cat == "Z" or 0x09 <= cp <= 0x0D or cp == 0x85 else cat
        if key in runs:
            spans = runs[key]
            if spans and spans[-1][1] == cp - 1:
                spans[-1][1] = cp
            else:
                spans.append([cp, cp])
    return {k: "".join(_span(a, b) for a, b in v) for k, v in runs.items()}


@lru_cache(maxsize=16)
def translate(pattern: str) -> re.Pattern[str]:
    """An Oniguruma pattern of the kind tokenizers' pre-tokenizers carry, compiled with Python's ``re``."""
    c = classes()
    inside = {r"\p{L}": c["L"], r"\p{N}": c["N"], r"\s": c["s"]}
    out, i, depth = [], 0, 0  # depth: inside a [...] class
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            token = pattern[i:i + 5] if pattern[i + 1] == "p" else pattern[i:i + 2]
            if token in inside:
                out.append(inside[token] if depth else f"[{inside[token]}]")
            elif token == r"\S":
                out.append(f"[^{c['s']}]" if not depth else token)
            else:
                out.append(token)
            i += len(token)
            continue
        depth += pattern[i] == "["
        depth -= pattern[i] == "]" and depth > 0
        out.append(pattern[i])
        i += 1
    return re.compile("".join(out))


def split_isolated(pattern: str, text: str) -> list[tuple[int, int]]:
    """The spans ``tokenizers``' Split(behavior "isolated") makes: every match a piece, and every stretch between
    matches a piece of its own."""
    spans, at = [], 0
    for m in translate(pattern).finditer(text):
        if m.start() == m.end():
            continue
        if m.start() > at:
            spans.append((at, m.start()))
        spans.append((m.start(), m.end()))
        at = m.end()
    if at < len(text):
        spans.append((at, len(text)))
    return spans


def is_number(ch: str) -> bool:
    """Rust's ``char::is_numeric`` (tokenizers' Digits pre-tokenizer): categories Nd, Nl, No."""
    return unicodedata.category(ch) in ("Nd", "Nl", "No")


def split_digits(text: str) -> list[tuple[int, int]]:
    """SmolLM2's first pre-tokenizer, Digits(individual_digits=True): every digit a piece of its own."""
    spans, at = [], 0
    for i, ch in enumerate(text):
        if is_number(ch):
            if i > at:
                spans.append((at, i))
            spans.append((i, i + 1))
            at = i + 1
    if at < len(text):
        spans.append((at, len(text)))
    return spans


@lru_cache(maxsize=1)
def byte_chars() -> tuple[str, ...]:
    """GPT-2's byte-level alphabet: the printable character that stands for each byte 0 … 255. Printable bytes
    stand for themselves; the other 68 are shifted to code points 256 and up, in byte order (space 'Ġ' = 288,
    newline 'Ċ' = 266)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {b: chr(b) for b in printable}, 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    return tuple(chars[b] for b in range(256))


@lru_cache(maxsize=1)
def char_bytes() -> dict[str, int]:
    """:func:`byte_chars` backwards: the byte each character of the alphabet stands for."""
    return {c: b for b, c in enumerate(byte_chars())}


def to_byte_level(text: str) -> str:
    """A piece as byte-level BPE sees it: each UTF-8 byte as its alphabet character."""
    table = byte_chars()
    return "".join(table[b] for b in text.encode("utf-8"))


__all__ = ["GPT2", "LLAMA3", "QWEN2", "byte_chars", "char_bytes", "classes", "split_digits", "split_isolated",
           "to_byte_level", "translate"]
