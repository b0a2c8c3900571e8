"""The normalisation and MLP of the Llama and Gemma blocks: RMSNorm (``rms_norm``, Zhang & Sennrich 2019: no mean,
no bias; Gemma's scales by (1 + w), the attribute ``plus_one``), the SwiGLU gate (``swiglu``, Shazeer 2020, "GLU
Variants Improve Transformer": silu(gate) ⊙ up) and GeGLU (``geglu``, the same paper: gelu(gate) ⊙ up, with
GELU's tanh approximation as Gemma's ``gelu_pytorch_tanh``)."""

from __future__ import annotations

import math

from explain.core import shape_rules as sr
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


def _row(index):
    return tuple(index[:-1]), index[-1]


@register
class RMSNorm(Op):
    """RMSNorm over the last axis: x / √(mean(x²) + ε) · γ; with ``plus_one`` (Gemma) · (1 + w), the stored w
    starting at 0."""

    kind = "rms_norm"
    helpers = ("rms_norm",)
    default_note = ("RMSNorm divides each position's vector by its root mean square, then scales it by a learned "
                    "γ. Unlike layer norm it subtracts no mean and adds no bias: cheaper, and as good in practice.")

    @staticmethod
    def _gain(w: str, plus_one: bool) -> str:
        return f"(1 + {w})" if plus_one else w

    def shape(self, x, w, **attrs):
        return sr.broadcast(x, w)

    def signature(self, shapes, out, plus_one: bool = False, **attrs):
        w = "(1 + w)" if plus_one else "γ"
        return f"RMS{sr.fmt_shape(shapes[0])}, {w}{sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, plus_one: bool = False, **attrs) -> str:
        x, w = syms.ins
        return f"{syms.out} = {x} / √(mean({x}²) + ε) · {self._gain(w, plus_one)}  (each row)"

    def source(self, out, ins, eps: float = 1e-6, plus_one: bool = False, **attrs) -> str:
        w = f"(1.0 + {ins[1]})" if plus_one else ins[1]
        return f"rms_norm({ins[0]}, {w}, eps={float(eps)!r})"

    def feeds(self, index, inputs, **attrs):
        r, j = _row(index)
        return [r + (slice(None),), (j,)]  # the row, γ[j]

    def explain(self, index, inputs, output, syms: Syms, eps: float = 1e-6, plus_one: bool = False,
                **attrs) -> CellExplanation:
        x, w = inputs
        r, j = _row(index)
        row = x[r]
        ms = float((row * row).mean())
        rms = math.sqrt(ms + eps)
        last = (f"· (1 + w[{j}]) = {num(row[j] / rms)} × (1 + {arg(w[j])}) = {num(row[j] / rms)} × "
                f"{arg(1 + w[j])} = {num(output[index])}" if plus_one else
                f"· γ[{j}] = {num(row[j] / rms)} × {arg(w[j])} = {num(output[index])}")
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)}: divide row {idx(r)} of {syms.ins[0]} by its RMS, "
            "then scale", ("k", "x", "x²"), [(k, float(v), float(v * v)) for k, v in enumerate(row)],
            [f"mean(x²) = {num(ms)}  (no mean is subtracted, unlike layer norm)",
             f"RMS = √(mean(x²) + ε) = √({num(ms)} + {eps:g}) = {num(rms)}",
             f"x[{j}] / RMS = {num(row[j])} / {num(rms)} = {num(row[j] / rms)}", last]
            + (["the gain is 1 + w: w is stored around 0 (a w of 0 leaves the row as normalised)"] if plus_one else []))

    # -- backward: with r = 1/RMS and dx̂ = dy·γ, dx = r·(dx̂ − x·r²·mean(dx̂ ⊙ x)); γ sums over every position --
    vjp_helpers = ("rms_norm_backward", "rms_norm")
    vjp_note = ("RMSNorm's backward: every x of a row moves the row's RMS, so each gradient depends on the whole "
                "row, but there is no mean to go back through.")

    def vjp_formula(self, wrt, syms: Syms, plus_one: bool = False, **attrs) -> str:
        d, g, x, w = syms.out, syms.ins[0], syms.ins[1], syms.ins[2]
        if wrt == 0:  # as the drill-down names it
            return f"{d} = r·(dx̂ − {x}·r²·mean(dx̂ ⊙ {x})),  dx̂ = {g} ⊙ {self._gain(w, plus_one)},  r = 1/RMS"
        return f"{d} = Σ over positions of {g} ⊙ {x}/RMS"

    def vjp_source(self, wrt, g, ins, out, eps: float = 1e-6, plus_one: bool = False, **attrs) -> str:
        x, w = ins
        if wrt == 0:
            w = f"(1.0 + {w})" if plus_one else w
            return f"rms_norm_backward({g}, {x}, {w}, eps={float(eps)!r})"
        return (f"({g}.reshape(-1, {g}.shape[-1]) * rms_norm({x}, 1.0, eps={float(eps)!r})"
                f".reshape(-1, {x}.shape[-1])).sum(axis=0)")

    def vjp_row_axes(self, wrt, g_axes, in_axes, **attrs):
        return g_axes[:-1] if wrt else ()  # the gain's gradient sums over every position, as layer norm's

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        x = inputs[0]
        if wrt == 0:
            r, _ = _row(index)
            return [r, r, (slice(None),), None]
        column = (slice(None),) * (g.ndim - 1) + (index[0],)
        return [column, (slice(None),) * x.ndim, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, eps: float = 1e-6,
                    plus_one: bool = False, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        x, w = inputs
        w = 1.0 + w if plus_one else w  # the gain; ∂(1 + w)/∂w = 1, so w's own gradient is the gain's
        gs = syms.ins[0]
        rinv = 1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + eps)
        if wrt == 1:
            (j,) = index
            gcol = g.reshape(-1, g.shape[-1])[:, j]
            xcol = (x * rinv).reshape(-1, x.shape[-1])[:, j]
            rows = [(p, float(a), float(b), float(a * b)) for p, (a, b) in enumerate(zip(gcol, xcol))]
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: γ[{j}] multiplies x/RMS at "
                                   "every position", ("p", f"{gs}[p, {j}]", f"x̂[p, {j}]", "product"), rows,
                                   [f"sum of {len(rows)} products = {num(grad[index])}"])
        r, j = _row(index)
        row, ri, dxh = x[r], float(rinv[r][0]), g[r] * w
        m = float((dxh * row).mean())
        return CellExplanation(
            index, float(grad[index]), f"{syms.out}{idx(index)}: back through the scale and the division by RMS",
            ("k", "x", gs, f"dx̂ = {gs}·γ"), [(k, float(a), float(b), float(c)) for k, (a, b, c) in
                                             enumerate(zip(row, g[r], dxh))],
            [f"r = 1/RMS = {num(ri)}", f"mean(dx̂ ⊙ x) = {num(m)}  (every x moves the RMS)",
             f"r·(dx̂[{j}] − x[{j}]·r²·mean) = {num(ri)}×({num(dxh[j])} − {arg(row[j])}×{num(ri * ri)}×{arg(m)})"
             f" = {num(grad[index])}"])


