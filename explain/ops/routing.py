"""The router of a mixture of experts: the choice (``route``: which k experts each position goes to) and the weights
of the chosen ones (``keep``). Four conventions meet here (Mixtral; Qwen3-MoE and OLMoE; Qwen2-MoE; DeepSeek-V3):

- softmax scores, the top k kept and renormalised (Mixtral; ``norm_topk_prob`` in Qwen3-MoE and OLMoE), which is
  a softmax over the top k logits: one step, whose drill-down says both;
- softmax scores kept as they are (Qwen2-MoE: ``norm_topk_prob`` off);
- sigmoid scores, a per-expert bias added for choosing only, experts in groups of which the best are kept first,
  the chosen scores renormalised and scaled (DeepSeek-V3).

The choice is a 0/1 tensor (…, T, E), so its shape never depends on the data; a tie goes to the lower expert
index. Choosing has no gradient: the weights carry it, through ``keep``. The experts are :mod:`explain.ops.experts`."""

from __future__ import annotations

from typing import Any

from explain.core import shape_rules as sr
from explain.core.errors import ShapeError
from explain.ops.base import CellExplanation, Op, Syms, arg, idx, num, register


def _allowed(c: Any, n_group: int, topk_group: int) -> tuple[Any, Any, Any]:
    """For one position's choosing scores c (E,): the experts of the kept groups (bool E), the groups' scores and
    which groups are kept; without groups every expert is allowed."""
    import numpy as np  # lazy: numpy off the shape path

    if n_group <= 1:
        return np.ones(len(c), bool), None, None
    size = len(c) // n_group
    groups = np.sort(c.reshape(n_group, size), axis=-1)[:, -2:].sum(-1)
    kept = np.zeros(n_group, bool)
    kept[np.argsort(-groups, kind="stable")[:topk_group]] = True
    return np.repeat(kept, size), groups, kept


def order_of(c: Any, allowed: Any) -> list[int]:
    """The allowed experts from the best choosing score down, a tie going to the lower index."""
    import numpy as np  # lazy: numpy off the shape path

    return [int(i) for i in np.argsort(-np.where(allowed, c, -np.inf), kind="stable")[: int(allowed.sum())]]


def _ranks(c: Any, allowed: Any) -> list[int]:
    """Each expert's rank (1 = best) among the allowed ones; 0 for one in a dropped group."""
    rank = [0] * len(c)
    for r, e in enumerate(order_of(c, allowed)):
        rank[e] = r + 1
    return rank


def _list(es: list[int]) -> str:
    return ", ".join(map(str, es))


