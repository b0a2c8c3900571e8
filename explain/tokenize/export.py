"""A walkthrough as a standalone Python script: plain Python over the vocabulary and the merges (no explain, no
``tokenizers``, no numpy) that prints the same ids. The pieces are written as the pre-tokenizer cut them; the
merge rules and vocabulary entries are those that can apply inside them, so the script stays short. A test runs
every family's script and compares its ids."""

from __future__ import annotations

from explain.tokenize.walk import Walkthrough

_BPE = '''
def bpe(piece):
    """Merge the adjacent pair with the best (lowest) rank, the leftmost on a tie, until no rule applies."""
    symbols = list(piece)  # the piece's first symbols
    while len(symbols) > 1:
        pairs = [(RANKS[p], i) for i, p in enumerate(zip(symbols, symbols[1:])) if p in RANKS]
        if not pairs:
            break
        rank, i = min(pairs)
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
    return symbols


ids = [SPECIAL[piece[0]] if piece[0] in SPECIAL else VOCAB.get(s, UNK) for piece in PIECES
       for s in (piece if piece[0] in SPECIAL else bpe(piece))]
print(*ids)
'''

_WORDPIECE = '''
def wordpiece(word):
    """The longest prefix in the vocabulary, then the longest continuation (##…) from where it ended; a word
    with a stretch nothing covers is the unknown token as a whole."""
    tokens, start = [], 0
    while start < len(word):
        end = len(word)
        while start < end and ("##" if start else "") + word[start:end] not in VOCAB:
            end -= 1
        if start == end:
            return [UNK]
        tokens.append(("##" if start else "") + word[start:end])
        start = end
    return tokens


ids = [VOCAB[t] for word in PIECES for t in wordpiece(word)]
print(*ids)
'''

_WORDS = '''
ids = [VOCAB.get(word, UNK_ID) for word in PIECES]
print(*ids)
'''


def _substrings(pieces: list[str]) -> set[str]:
    return {p[i:j] for p in pieces for i in range(len(p)) for j in range(i + 1, len(p) + 1)}


def script(w: Walkthrough, vocab: dict[str, int], ranks: dict[tuple[str, str], int] | None = None,
           source: str = "") -> str:
    """The Python source of a script that tokenizes ``w.text`` as ``w`` did."""
    head = [f'"""explain tokenize{f" ({source})" if source else ""}: {w.text[:60]!r}{"…" if len(w.text) > 60 else ""}',
            "", "Plain Python over the vocabulary and the merges: run it to print the ids.", "Normalisation: "
            + "; ".join(w.normalizers) + ".", "Pre-tokenization: " + "; ".join(w.pretokenizers)[:300] + '"""', ""]
    if w.family in ("bpe", "sentencepiece"):
        pieces = [list(p.symbols) for p in w.pieces]
        special = {p.text: p.special for p in w.pieces if p.special is not None}
        subs = _substrings(["".join(p) for p in pieces if p[0] not in special])
        kept = sorted(((a, b), r) for (a, b), r in (ranks or {}).items() if a + b in subs)
        unk = next((i for t, i in w.tokens if t not in vocab), -1)
        body = [f"PIECES = {pieces!r}  # each piece's first symbols",
                "# the merge rules that can apply inside the pieces: (left, right) -> rank",
                "RANKS = {" + ", ".join(f"{k!r}: {r}" for k, r in sorted(kept, key=lambda kv: kv[1])) + "}",
                "# the tokens the pieces can become: token -> id",
                "VOCAB = " + repr({t: i for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if t in subs}),
                f"SPECIAL = {special!r}", f"UNK = {unk}", _BPE]
    elif w.family == "wordpiece":
        pieces = [p.text for p in w.pieces]
        subs = _substrings(pieces)
        unk = next((t for t, i in w.tokens if i == vocab.get(t) and t.startswith("[")), "[UNK]")
        keep = {t: i for t, i in vocab.items() if t in subs or (t.startswith("##") and t[2:] in subs) or t == unk}
        body = [f"PIECES = {pieces!r}", f"VOCAB = {dict(sorted(keep.items(), key=lambda kv: kv[1]))!r}",
                f"UNK = {unk!r}", _WORDPIECE]
    else:
        pieces = [p.symbols[0] for p in w.pieces]
        keep = {t: i for t, i in w.tokens if t in pieces}
        unk = next((i for t, i in w.tokens if t not in pieces), 2)
        body = [f"PIECES = {pieces!r}  # the words, lower-cased", f"VOCAB = {keep!r}", f"UNK_ID = {unk}", _WORDS]
    return "\n".join(head + body)


__all__ = ["script"]
