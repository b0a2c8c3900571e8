"""A mixture of experts in place of a Llama block's MLP (Shazeer et al. 2017, "Outrageously Large Neural
Networks"; Mixtral, Jiang et al. 2024; Qwen2-MoE; DeepSeek-V3, Liu et al. 2024, §2.1.2).

A router scores every expert for every position; each position goes to its top k experts (``route``), whose
scores become its weights (``keep``: renormalised with ``norm_topk_prob``, scaled by ``routed_scaling_factor``);
each expert is a SwiGLU MLP of its own, run on the positions routed to it; the output is the weighted sum of the
experts' outputs (``expert_sum``), plus the shared experts every position uses (gated by σ(x·w) in Qwen2-MoE).

The conventions, as options (named after the Hugging Face config keys):

=====================  ==========================================================================================
Mixtral                ``--experts 8 --experts-per-token 2`` (softmax, renormalised)
Qwen3-MoE, OLMoE       the same, ``--no-norm-topk-prob`` where their ``norm_topk_prob`` is false
Qwen2-MoE              ``--no-norm-topk-prob --shared-experts 1 --shared-expert-gate`` and its widths
DeepSeek-V3            ``--router sigmoid --n-group 8 --topk-group 4 --experts-per-token 8
                       --routed-scaling-factor 2.5 --shared-experts 1 --first-k-dense-replace 3``
=====================  ==========================================================================================

Every expert's steps hold every position, (B, E, T, f): the rows of the positions an expert did not take are 0
(and greyed), so no shape depends on which tokens went where. Step names (in ``blocks.N.mlp``): router_logits,
router_scores, choice, kept_weights, experts.pre / pre_linear / post / out, routed (with shared experts),
shared.pre / pre_linear / post / out, shared_gate_pre, shared_gate, shared_gated; then ``blocks.N.mlp_out``, as in a
dense block.
"""

from __future__ import annotations

from explain.core.config import Config
from explain.trace.recorder import Recorder, Ref

INIT = "normal_0.02"  # transformers' initializer_range, as the dense Llama block's


def weight(rec: Recorder, name: str, shape: tuple[int, ...], axes: tuple[str, ...]) -> Ref:
    return rec.param(name, shape, axes, INIT)


def router(rec: Recorder, cfg: Config, x: Ref) -> tuple[Ref, Ref]:
    """The choice (B, T, E: 1 where a position goes to an expert) and the kept weights (B, T, E: 0 elsewhere).
    The sigmoid router ranks its scores plus a per-expert bias (DeepSeek-V3's e_score_correction_bias, learned
    by a rule outside the gradient) but weighs with the scores alone."""
    E = cfg.n_experts
    W = weight(rec, "W_router", (cfg.d_model, E), ("d_model", "expert"))
    logits = rec.op("linear", "router_logits", x, W)  # (B, T, E)
    scores = rec.op("softmax" if cfg.router == "softmax" else "sigmoid", "router_scores", logits)  # (B, T, E)
    bias = [rec.param("b_choice", (E,), ("expert",), "zeros", sym="b")] if cfg.router == "sigmoid" else []
    choice = rec.op("route", "choice", scores, *bias, k=cfg.experts_per_token, n_group=cfg.n_group,
                    topk_group=cfg.topk_group)  # (B, T, E), 0 or 1
    kept = rec.op("keep", "kept_weights", scores, choice, norm=cfg.norm_topk_prob,
                  scale=float(cfg.routed_scaling_factor), router=cfg.router)  # (B, T, E)
    return choice, kept


def experts(rec: Recorder, cfg: Config, x: Ref, choice: Ref) -> Ref:
    """Every expert's SwiGLU MLP at the positions routed to it: W_out·(silu(x·W_gate) ⊙ x·W_in), per expert."""
    E, d, f = cfg.n_experts, cfg.d_model, cfg.expert_dim
    with rec.scope("experts"):
        W_gate = weight(rec, "W_gate", (E, d, f), ("expert", "d_model", "d_ff"))
        W_in = weight(rec, "W_in", (E, d, f), ("expert", "d_model", "d_ff"))
        gate = rec.op("expert_linear", "pre", x, W_gate, choice)  # (B, E, T, f)
        up = rec.op("expert_linear", "pre_linear", x, W_in, choice)  # (B, E, T, f)
        h = rec.op("expert_swiglu", "post", gate, up, choice)  # (B, E, T, f)
        W_out = weight(rec, "W_out", (E, f, d), ("expert", "d_ff", "d_model"))
        return rec.op("expert_linear", "out", h, W_out, choice)  # (B, E, T, d)


def shared(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """The shared experts, one SwiGLU MLP every position goes through, gated by σ(x·w) per position when
    ``shared_expert_gate`` (Qwen2-MoE)."""
    d, f = cfg.d_model, cfg.shared_dim
    with rec.scope("shared"):
        gate = rec.op("linear", "pre", x, weight(rec, "W_gate", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        up = rec.op("linear", "pre_linear", x, weight(rec, "W_in", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        h = rec.op("swiglu", "post", gate, up)  # (B, T, f)
        out = rec.op("linear", "out", h, weight(rec, "W_out", (f, d), ("d_ff", "d_model")))  # (B, T, d)
    if not cfg.shared_expert_gate:
        return out
    W_g = weight(rec, "W_shared_gate", (d, 1), ("d_model", "gate"))
    g = rec.op("sigmoid", "shared_gate", rec.op("linear", "shared_gate_pre", x, W_g))  # (B, T, 1)
    return rec.op("mul", "shared_gated", g, out)  # (B, T, d)


def moe_mlp(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """The block's MLP as a mixture of experts; its output is ``blocks.N.mlp_out``, as the dense MLP's."""
    with rec.scope("mlp"):
        choice, kept = router(rec, cfg, x)
        outs = experts(rec, cfg, x, choice)  # (B, E, T, d)
        if cfg.n_shared_experts:
            routed = rec.op("expert_sum", "routed", kept, outs)  # (B, T, d)
            common = shared(rec, cfg, x)  # (B, T, d)
    if not cfg.n_shared_experts:
        return rec.op("expert_sum", "mlp_out", kept, outs)  # (B, T, d)
    return rec.op("add", "mlp_out", routed, common)  # (B, T, d)


__all__ = ["experts", "moe_mlp", "router", "shared"]
