"""The experts of a mixture of experts and what mixes them: each expert's linear layers and SwiGLU at the positions
routed to it (``expert_linear``, ``expert_swiglu``) and the weighted sum of the experts' outputs (``expert_sum``).

An expert's steps hold every position (shape (…, E, T, d): one (T, d) slice per expert, as the heads of attention),
so their shapes never depend on the data; the rows of the positions an expert did not take are 0, not computed,
and its drill-down says which experts took that position. The router is :mod:`explain.ops.routing`."""

from __future__ import annotations

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register
from explain.ops.gated import SwiGLU
from explain.ops.products import dot_explanation, products_line


def _took(choice, lead: tuple, t: int) -> list[int]:
    """The experts position t went to (choice (…, T, E))."""
    return [int(e) for e in (choice[lead + (t,)] > 0).nonzero()[0]]


def _untouched_zeros(shape: tuple[int, ...]):
    """A zeroed float64 array whose pages cost nothing until written. numpy asks for transparent huge pages for
    arrays of 4 MiB or more, so the first row written into one zeroes a whole 2 MiB page; an expert writes its few
    taken rows all over its (T, f) slab, so every page of the step got zeroed, E/k times the rows computed (issue 43,
    bench_moe: most of expert_linear's time). An anonymous mmap asks for nothing: only the taken rows' pages are
    backed. The values are np.zeros' (an export's script, which calls the kernels plainly, gets the same)."""
    import mmap  # lazy: a numeric run of an expert's step only
    from math import prod  # lazy: as mmap

    import numpy as np  # lazy: numpy off the shape path

    size = prod(shape) * np.dtype(np.float64).itemsize
    return np.frombuffer(mmap.mmap(-1, size), dtype=np.float64).reshape(shape) if size else np.zeros(shape)


def _experts(es: list[int]) -> str:
    return ("expert " if len(es) == 1 else "experts ") + ", ".join(map(str, es)) if es else "no expert"


