"""The tiled attention kernel as op kinds: the online softmax of FlashAttention (Dao et al. 2022, Algorithm 1;
Milakov and Gimelshein 2018), which computes softmax(Q·Kᵀ/√d_k)·V one tile of keys at a time and never holds the
(T, T) score matrix.

For tile t (keys ``start`` … ``stop − 1``), every query row i keeps three running values:

| step | op kind | what it holds |
| --- | --- | --- |
| ``tile_scores`` | S⁽ᵗ⁾ = Q·K_tᵀ/√d_k | this tile's scores only, masked keys −inf |
| ``tile_max`` | m⁽ᵗ⁾ = max(m⁽ᵗ⁻¹⁾, rowmax S⁽ᵗ⁾) | the largest score seen so far |
| ``tile_rescale`` | α⁽ᵗ⁾ = exp(m⁽ᵗ⁻¹⁾ − m⁽ᵗ⁾) | how much the old sum and accumulator shrink |
| ``tile_exp`` | P̃⁽ᵗ⁾ = exp(S⁽ᵗ⁾ − m⁽ᵗ⁾) | the tile's weights, not yet divided by anything |
| ``tile_sum`` | ℓ⁽ᵗ⁾ = α⁽ᵗ⁾·ℓ⁽ᵗ⁻¹⁾ + rowsum P̃⁽ᵗ⁾ | the softmax's denominator so far |
| ``tile_acc`` | O⁽ᵗ⁾ = α⁽ᵗ⁾·O⁽ᵗ⁻¹⁾ + P̃⁽ᵗ⁾·V_t | the weighted sum of values so far |
| ``tile_normalize`` | Z = O / ℓ | after the last tile: the attention output (:mod:`explain.ops.flash`) |

The first tile has nothing to rescale: its max, sum and accumulator start from its own tile alone. Each source is
one numpy expression (a padded batch's keys through :func:`explain.ops.kernels.padding_mask`); a row that has seen no
visible key yet (its max still −inf) gets weight 0 and rescale factor 1, as FlashAttention's guards do.
The backward pass goes from ``tile_normalize`` (Z) straight to Q, K and V with FlashAttention's Algorithm 2, recomputing every tile (:func:`explain.ops.kernels.flash_backward`): the tile steps have no gradients of their own, as the kernel keeps none of them.
"""

from __future__ import annotations

from typing import Any

from explain.core import shape_rules as sr
from explain.core.shape_rules import Shape
from explain.ops.base import CellExplanation, Op, Syms, arg, broadcast_index, idx, num, register


def lead_index(index: tuple[int, ...], shape: tuple[int, ...], tail: int = 2) -> tuple[int, ...]:
    """The index of an operand's leading (batch, head) axes paired with output cell ``index``."""
    return broadcast_index(tuple(index[:-2]), tuple(shape[:-tail]))


def row_stat(index: tuple[int, ...], arr: Any) -> tuple[int, ...]:
    """The cell of a per-row statistic (…, T, 1) (a max, a sum, a rescale factor) for output cell ``index``."""
    return lead_index(index, arr.shape) + (index[-2], 0)


class _Tile(Op):
    """A step of the tiled kernel: its output's axes are the queries' and one column per key of the tile, or one
    column for a per-row statistic."""

    stat = False  # a per-row statistic: (…, T, 1)

    def axes(self, *axes, **attrs):
        return tuple(axes[0][:-1]) + (("stat",) if self.stat else ("key",))

    def shape(self, *shapes, **attrs):
        s = tuple(shapes[0])
        return s[:-1] + (1,) if self.stat else s


