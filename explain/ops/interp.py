"""Op kinds of interpretability (:mod:`explain.interp`): a head's own write to the residual stream, the final
residual split into its parts, each part through the final norm with its scale frozen, each normalised part's
contribution to a logit (or a logit difference), their total, and a patch of one run's cells with another's.

They are ordinary op kinds: a direct logit attribution or a patched run is recorded as steps, so the step
screen, the drill-down, ``--plain`` and the export show them with no special case.
"""

from __future__ import annotations

from typing import Any

from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register, residue
from explain.ops.products import dot_explanation


@register
class HeadResult(Op):
    """What one head writes into the residual stream: its z (…, h, T, m) times its rows of W_O (h·m, d), so that
    the heads' results summed over h, plus b_O, are the attention output (TransformerLens's ``hook_result``)."""

    kind = "head_result"
    default_note = ("Each head's own write to the residual stream: its z times its m rows of W_O. The heads' "
                    "writes summed, plus the bias b_O, are the attention output.")

    def shape(self, z, w, **attrs):
        return tuple(z[:-1]) + (w[-1],)

    def axes(self, z, w, **attrs):
        return tuple(z[:-1]) + (w[-1],)

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out}[h] = {syms.ins[0]}[h] · {syms.ins[1]}[h·m:(h+1)·m]  (each head h)"

    def source(self, out, ins, **attrs) -> str:
        z, w = ins
        return f"{z} @ {w}.reshape({z}.shape[-3], {z}.shape[-1], -1)"

    def feeds(self, index, inputs, **attrs):
        z, w = inputs
        *lead, h, t, j = index
        m = z.shape[-1]
        return [tuple(lead) + (h, t, slice(None)), (slice(h * m, (h + 1) * m), j)]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        z, w = inputs
        fz, fw = self.feeds(index, inputs)
        h, j, m = index[-3], index[-1], z.shape[-1]
        cols, rows, total = dot_explanation(z[fz], w[fw], f"{syms.ins[0]}{idx(fz[:-1])}[k]",
                                             f"{syms.ins[1]}[{h}·{m}+k, {j}]")
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: head {h}'s z · its rows of "
                               f"{syms.ins[1]}, column {j}", cols, rows, [f"sum of {len(rows)} products = {num(total)}"])


def _piece(var: str, ndim: int, item: int, pos: int) -> str:
    """The rows one input gives the stack, as numpy: a bias (d,) one row, a positional embedding (T, d) its
    row at ``pos``, a stream (B, T, d) its row at (item, pos), per-head results (B, h, T, d) one row per head."""
    return {1: f"{var}[None]", 2: f"{var}[{pos}][None]", 3: f"{var}[{item}, {pos}][None]",
            4: f"{var}[{item}, :, {pos}]"}[ndim]


@register
class StackParts(Op):
    """The parts of the final residual stream at one position, one row each (``labels`` names them): the
    embeddings, each head's result, each attention bias, each MLP output. Their sum is the residual itself."""

    kind = "stack_parts"
    default_note = ("The residual stream is a sum: everything any layer wrote is still in it. Here are its parts, "
                    "one row each, at the position read; their sum is the final residual.")

    def shape(self, *shapes, dims: tuple[int, ...] = (), **attrs):
        rows = sum(s[1] if len(s) == 4 else 1 for s in shapes)
        return (rows, shapes[0][-1])

    def axes(self, *axes, **attrs):
        return ("part", "d_model")

    def signature(self, shapes, out, **attrs) -> str:
        return f"{len(shapes)} parts → {out}"

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = [{', '.join(dict.fromkeys(syms.ins))}] at one position, one row per part"

    def source(self, out, ins, dims: tuple[int, ...] = (), item: int = 0, pos: int = 0, **attrs) -> str:
        pieces = ", ".join(_piece(v, n, item, pos) for v, n in zip(ins, dims))
        return f"np.concatenate([{pieces}], axis=0)"

    def _where(self, row: int, inputs: list[Any]) -> tuple[int, tuple]:
        """The input and its index that give stack row ``row``."""
        for i, a in enumerate(inputs):
            n = a.shape[-3] if a.ndim == 4 else 1
            if row < n:
                return i, (row,) if a.ndim == 4 else ()
            row -= n
        raise IndexError(row)

    def feeds(self, index, inputs, item: int = 0, pos: int = 0, **attrs):
        p, j = index
        i, head = self._where(p, inputs)
        out: list[Any] = [None] * len(inputs)
        a = inputs[i]
        out[i] = {1: (j,), 2: (pos, j), 3: (item, pos, j), 4: (item, *head, pos, j)}[a.ndim]
        return out

    def explain(self, index, inputs, output, syms: Syms, labels: tuple[str, ...] = (), **attrs) -> CellExplanation:
        p, j = index
        i, _ = self._where(p, inputs)
        cell = self.feeds(index, inputs, **attrs)[i]
        label = labels[p] if p < len(labels) else f"part {p}"
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: {label}",
                               lines=[f"{syms.ins[i]}{idx(cell)} = {num(output[index])}"])