@register
class ExpertLinear(Op):
    """x·W[e] at the positions routed to expert e, for every expert: x (…, T, d) shared by the experts or
    (…, E, T, d) one per expert, W (E, d, d_out), the router's choice (…, T, E) → (…, E, T, d_out)."""

    kind = "expert_linear"
    join = " · "
    helpers = ("expert_linear",)
    vjp_helpers = ("expert_linear_backward",)
    differentiable = (0, 1)  # not the choice: choosing is not differentiable
    skips = True  # a row an expert did not take reads nothing
    routed = True  # its rows are positions, one (T, d_out) slice per expert; its last input is the choice
    default_note = ("Every expert has its own weights; an expert computes only the positions the router sent to "
                    "it. The other rows are 0 (greyed): those tokens did not go to this expert.")

    def shape(self, x, w, choice, **attrs):
        if len(w) != 3:
            raise ShapeError(f"expert weights must be (experts, d_in, d_out), got {sr.fmt_shape(w)}")
        per_expert = len(x) == len(choice) + 1
        if x[-1] != w[1] or choice[-1] != w[0] or (per_expert and x[-3] != w[0]):
            raise ShapeError(f"expert layer: {sr.fmt_shape(x)} · {sr.fmt_shape(w)} with the choice "
                             f"{sr.fmt_shape(choice)} do not fit (input width {x[-1]}, experts {choice[-1]})")
        return tuple(choice[:-2]) + (w[0], choice[-2], w[2])

    def axes(self, x, w, choice, **attrs):
        return choice[:-2] + ("expert", choice[-2], w[-1])

    def compute(self, x, w, choice, **attrs):
        from explain.ops.kernels import expert_linear  # lazy: numpy off the shape path

        return expert_linear(x, w, choice, out=_untouched_zeros(self.shape(x.shape, w.shape, choice.shape)))

    def signature(self, shapes, out, **attrs):
        x, w, c = shapes
        return f"{sr.fmt_shape(x)} · {sr.fmt_shape(w)} where {sr.fmt_shape(c)} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        x, w, c = syms.ins
        return f"{syms.out}ₑ = {x}·{w}ₑ at the positions {c} sends to expert e, else 0  (for each expert e)"

    def source(self, out, ins, **attrs) -> str:
        return f"expert_linear({ins[0]}, {ins[1]}, {ins[2]})"

    def _row(self, x, lead, e, t):
        return (lead + (t, slice(None))) if x.ndim == len(lead) + 2 else (lead + (e, t, slice(None)))

    def feeds(self, index, inputs, **attrs):
        x, w, choice = inputs
        *lead, e, t, j = index
        lead = tuple(lead)
        cell = lead + (t, e)
        if choice[cell] <= 0:
            return [None, None, cell]
        return [self._row(x, lead, e, t), (e, slice(None), j), cell]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        x, w, choice = inputs
        x_sym, w_sym, c_sym = syms.ins
        *lead, e, t, j = index
        lead = tuple(lead)
        took = _took(choice, lead, t)
        if e not in took:
            return CellExplanation(index, 0.0, f"{syms.out}{idx(index)} = 0: position {t} did not go to expert {e}",
                                   lines=[f"{c_sym}{idx(lead + (t, e))} = 0: the router sent position {t} to "
                                          f"{_experts(took)}, so expert {e} does not compute it (its weight is 0)",
                                          f"{syms.out}{idx(index)} = 0"])
        fx, fw, _ = self.feeds(index, inputs)
        cols, rows, total = dot_explanation(x[fx], w[fw], f"{x_sym}[{t}, k]", f"{w_sym}[{e}][k, {j}]")
        return CellExplanation(index, float(output[index]),
                               f"expert {e}: {syms.out}{idx(index)} = row {t} of {x_sym} · column {j} of {w_sym}[{e}]",
                               cols, rows, [f"position {t} went to {_experts(took)}",
                                            f"sum of {len(rows)} products = {num(total)}"])

    # -- backward: as a linear layer's, row by row, at the taken rows only ------------------------------------
    vjp_note = ("An expert passes gradient back only through the positions it took: the others never reached "
                "it. Its weights' gradient sums over those positions alone.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, x, w = syms.out, syms.ins[0], syms.ins[1], syms.ins[2]
        if wrt == 0:
            return f"{d} = Σₑ {g}ₑ·{w}ₑᵀ at the rows expert e took"
        return f"{d}ₑ = {x}ᵀ·{g}ₑ over the positions expert e took"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        return f"expert_linear_backward({g}, {ins[0]}, {ins[1]}, {ins[2]}, {int(wrt)})"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        x, w, choice = inputs
        every = slice(None)
        shared = x.ndim == choice.ndim
        if wrt == 0:
            if shared:  # dx[…, t, k] = Σₑ Σⱼ g[…, e, t, j]·W[e, k, j]
                *lead, t, k = index
                return [tuple(lead) + (every, t, every), None, (every, k, every), tuple(lead) + (t, every), None]
            *lead, e, t, k = index
            return [tuple(lead) + (e, t, every), None, (e, k, every), tuple(lead) + (t, e), None]
        e, k, j = index  # dW[e, k, j] = Σ over the positions p e took of x[p, k]·g[e, p, j]
        lead = (every,) * (g.ndim - 3)
        xcol = lead + ((every, k) if shared else (e, every, k))
        return [lead + (e, every, j), xcol, None, lead + (every, e), None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        x, w, choice = inputs
        gs, x_sym, w_sym = syms.ins[0], syms.ins[1], syms.ins[2]
        taken = np.moveaxis(choice, -1, -2) > 0  # (…, E, T)
        if wrt == 0:
            shared = x.ndim == choice.ndim
            *lead, t, k = index if shared else index[:-3] + index[-2:]
            experts = range(w.shape[0]) if shared else [index[-3]]
            rows = [(f"{e}, {j}", float(g[tuple(lead) + (e, t, j)]), float(w[e, k, j]),
                     float(g[tuple(lead) + (e, t, j)] * w[e, k, j]))
                    for e in experts if taken[tuple(lead) + (e, t)] for j in range(w.shape[2])]
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: back through the experts "
                                   f"that took position {t}", ("expert, j", f"{gs}[e, {t}, j]", f"{w_sym}[e][{k}, j]",
                                                               "product"), rows,
                                   [f"sum of {len(rows)} products = {num(grad[index])}" if rows else
                                    f"no expert took position {t} here: 0"])
        e, k, j = index
        xs = x if x.ndim == choice.ndim else x[..., e, :, :]
        rows_taken = taken[..., e, :]
        a_col, g_col = xs[rows_taken][:, k], g[..., e, :, :][rows_taken][:, j]
        cols, rows, total = dot_explanation(a_col, g_col, f"{x_sym}[p, {k}]", f"{gs}[{e}][p, {j}]", "p")
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: over the {len(rows)} positions "
                               f"expert {e} took", cols, rows,
                               [f"sum of {len(rows)} products = {num(total)}" if rows else
                                f"expert {e} took no position: 0"])


