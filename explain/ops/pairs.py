"""Why two sentences are similar, word pair by word pair: the op kinds that split the cosine of two mean-pooled
texts over their token pairs.

Mean pooling is linear: e_a = (1/n_a)·Σᵢ h_a,i. Once the two lengths ‖e_a‖ and ‖e_b‖ are fixed, the cosine
e_a·e_b / (‖e_a‖·‖e_b‖) is therefore exactly Σᵢⱼ h_a,i·h_b,j / (n_a·n_b·‖e_a‖·‖e_b‖): one part per pair.

| kind | what it computes |
| --- | --- |
| ``pair_parts`` | the (n_a, n_b) parts, the words of one text down the side and of the other across |
| ``rank_parts`` | those parts in one column, largest first (by size), each row named by its two words |
| ``pair_total`` | their sum, which is the cosine; its explanation lists the pairs ranked with the running sum |
"""

from __future__ import annotations

import math

from explain.core.shape_rules import fmt_shape
from explain.ops.base import CellExplanation, Op, Syms, num, register, residue
from explain.ops.products import dot_explanation, products_line


def _words(words: tuple[str, ...], i: int) -> str:
    return words[i] if 0 <= i < len(words) else f"#{i}"


@register
class PairParts(Op):
    """Part (i, j) of cos(text a, text b): h[a, i]·h[b, j] / (n_a·n_b·‖e[a]‖·‖e[b]‖), e the mean-pooled vectors."""

    kind = "pair_parts"
    helpers = ("pair_parts",)
    default_note = ("Why the two texts are similar, word pair by word pair. Mean pooling is linear, so once the two "
                    "lengths ‖e‖ are fixed the cosine is a sum over every pair of tokens (one from each text) of their "
                    "final vectors' dot product, divided by n_a·n_b·‖e_a‖·‖e_b‖. These parts sum to the cosine.")

    def shape(self, h, e, n_a: int = 1, n_b: int = 1, **attrs):
        return (n_a, n_b)

    def axes(self, h, e, a: int = 0, b: int = 1, **attrs):
        return (f"text{a}", f"text{b}")

    def formula(self, syms: Syms, a: int = 0, b: int = 1, **attrs) -> str:
        h, e = syms.ins
        return f"{syms.out}[i, j] = {h}[{a}, i]·{h}[{b}, j] / (n_{a}·n_{b}·‖{e}[{a}]‖·‖{e}[{b}]‖)"

    def signature(self, shapes, out, **attrs) -> str:
        return f"{fmt_shape(shapes[0])}, {fmt_shape(shapes[1])} → {fmt_shape(out)}"

    def source(self, out, ins, a: int = 0, b: int = 1, n_a: int = 1, n_b: int = 1, **attrs) -> str:
        return f"pair_parts({ins[0]}, {ins[1]}, {a}, {b}, {n_a}, {n_b})"

    def feeds(self, index, inputs, a: int = 0, b: int = 1, **attrs):
        i, j = index  # token i of text a and token j of text b, and both texts' pooled vectors (their lengths)
        return [([a, b], [i, j], slice(None)), ([a, b], slice(None))]

    def explain(self, index, inputs, output, syms: Syms, a: int = 0, b: int = 1, n_a: int = 1, n_b: int = 1,
                words_a: tuple = (), words_b: tuple = (), **attrs) -> CellExplanation:
        h, e = inputs
        i, j = index
        hs, es = syms.ins
        cols, rows, dot = dot_explanation(h[a, i], h[b, j], f"{hs}[{a}, {i}, k]", f"{hs}[{b}, {j}, k]")
        la, lb = math.sqrt(float((e[a] ** 2).sum())), math.sqrt(float((e[b] ** 2).sum()))
        return CellExplanation(
            index, float(output[index]), f"{syms.out}[{i}, {j}]: '{_words(words_a, i)}' (text {a + 1}) with "
            f"'{_words(words_b, j)}' (text {b + 1})", cols, rows,
            [products_line(rows), f"dot product = {num(dot)}",
             f"‖{es}[{a}]‖ = {num(la)}, ‖{es}[{b}]‖ = {num(lb)}, n_{a} = {n_a} and n_{b} = {n_b} real tokens",
             f"{num(dot)} / ({n_a}×{n_b}×{num(la)}×{num(lb)}) = {num(output[index])}"])