@register
class TileScores(_Tile):
    """S⁽ᵗ⁾ = Q·K[start:stop]ᵀ/√d_k: one tile's scores, with the masks applied inside the tile."""

    kind = "tile_scores"
    join = " · "
    helpers = ("padding_mask",)
    default_note = ("The scores of this tile's keys only: each query row against keys start … stop − 1, divided by "
                    "√d_k. The whole score matrix is never built.")

    def shape(self, q: Shape, k: Shape, *rest: Shape, start: int = 0, stop: int = 1, **attrs) -> Shape:
        return sr.matmul(q, tuple(k[:-2]) + (k[-1], stop - start))

    def axes(self, q, k, *rest, **attrs):
        return tuple(q[:-1]) + ("key",)

    def shown_shapes(self, shapes, start: int = 0, stop: int = 1, **attrs):
        q, k, *rest = shapes
        return [q, tuple(k[:-2]) + (k[-1], stop - start), *rest]

    def formula(self, syms: Syms, start: int = 0, stop: int = 1, root: str = "d_k", **attrs) -> str:
        q, k = syms.ins[:2]
        return f"{syms.out} = {q}·{k}[{start}:{stop}]ᵀ / √{root}"

    def source(self, out, ins, start: int = 0, stop: int = 1, n: int = 1, causal: bool = False,
               window: int | None = None, **attrs) -> str:
        s = f"{ins[0]} @ np.swapaxes({ins[1]}[..., {start}:{stop}, :], -1, -2) / np.sqrt({n})"
        if causal:  # key j after query i: hidden
            s = f"np.where(np.arange({start}, {stop}) > np.arange({ins[0]}.shape[-2])[:, None], -np.inf, {s})"
        if window is not None:  # key j window or more positions before query i: hidden (a sliding layer)
            s = (f"np.where(np.arange({ins[0]}.shape[-2])[:, None] - np.arange({start}, {stop}) >= {window}, "
                 f"-np.inf, {s})")
        return f"padding_mask({s}, {ins[2]}[:, {start}:{stop}])" if len(ins) > 2 else s

    def feeds(self, index, inputs, start: int = 0, **attrs):
        q, k = inputs[:2]
        out = [lead_index(index, q.shape) + (index[-2], slice(None)), lead_index(index, k.shape) + (start + index[-1], slice(None))]
        if len(inputs) > 2:
            out.append((index[0], start + index[-1]) if len(index) > 2 else (0, start + index[-1]))
        return out

    def explain(self, index, inputs, output, syms: Syms, start: int = 0, n: int = 1, causal: bool = False,
                **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        fq, fk = self.feeds(index, inputs, start=start)[:2]
        row, col = inputs[0][fq], inputs[1][fk]
        i, key = index[-2], start + index[-1]
        prods = row * col
        rows = [(c, float(a), float(b), float(p)) for c, (a, b, p) in enumerate(zip(row, col, prods))]
        title = f"{syms.out}{idx(index)} = {syms.ins[0]}[{i}]·{syms.ins[1]}[{key}] / √{n}  (query {i}, key {key})"
        lines = [f"key {key} is column {index[-1]} of this tile (keys {start} … {start + output.shape[-1] - 1})",
                 f"Σ products = {num(prods.sum())}; / √{n} = {num(prods.sum() / np.sqrt(n))}"]
        if np.isneginf(output[index]):
            window = attrs.get("window")
            why = ("it comes after the query (causal mask)" if causal and key > i else
                   f"it is {window} or more positions back (the sliding window)" if window is not None
                   and i - key >= window else "it is <pad>")
            lines.append(f"this key is hidden: {why}, so its score is −inf")
        return CellExplanation(index, float(output[index]), title,
                               ("c", f"{syms.ins[0]}[{i}, c]", f"{syms.ins[1]}[{key}, c]", "product"), rows, lines)


@register
class TileMax(_Tile):
    """m⁽ᵗ⁾ = max(m⁽ᵗ⁻¹⁾, rowmax S⁽ᵗ⁾): the running maximum of each query's scores."""

    kind = "tile_max"
    stat = True
    default_note = ("The running max: the largest score of each row seen so far. Subtracting it before exp keeps "
                    "every exponential at most 1.")

    def formula(self, syms: Syms, **attrs) -> str:
        s = syms.ins[0]
        return f"{syms.out} = rowmax({s})" if len(syms.ins) == 1 else f"{syms.out} = max({syms.ins[1]}, rowmax({s}))"

    def source(self, out, ins, **attrs) -> str:
        first = f"np.max({ins[0]}, axis=-1, keepdims=True)"
        return first if len(ins) == 1 else f"np.maximum({ins[1]}, {first})"

    def feeds(self, index, inputs, **attrs):
        s = inputs[0]
        out = [lead_index(index, s.shape) + (index[-2], slice(None))]
        return out + ([row_stat(index, inputs[1])] if len(inputs) > 1 else [])

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        fs = self.feeds(index, inputs)
        row = inputs[0][fs[0]]
        i = index[-2]
        rows = [(j, float(x)) for j, x in enumerate(row)]
        lines = [f"rowmax({syms.ins[0]}[{i}]) = {num(row.max())}"]
        if len(inputs) > 1:
            old = float(inputs[1][fs[1]])
            lines.append(f"max({syms.ins[1]}[{i}] = {num(old)}, {num(row.max())}) = {num(output[index])}"
                         + ("  (the max grew: what came before must be rescaled)" if output[index] > old else
                            "  (unchanged: nothing to rescale)"))
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}]: the largest score of row {i} so far",
                               ("j", f"{syms.ins[0]}[{i}, j]"), rows, lines)