@register
class ExpertSwiGLU(SwiGLU):
    """silu(gate) ⊙ up in the rows each expert took (gate, up (…, E, T, f); the router's choice (…, T, E)); 0 in
    the others. Its backward is SwiGLU's: the rows not taken hold 0 and receive 0."""

    kind = "expert_swiglu"
    helpers = ("expert_swiglu",)
    differentiable = (0, 1)
    skips = True
    routed = True
    default_note = ("SwiGLU, expert by expert: silu(G) ⊙ U in the rows of the positions routed to each expert; the "
                    "other rows stay 0 (greyed).")

    def shape(self, gate, up, choice, **attrs):
        return sr.broadcast(gate, up)

    def compute(self, gate, up, choice, **attrs):
        from explain.ops.kernels import expert_swiglu  # lazy: numpy off the shape path

        return expert_swiglu(gate, up, choice, out=_untouched_zeros(self.shape(gate.shape, up.shape, choice.shape)))

    def signature(self, shapes, out, **attrs):
        return f"silu{sr.fmt_shape(shapes[0])} ⊙ {sr.fmt_shape(shapes[1])} where {sr.fmt_shape(shapes[2])} → " \
            f"{sr.fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        g, u, c = syms.ins
        return f"{syms.out}ₑ = silu({g}ₑ) ⊙ {u}ₑ at the positions {c} sends to expert e, else 0"

    def source(self, out, ins, **attrs) -> str:
        return f"expert_swiglu({ins[0]}, {ins[1]}, {ins[2]})"

    def feeds(self, index, inputs, **attrs):
        *lead, e, t, _ = index
        cell = tuple(lead) + (t, e)
        return [index, index, cell] if inputs[2][cell] > 0 else [None, None, cell]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        *lead, e, t, _ = index
        took = _took(inputs[2], tuple(lead), t)
        if e not in took:
            return CellExplanation(index, 0.0, f"{syms.out}{idx(index)} = 0: position {t} did not go to expert {e}",
                                   lines=[f"the router sent position {t} to {_experts(took)}", f"{syms.out}{idx(index)} = 0"])
        ex = super().explain(index, inputs[:2], output, Syms(syms.out, syms.ins[:2]))
        ex.title = f"expert {e}: {ex.title}"
        return ex

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        return [index, index, index if wrt == 0 else None, None, None]