@register
class RankParts(Op):
    """The parts in one column, ordered by size (largest |part| first), each named by its two words."""

    kind = "rank_parts"
    helpers = ("ranked",)
    default_note = ("The word pairs ranked: the largest parts first, whichever their sign. Positive pairs pull the "
                    "texts together, negative ones apart.")

    def shape(self, parts, **attrs):
        return (parts[0] * parts[1], 1)  # a column: each row named by its two words, as a ranked list reads

    def axes(self, parts, a: int = 0, b: int = 1, **attrs):
        return (f"pairs{a}_{b}", "part")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]} sorted by |part|, largest first"

    def source(self, out, ins, **attrs) -> str:
        return f"ranked({ins[0]})"

    def feeds(self, index, inputs, **attrs):
        return [(slice(None), slice(None))]  # which pair stands at rank r depends on every part

    def explain(self, index, inputs, output, syms: Syms, words_a: tuple = (), words_b: tuple = (),
                **attrs) -> CellExplanation:
        i, j = _ranked_cell(inputs[0], index[0])
        total = float(inputs[0].sum())
        share = f" ({100 * float(output[index]) / total:.1f}% of it)" if total else ""
        return CellExplanation(index, float(output[index]), f"{syms.out}[{index[0]}]: pair {index[0] + 1} of "
                               f"{output.size}", lines=[f"'{_words(words_a, i)}' with '{_words(words_b, j)}': "
                                                        f"{syms.ins[0]}[{i}, {j}] = {num(output[index])}",
                                                        f"the {output.size} parts sum to the cosine {num(total)}{share}"])


def ranked_pairs(parts) -> list[tuple[int, int]]:
    """Every (i, j) of a parts matrix, the largest part (by size) first; equal sizes in reading order, as the
    kernel's stable sort has them."""
    flat = parts.reshape(-1)
    order = sorted(range(flat.size), key=lambda n: -abs(float(flat[n])))
    return [(int(n // parts.shape[1]), int(n % parts.shape[1])) for n in order]


def _ranked_cell(parts, r: int) -> tuple[int, int]:
    """The (i, j) of the r-th largest part."""
    return ranked_pairs(parts)[r]


@register
class PairTotal(Op):
    """Σ of the parts, beside the run's cosine [a, b]: they are equal (to float64's rounding). Its explanation
    lists the pairs ranked, with the running sum."""

    kind = "pair_total"
    skips = True  # the run's cosine stands beside the sum for comparison; the sum does not read it
    default_note = ("The parts add up to the cosine: the similarity of the two texts is exactly the sum of what "
                    "their word pairs contribute.")

    def shape(self, parts, cos, **attrs):
        return ()

    def axes(self, parts, cos, **attrs):
        return ()

    def formula(self, syms: Syms, a: int = 0, b: int = 1, **attrs) -> str:
        return f"{syms.out} = Σ {syms.ins[0]} = {syms.ins[1]}[{a}, {b}]"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]}.sum()"

    def feeds(self, index, inputs, a: int = 0, b: int = 1, **attrs):
        return [(slice(None), slice(None)), None]

    def explain(self, index, inputs, output, syms: Syms, a: int = 0, b: int = 1, words_a: tuple = (),
                words_b: tuple = (), **attrs) -> CellExplanation:
        parts, cos = inputs
        rows, running = [], 0.0
        for r, (i, j) in enumerate(ranked_pairs(parts)):
            running += float(parts[i, j])
            rows.append((r + 1, _words(words_a, i), _words(words_b, j), float(parts[i, j]), running))
        c = float(cos[a, b])
        return CellExplanation((), float(output), f"{syms.out} = cos(text {a + 1}, text {b + 1}), pair by pair",
                               ("rank", f"text {a + 1}", f"text {b + 1}", "part", "running sum"), rows,
                               [f"Σ of the {parts.size} parts = {num(output)}",
                                f"the run's cosine {syms.ins[1]}[{a}, {b}] = {num(c)}",
                                f"difference {residue(float(output) - c)}"])
