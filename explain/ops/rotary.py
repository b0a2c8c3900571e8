"""The attention pieces of the Llama block: rotary position embeddings (``rope``, Su et al. 2021, "RoFormer"; in
Hugging Face's layout dimension i pairs with i + d/2, in the interleaved one of Meta's original code, GPT-J and
DeepSeek dimension 2i pairs with 2i + 1: the ``layout`` attribute) and the key/value heads shared by groups of query
heads (``repeat_kv``, Ainslie et al. 2023, "GQA"; ``repeat_kv`` in transformers' modeling_llama.py)."""

from __future__ import annotations

import math
from typing import NamedTuple

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


class _Cell(NamedTuple):
    """Where one cell of a rotated row sits: its pair k, partner dimension j (i ± d/2, or i ± 1 interleaved),
    whether it is the first of the pair, its position p, the row it is in, the pair's frequency θ^(−2k/d), the
    angle and its cos, sin."""

    i: int
    k: int
    j: int
    first: bool
    p: int
    row: tuple[int, ...]
    inv: float
    ang: float
    c: float
    s: float


INTERLEAVED, HALF = "interleaved", "half"  # the two layouts: pairs (2i, 2i + 1), or (i, i + d/2)
LAYOUTS = (HALF, INTERLEAVED)


def _cell(index: tuple[int, ...], d: int, theta: float, start: int, layout: str = HALF) -> _Cell:
    """The pair, position and angle of cell ``index`` of rows of width ``d`` (the first row at ``start``)."""
    *lead, t, i = index
    half = d // 2
    if layout == INTERLEAVED:
        k, j, first = i // 2, i + 1 if i % 2 == 0 else i - 1, i % 2 == 0
    else:
        k, j, first = (i, i + half, True) if i < half else (i - half, i - half, False)
    p = start + t
    inv = 1.0 / theta ** (2 * k / d)
    ang = p * inv
    return _Cell(i, k, j, first, p, (*lead, t), inv, ang, math.cos(ang), math.sin(ang))


@register
class Rope(Op):
    """Rotary position embedding: each pair (x[i], x[i + d/2]) of a query or key row at position p turns by the
    angle p·θ^(−2i/d), so q·k of two rotated rows depends on their positions only through the distance. With
    ``layout="interleaved"`` the pairs are (x[2i], x[2i + 1]), turned in place."""

    kind = "rope"
    helpers = ("rope",)
    vjp_helpers = ("rope",)
    default_note = ("Rotary position embedding: every pair of dimensions (i, i + d/2) is turned by an angle that "
                    "grows with the position. Rotating both queries and keys makes their dot product depend on "
                    "how far apart they are, not where they are.")
    vjp_note = "A rotation's backward is the rotation back: the gradient turns by the same angle the other way."

    def shape(self, x, theta: float = 10000.0, start: int = 0, layout: str = HALF, **attrs):
        if x[-1] % 2:
            raise ShapeError(f"rotary embeddings turn pairs of dimensions: the head width {x[-1]} must be even")
        if layout not in LAYOUTS:
            raise ShapeError(f"rotary layout {layout!r} is not one of {', '.join(LAYOUTS)}")
        return tuple(x)

    def formula(self, syms: Syms, layout: str = HALF, **attrs) -> str:
        x = syms.ins[0]
        pair = f"({x}[2i], {x}[2i+1])" if layout == INTERLEAVED else f"({x}[i], {x}[i+d/2])"
        return f"{syms.out} = RoPE({x}):  {pair} at position p turned by p·θ^(−2i/d)"

    def source(self, out, ins, theta: float = 10000.0, start: int = 0, layout: str = HALF, **attrs) -> str:
        tail = ", interleaved=True" if layout == INTERLEAVED else ""
        return f"rope({ins[0]}, {float(theta)!r}, start={int(start)}{tail})"

    def feeds(self, index, inputs, **attrs):
        return [tuple(index[:-1]) + (slice(None),)]  # the row: the cell and its partner

    def explain(self, index, inputs, output, syms: Syms, theta: float = 10000.0, start: int = 0,
                layout: str = HALF, **attrs) -> CellExplanation:
        x = inputs[0]
        d = x.shape[-1]
        i, k, j, first, p, row, inv, ang, c, s = _cell(index, d, theta, start, layout)
        xi, xj = float(x[row + (i,)]), float(x[row + (j,)])
        xs = syms.ins[0]
        if first:  # x′[i] = x[i]·cos − x[i+d/2]·sin
            rows = [(f"{xs}[{i}]·cos", xi, c, xi * c), (f"−{xs}[{j}]·sin", xj, -s, -xj * s)]
            rule = f"{xs}[{i}]·cos − {xs}[{j}]·sin = {num(xi)}×{arg(c)} − {arg(xj)}×{arg(s)}"
        else:  # x′[i+d/2] = x[i+d/2]·cos + x[i]·sin
            rows = [(f"{xs}[{i}]·cos", xi, c, xi * c), (f"{xs}[{j}]·sin", xj, s, xj * s)]
            rule = f"{xs}[{i}]·cos + {xs}[{j}]·sin = {num(xi)}×{arg(c)} + {arg(xj)}×{arg(s)}"
        lo, hi = (i, j) if first else (j, i)
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)}: pair {k} = dimensions ({lo}, {hi}) at position {p}",
            ("term", "x", "factor", "product"), rows,
            [f"interleaved: dimension 2k pairs with 2k + 1 ({lo} with {hi})" if layout == INTERLEAVED
             else f"rotate-half: dimension i pairs with i + d/2 = i + {d // 2}",
             f"frequency θ^(−2·{k}/{d}) = {theta:g}^(−{num(2 * k / d)}) = {num(inv)}",
             f"angle = position × frequency = {p} × {num(inv)} = {num(ang)} rad",
             f"cos = {num(c)}, sin = {num(s)}",
             f"{rule} = {num(output[index])}"])

    # -- backward: the rotation is orthogonal, so its transpose (turning back by the same angle) is its VJP ----
    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        return f"{syms.out} = RoPE⁻¹({syms.ins[0]}):  each pair turned back by −p·θ^(−2i/d)"

    def vjp_source(self, wrt, g, ins, out, theta: float = 10000.0, start: int = 0, layout: str = HALF,
                   **attrs) -> str:
        tail = ", interleaved=True" if layout == INTERLEAVED else ""
        return f"rope({g}, {float(theta)!r}, start={int(start)}, sign=-1.0{tail})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [tuple(index[:-1]) + (slice(None),), None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, theta: float = 10000.0, start: int = 0,
                    layout: str = HALF, **attrs) -> CellExplanation:
        d = g.shape[-1]
        i, k, j, first, p, row, _, ang, c, s = _cell(index, d, theta, start, layout)
        gi, gj = float(g[row + (i,)]), float(g[row + (j,)])
        sign = "+" if first else "−"
        return CellExplanation(
            index, float(grad[index]), f"{syms.out}{idx(index)}: pair {k} at position {p}, turned back",
            lines=[f"angle = {num(ang)} rad: cos = {num(c)}, sin = {num(s)}",
                   f"{syms.ins[0]}[{i}]·cos {sign} {syms.ins[0]}[{j}]·sin = {num(gi)}×{arg(c)} {sign} "
                   f"{arg(gj)}×{arg(s)} = {num(grad[index])}"])


