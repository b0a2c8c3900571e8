"""Op kinds of the tokenizer's steps (:mod:`explain.tokenize.record`): a BPE merge, a WordPiece match and the
ids put together. Their arrays are token ids: a piece's symbols as the ids of the vocabulary, one merge at a time.

| op kind | compute | explanation |
| --- | --- | --- |
| ``bpe_merge`` | the pair at ``at`` replaced by the merged token's id | the pair, its rank, the ranks it beat |
| ``wordpiece_match`` | the ids so far with the longest match appended | the match, the longer candidates tried |
| ``join_ids`` | every piece's ids, one after another | which piece a position came from |

What they explain in words (the symbols, the rule's rank, the rivals) rides in the step's attributes; the sources
are numpy over the ids only, so an exported script recomputes them.
"""

from __future__ import annotations

from typing import Any

from explain.ops.base import CellExplanation, Op, Syms, register


@register
class BPEMerge(Op):
    """One BPE merge: the adjacent pair with the best rank becomes one token."""

    kind = "bpe_merge"
    differentiable = ()
    reads_vocab = True
    default_note = ("A merge: of all adjacent pairs of this piece, the one whose merge rule has the lowest rank (the "
                    "rule learnt earliest) becomes one token; on a tie the leftmost goes first.")

    def shape(self, ids, **attrs):
        return (ids[0] - 1,)

    def axes(self, ids, axis: str = "symbol", **attrs):
        return (axis,)

    def formula(self, syms: Syms, left: str = "", right: str = "", rank: int = 0, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} with {left} + {right} → {left}{right}  (rank {rank})"

    def source(self, out, ins, at: int = 0, new_id: int = 0, **attrs) -> str:
        return f"np.concatenate([{ins[0]}[:{at}], [{new_id}], {ins[0]}[{at + 2}:]])"

    def feeds(self, index, inputs, at: int = 0, **attrs):
        i = index[0]
        return [(slice(at, at + 2),) if i == at else ((i,) if i < at else (i + 1,))]

    def explain(self, index, inputs, output, syms: Syms, at: int = 0, left: str = "", right: str = "", rank: int = 0,
                why: str = "", rivals: tuple = (), vocab: Any = None, **attrs) -> CellExplanation:
        i = index[0]
        shown = f"{int(output[index])} ({vocab[int(output[index])]})" if vocab is not None else None
        if i != at:
            j = i if i < at else i + 1
            return CellExplanation(index, float(output[index]), f"{syms.out}[{i}] = {syms.ins[0]}[{j}]",
                                   lines=["not part of this merge: copied"], shown=shown)
        rows = [(p, f"{a} + {b}", "—" if r is None else r) for p, a, b, r in rivals]
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}] = {left} + {right} → {left}{right}",
                               ("position", "pair", "rank"), [(at, f"{left} + {right}", rank), *rows],
                               [f"rank {rank}: {why}", "— : no merge rule for that pair"], shown=shown)


@register
class WordPieceMatch(Op):
    """One WordPiece match: the longest candidate in the vocabulary from where the last one ended."""

    kind = "wordpiece_match"
    differentiable = ()
    reads_vocab = True
    default_note = ("WordPiece takes the longest stretch from here that is in the vocabulary (a stretch inside a word "
                    "is written ##…); when none is, the whole word is the unknown token.")

    def shape(self, ids, first: bool = False, **attrs):
        return (1,) if first else (ids[0] + 1,)

    def axes(self, ids, axis: str = "symbol", **attrs):
        return (axis,)

    def formula(self, syms: Syms, token: str = "", first: bool = False, **attrs) -> str:
        return f"{syms.out} = [{token}]  (the longest match)" if first else \
            f"{syms.out} = {syms.ins[0]} + [{token}]  (the longest match)"

    def source(self, out, ins, token_id: int = 0, first: bool = False, **attrs) -> str:
        return f"np.array([{token_id}])" if first else f"np.concatenate([{ins[0]}, [{token_id}]])"

    def feeds(self, index, inputs, first: bool = False, **attrs):
        i = index[0]
        return [(slice(None),) if first or i >= inputs[0].shape[0] else (i,)]  # an index tuple, as every feed

    def explain(self, index, inputs, output, syms: Syms, token: str = "", tried: tuple = (), vocab: Any = None,
                first: bool = False, **attrs) -> CellExplanation:
        i = index[0]
        if not first and i < inputs[0].shape[0]:
            return CellExplanation(index, float(output[index]), f"{syms.out}[{i}]", lines=["matched earlier: copied"])
        rows = [(c, "not in the vocabulary") for c in tried] + [(token, "in the vocabulary: taken")]
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}] = {token}", ("candidate", ""), rows,
                               [f"{len(tried)} longer candidate{'s' if len(tried) != 1 else ''} first"])


@register
class JoinIds(Op):
    """Every piece's ids, one after another: the token ids the model reads."""

    kind = "join_ids"
    differentiable = ()
    reads_vocab = True
    default_note = "The pieces' tokens, one after another: these ids are what the model reads."

    def shape(self, *pieces, **attrs):
        return (sum(p[0] for p in pieces),)

    def axes(self, *axes, axis: str = "pos", **attrs):
        return (axis,)

    def shown_shapes(self, shapes, **attrs):
        return list(shapes)

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = " + " ‖ ".join(syms.ins) if syms.ins else f"{syms.out} = []"

    def source(self, out, ins, **attrs) -> str:
        return f"np.concatenate([{', '.join(ins)}])" if ins else "np.zeros(0, dtype=np.int64)"

    def feeds(self, index, inputs, **attrs):
        i, out = index[0], []
        for a in inputs:
            out.append((i,) if 0 <= i < a.shape[0] else None)
            i -= a.shape[0]
        return out

    def explain(self, index, inputs, output, syms: Syms, vocab: Any = None, **attrs) -> CellExplanation:
        i, n = index[0], 0
        for k, a in enumerate(inputs):
            if i < n + a.shape[0]:
                word = f" ({vocab[int(output[index])]})" if vocab is not None else ""
                return CellExplanation(index, float(output[index]), f"{syms.out}[{i}] = {syms.ins[k]}[{i - n}]",
                                       lines=[f"token {i - n} of piece {k}: id {int(output[index])}{word}"])
            n += a.shape[0]
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}]")
