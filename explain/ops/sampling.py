"""Op kinds that turn logits into a next token, and the draw (the key/value cache is :mod:`explain.ops.cache`).

| kind | what it does |
| --- | --- |
| ``last_position`` | the logits of the last position, the one that predicts the next token |
| ``temperature`` | logits ÷ T |
| ``top_k``, ``top_p`` | masking steps: the tokens a filter cuts become −inf (not the causal or padding mask) |
| ``uniform`` | the number u ∈ [0, 1) a seeded generator draws |
| ``sample`` | the token whose cumulative probability first exceeds u (inverse-CDF draw) |
| ``argmax`` | the most probable token (greedy decoding) |

Each class holds every view of its kind (shape rule, compute, formula, numpy source, cell explanation); the
numpy of the filters and of the draw is in :mod:`explain.ops.kernels`, copied verbatim into exported scripts; each
op computes by evaluating its own export source.
"""

from __future__ import annotations

from typing import Any

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, id_word, idx, num, register, token


def _ranks(row: Any) -> Any:
    """1-based rank of every entry of a 1-D row, largest first; ties share the better rank."""
    import numpy as np  # lazy: numpy off the shape path

    ordered = np.sort(row)[::-1]
    return 1 + np.searchsorted(-ordered, -row, side="left")


@register
class LastPosition(Op):
    """``logits[..., T−1:T, :]``: only the last position's prediction is about a token not yet written."""

    kind = "last_position"
    default_note = ("The next token is predicted at the last position: every earlier position predicts a token "
                    "the text already has.")

    def shape(self, a, **attrs):
        if len(a) < 2:
            raise ShapeError(f"the last position needs (…, positions, vocab), got {sr.fmt_shape(a)}")
        return tuple(a[:-2]) + (1, a[-1])

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = {syms.ins[0]}[…, T−1, :]  (the last position)"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]}[..., -1:, :]"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        t = inputs[0].shape[-2] - 1
        src = tuple(index[:-2]) + (t, index[-1])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(src)}",
                               lines=[f"position {t} is the last of {t + 1}: its logits score the next token",
                                      f"copied: {num(output[index])}"])


@register
class Temperature(Op):
    """``z / T``: T < 1 sharpens the distribution softmax will give, T > 1 flattens it. ``t`` is one number, or
    one per sequence of a batch (the same logits at several temperatures, side by side)."""

    kind = "temperature"
    default_note = ("Divide the logits by the temperature T. T < 1 widens the gaps between them (the top token "
                    "gets more of the probability), T > 1 narrows them (the choice gets more random).")

    @staticmethod
    def _text(t: Any) -> str:
        return ", ".join(num(x) for x in t) if isinstance(t, (tuple, list)) else num(t)

    def shape(self, a, t: Any = 1.0, **attrs):
        if isinstance(t, (tuple, list)) and (len(a) < 3 or len(t) != a[0]):
            raise ShapeError(f"{len(t)} temperatures need logits with {len(t)} sequences, got {sr.fmt_shape(a)}")
        return tuple(a)

    def formula(self, syms: Syms, t: Any = 1.0, **attrs) -> str:
        per = " for sequences 0, 1, … in turn" if isinstance(t, (tuple, list)) else ""
        return f"{syms.out} = {syms.ins[0]} / T   (T = {self._text(t)}{per})"

    def signature(self, shapes, out, t: Any = 1.0, **attrs) -> str:
        return f"{sr.fmt_shape(shapes[0])} / {self._text(t)} → {sr.fmt_shape(out)}"

    def source(self, out, ins, t: Any = 1.0, **attrs) -> str:
        if isinstance(t, (tuple, list)):
            return f"{ins[0]} / np.array({[float(x) for x in t]!r}).reshape(-1, 1, 1)"
        return f"{ins[0]} / {float(t)!r}"

    def explain(self, index, inputs, output, syms: Syms, t: Any = 1.0, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        tt = float(t[index[0]]) if isinstance(t, (tuple, list)) else float(t)
        x = float(inputs[0][index])
        effect = ("T < 1: gaps between logits grow, softmax sharpens" if tt < 1 else
                  "T > 1: gaps between logits shrink, softmax flattens" if tt > 1 else
                  "T = 1: the logits are unchanged")
        row = np.asarray(inputs[0][tuple(index[:-1])], dtype=float)
        lines = [f"T = {num(tt)} ({effect})", f"{num(x)} / {num(tt)} = {num(output[index])}"]
        if np.isfinite(x):  # what the same logit would become after softmax at other temperatures
            probs = []
            for temp in (0.5, 1.0, 2.0):
                z = row / temp
                probs.append(f"T = {temp:g} → {num(np.exp(x / temp - z.max()) / np.exp(z - z.max()).sum())}")
            # one short line a student reads left to right (it was "at T = 0.5000: …, 1: …", cut at 80 columns)
            lines.append("its p after softmax: " + " · ".join(probs))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(index)} / T",
                               lines=lines)