def _direction(w: str, word: int, vs: int | None, transpose_w: bool) -> str:
    col = (lambda t: f"{w}[{t}]") if transpose_w else (lambda t: f"{w}[:, {t}]")
    return col(word) if vs is None else f"({col(word)} - {col(vs)})"


@register
class FrozenNorm(Op):
    """The final norm applied to each part with the scale frozen at its value in the run (TransformerLens's
    ``apply_ln_to_stack``): centred (layer norm; not RMS norm), divided by the σ of the whole residual at that
    position, times γ. Linear in each part, so the normalised parts sum to the norm's output less its β."""

    kind = "frozen_norm"
    default_note = ("The final norm is not linear (it divides by the residual's own size), so each part is divided "
                    "by the scale the whole residual had in this run, frozen: TransformerLens's convention.")

    def shape(self, parts, x, w, **attrs):
        return tuple(parts)

    def formula(self, syms: Syms, centre: bool = True, plus_one: bool = False, **attrs) -> str:
        p, x, w = syms.ins
        top = f"({p} − mean {p})" if centre else p
        return f"{syms.out} = {top} / σ({x}) · {f'(1 + {w})' if plus_one else w}  (σ frozen at the run's value)"

    def _sigma(self, x: str, item: int, pos: int, eps: float, centre: bool) -> str:
        row = f"{x}[{item}, {pos}]"
        return f"np.sqrt({row}.var() + {eps!r})" if centre else f"np.sqrt(np.mean({row} ** 2) + {eps!r})"

    def source(self, out, ins, item: int = 0, pos: int = 0, eps: float = 1e-5, centre: bool = True,
               plus_one: bool = False, **attrs) -> str:
        p, x, w = ins
        top = f"({p} - {p}.mean(axis=-1, keepdims=True))" if centre else p
        return f"{top} / {self._sigma(x, item, pos, eps, centre)} * {f'(1.0 + {w})' if plus_one else w}"

    def feeds(self, index, inputs, item: int = 0, pos: int = 0, **attrs):
        p, j = index
        return [(p, slice(None)), (item, pos, slice(None)), (j,)]

    def explain(self, index, inputs, output, syms: Syms, item: int = 0, pos: int = 0, eps: float = 1e-5,
                centre: bool = True, plus_one: bool = False, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy stays off the shape path (explain shapes imports every op)

        parts, x, w = inputs
        w = 1.0 + w if plus_one else w  # Gemma's gain is 1 + w
        p, j = index
        row, resid = parts[p], x[item, pos]
        mean = float(row.mean()) if centre else 0.0
        sigma = float(np.sqrt(resid.var() + eps)) if centre else float(np.sqrt(np.mean(resid ** 2) + eps))
        lines = [f"σ of the residual {syms.ins[1]}[{item}, {pos}] = "
                 + (f"√(var + ε) = {num(sigma)}" if centre else f"√(mean of squares + ε) = {num(sigma)}")]
        if centre:
            lines.append(f"mean of part {p} = {num(mean)}")
        lines.append(f"({num(row[j])} − {arg(mean)}) / {num(sigma)} · γ[{j}] {arg(w[j])} = {num(output[index])}"
                     if centre else f"{num(row[j])} / {num(sigma)} · γ[{j}] {arg(w[j])} = {num(output[index])}")
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: part {p} through the frozen "
                               "norm", lines=lines)


@register
class PartLogits(Op):
    """Each normalised part's contribution to a logit: its dot product with the word's unembedding column (with
    ``vs``, the difference of two columns: a logit difference). The last row is what no part writes: the final
    norm's β and the unembedding's bias, through the same column (0 for a model that has neither)."""

    kind = "part_logits"
    default_note = ("Each part's contribution to the logit is its normalised vector dotted with the word's column "
                    "of the unembedding; the last row is the final norm's β and the unembedding's bias.")

    def shape(self, parts, w, *rest, **attrs):
        return (parts[0] + 1,)

    def axes(self, *axes, **attrs):
        return ("part",)

    def formula(self, syms: Syms, vs: int | None = None, **attrs) -> str:
        u = "(W_U[:, w] − W_U[:, w′])" if vs is not None else "W_U[:, w]"
        return f"{syms.out}[p] = {syms.ins[0]}[p] · {u};  last: β · {u} + bias"

    def source(self, out, ins, word: int = 0, vs: int | None = None, transpose_w: bool = False,
               beta: bool = False, bias: bool = False, **attrs) -> str:
        parts, w, *rest = ins
        u = _direction(w, word, vs, transpose_w)
        const = [f"{rest[0]} @ {u}"] if beta else []
        if bias:
            b = rest[-1]
            const.append(f"{b}[{word}]" + (f" - {b}[{vs}]" if vs is not None else ""))
        last = " + ".join(const) if const else "0.0"
        return f"np.append({parts} @ {u}, {last})"

    def feeds(self, index, inputs, word: int = 0, vs: int | None = None, transpose_w: bool = False, **attrs):
        (p,) = index
        parts = inputs[0]
        col = (word, slice(None)) if transpose_w else (slice(None), word)
        out: list[Any] = [(p, slice(None)) if p < parts.shape[0] else None, col]
        return out + [(slice(None),) if a.ndim == 1 and a.shape[0] == parts.shape[1] else (word,) for a in inputs[2:]]

    def explain(self, index, inputs, output, syms: Syms, word: int = 0, vs: int | None = None,
                transpose_w: bool = False, labels: tuple[str, ...] = (), **attrs) -> CellExplanation:
        parts, w = inputs[:2]
        (p,) = index
        u = w[word] if transpose_w else w[:, word]
        if vs is not None:
            u = u - (w[vs] if transpose_w else w[:, vs])
        uname = "u" + (" = W_U[:, w] − W_U[:, w′]" if vs is not None else " = W_U[:, w]")
        label = labels[p] if p < len(labels) else "β and bias"
        if p == parts.shape[0]:
            return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: {label}",
                                   lines=[f"{uname}", f"β · u + unembedding bias = {num(output[index])}"])
        cols, rows, total = dot_explanation(parts[p], u, f"{syms.ins[0]}[{p}, k]", "u[k]")
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: {label}", cols, rows,
                               [uname, f"sum of {len(rows)} products = {num(total)}"])


