"""The latent-attention part of a Hugging Face folder of ``model_type`` deepseek_v3, for the Llama family's reader
(:mod:`explain.checkpoints.llama`): the options config.json implies and the attention tensors of each layer, mapped
onto the engine's parameters (x·W layout; :mod:`explain.models.mla`). Its mixture of experts is read by
:mod:`explain.checkpoints.moe`. Per layer N (under ``model.layers.N.self_attn.``)::

    q_a_proj.weight [q_rank, d]                  blocks.N.attn.W_DQ (d, q_rank)
    q_a_layernorm.weight [q_rank]                blocks.N.attn.ln_q.w
    q_b_proj.weight [h·(dn + dr), q_rank]        blocks.N.attn.W_UQ (h, q_rank, dn + dr): head j is rows j·(dn+dr) …
    kv_a_proj_with_mqa.weight [r + dr, d]        blocks.N.attn.W_DKV (1, d, r + dr): the latent, then the rotary key
    kv_a_layernorm.weight [r]                    blocks.N.attn.ln_kv.w
    kv_b_proj.weight [h·(dn + dv), r]            blocks.N.attn.W_UK (h, r, dn) and W_UV (h, r, dv): head j's dn key
                                                 rows, then its dv value rows
    o_proj.weight [d, h·dv]                      blocks.N.attn.W_O (h·dv, d)

The rotary rows are read in the layout the file has them in (``rope_interleave``: interleaved pairs, DeepSeek's; false:
rotate-half), and the run takes that layout (``--rope-layout`` another is refused as a conflict with config.json).
What the engine does not compute is refused in one line: queries without the bottleneck (``q_lora_rank`` null,
DeepSeek-V2-Lite), biases (``attention_bias``), a scoring function other than the sigmoid, experts in every n-th
layer only (``moe_layer_freq`` > 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explain.checkpoints.keys import capped
from explain.core.errors import WeightsError

LATENT_TYPES = ("deepseek_v3",)
_WIDTHS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_V3 = dict(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)


def latent_options(cfg: dict[str, Any], where: str) -> dict[str, Any]:
    """The engine's latent-attention options from a deepseek_v3 config.json (none for another model_type); they
    take the place of the key/value heads and the head width a Llama config has."""
    if cfg.get("model_type") not in LATENT_TYPES:
        return {}
    if "q_lora_rank" in cfg and cfg["q_lora_rank"] is None:
        raise WeightsError(f"{where} sets q_lora_rank null (queries without the low-rank bottleneck, as "
                           "DeepSeek-V2-Lite); explain's latent attention compresses the queries too")
    out: dict[str, Any] = {"attention": "mla"}
    for key in _WIDTHS:
        v = cfg.get(key, _V3[key])
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise WeightsError(f"{where}: {key} must be a positive whole number, got {v!r}")
        out[key] = capped(where, key, v)
    if out["qk_rope_head_dim"] % 2:
        raise WeightsError(f"{where}: qk_rope_head_dim {out['qk_rope_head_dim']} is odd; a rotation turns pairs of "
                           "dimensions, so it must be even (DeepSeek-V3: 64)")
    if cfg.get("attention_bias"):
        raise WeightsError(f"{where} sets attention_bias; explain's latent attention has no biases")
    interleave = cfg.get("rope_interleave", True)
    if not isinstance(interleave, bool):
        raise WeightsError(f"{where}: rope_interleave must be true or false, got {interleave!r}")
    out["rope_layout"] = "interleaved" if interleave else "half"  # the layout the file's rotary rows are in
    for key, want in (("scoring_func", "sigmoid"), ("moe_layer_freq", 1), ("topk_method", "noaux_tc")):
        if key in cfg and cfg[key] != want:
            raise WeightsError(f"{where} sets {key} {cfg[key]!r}; explain's DeepSeek-V3 router needs {want!r}")
    return out


def latent_shapes(o: dict[str, Any], p: str) -> dict[str, tuple[int, ...]]:
    """The attention tensors of layer ``p`` (``model.layers.N.``) and their shapes."""
    d, h = o["d_model"], o["n_heads"]
    rq, r, dn, dr, dv = (o[k] for k in _WIDTHS)
    a = p + "self_attn."
    return {a + "q_a_proj.weight": (rq, d), a + "q_a_layernorm.weight": (rq,), a + "q_b_proj.weight": (h * (dn + dr), rq),
            a + "kv_a_proj_with_mqa.weight": (r + dr, d), a + "kv_a_layernorm.weight": (r,),
            a + "kv_b_proj.weight": (h * (dn + dv), r), a + "o_proj.weight": (d, h * dv)}


def latent_to_engine(get: Callable[[str], Any], o: dict[str, Any], p: str, ours: str) -> dict[str, Any]:
    """Layer ``p``'s attention tensors under the engine's names (``ours`` = ``blocks.N.``)."""
    import numpy as np  # lazy: numpy off the shape path

    d, h = o["d_model"], o["n_heads"]
    rq, r, dn, dr, dv = (o[k] for k in _WIDTHS)
    a, e = p + "self_attn.", ours + "attn."
    kv_b = get(a + "kv_b_proj.weight").reshape(h, dn + dv, r)
    out = {e + "W_DQ": get(a + "q_a_proj.weight").T, e + "ln_q.w": get(a + "q_a_layernorm.weight"),
           e + "W_UQ": get(a + "q_b_proj.weight").reshape(h, dn + dr, rq).transpose(0, 2, 1),
           e + "W_DKV": get(a + "kv_a_proj_with_mqa.weight").T.reshape(1, d, r + dr),
           e + "ln_kv.w": get(a + "kv_a_layernorm.weight"), e + "W_UK": kv_b[:, :dn].transpose(0, 2, 1),
           e + "W_UV": kv_b[:, dn:].transpose(0, 2, 1), e + "W_O": get(a + "o_proj.weight").T}
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


__all__ = ["LATENT_TYPES", "latent_options", "latent_shapes", "latent_to_engine"]
