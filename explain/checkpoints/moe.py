"""The mixture-of-experts part of a Hugging Face folder of ``model_type`` mixtral or qwen2_moe, for the Llama
family's reader (:mod:`explain.checkpoints.llama`): the options config.json implies, the tensors it needs and
their map onto the engine's parameters (x·W layout, the experts stacked on a leading axis).

Two layouts of the experts are read, per mixture layer N (under ``model.layers.N.``)::

    transformers 4, one tensor per expert             transformers 5, stacked
    Mixtral  block_sparse_moe.gate.weight [E, d]      mlp.gate.weight [E, d]
             block_sparse_moe.experts.e.w1 / w3 [f, d]   mlp.experts.gate_up_proj [E, 2f, d] (gate rows, then up)
             block_sparse_moe.experts.e.w2 [d, f]        mlp.experts.down_proj [E, d, f]
    Qwen2-MoE mlp.gate.weight, mlp.experts.e.gate_proj / up_proj / down_proj (or the stacked pair above),
             mlp.shared_expert.gate_proj / up_proj / down_proj, mlp.shared_expert_gate.weight [1, d]

    router  → blocks.N.mlp.W_router (d, E)           gate → blocks.N.mlp.experts.W_gate (E, d, f)
    up      → blocks.N.mlp.experts.W_in (E, d, f)     down → blocks.N.mlp.experts.W_out (E, f, d)
    shared  → blocks.N.mlp.shared.W_gate / W_in / W_out, shared_expert_gate → blocks.N.mlp.W_shared_gate (d, 1)

What the engine does not compute is refused in one line: Qwen2-MoE's sparse layers other than a dense prefix
(``decoder_sparse_step`` > 1, ``mlp_only_layers`` not the first layers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explain.checkpoints.keys import capped
from explain.core.errors import WeightsError

MOE_TYPES = ("mixtral", "qwen2_moe")  # and deepseek_v3 (whose latent attention is checkpoints.latent's)
_SHARED = {"deepseek_v3": "shared_experts"}  # the shared expert's module name where it is not shared_expert


def _whole(cfg: dict[str, Any], key: str, where: str, default: Any = None, minimum: int = 1) -> int:
    v = cfg.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise WeightsError(f"{where}: {key} must be a whole number of at least {minimum}, got {v!r}")
    return capped(where, key, v)


def _fits(where: str, part: str, k: int, whole: str, n: int) -> None:
    """Refuse ``part`` ``k`` of ``whole`` ``n`` (experts chosen of experts, groups kept of groups) when k > n."""
    if k > n:
        raise WeightsError(f"{where}: {part} {k} is more than {whole} {n}; set {part} to at most {n}")


def moe_options(cfg: dict[str, Any], where: str, n_layers: int) -> dict[str, Any]:
    """The engine's mixture options from a mixtral or qwen2_moe config.json (none for another model_type)."""
    kind = cfg.get("model_type")
    if kind == "deepseek_v3":
        return _deepseek_options(cfg, where, n_layers)
    if kind == "mixtral":
        E, k = _whole(cfg, "num_local_experts", where, 8), _whole(cfg, "num_experts_per_tok", where, 2)
        _fits(where, "num_experts_per_tok", k, "num_local_experts", E)
        return dict(n_experts=E, experts_per_token=k, router="softmax",
                    norm_topk_prob=True)
    if kind != "qwen2_moe":
        return {}
    E = _whole(cfg, "num_experts", where, 60, minimum=0)
    if E == 0:
        return {}  # transformers builds every layer dense: a Qwen2 block
    step = cfg.get("decoder_sparse_step", 1)
    if step != 1:
        raise WeightsError(f"{where} sets decoder_sparse_step {step!r} (experts in every {step}th layer); explain's "
                           "mixture layers follow the dense first ones (first_k_dense_replace), so it needs 1")
    dense = cfg.get("mlp_only_layers") or []
    if not isinstance(dense, list) or dense != list(range(len(dense))) or len(dense) >= n_layers:
        raise WeightsError(f"{where} sets mlp_only_layers {dense!r}; explain keeps a dense MLP in the first layers "
                           "only (0, 1, …, k−1, fewer than all)")
    norm = cfg.get("norm_topk_prob", False)
    if not isinstance(norm, bool):
        raise WeightsError(f"{where}: norm_topk_prob must be true or false, got {norm!r}")
    k = _whole(cfg, "num_experts_per_tok", where, 4)
    _fits(where, "num_experts_per_tok", k, "num_experts", E)
    o = dict(n_experts=E, experts_per_token=k, router="softmax",
             norm_topk_prob=norm, moe_d_ff=_whole(cfg, "moe_intermediate_size", where, 1408),
             first_k_dense_replace=len(dense))
    shared = _whole(cfg, "shared_expert_intermediate_size", where, 5632, minimum=0)
    if shared:  # transformers always gates Qwen2-MoE's shared expert
        o.update(n_shared_experts=1, shared_d_ff=shared, shared_expert_gate=True)
    return o


