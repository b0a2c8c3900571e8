"""The mixture of experts' configuration: the checks that refuse a router that cannot be built (one line each,
naming the option and the fix), and the arithmetic of its size and cost, read with no numpy by ``explain shapes``
and by the shape checker's ``--cost``.

The model code is :mod:`explain.models.moe`; the options (named after the Hugging Face config keys) are in
:mod:`explain.core.options`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from explain.core.errors import ConfigError
from explain.core.options import OPTION, flag

# the options that mean something only with --experts
MOE_OPTIONS = ("experts_per_token", "n_shared_experts", "shared_d_ff", "shared_expert_gate", "moe_d_ff",
               "norm_topk_prob", "router", "n_group", "topk_group", "routed_scaling_factor", "first_k_dense_replace")

ACTIVE_RULE = ("what one token uses: every parameter but the routed experts it does not go to; k of E counted in "
               "each mixture layer, and the embeddings, attention, norms, routers and shared experts all counted")


def _given(cfg: Any, name: str) -> str:
    value = getattr(cfg, name)
    return flag(name, value) if OPTION[name].type == "bool" else f"{OPTION[name].flag} {value}"


def check_moe(cfg: Any) -> None:
    """Refuse a mixture of experts that cannot be built, in one line naming the option and the fix."""
    if cfg.n_experts is None:
        given = [n for n in MOE_OPTIONS if getattr(cfg, n) != OPTION[n].default]
        if given:
            raise ConfigError(f"{_given(cfg, given[0])} sets up a mixture of experts, which needs {flag('n_experts')} N "
                              f"(the number of experts); add it or drop {OPTION[given[0]].flag}")
        return
    E, k, G, kg = cfg.n_experts, cfg.experts_per_token, cfg.n_group, cfg.topk_group
    if E < 1:
        raise ConfigError(f"{flag('n_experts')} {E}: a mixture needs at least 1 expert (Mixtral has 8); drop "
                          f"{flag('n_experts')} for a dense MLP")
    if k > E:
        raise ConfigError(f"{flag('experts_per_token')} {k} is more than the {E} experts; give at most {E}")
    router = OPTION["router"]
    if cfg.router not in router.choices:
        raise ConfigError(f"{router.flag} must be one of {', '.join(router.choices)}, got {cfg.router!r}")
    if E % G:
        divisors = [n for n in range(1, E + 1) if E % n == 0][:8]
        raise ConfigError(f"{flag('n_group')} {G} does not split the {E} experts into equal groups; use a divisor "
                          f"of {E} ({', '.join(map(str, divisors))})")
    if G > 1 and E // G < 2:
        raise ConfigError(f"{flag('n_group')} {G} leaves groups of 1 expert, but a group is scored by the sum of its "
                          f"2 best; use at most {E // 2} groups")
    if kg > G:
        raise ConfigError(f"{flag('topk_group')} {kg} is more than the {G} group{'s' if G > 1 else ''}; give at most "
                          f"{G}" + ("" if G > 1 else f", or {flag('n_group')} N to put the experts in groups"))
    if k > kg * (E // G):
        raise ConfigError(f"{flag('experts_per_token')} {k} cannot be chosen from {kg} group{'s' if kg > 1 else ''} "
                          f"of {E // G} experts ({kg * (E // G)}); raise {flag('topk_group')} or lower "
                          f"{flag('experts_per_token')}")
    scale = cfg.routed_scaling_factor
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
        raise ConfigError(f"{flag('routed_scaling_factor')} must be a positive number (DeepSeek-V3: 2.5), got "
                          f"{scale!r}")
    if cfg.first_k_dense_replace >= cfg.n_layers:
        raise ConfigError(f"{_given(cfg, 'first_k_dense_replace')} leaves no layer with experts in {cfg.n_layers} "
                          f"layer{'s' if cfg.n_layers > 1 else ''}; give at most {cfg.n_layers - 1}")
    if not cfg.n_shared_experts:
        for name in ("shared_d_ff", "shared_expert_gate"):
            if getattr(cfg, name) != OPTION[name].default:
                raise ConfigError(f"{_given(cfg, name)} is about the shared expert, and there is none; add "
                                  f"{flag('n_shared_experts')} 1 or drop {OPTION[name].flag}")


# -- size and cost -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """One figure of a cost table: its name, its value, and the formula that gives it (the arithmetic is the
    lesson)."""

    name: str
    value: int
    formula: str


def moe_layers(cfg: Any) -> int:
    """How many blocks have a mixture of experts."""
    return sum(cfg.moe_layer(i) for i in range(cfg.n_layers))


def expert_params(cfg: Any) -> int:
    """One routed expert's parameters: a SwiGLU MLP, W_gate, W_in (d × f) and W_out (f × d)."""
    return 3 * cfg.d_model * cfg.expert_dim


def active_params(cfg: Any, total: int) -> int:
    """Of ``total`` parameters, those one token uses (:data:`ACTIVE_RULE`): all but the E − k routed experts
    it does not go to, in each mixture layer. A dense model's are all of them."""
    if cfg.n_experts is None:
        return total
    return total - moe_layers(cfg) * (cfg.n_experts - cfg.experts_per_token) * expert_params(cfg)


def moe_cost(cfg: Any) -> list[Figure]:
    """The mixture's figures for the shape checker's ``--cost``, per token and per mixture layer (a forward pass;
    a multiply-add is 2 FLOPs), then over the model. Empty for a dense model.

    What one token costs in a mixture layer: the router (d × E), its k routed experts (3 matmuls of d × f each),
    the shared experts (3 of d × f_shared, and the gate's d × 1 when gated) and the mix (k multiply-adds per
    output feature). explain's recorded run computes the same rows, but its steps hold every position for every
    expert (E × T × f each), so its memory grows with E, not k."""
    if cfg.n_experts is None:
        return []
    d, E, k, f, fs = cfg.d_model, cfg.n_experts, cfg.experts_per_token, cfg.expert_dim, cfg.shared_dim
    gate = 2 * d if cfg.n_shared_experts and cfg.shared_expert_gate else 0
    rows = [
        Figure("router FLOPs per token", 2 * d * E, f"2·d·E = 2·{d}·{E}"),
        Figure("routed experts FLOPs per token", 6 * k * d * f, f"k·3·2·d·f = {k}·3·2·{d}·{f}"),
        Figure("mix FLOPs per token", 2 * k * d, f"2·k·d = 2·{k}·{d}"),
    ]
    if cfg.n_shared_experts:
        rows.insert(2, Figure("shared experts FLOPs per token", 6 * d * fs + gate,
                              f"3·2·d·f_shared = 3·2·{d}·{fs}" + (f" + 2·d (the gate) = + 2·{d}" if gate else "")))
    n = moe_layers(cfg)
    per_layer = sum(r.value for r in rows)
    rows.append(Figure("mixture FLOPs per token, all layers", n * per_layer, f"{n} layers × {per_layer:,}"))
    routed = E * expert_params(cfg)
    rows.append(Figure("routed expert parameters per layer", routed, f"E·3·d·f = {E}·3·{d}·{f}"))
    rows.append(Figure("unused by one token, all layers", n * (E - k) * expert_params(cfg),
                       f"{n} layers × (E − k)·3·d·f = {n}·{E - k}·3·{d}·{f}"))
    return rows


__all__ = ["ACTIVE_RULE", "Figure", "MOE_OPTIONS", "active_params", "check_moe", "expert_params", "moe_cost",
           "moe_layers"]
