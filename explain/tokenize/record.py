"""A walkthrough as recorded steps, so the TUI, ``--plain``, ``--json`` and the exporter show the tokenizer like any
other part of a run: the group ``tokenizer`` (:data:`explain.core.names.TOKENIZER`) holds

- ``tokenizer.text`` and ``tokenizer.normalized``: the text's UTF-8 bytes before and after normalisation;
- ``tokenizer.pieceN.symbols``: piece N of the pre-tokenizer, as the ids of its first symbols (byte-level BPE: one per
  byte; WordPiece: its characters' code points; words: the word's id);
- ``tokenizer.pieceN.mergeK`` (``bpe_merge``) or ``tokenizer.pieceN.matchK`` (``wordpiece_match``): each model
  step, in the order it happened;
- ``tokenizer.ids`` (``join_ids``): every piece's tokens, one after another: the ids the model reads.

Each array's axis has its own name (``tok.p3.m2``) whose labels are the symbols it holds, so the rulers show
``␣cap ital`` over the ids.
"""

from __future__ import annotations

from typing import Any

from explain.core.names import TOKENIZER, text_axis, tile_sup, tokenizer_step
from explain.tokenize.bpe import symbol_text
from explain.tokenize.walk import Match, Merge, Walkthrough, shown
from explain.trace.recorder import Recorder, Ref


def _given(rec: Recorder, name: str, values: list[int], axis: str, labels: list[str], sym: str, note: str) -> Ref:
    rec.labels[axis] = labels
    value = None
    if not rec.shape_only:
        import numpy as np  # lazy: numpy off the shape path

        value = np.asarray(values, dtype=np.int64).reshape(len(values))
    return rec.op("input", name, value=value, shape=(len(values),), axes=(axis,), sym=sym, note=note)


def _byte_labels(text: str) -> list[str]:
    out = []
    for ch in text:
        n = len(ch.encode("utf-8"))
        out += [shown(ch)] + ["·"] * (n - 1)
    return out


def record_tokenizer(rec: Recorder, w: Walkthrough) -> Ref:
    """Record ``w``'s stages as steps of ``rec``; returns the ids step."""
    sym = symbol_text if w.family == "bpe" else shown
    _given(rec, tokenizer_step("text"), list(w.text.encode()), text_axis("bytes", "text"), _byte_labels(w.text), "text",
           f"The text as UTF-8 bytes: {len(w.text)} characters, {len(w.text.encode())} bytes (· continues a "
           "character).")
    _given(rec, tokenizer_step("normalized"), list(w.normalized.encode()), text_axis("bytes", "normalized"), _byte_labels(w.normalized), "text′",
           "Normalisation: " + "; ".join(w.normalizers) + ".")
    last: list[Ref] = []
    for n, p in enumerate(w.pieces):
        ref = _piece(rec, w, n, p, sym)
        symbols: list[str] = []
        for k, s in enumerate(x for x in w.steps if x.piece == n):
            axis = f"tok.p{n}.{k}"
            name, out_sym = tokenizer_step(f"piece{n}", f"{'merge' if isinstance(s, Merge) else 'match'}{k}"), \
                f"p{n}{tile_sup(k + 1)}"
            if isinstance(s, Merge):
                rec.labels[axis] = [sym(x) for x in s.after]
                rivals = tuple((q, sym(a), sym(b), r) for q, a, b, r in s.rivals)
                ref = rec.op("bpe_merge", name, ref, at=s.position, new_id=s.new_id, left=sym(s.pair[0]),
                             right=sym(s.pair[1]), rank=s.rank, why=s.why(sym), rivals=rivals, axis=axis, sym=out_sym)
            elif isinstance(s, Match):
                symbols.append(s.token or "[UNK]")
                rec.labels[axis] = [shown(x) for x in symbols]
                ref = rec.op("wordpiece_match", name, ref, token=s.token or "[UNK]", token_id=s.token_id,
                             tried=tuple(s.tried), first=k == 0, axis=axis, sym=out_sym)
        last.append(ref)
    rec.labels["tok.ids"] = [w.label(i) for i in w.ids]
    return rec.op("join_ids", tokenizer_step("ids"), *last, axis="tok.ids", sym="ids")


def _piece(rec: Recorder, w: Walkthrough, n: int, p: Any, sym: Any) -> Ref:
    """Piece ``n`` as the ids of its first symbols: ``tokenizer.pieceN.symbols``."""
    if p.special is not None and p.start == p.end:  # a template token (its span is empty: no character)
        ids, labels = [p.special], [shown(p.text)]
        note = (f"Piece {n}: {shown(p.text)!r}, a special token the post-processor adds around every text (BERT's "
                "[CLS] first, [SEP] last): in no character of it.")
    elif p.special is not None:
        ids, labels = [p.special], [shown(p.text)]
        note = f"Piece {n}: {shown(p.text)!r}, an added token: matched whole, never split."
    elif w.family == "bpe":
        ids, labels = [w.vocab_ids.get(s, -1) for s in p.symbols], [sym(s) for s in p.symbols]
        note = (f"Piece {n}: {shown(p.text)!r}, bytes {' '.join(f'{b:02x}' for b in p.raw)}: one symbol per byte "
                "(GPT-2's alphabet), as ids of the vocabulary. Pre-tokenization: " + "; ".join(w.pretokenizers))
    elif w.family == "sentencepiece":
        ids, labels = [w.vocab_ids.get(s, -1) for s in p.symbols], [sym(s) for s in p.symbols]
        note = (f"Piece {n}: {shown(p.text)!r}: one symbol per character (▁ is a space; a character the vocabulary "
                "lacks as its bytes, <0xE6> …), as ids of the vocabulary.")
    elif w.family == "wordpiece":
        ids, labels = [ord(c) for c in p.text], [shown(c) for c in p.text]
        note = f"Piece {n}: {shown(p.text)!r}, its characters' code points, before WordPiece matches them."
    else:
        token, token_id = w.tokens[n]
        ids, labels = [token_id], [shown(token)]
        note = f"Piece {n}: {shown(p.text)!r}, looked up lower-cased: {shown(token)} is id {token_id}."
    axis = text_axis("chars", f"p{n}") if w.family == "wordpiece" and p.special is None else f"tok.p{n}"
    return _given(rec, tokenizer_step(f"piece{n}", "symbols"), ids, axis, labels, f"p{n}", note)


def record_walkthrough(w: Walkthrough, source: str, vocab_labels: Any = None) -> Any:
    """A trace of the tokenizer's steps alone (``explain tokenize`` in the TUI)."""
    from explain.core.config import Config  # lazy: the engine loads when a trace is made

    rec = Recorder(Config(), {}, False)
    rec.labels["vocab"] = vocab_labels if vocab_labels is not None else _Labels(w)
    record_tokenizer(rec, w)
    trace = rec.trace()
    trace.weights = f"tokenizer: {source}"
    return trace


class _Labels:
    """The labels of the ids a walkthrough uses, as a read-only sequence indexed by id."""

    def __init__(self, w: Walkthrough) -> None:
        self.w = w

    def __getitem__(self, i: int) -> str:
        return self.w.label(int(i))

    def __len__(self) -> int:
        return max(self.w.labels, default=-1) + 1


__all__ = ["TOKENIZER", "record_tokenizer", "record_walkthrough"]