class _Filter(Op):
    """A sampling filter: a masking step that sets the tokens it cuts to −inf, before the softmax."""

    def _param(self, **attrs) -> Any:
        raise NotImplementedError

    def source(self, out, ins, **attrs) -> str:
        return f"{self.helpers[0]}({ins[0]}, {self._param(**attrs)!r})"

    @staticmethod
    def _cut(before: float, after: float) -> list[str]:
        if before == float("-inf"):
            return ["already −inf: cut by an earlier filter"]
        if after == float("-inf"):
            return [f"cut: {num(before)} → −inf, so softmax will give it probability exp(−inf) = 0"]
        return [f"kept: {num(before)}"]


@register
class TopK(_Filter):
    """Top-k: only the k highest-scoring tokens stay candidates."""

    kind = "top_k"
    reads_vocab = True
    helpers = ("top_k_filter",)
    default_note = ("Top-k filter (a masking step, not the causal mask): only the k tokens with the largest "
                    "logits can be drawn; every other token becomes −inf.")

    def _param(self, k: int = 1, **attrs) -> int:
        return int(k)

    def formula(self, syms: Syms, k: int = 1, **attrs) -> str:
        return f"{syms.out}[v] = {syms.ins[0]}[v] if rank(v) ≤ k else −inf   (k = {k})"

    def explain(self, index, inputs, output, syms: Syms, k: int = 1, vocab: Any = None,
                **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        row = np.asarray(inputs[0][tuple(index[:-1])], dtype=float)
        v = index[-1]
        rank = int(_ranks(row)[v])
        kth = float(np.sort(row)[::-1][min(k, row.size) - 1])
        why = (f"rank {rank} ≤ k = {k}" if rank <= k else
               f"rank {rank} > k = {k}, but it ties with the k-th largest ({num(kth)}), so it stays"
               if row[v] >= kth else f"rank {rank} > k = {k}")
        order = np.argsort(-row, kind="stable")[:min(k + 2, row.size)]
        rows = [(r + 1, id_word(int(i), vocab), float(row[i]), "kept" if row[i] >= kth else "cut")
                for r, i in enumerate(order)]
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: {token(v, vocab)}, rank {rank} of "
                               f"{row.size} (1 = largest logit)", ("rank", "token", "logit", ""), rows,
                               [f"k = {k} is at least the vocabulary's {row.size} tokens: every token is kept"
                                if k >= row.size else f"the k-th largest logit (k = {k}) is {num(kth)}", why,
                                *self._cut(float(row[v]), float(output[index]))])


@register
class TopP(_Filter):
    """Top-p (nucleus): the smallest set of most probable tokens whose probability reaches p."""

    kind = "top_p"
    reads_vocab = True
    helpers = ("top_p_filter",)
    default_note = ("Top-p (nucleus) filter, a masking step: rank the tokens by probability and keep them until "
                    "the ones kept hold at least p of the probability; the rest become −inf.")

    def _param(self, p: float = 1.0, **attrs) -> float:
        return float(p)

    def formula(self, syms: Syms, p: float = 1.0, **attrs) -> str:
        # one line of the step screen's header at 80 columns (issue 26, defect 9): 'P(…)' for 'probability of'
        return f"{syms.out}[v] = {syms.ins[0]}[v] if P(tokens ranked above v) < p, else −inf   (p = {num(p)})"

    def explain(self, index, inputs, output, syms: Syms, p: float = 1.0, vocab: Any = None,
                **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        row = np.asarray(inputs[0][tuple(index[:-1])], dtype=float)
        v = index[-1]
        order = np.argsort(-row, kind="stable")
        e = np.exp(row[order] - row[order[0]])
        probs = e / e.sum()
        before = np.concatenate([[0.0], np.cumsum(probs)[:-1]])
        rank = int(np.flatnonzero(order == v)[0]) + 1
        mass = float(before[rank - 1])
        shown = list(range(min(rank, 8))) + ([rank - 1] if rank > 8 else [])
        rows = [(r + 1, id_word(int(order[r]), vocab), float(probs[r]), float(before[r])) for r in shown]
        why = (f"cumulative {num(mass)} ≥ p = {num(p)} before it" if mass >= p else
               f"cumulative {num(mass)} < p = {num(p)} before it" + (" (the top token is always kept)"
                                                                      if rank == 1 else ""))
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: {token(v, vocab)}, rank {rank}, "
                               f"probability {num(probs[rank - 1])}", ("rank", "token", "p", "cumulative before"),
                               rows, ["probabilities: softmax of this row, ranked largest first", why,
                                      *self._cut(float(row[v]), float(output[index]))])