@register
class Route(Op):
    """The choice: 1 for the k experts with the largest choosing scores (scores + the choosing bias, when given),
    among the experts of the ``topk_group`` best of ``n_group`` groups; 0 for the others."""

    kind = "route"
    helpers = ("route",)
    differentiable = ()  # a choice: no gradient flows through it (nor to the choosing bias)
    default_note = ("The choice: each position goes to the k experts its router scores highest (a tie goes to the "
                    "lower expert index). 1 = taken, 0 = not.")

    def shape(self, scores, bias=None, k: int = 2, **attrs):
        if bias is not None and tuple(bias) != tuple(scores[-1:]):
            raise ShapeError(f"the choosing bias must be one number per expert, {sr.fmt_shape(scores[-1:])}, got "
                             f"{sr.fmt_shape(bias)}")
        return tuple(scores)

    def signature(self, shapes, out, k: int = 2, **attrs):
        ins = " + ".join(sr.fmt_shape(s) for s in shapes)
        return f"top {k} of {ins} → {sr.fmt_shape(out)}"

    def formula(self, syms: Syms, k: int = 2, n_group: int = 1, topk_group: int = 1, **attrs) -> str:
        ranked = f"{syms.ins[0]} + {syms.ins[1]}" if len(syms.ins) > 1 else syms.ins[0]
        groups = f", in the best {topk_group} of {n_group} groups" if n_group > 1 else ""
        return f"{syms.out}[t, e] = 1 if e is among the top {k} of {ranked}[t]{groups}, else 0"

    def source(self, out, ins, k: int = 2, n_group: int = 1, topk_group: int = 1, **attrs) -> str:
        ranked = f"{ins[0]} + {ins[1]}" if len(ins) > 1 else ins[0]
        groups = f", n_group={int(n_group)}, topk_group={int(topk_group)}" if n_group > 1 else ""
        return f"route({ranked}, {int(k)}{groups})"

    def feeds(self, index, inputs, **attrs):
        return [tuple(index[:-1]) + (slice(None),)] + [(slice(None),)] * (len(inputs) - 1)

    def explain(self, index, inputs, output, syms: Syms, k: int = 2, n_group: int = 1, topk_group: int = 1,
                **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        *lead, e = index
        lead = tuple(lead)
        t = lead[-1] if lead else 0
        s = np.asarray(inputs[0][lead], dtype=float)
        bias = np.asarray(inputs[1], dtype=float) if len(inputs) > 1 else None
        c = s + bias if bias is not None else s
        allowed, groups, kept = _allowed(c, n_group, topk_group)
        rank = _ranks(c, allowed)
        chosen = [int(i) for i in np.nonzero(output[lead] > 0)[0]]
        taken = e in chosen
        columns = ("expert", syms.ins[0]) + ((syms.ins[1], "choosing") if bias is not None else ()) + \
            (("group",) if groups is not None else ()) + ("rank",)
        rows = [(i, float(s[i])) + ((float(bias[i]), float(c[i])) if bias is not None else ()) +
                ((f"{i // (len(c) // n_group)}{'' if allowed[i] else ' ✗'}",) if groups is not None else ()) +
                (rank[i] or "—",) for i in range(len(c))]
        order = sorted(range(len(c)), key=lambda i: (rank[i] == 0, rank[i]))
        focus = tuple(dict.fromkeys([e] + order[: k + 1]))
        lines: list[str] = []
        if groups is not None:
            g, size = e // (len(c) // n_group), len(c) // n_group
            shown = ", ".join(f"{i}: {num(v)}" for i, v in enumerate(groups))
            lines.append(f"groups of {size} experts, each scored by the sum of its 2 best choosing scores ({shown}); "
                         f"the best {topk_group} of {n_group} are kept: groups {_list(list(np.nonzero(kept)[0]))}")
            if not kept[g]:
                lines.append(f"expert {e} is in group {g}, which was dropped: it cannot be chosen, whatever its score")
        if bias is not None:
            lines.append(f"choosing score of expert {e}: {num(s[e])} + bias {arg(bias[e])} = {num(c[e])} (the bias is "
                         "for choosing only: the weight uses the score without it)")
            plain = np.zeros(len(c))
            plain_allowed = _allowed(s, n_group, topk_group)[0]
            plain[order_of(s, plain_allowed)[:k]] = 1
            if (plain > 0).tolist() != (output[lead] > 0).tolist():
                without = [int(i) for i in np.nonzero(plain)[0]]
                why = ("brought it in" if taken and not plain[e] else "pushed it out" if plain[e] and not taken
                       else "changed the others")
                lines.append(f"the biases changed the choice: without them it would be experts {_list(without)} "
                             f"(for expert {e}, they {why})")
        if rank[e]:
            n = int(allowed.sum())
            lines.append(f"rank {rank[e]} of {n}{' (in the kept groups)' if groups is not None else ''}; the top {k} "
                         "are taken, a tie going to the lower expert index")
            last, first_out = order[k - 1], order[k] if k < n else None
            if taken and first_out is not None:
                gap = c[e] - c[first_out]
                tie = f"; a tie with expert {first_out}, broken by the lower index" if gap == 0 else ""
                lines.append(f"taken by a margin of {num(gap)} over expert {first_out}, the best not taken{tie}")
            elif not taken:
                gap = c[last] - c[e]
                tie = f"; a tie with expert {last}, broken by the lower index" if gap == 0 else ""
                lines.append(f"short of expert {last}, the last taken, by {num(gap)}{tie}")
        lines.append(f"position {t} goes to experts {_list(chosen)}")
        lines.append(f"{syms.out}{idx(index)} = {int(output[index])}")
        title = (f"{syms.out}{idx(index)} = 1: position {t} goes to expert {e}" if taken else
                 f"{syms.out}{idx(index)} = 0: position {t} does not go to expert {e}")
        return CellExplanation(index, float(output[index]), title, columns, rows, lines, focus=focus)


@register
class Keep(Op):
    """The kept weights: the router's scores of the chosen experts (0 for the others), renormalised over them
    (``norm``) and scaled (``scale``: DeepSeek-V3's routed_scaling_factor)."""

    kind = "keep"
    join = " where "
    helpers = ("keep_weights",)
    vjp_helpers = ("keep_weights_backward",)
    differentiable = (0,)  # the scores; the choice is not differentiable
    skips = True  # an expert not chosen reads no score
    default_note = "The weights of the chosen experts; the others weigh 0."

    def shape(self, scores, choice, **attrs):
        return sr.broadcast(scores, choice)

    def formula(self, syms: Syms, norm: bool = True, scale: float = 1.0, **attrs) -> str:
        s, c = syms.ins
        body = f"{s}⊙{c} / Σ({s}⊙{c})" if norm else f"{s}⊙{c}"
        return f"{syms.out} = {body}" + (f" × {num(scale)}" if scale != 1 else "")

    def source(self, out, ins, norm: bool = True, scale: float = 1.0, **attrs) -> str:
        return f"keep_weights({ins[0]}, {ins[1]}, norm={bool(norm)}, scale={float(scale)!r})"

    def feeds(self, index, inputs, norm: bool = True, **attrs):
        *lead, e = index
        lead = tuple(lead)
        row = lead + (slice(None),)
        if inputs[1][index] <= 0:  # not chosen: 0 whatever the scores
            return [None, index]
        return [row if norm else index, row if norm else index]

    def explain(self, index, inputs, output, syms: Syms, norm: bool = True, scale: float = 1.0,
                router: str = "softmax", **attrs) -> CellExplanation:
        import numpy as np  # lazy: numpy off the shape path

        scores, choice = inputs
        s_sym = syms.ins[0]
        *lead, e = index
        lead = tuple(lead)
        t = lead[-1] if lead else 0
        s, chosen = scores[lead], [int(i) for i in np.nonzero(choice[lead] > 0)[0]]
        at = f"{syms.out}{idx(index)}"
        if e not in chosen:
            return CellExplanation(index, 0.0, f"{at} = 0: expert {e} does not take position {t}",
                                   lines=[f"position {t} goes to experts {_list(chosen)}; the others weigh 0",
                                          f"{at} = 0"])
        rows = [(i, float(s[i])) for i in chosen]
        total = float(sum(s[i] for i in chosen))
        what = "probabilities" if router == "softmax" else "sigmoid scores (without the choosing bias)"
        lines = [f"the chosen experts' {what}: " + " + ".join(num(s[i]) for i in chosen) + f" = {num(total)}"]
        w = float(s[e])
        if norm:
            w = float(s[e]) / total
            lines.append(f"renormalised over the {len(chosen)} chosen: {num(s[e])} / {num(total)} = {num(w)}")
            if router == "softmax":
                diffs = [float(np.log(s[i] / s[e])) for i in chosen]
                lines.append("the same as a softmax over the chosen experts' logits alone (the full softmax's "
                             "denominator cancels): 1 / Σⱼ e^(lⱼ − lₑ) = 1 / (" +
                             " + ".join(f"e^{arg(d)}" if d else "1" for d in diffs) + f") = {num(w)}, "
                             f"with lⱼ − lₑ = ln(pⱼ/pₑ)")
        else:
            lines.append(f"not renormalised (norm_topk_prob off): the weight is the {what} itself, and the chosen "
                         f"weights sum to {num(total)}, not 1")
        if scale != 1:
            lines.append(f"× routed_scaling_factor {num(scale)} = {num(w * scale)}")
        lines.append(f"{at} = {num(output[index])}")
        return CellExplanation(index, float(output[index]), f"{at}: the weight of expert {e} at position {t}",
                               ("expert", s_sym), rows, lines, focus=(chosen.index(e),))

    # -- backward: through the renormalisation (a softmax-like Jacobian over the chosen experts) --------------
    vjp_note = ("Renormalised, each kept weight depends on every chosen score, so the gradient of one score "
                "collects from all the chosen weights; the experts not chosen get none.")

    def vjp_formula(self, wrt, syms: Syms, norm: bool = True, scale: float = 1.0, **attrs) -> str:
        d, g, s, c, w = syms.out, syms.ins[0], syms.ins[1], syms.ins[2], syms.ins[3]
        a = f"{num(scale)}·" if scale != 1 else ""
        if not norm:
            return f"{d} = {a}{g} ⊙ {c}"
        return f"{d} = {a}{c} ⊙ ({g} − Σ {g}⊙ŵ) / Σ({s}⊙{c}),  ŵ = {w}/{num(scale)}" if scale != 1 else \
            f"{d} = {c} ⊙ ({g} − Σ {g}⊙{w}) / Σ({s}⊙{c})"

    def vjp_source(self, wrt, g, ins, out, norm: bool = True, scale: float = 1.0, **attrs) -> str:
        return f"keep_weights_backward({g}, {ins[0]}, {ins[1]}, norm={bool(norm)}, scale={float(scale)!r})"

    def vjp_feeds(self, wrt, index, g, inputs, output, norm: bool = True, **attrs):
        *lead, e = index
        row = tuple(lead) + (slice(None),)
        if not norm:
            return [index, None, index, None]
        return [row, row, row, None]

    def vjp_explain(self, wrt, index, g, inputs, output, grad, syms: Syms, norm: bool = True, scale: float = 1.0,
                    **attrs) -> CellExplanation:
        scores, choice = inputs
        *lead, e = index
        lead = tuple(lead)
        at = f"{syms.out}{idx(index)}"
        if choice[index] <= 0:
            return CellExplanation(index, 0.0, f"{at} = 0: expert {e} was not chosen here",
                                   lines=["its score does not reach the weights: 0"])
        if not norm:
            return CellExplanation(index, float(grad[index]), f"{at} = {syms.ins[0]}{idx(index)}" +
                                   (f" × {num(scale)}" if scale != 1 else ""), lines=[f"= {num(grad[index])}"])
        s, c, gr = scores[lead], choice[lead], g[lead]
        total = float((s * c).sum())
        share = s * c / total
        dot = float((gr * share).sum())
        rows = [(i, float(gr[i]), float(share[i])) for i in range(len(s)) if c[i] > 0]
        return CellExplanation(index, float(grad[index]), f"{at}: back through the renormalisation",
                               ("expert", syms.ins[0], "share"), rows,
                               [f"Σ gradient × share = {num(dot)}",
                                f"{num(scale)} × ({num(gr[e])} − {arg(dot)}) / {num(total)} = {num(grad[index])}"])