@register
class SwiGLU(Op):
    """silu(gate) ⊙ up: the gated MLP's activation (Llama, Mistral, Qwen2)."""

    kind = "swiglu"
    helpers = ("swiglu",)
    vjp_helpers = ("swiglu_backward",)
    default_note = ("SwiGLU: silu of the gate (silu(g) = g·σ(g), a smooth ReLU) multiplies the up projection, "
                    "cell by cell. The gate decides how much of each up feature passes.")

    def shape(self, gate, up, **attrs):
        return sr.broadcast(gate, up)

    def signature(self, shapes, out, **attrs):
        return f"silu{sr.fmt_shape(shapes[0])} ⊙ {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        g, u = syms.ins
        return f"{syms.out} = silu({g}) ⊙ {u},  silu(z) = z·σ(z)"

    def source(self, out, ins, **attrs) -> str:
        return f"swiglu({ins[0]}, {ins[1]})"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        g, u = float(inputs[0][index]), float(inputs[1][index])
        s = 0.5 * (1 + math.tanh(0.5 * g))
        gs, us = syms.ins
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)} = silu({gs}{idx(index)}) · {us}{idx(index)}",
            ("input", "value"), [(f"gate {gs}{idx(index)}", g), (f"up {us}{idx(index)}", u)],
            [f"σ(g) = 1/(1 + e^(−g)) = 1/(1 + e^{arg(-g)}) = {num(s)}",
             f"silu(g) = g·σ(g) = {num(g)} × {num(s)} = {num(g * s)}",
             f"silu(g)·u = {num(g * s)} × {arg(u)} = {num(output[index])}"])

    # -- backward: ∂/∂up = silu(gate); ∂/∂gate = up·σ(g)·(1 + g·(1 − σ(g))) -------------------------------------
    vjp_note = "The gate's gradient goes through silu's slope; the up projection's is scaled by silu(gate)."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, gate, up = syms.out, syms.ins[0], syms.ins[1], syms.ins[2]
        if wrt == 1:
            return f"{d} = {g} ⊙ silu({gate})"
        return f"{d} = {g} ⊙ {up} ⊙ silu′({gate}),  silu′(z) = σ(z)·(1 + z·(1 − σ(z)))"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"swiglu_backward({g}, {ins[0]}, {ins[1]}, {int(wrt)})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, index, index if wrt == 0 else None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        gate, up, gi = float(inputs[0][index]), float(inputs[1][index]), float(g[index])
        s = 0.5 * (1 + math.tanh(0.5 * gate))
        if wrt == 1:
            lines = [f"silu(gate) = {num(gate)} × σ = {num(gate * s)}",
                     f"{num(gi)} × {arg(gate * s)} = {num(grad[index])}"]
        else:
            slope = s * (1 + gate * (1 - s))
            lines = [f"σ(gate) = {num(s)}", f"silu′(gate) = σ·(1 + g·(1 − σ)) = {num(slope)}",
                     f"{num(gi)} × up {arg(up)} × {arg(slope)} = {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=lines)


@register
class GeGLU(Op):
    """gelu(gate) ⊙ up, GELU's tanh approximation: the gated MLP's activation of Gemma."""

    kind = "geglu"
    helpers = ("gelu",)
    vjp_helpers = ("gelu", "gelu_backward")
    default_note = ("GeGLU: GELU of the gate multiplies the up projection, cell by cell. GELU (tanh approximation, "
                    "as GPT-2's) passes large positive gates almost unchanged and closes near zero for negative "
                    "ones.")

    def shape(self, gate, up, **attrs):
        return sr.broadcast(gate, up)

    def signature(self, shapes, out, **attrs):
        return f"gelu{sr.fmt_shape(shapes[0])} ⊙ {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        g, u = syms.ins
        return f"{syms.out} = gelu({g}) ⊙ {u},  gelu(z) = ½z(1 + tanh(√(2/π)(z + 0.044715z³)))"

    def source(self, out, ins, **attrs) -> str:
        return f"gelu({ins[0]}) * {ins[1]}"

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        g, u = float(inputs[0][index]), float(inputs[1][index])
        inner = math.sqrt(2 / math.pi) * (g + 0.044715 * g ** 3)
        t = math.tanh(inner)
        act = 0.5 * g * (1 + t)
        gs, us = syms.ins
        return CellExplanation(
            index, float(output[index]), f"{syms.out}{idx(index)} = gelu({gs}{idx(index)}) · {us}{idx(index)}",
            ("input", "value"), [(f"gate {gs}{idx(index)}", g), (f"up {us}{idx(index)}", u)],
            [f"u = √(2/π)·(g + 0.044715·g³) = {num(inner)}",
             f"gelu(g) = ½·g·(1 + tanh u) = 0.5 × {num(g)} × (1 + {arg(t)}) = {num(act)}",
             f"gelu(g)·u = {num(act)} × {arg(u)} = {num(output[index])}"])

    # -- backward: ∂/∂up = gelu(gate); ∂/∂gate = up·gelu′(gate) ------------------------------------------------
    vjp_note = "The gate's gradient goes through GELU's slope; the up projection's is scaled by gelu(gate)."

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, gate, up = syms.out, syms.ins[0], syms.ins[1], syms.ins[2]
        if wrt == 1:
            return f"{d} = {g} ⊙ gelu({gate})"
        return f"{d} = {g} ⊙ {up} ⊙ gelu′({gate})"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        if wrt == 1:
            return f"{g} * gelu({ins[0]})"
        return f"gelu_backward({g} * {ins[1]}, {ins[0]})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, index, index if wrt == 0 else None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        gate, up, gi = float(inputs[0][index]), float(inputs[1][index]), float(g[index])
        c = math.sqrt(2 / math.pi)
        t = math.tanh(c * (gate + 0.044715 * gate ** 3))
        if wrt == 1:
            act = 0.5 * gate * (1 + t)
            lines = [f"gelu(gate) = {num(act)}", f"{num(gi)} × {arg(act)} = {num(grad[index])}"]
        else:
            slope = 0.5 * (1 + t) + 0.5 * gate * (1 - t * t) * c * (1 + 3 * 0.044715 * gate ** 2)
            lines = [f"gelu′(gate) = ½(1 + tanh u) + ½·g·(1 − tanh²u)·u′ = {num(slope)}",
                     f"{num(gi)} × up {arg(up)} × {arg(slope)} = {num(grad[index])}"]
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}", lines=lines)
