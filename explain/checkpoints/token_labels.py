"""A readable label for every token id of a tokenizer.json (:func:`token_labels`): byte-level tokens decoded to
text, whitespace made visible, added tokens as written. Read with the json module alone, so listing the
vocabulary of a checkpoint never loads the ``tokenizers`` package."""

from __future__ import annotations

from typing import Any

from explain.core.errors import InputError
from explain.core.text import visible


def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet back to bytes: printable bytes stand for themselves, the others were shifted
    to code points 256 and up (space is 'Ġ', newline 'Ċ')."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs, printable = list(bs), set(bs)
    for b in range(256):
        if b not in printable:  # the other 68 bytes get 256, 257, … in byte order
            cs.append(256 + len(cs) - len(printable))
            bs.append(b)
    return {chr(c): b for b, c in zip(bs, cs)}


_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "▁": "␣"}


def visible_token(text: str) -> str:
    """Whitespace made visible (a leading space is part of a GPT-2 token) and other control characters escaped."""
    return visible("".join(_VISIBLE.get(c, c) for c in text))


def _is_byte_level(part: Any) -> bool:
    if not isinstance(part, dict):
        return False
    subs = part.get("decoders") or part.get("pretokenizers") or []
    return part.get("type") == "ByteLevel" or any(_is_byte_level(s) for s in subs)


def token_labels(data: dict[str, Any], where: str) -> dict[int, str]:
    """A readable label per token id of a tokenizer.json document: byte-level tokens decoded to text (bytes
    that are part of a longer UTF-8 character shown as ``\\xc3``), whitespace visible, added tokens as written."""
    vocab = (data.get("model") or {}).get("vocab") if isinstance(data, dict) else None
    if not isinstance(vocab, (dict, list)):
        raise InputError(f"'{where}' has no model.vocab; it must be a tokenizer.json written by 'tokenizers'")
    try:
        if isinstance(vocab, dict):
            pieces = {int(i): str(t) for t, i in vocab.items()}
        else:  # Unigram: [piece, score] pairs in id order
            pieces = {i: str(v[0] if isinstance(v, list) else v) for i, v in enumerate(vocab)}
        added = {int(a["id"]): str(a["content"]) for a in data.get("added_tokens") or []}
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise InputError(f"'{where}' has a malformed vocabulary ({type(exc).__name__}: {exc}); it must be a "
                         "tokenizer.json written by 'tokenizers'") from None
    if _is_byte_level(data.get("decoder")) or _is_byte_level(data.get("pre_tokenizer")):
        dec = byte_decoder()
        for i, t in pieces.items():
            raw = bytes(dec[c] for c in t) if all(c in dec for c in t) else t.encode()
            pieces[i] = raw.decode("utf-8", errors="backslashreplace")
    return {i: visible_token(t) for i, t in {**pieces, **added}.items()}