@register
class Total(Op):
    """The sum of the contributions, beside the logit the run computed (its second input) to compare with."""

    kind = "total"
    default_note = "The contributions add up to the logit (or logit difference) the run computed."
    reads_vocab = True  # the logits compared are named by their words, not only their ids

    def shape(self, parts, logits, **attrs):
        return ()

    def axes(self, *axes, **attrs):
        return ()

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = Σₚ {syms.ins[0]}[p]  (= the run's {syms.ins[1]})"

    def source(self, out, ins, **attrs) -> str:
        return f"{ins[0]}.sum()"

    def feeds(self, index, inputs, item: int = 0, pos: int = 0, word: int = 0, vs: int | None = None, **attrs):
        return [(slice(None),), (item, pos, slice(None))]

    def explain(self, index, inputs, output, syms: Syms, item: int = 0, pos: int = 0, word: int = 0,
                vs: int | None = None, labels: tuple[str, ...] = (), vocab: Any = None, **attrs) -> CellExplanation:
        parts, logits = inputs
        rows = [(labels[p] if p < len(labels) else "β and bias", float(v)) for p, v in enumerate(parts)]
        run = float(logits[item, pos, word] - (logits[item, pos, vs] if vs is not None else 0.0))

        def logit(i: int) -> str:
            return f"logits[{item}, {pos}, {i}]" + (f" ({vocab[i]})" if vocab is not None and i < len(vocab) else "")

        what = logit(word) + (f" − {logit(vs)}" if vs is not None else "")
        return CellExplanation((), float(output), f"{syms.out} = sum of the {len(rows)} contributions",
                               ("part", "contribution"), rows,
                               [f"sum = {num(output)}", f"the run's {what} = {num(run)}",
                                f"difference = {residue(float(output) - run)}"])


@register
class Patch(Op):
    """A run's step with chosen cells replaced by another run's (activation patching): ``where`` is a tuple of
    (axis, index) pairs, each fixing one axis; the cells they select come from the second input."""

    kind = "patch"
    helpers = ("patched",)
    default_note = ("Activation patching: the cells chosen come from the clean run, every other cell is the "
                    "corrupted run's own. Everything after this step is recomputed from it.")

    def shape(self, a, b, **attrs):
        return tuple(a)

    def formula(self, syms: Syms, where: tuple = (), cells: str = "", **attrs) -> str:
        chosen = cells or ", ".join(f"axis {a} = {i}" for a, i in where) or "every cell"
        return f"{syms.out} = {syms.ins[0]}, with {chosen} from the clean run"

    def source(self, out, ins, where: tuple = (), **attrs) -> str:
        return f"patched({ins[0]}, {ins[1]}, {tuple(tuple(int(v) for v in w) for w in where)!r})"

    def chosen(self, index: tuple[int, ...], ndim: int, where: tuple) -> bool:
        return all(index[a % ndim] == i for a, i in where)

    def feeds(self, index, inputs, where: tuple = (), **attrs):
        take = self.chosen(index, len(index), where)
        return [None, tuple(index)] if take else [tuple(index), None]

    def explain(self, index, inputs, output, syms: Syms, where: tuple = (), source: str = "", **attrs) -> CellExplanation:
        a, b = inputs
        if self.chosen(index, a.ndim, where):
            same = " (the same as the corrupted run's: this cell changes nothing)" if a[index] == b[index] else \
                f" (the corrupted run had {num(a[index])})"
            return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: patched",
                                   lines=[f"from the clean run's {source}{idx(index)} = {num(b[index])}{same}"])
        return CellExplanation(index, float(output[index]), f"{syms.out}{idx(index)}: kept",
                               lines=[f"the corrupted run's own {source}{idx(index)} = {num(a[index])}"])