@register
class ExpertSum(Op):
    """Σₑ weight[…, t, e]·out[…, e, t, :]: the experts' outputs mixed by the router's kept weights."""

    kind = "expert_sum"
    helpers = ("expert_sum",)
    default_note = ("The mixture: each position adds up its experts' outputs, each times the weight the router "
                    "gave it. The experts it did not go to weigh 0.")

    def shape(self, w, outs, **attrs):
        if len(outs) != len(w) + 1 or outs[-3] != w[-1] or outs[-2] != w[-2]:
            raise ShapeError(f"the mixture needs weights (…, T, E) and outputs (…, E, T, d), got "
                             f"{sr.fmt_shape(w)} and {sr.fmt_shape(outs)}")
        return tuple(w[:-1]) + (outs[-1],)

    def axes(self, w, outs, **attrs):
        return w[:-1] + (outs[-1],)

    def signature(self, shapes, out, **attrs):
        return f"Σₑ {sr.fmt_shape(shapes[0])} ⊙ {sr.fmt_shape(shapes[1])} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, **attrs) -> str:
        w, o = syms.ins
        return f"{syms.out}[t] = Σₑ {w}[t, e]·{o}ₑ[t]"

    def source(self, out, ins, **attrs) -> str:
        return f"expert_sum({ins[0]}, {ins[1]})"

    def feeds(self, index, inputs, **attrs):
        *lead, t, j = index
        return [tuple(lead) + (t, slice(None)), tuple(lead) + (slice(None), t, j)]

    def explain(self, index, inputs, output, syms: Syms, **attrs) -> CellExplanation:
        w, outs = inputs
        w_sym, o_sym = syms.ins
        *lead, t, j = index
        lead = tuple(lead)
        weights, values = w[lead + (t,)], outs[lead + (slice(None), t, j)]
        rows = [(e, float(weights[e]), float(values[e]), float(weights[e] * values[e]))
                for e in range(len(weights)) if weights[e] != 0]
        lines = [f"{products_line(rows)} = {num(output[index])}" if rows else "no expert has a weight here: 0"]
        rest = len(weights) - len(rows)
        if rest:
            lines.insert(0, f"the other {rest} expert{'s' if rest > 1 else ''} weigh 0 at position {t}")
        return CellExplanation(index, float(output[index]),
                               f"{syms.out}{idx(index)} = Σₑ weight × expert output, at position {t}",
                               ("expert", f"{w_sym}[{t}, e]", f"{o_sym}ₑ[{t}, {j}]", "product"), rows, lines)

    # -- backward: ∂/∂weight[t, e] = out_e[t]·g[t]; ∂/∂out_e[t] = weight[t, e]·g[t] ------------------------------
    vjp_note = ("Each expert's output gets the gradient times its weight; each weight gets the gradient's dot "
                "product with its expert's output.")

    def vjp_formula(self, wrt, syms: Syms, **attrs) -> str:
        d, g, w, o = syms.out, syms.ins[0], syms.ins[1], syms.ins[2]
        return f"{d}[t, e] = {g}[t]·{o}ₑ[t]" if wrt == 0 else f"{d}ₑ[t] = {w}[t, e]·{g}[t]"

    def vjp_source(self, wrt, g, ins, out, **attrs) -> str:
        if wrt == 0:
            return f"np.moveaxis(({g}[..., None, :, :] * {ins[1]}).sum(axis=-1), -2, -1)"
        return f"np.moveaxis({ins[0]}, -1, -2)[..., None] * {g}[..., None, :, :]"

    def vjp_feeds(self, wrt, index, g, inputs, output, **attrs):
        # where the expert did not take the position (its output row 0, its weight 0) the gradient is 0 for that
        # reason alone: the zero is what the cell reads, not the gradient it multiplies
        w, outs = inputs
        every = slice(None)
        if wrt == 0:
            *lead, t, e = index
            row = tuple(lead) + (e, t, every)
            return [tuple(lead) + (t, every) if outs[row].any() else None, None, row, None]
        *lead, e, t, j = index
        weight = tuple(lead) + (t, e)
        return [tuple(lead) + (t, j) if w[weight] != 0 else None, weight, None, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, **attrs) -> CellExplanation:
        w, outs = inputs
        gs = syms.ins[0]
        if wrt == 0:
            *lead, t, e = index
            lead = tuple(lead)
            cols, rows, total = dot_explanation(g[lead + (t,)], outs[lead + (e, t)], f"{gs}[{t}, j]",
                                                 f"{syms.ins[2]}{e}[{t}, j]", "j")
            return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)}: the gradient · expert {e}'s "
                                   f"output at position {t}", cols, rows, [f"sum of {len(rows)} products = {num(total)}"])
        *lead, e, t, j = index
        lead = tuple(lead)
        a, b = float(w[lead + (t, e)]), float(g[lead + (t, j)])
        return CellExplanation(index, float(grad[index]), f"{syms.out}{idx(index)} = weight × gradient",
                               lines=[f"{num(a)} × {arg(b)} = {num(grad[index])}"])