def _deepseek_options(cfg: dict[str, Any], where: str, n_layers: int) -> dict[str, Any]:
    """DeepSeek-V3's router: sigmoid scores, a choosing-only bias, groups, scaled weights, ungated shared experts
    and dense first layers (transformers' DeepseekV3Config defaults for the keys a config.json leaves out)."""
    E, G = _whole(cfg, "n_routed_experts", where, 256), _whole(cfg, "n_group", where, 8)
    dense = _whole(cfg, "first_k_dense_replace", where, 3, minimum=0)
    norm, scale = cfg.get("norm_topk_prob", True), cfg.get("routed_scaling_factor", 2.5)
    if not isinstance(norm, bool):
        raise WeightsError(f"{where}: norm_topk_prob must be true or false, got {norm!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
        raise WeightsError(f"{where}: routed_scaling_factor must be a positive number, got {scale!r}")
    if dense >= n_layers:
        return {}  # every layer dense (first_k_dense_replace ≥ num_hidden_layers): no mixture at all
    if E % G:
        raise WeightsError(f"{where}: n_group {G} does not split n_routed_experts {E} into equal groups; set n_group "
                           f"to a divisor of {E}")
    k, kg = _whole(cfg, "num_experts_per_tok", where, 8), _whole(cfg, "topk_group", where, 4)
    _fits(where, "num_experts_per_tok", k, "n_routed_experts", E)
    _fits(where, "topk_group", kg, "n_group", G)
    o = dict(n_experts=E, experts_per_token=k, router="sigmoid",
             norm_topk_prob=norm, n_group=G, topk_group=kg,
             routed_scaling_factor=float(scale), first_k_dense_replace=dense,
             moe_d_ff=_whole(cfg, "moe_intermediate_size", where, 2048))
    shared = _whole(cfg, "n_shared_experts", where, 1, minimum=0)
    return dict(o, n_shared_experts=shared) if shared else o


def layout(names: set[str]) -> tuple[str, str]:
    """(how the experts are stored, the mixture's module name): ("stacked" | "per-expert", "mlp" |
    "block_sparse_moe"), from the tensor names a folder holds (an empty set: a config alone, stacked)."""
    prefix = "block_sparse_moe" if any(".block_sparse_moe." in n for n in names) else "mlp"
    per_expert = any(".experts.0." in n for n in names)
    return ("per-expert" if per_expert else "stacked"), prefix


def _expert_names(kind: str) -> tuple[str, str, str]:
    """The per-expert tensors' names: gate, up, down."""
    return ("w1", "w3", "w2") if kind == "mixtral" else ("gate_proj", "up_proj", "down_proj")


def moe_shapes(o: dict[str, Any], kind: str, where: tuple[str, str], p: str) -> dict[str, tuple[int, ...]]:
    """The tensors of mixture layer ``p`` (``model.layers.N.``) and their shapes, in the layout ``where``."""
    d, E = o["d_model"], o["n_experts"]
    f = o.get("moe_d_ff") or o["d_ff"]
    stored, prefix = where
    m = f"{p}{prefix}."
    out: dict[str, tuple[int, ...]] = {m + "gate.weight": (E, d)}
    if kind == "deepseek_v3":  # the choosing-only bias (a buffer in transformers, saved with the weights)
        out[m + "gate.e_score_correction_bias"] = (E,)
    if stored == "stacked":
        out.update({m + "experts.gate_up_proj": (E, 2 * f, d), m + "experts.down_proj": (E, d, f)})
    else:
        gate, up, down = _expert_names(kind)
        for e in range(E):
            out.update({m + f"experts.{e}.{gate}.weight": (f, d), m + f"experts.{e}.{up}.weight": (f, d),
                        m + f"experts.{e}.{down}.weight": (d, f)})
    if o.get("n_shared_experts"):
        fs, sh = o.get("shared_d_ff") or o["n_shared_experts"] * f, m + _SHARED.get(kind, "shared_expert")
        out.update({sh + ".gate_proj.weight": (fs, d), sh + ".up_proj.weight": (fs, d),
                    sh + ".down_proj.weight": (d, fs)})
        if o.get("shared_expert_gate"):
            out[m + "shared_expert_gate.weight"] = (1, d)
    return out


def moe_to_engine(get: Callable[[str], Any], o: dict[str, Any], kind: str, where: tuple[str, str], p: str,
                  ours: str) -> dict[str, Any]:
    """Mixture layer ``p``'s tensors under the engine's names (``ours`` = ``blocks.N.``), stacked per expert."""
    import numpy as np  # lazy: numpy off the shape path

    stored, prefix = where
    m = f"{p}{prefix}."
    f = o.get("moe_d_ff") or o["d_ff"]
    out = {ours + "mlp.W_router": np.ascontiguousarray(get(m + "gate.weight").T)}
    if kind == "deepseek_v3":
        out[ours + "mlp.b_choice"] = get(m + "gate.e_score_correction_bias")
    if stored == "stacked":
        gate_up, down = get(m + "experts.gate_up_proj"), get(m + "experts.down_proj")
        gate, up = gate_up[:, :f], gate_up[:, f:]
    else:
        g, u, dn = _expert_names(kind)
        E = o["n_experts"]
        gate = np.stack([get(m + f"experts.{e}.{g}.weight") for e in range(E)])
        up = np.stack([get(m + f"experts.{e}.{u}.weight") for e in range(E)])
        down = np.stack([get(m + f"experts.{e}.{dn}.weight") for e in range(E)])
    for name, w in (("W_gate", gate), ("W_in", up), ("W_out", down)):  # [E, out, in] → (E, in, out)
        out[ours + f"mlp.experts.{name}"] = np.ascontiguousarray(w.transpose(0, 2, 1))
    if o.get("n_shared_experts"):
        for name, theirs in (("W_gate", "gate_proj"), ("W_in", "up_proj"), ("W_out", "down_proj")):
            sh = m + _SHARED.get(kind, "shared_expert")
            out[ours + f"mlp.shared.{name}"] = np.ascontiguousarray(get(f"{sh}.{theirs}.weight").T)
        if o.get("shared_expert_gate"):
            out[ours + "mlp.W_shared_gate"] = np.ascontiguousarray(get(m + "shared_expert_gate.weight").T)
    return out


__all__ = ["MOE_TYPES", "layout", "moe_options", "moe_shapes", "moe_to_engine"]