@register
class Uniform(Op):
    """u ∈ [0, 1) from numpy's PCG64 generator seeded with (seed, token number): the same seed, the same draw."""

    kind = "uniform"
    default_note = ("A uniform random number in [0, 1), from a generator seeded with the run's seed and the "
                    "token's number: the same seed always gives the same text.")

    def shape(self, shape: tuple = (), **attrs):
        return tuple(shape)

    def axes(self, axes: tuple = (), **attrs):
        return tuple(axes)

    def formula(self, syms: Syms, seed: int = 0, n: int = 0, **attrs) -> str:
        return f"{syms.out} ~ uniform[0, 1)   (generator seeded with [{seed}, {n}])"

    def signature(self, shapes, out, **attrs) -> str:
        return f"seeded generator → {sr.fmt_shape(out)}"

    def source(self, out, ins, shape: tuple = (), seed: int = 0, n: int = 0, **attrs) -> str:
        return f"np.random.default_rng([{seed}, {n}]).random({tuple(shape)!r})"

    def explain(self, index, inputs, output, syms: Syms, seed: int = 0, n: int = 0, **attrs) -> CellExplanation:
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: a seeded uniform draw",
                               lines=[f"np.random.default_rng([{seed}, {n}]).random() (PCG64)",
                                      f"u = {num(output[index])}"])


class _Choice(Op):
    """Probabilities (…, V) in, one token id per row (…) out."""

    def shape(self, probs, *rest, **attrs):
        if len(probs) < 1:
            raise ShapeError("a draw needs probabilities over a vocabulary, got a scalar")
        if rest and tuple(rest[0]) != tuple(probs[:-1]):
            raise ShapeError(f"u {sr.fmt_shape(rest[0])} must have one number per row of the probabilities "
                             f"{sr.fmt_shape(probs[:-1])}")
        return tuple(probs[:-1])

    def axes(self, probs, *rest, **attrs):
        return tuple(probs[:-1])


@register
class Sample(_Choice):
    """Inverse-CDF sampling: walk the cumulative probabilities in token order until they pass u."""

    kind = "sample"
    reads_vocab = True
    join = ", u "
    helpers = ("sample",)
    default_note = ("The draw: add up the probabilities token by token; the token where the running sum first "
                    "passes u is the next token. Each token is drawn with its own probability.")

    def formula(self, syms: Syms, **attrs) -> str:
        p, u = syms.ins
        return f"{syms.out} = first v with {p}[0] + … + {p}[v] > {u}"

    def source(self, out, ins, **attrs) -> str:
        return f"sample({ins[0]}, {ins[1]})"

    def explain(self, index, inputs, output, syms: Syms, vocab: Any = None, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        probs, u = inputs
        row = np.asarray(probs[tuple(index)], dtype=float)
        c = np.cumsum(row)
        uu = float(u[tuple(index)])
        target = uu * float(c[-1])
        t = int(output[tuple(index)])
        lo = float(c[t - 1]) if t > 0 else 0.0
        live = np.flatnonzero(row > 0)
        at = int(np.searchsorted(live, t))
        near = live[max(0, at - 2): at + 3]
        rows = [(id_word(int(i), vocab), float(row[i]), float(c[i])) for i in near]
        scaled = f"u × total {num(c[-1])} = {num(target)}" if abs(c[-1] - 1) > 1e-12 else f"u = {num(uu)}"
        drawn = token(t, vocab)
        lines = [f"cumulative before {drawn} = {num(lo)} ≤ {scaled} < {num(c[t])} = cumulative through it",
                 f"so u falls in its stretch, {num(row[t])} long (its P, after the filters): next = {drawn}",
                 f"u = {num(uu)}; {live.size} token(s) have probability > 0, the others are never drawn"]
        return CellExplanation(index, float(t), f"{syms.out}{idx(index)}: where u falls among the cumulative sums",
                               ("token", "P (used)", "cumulative"), rows, lines, shown=drawn)


@register
class Argmax(_Choice):
    """Greedy decoding: the most probable token, always."""

    kind = "argmax"
    reads_vocab = True
    default_note = "Greedy decoding: take the most probable token. No randomness: the same input, the same text."

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = argmax_v {syms.ins[0]}[v]"

    def source(self, out, ins, **attrs) -> str:
        return f"np.argmax({ins[0]}, axis=-1)"

    def explain(self, index, inputs, output, syms: Syms, vocab: Any = None, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        row = np.asarray(inputs[0][tuple(index)], dtype=float)
        order = np.argsort(-row, kind="stable")[:5]
        t = int(output[tuple(index)])
        rows = [(r + 1, id_word(int(i), vocab), float(row[i])) for r, i in enumerate(order)]
        lines = [f"the largest value is {token(t, vocab)}'s: {num(row[t])}"]
        if row.size > 1:
            lines.append(f"runner-up: {token(int(order[1]), vocab)} with {num(row[order[1]])}")
        return CellExplanation(index, float(t), f"{syms.out}{idx(index)} = the token with the largest "
                               f"{syms.ins[0]}", ("rank", "token", syms.ins[0]), rows, lines,
                               shown=token(t, vocab))
