"""``explain tokenize --plain``: a walkthrough printed stage by stage (normalisation, pre-tokenization with every
piece's bytes, each merge or match with why it came first, the tokens and their ids)."""

from __future__ import annotations

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from explain.tokenize.bpe import symbol_text
from explain.tokenize.walk import Match, Merge, Walkthrough, shown


def _sym(w: Walkthrough, s: str) -> str:
    return symbol_text(s) if w.family == "bpe" else shown(s)


def print_walkthrough(console: Console, w: Walkthrough, source: str) -> None:
    """Every stage of ``w``, for a reader with a pencil."""
    console.print(Text(f"explain tokenize: {source}", style="bold"))
    console.print(f"text: {shown(w.text)!r} ({len(w.text)} characters, {len(w.text.encode())} bytes)")
    console.print(Rule("1. normalisation", align="left"))
    for line in w.normalizers:
        console.print(f"  {line}")
    console.print(f"  → {shown(w.normalized)!r}")
    console.print(Rule("2. pre-tokenization", align="left"))
    for line in w.pretokenizers:
        console.print(f"  {line}")
    pieces = Table(box=None, pad_edge=False)
    for col in ("piece", "text", "bytes", "symbols"):
        pieces.add_column(col)
    for n, p in enumerate(w.pieces):
        syms = "(added token, never split)" if p.special is not None else " ".join(_sym(w, s) for s in p.symbols)
        pieces.add_row(str(n), shown(p.text), " ".join(f"{b:02x}" for b in p.raw), syms)
    console.print(pieces)
    stage = "matches" if w.family == "wordpiece" else "lookup" if w.family == "words" else "merges"
    console.print(Rule(f"3. {stage}",
                       align="left"))
    if w.family == "words":
        console.print("  each piece is a word of the vocabulary, or the unknown token")
    for k, s in enumerate(w.steps):
        if isinstance(s, Merge):
            console.print(f"  merge {k + 1} (piece {s.piece}): {' '.join(_sym(w, x) for x in s.before)}")
            console.print(f"      {_sym(w, s.pair[0])} + {_sym(w, s.pair[1])} → {_sym(w, s.merged)} (id {s.new_id}), "
                          f"rank {s.rank}: {s.why(lambda x: _sym(w, x))}")
        elif isinstance(s, Match):
            missed = f"; longer candidates not in the vocabulary: {', '.join(s.tried[:4])}" + \
                     (" …" if len(s.tried) > 4 else "") if s.tried else ""
            found = f"{s.token} (id {s.token_id})" if s.token else "nothing: the word is the unknown token"
            console.print(f"  piece {s.piece}, from character {s.start}: {found}{missed}")
    if w.family in ("bpe", "sentencepiece") and not w.steps:
        console.print("  no merge rule applies")
    console.print(Rule("4. ids", align="left"))
    toks = Table(box=None, pad_edge=False)
    toks.add_column("token")
    toks.add_column("id", justify="right")
    for i in w.ids:
        toks.add_row(w.label(i), str(i))
    console.print(toks)
    console.print(f"ids: {' '.join(str(i) for i in w.ids)}")