@register
class RepeatKV(Op):
    """Grouped-query attention's shared heads: key/value head g serves query heads g·n … g·n + n − 1, so the
    (…, kv_heads, T, d) keys are repeated n times along the head axis to meet the queries' heads."""

    kind = "repeat_kv"
    default_note = ("Grouped-query attention: several query heads share one key/value head. Each key/value head is "
                    "repeated for the query heads of its group, so head h reads key/value head h // group.")

    def shape(self, x, n: int = 1, **attrs):
        if len(x) < 3:
            raise ShapeError(f"repeat_kv needs (…, heads, T, d), got {sr.fmt_shape(x)}")
        return tuple(x[:-3]) + (x[-3] * n,) + tuple(x[-2:])

    def formula(self, syms: Syms, n: int = 1, **attrs) -> str:
        return f"{syms.out}[h] = {syms.ins[0]}[h // {n}]   (query head h reads key/value head h // {n})"

    def source(self, out, ins, n: int = 1, **attrs) -> str:
        return f"np.repeat({ins[0]}, {int(n)}, axis=-3)"

    def stored_values(self, out, shapes, **attrs) -> int:
        return math.prod(out)

    def feeds(self, index, inputs, n: int = 1, **attrs):
        *lead, h, t, j = index
        return [tuple(lead) + (h // n, t, j)]

    def explain(self, index, inputs, output, syms: Syms, n: int = 1, **attrs) -> CellExplanation:
        *lead, h, t, j = index
        kv = h // n
        return CellExplanation(
            index, float(output[index]), f"query head {h} reads key/value head {kv}",
            lines=[f"{n} query heads share each key/value head ({inputs[0].shape[-3]} key/value head(s) for "
                   f"{output.shape[-3]} query heads)",
                   f"head {h} // {n} = {kv}: key/value head {kv} serves query heads {kv * n}–{kv * n + n - 1}",
                   f"{syms.out}{idx(index)} = {syms.ins[0]}{idx(tuple(lead) + (kv, t, j))} = {num(output[index])}"])

    # -- backward: a shared head gets the sum of the gradients of every query head that read it --------------
    vjp_note = "A key/value head shared by n query heads receives the sum of their n gradients."

    def vjp_formula(self, wrt, syms: Syms, n: int = 1, **attrs) -> str:
        return f"{syms.out}[g] = Σ over the {n} query heads h with h // {n} = g of {syms.ins[0]}[h]"

    def vjp_source(self, wrt, g, ins, out, n: int = 1, **attrs) -> str:
        return f"{g}.reshape({g}.shape[:-3] + (-1, {int(n)}) + {g}.shape[-2:]).sum(axis=-3)"

    def vjp_feeds(self, wrt, index, g, inputs, output, n: int = 1, **attrs):
        *lead, kv, t, j = index
        return [tuple(lead) + (slice(kv * n, kv * n + n), t, j), None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, n: int = 1, **attrs) -> CellExplanation:
        *lead, kv, t, j = index
        rows = [(h, float(g[tuple(lead) + (h, t, j)])) for h in range(kv * n, kv * n + n)]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: key/value head {kv} was read by "
                               f"query heads {kv * n}–{kv * n + n - 1}", ("query head", "gradient"), rows,
                               [f"sum of {n} gradients = {num(grad[index])}"])