@register
class TileRescale(_Tile):
    """α⁽ᵗ⁾ = exp(m⁽ᵗ⁻¹⁾ − m⁽ᵗ⁾): the factor that brings the earlier tiles' exponentials to the new max."""

    kind = "tile_rescale"
    stat = True
    default_note = ("The rescale factor: the earlier tiles' exponentials were taken against the old max; "
                    "exp(m_old − m_new) turns each into one taken against the new max, since "
                    "exp(s − m_old)·exp(m_old − m_new) = exp(s − m_new).")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = exp({syms.ins[0]} − {syms.ins[1]})"

    def source(self, out, ins, **attrs) -> str:
        # a row that has seen no visible key yet (new max −inf) keeps 1: it has nothing to shrink
        return f"np.exp(np.where(np.isneginf({ins[1]}), 0.0, {ins[0]} - {ins[1]}))"

    def feeds(self, index, inputs, **attrs):
        return [row_stat(index, inputs[0]), row_stat(index, inputs[1])]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        old, new = (float(a[f]) for a, f in zip(inputs, self.feeds(index, inputs)))
        i = index[-2]
        lines = [f"exp({num(old)} − {arg(new)}) = exp({num(old - new)}) = {num(output[index])}"]
        if output[index] == 1:
            lines.append("the max did not grow: the sum and the accumulator are kept as they are")
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}] = exp({syms.ins[0]}[{i}] − "
                               f"{syms.ins[1]}[{i}])", lines=lines)


@register
class TileExp(_Tile):
    """P̃⁽ᵗ⁾ = exp(S⁽ᵗ⁾ − m⁽ᵗ⁾): the tile's unnormalised weights against the running max."""

    kind = "tile_exp"
    default_note = ("This tile's weights before any division: exp(score − running max). They are divided by the "
                    "running sum only once, after the last tile.")

    def formula(self, syms: Syms, **attrs) -> str:
        return f"{syms.out} = exp({syms.ins[0]} − {syms.ins[1]})"

    def source(self, out, ins, **attrs) -> str:
        return f"np.exp({ins[0]} - np.where(np.isneginf({ins[1]}), 0.0, {ins[1]}))"  # no visible key yet: 0

    def feeds(self, index, inputs, **attrs):
        return [broadcast_index(index, inputs[0].shape), row_stat(index, inputs[1])]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        s, m = (float(a[f]) for a, f in zip(inputs, self.feeds(index, inputs)))
        *_, i, j = index
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}, {j}] = exp({syms.ins[0]}[{i}, {j}] − "
                               f"{syms.ins[1]}[{i}])",
                               lines=[f"exp({num(s)} − {arg(m)}) = exp({num(s - m)}) = {num(output[index])}"])


@register
class TileSum(_Tile):
    """ℓ⁽ᵗ⁾ = α⁽ᵗ⁾·ℓ⁽ᵗ⁻¹⁾ + rowsum P̃⁽ᵗ⁾: the running denominator of the softmax."""

    kind = "tile_sum"
    stat = True
    default_note = ("The running sum: the old sum, rescaled to the new max, plus this tile's weights. After the "
                    "last tile it is the softmax's denominator Σ exp(s − m).")

    def formula(self, syms: Syms, **attrs) -> str:
        p = syms.ins[0]
        if len(syms.ins) == 1:
            return f"{syms.out} = rowsum({p})"
        return f"{syms.out} = {syms.ins[2]}·{syms.ins[1]} + rowsum({p})"

    def source(self, out, ins, **attrs) -> str:
        first = f"np.sum({ins[0]}, axis=-1, keepdims=True)"
        return first if len(ins) == 1 else f"{ins[2]} * {ins[1]} + {first}"

    def feeds(self, index, inputs, **attrs):
        p = inputs[0]
        return [lead_index(index, p.shape) + (index[-2], slice(None)), *(row_stat(index, a) for a in inputs[1:])]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        fs = self.feeds(index, inputs)
        row = inputs[0][fs[0]]
        i = index[-2]
        rows = [(j, float(x)) for j, x in enumerate(row)]
        lines = [f"rowsum({syms.ins[0]}[{i}]) = {num(row.sum())}"]
        if len(inputs) > 1:
            old, alpha = float(inputs[1][fs[1]]), float(inputs[2][fs[2]])
            lines.append(f"{num(alpha)}×{num(old)} + {num(row.sum())} = {num(output[index])}  (the old sum rescaled, "
                         "plus this tile's)")
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}]: the running sum of row {i}",
                               ("j", f"{syms.ins[0]}[{i}, j]"), rows, lines)


@register
class TileAcc(_Tile):
    """O⁽ᵗ⁾ = α⁽ᵗ⁾·O⁽ᵗ⁻¹⁾ + P̃⁽ᵗ⁾·V[start:stop]: the running weighted sum of the values."""

    kind = "tile_acc"
    default_note = ("The accumulator: the old weighted sum of values, rescaled to the new max, plus this tile's "
                    "weights times this tile's value rows. It is not yet divided by the sum.")

    def shape(self, p: Shape, v: Shape, *rest: Shape, start: int = 0, stop: int = 1, **attrs) -> Shape:
        return sr.matmul(p, tuple(v[:-2]) + (stop - start, v[-1]))

    def axes(self, p, v, *rest, **attrs):
        return tuple(p[:-1]) + (v[-1],)

    def formula(self, syms: Syms, start: int = 0, stop: int = 1, **attrs) -> str:
        p, v = syms.ins[:2]
        if len(syms.ins) == 2:
            return f"{syms.out} = {p}·{v}[{start}:{stop}]"
        return f"{syms.out} = {syms.ins[3]}·{syms.ins[2]} + {p}·{v}[{start}:{stop}]"

    def source(self, out, ins, start: int = 0, stop: int = 1, **attrs) -> str:
        first = f"{ins[0]} @ {ins[1]}[..., {start}:{stop}, :]"
        return first if len(ins) == 2 else f"{ins[3]} * {ins[2]} + {first}"

    def feeds(self, index, inputs, start: int = 0, stop: int = 1, **attrs):
        p, v = inputs[:2]
        out = [lead_index(index, p.shape) + (index[-2], slice(None)), lead_index(index, v.shape) + (slice(start, stop), index[-1])]
        if len(inputs) > 2:
            out += [lead_index(index, inputs[2].shape) + index[-2:], row_stat(index, inputs[3])]
        return out

    def explain(self, index, inputs, output, syms: Syms, start: int = 0, stop: int = 1, **attrs) -> CellExplanation:
        fs = self.feeds(index, inputs, start=start, stop=stop)
        row, col = inputs[0][fs[0]], inputs[1][fs[1]]
        *_, i, c = index
        prods = row * col
        rows = [(start + j, float(a), float(b), float(p)) for j, (a, b, p) in enumerate(zip(row, col, prods))]
        lines = [f"Σ {syms.ins[0]}·{syms.ins[1]} over this tile's keys = {num(prods.sum())}"]
        if len(inputs) > 2:
            old, alpha = float(inputs[2][fs[2]]), float(inputs[3][fs[3]])
            lines.append(f"{num(alpha)}×{arg(old)} + {arg(prods.sum())} = {num(output[index])}  (the old sum "
                         "rescaled, plus this tile's)")
        return CellExplanation(index, float(output[index]), f"{syms.out}[{i}, {c}]: the running weighted sum of "
                               f"value column {c} for query {i}",
                               ("key", f"{syms.ins[0]}[{i}, j]", f"{syms.ins[1]}[key, {c}]", "product"), rows, lines)
