"""Multi-head latent attention (DeepSeek-V2, DeepSeek-AI 2024, §2.1; DeepSeek-V3), an attention kind of the Llama
family (``--attention mla``), as transformers' ``DeepseekV3Attention`` computes it.

Queries go through a low-rank bottleneck: x·W_DQ (``q_lora_rank`` wide), an RMSNorm, then every head's query
(·W_UQ). Keys and values come from one **latent**: x·W_DKV gives ``kv_lora_rank`` numbers (RMS-normed) and one
rotary key of ``qk_rope_head_dim``, both shared by every head (a single head, as multi-query attention's key).
Each head's key is [latent·W_UK (``qk_nope_head_dim``), the shared rotated key], its value latent·W_UV
(``v_head_dim``). A query head is split the same way, [no-rope part, rotated part], so every score is a sum of
two dot products, recorded as two steps: ``scores_nope`` (which never sees a position) and ``scores_rope``.

The point is the cache: generation keeps only the latent and the rotary key of each token (DeepSeek-V3:
512 + 64 = 576 numbers per token per layer, where plain attention with the same heads keeps 128 × (192 + 128) =
40,960). The naive way expands the whole cache into keys and values at every step; since the no-rope score is
q·(c·W_UK)ᵀ = (q·W_UKᵀ)·cᵀ, the up-projection can be folded into the query instead (the **absorbed** way,
DeepSeek-V2 §2.1.2) and the scores read straight off the latent. A generation records both: ``scores`` (naive)
and ``scores_absorbed``, equal to rounding. The rotary part cannot be absorbed (the rotation sits between the
two matrices), which is why it is a separate, small, shared key.

transformers rotates the rotary parts in DeepSeek's interleaved layout (pairs (2i, 2i + 1), ``rope_interleave``);
its two latent norms use RMSNorm's own ε of 1e-6, not the model's ``rms_norm_eps``.
"""

from __future__ import annotations

from explain.core.config import Config
from explain.models.kvcache import KVCache
from explain.models.layers import attend
from explain.ops.rotary import INTERLEAVED
from explain.trace.recorder import Recorder, Ref

INIT = "normal_0.02"  # transformers' initializer_range
LATENT_EPS = 1e-6  # q_a_layernorm's and kv_a_layernorm's ε: DeepseekV3RMSNorm's default, whatever rms_norm_eps is


def _norm(rec: Recorder, name: str, x: Ref, width: int, axis: str) -> Ref:
    """RMSNorm of a latent (γ ones)."""
    with rec.scope(name):
        w = rec.param("w", (width,), (axis,), "ones", sym="γ")
    return rec.op("rms_norm", name, x, w, eps=LATENT_EPS)


def attention(rec: Recorder, cfg: Config, x: Ref, pos: int = 0, cache: KVCache | None = None,
              pad: Ref | None = None) -> Ref:
    """Latent attention of x (B, T, d) at positions ``pos`` …; with a ``cache`` (generation: the earlier positions'
    latents and rotary keys, :class:`~explain.models.kvcache.KVCache`) x is one new position whose latent and rotary
    key are appended."""
    h, d, lat = cfg.n_heads, cfg.d_model, cfg.latent
    rq, r, dn, dr, dv = lat.q_lora_rank, lat.kv_lora_rank, lat.qk_nope_head_dim, lat.qk_rope_head_dim, lat.v_head_dim
    rope = dict(theta=float(cfg.rope_theta), start=pos, layout=cfg.rope_layout or INTERLEAVED)
    with rec.scope("attn"):
        q = rec.op("linear", "q_a", x, rec.param("W_DQ", (d, rq), ("d_model", "q_rank"), INIT))  # (B, T, rq)
        q = _norm(rec, "ln_q", q, rq, "q_rank")  # (B, T, rq)
        W_UQ = rec.param("W_UQ", (h, rq, dn + dr), ("head", "q_rank", "d_head"), INIT)
        q = rec.op("linear_heads", "q", q, W_UQ)  # (B, h, T, dn+dr)
        q_nope = rec.op("slice", "q_nope", q, axis=-1, stop=dn)  # (B, h, T, dn)
        rot_q = rec.op("rope", "rot_q", rec.op("slice", "q_rope", q, axis=-1, start=dn, stop=dn + dr), **rope)
        W_DKV = rec.param("W_DKV", (1, d, r + dr), ("head", "d_model", "kv_a"), INIT)  # one head shared by all
        kv = rec.op("linear_heads", "kv_a", x, W_DKV)  # (B, 1, T, r+dr)
        c = _norm(rec, "ln_kv", rec.op("slice", "kv_latent", kv, axis=-1, stop=r), r, "kv_rank")  # (B, 1, T, r)
        rot_k = rec.op("rope", "rot_k", rec.op("slice", "k_rope", kv, axis=-1, start=r, stop=r + dr), **rope)
        if cache is not None:  # the cache holds only these two: (B, 1, S, r) and (B, 1, S, dr)
            c, rot_k = cache.extend_latent(rec, c, rot_k, pos)  # (B, 1, S+1, r) and (B, 1, S+1, dr)
        W_UK = rec.param("W_UK", (h, r, dn), ("head", "kv_rank", "d_nope"), INIT)
        W_UV = rec.param("W_UV", (h, r, dv), ("head", "kv_rank", "d_value"), INIT)
        k_nope = rec.op("matmul", "k_nope", c, W_UK)  # (B, h, S, dn): every head's key from the one latent
        v = rec.op("matmul", "v", c, W_UV)  # (B, h, S, dv)
        s_nope = rec.op("matmul", "scores_nope", q_nope, k_nope, transpose_b=True)  # (B, h, T, S)
        s_rope = rec.op("matmul", "scores_rope", rot_q, rot_k, transpose_b=True)  # (B, h, T, S): one key, every head
        s = rec.op("add", "scores", s_nope, s_rope)  # (B, h, T, S)
        if cache is not None:
            absorbed(rec, q_nope, W_UK, c, s_rope)
        z = attend(rec, s, v, dn + dr, causal=cache is None, pad=pad)  # (B, h, T, dv)
        z = rec.op("merge_heads", "concat", z)  # (B, T, h·dv)
        W_O = rec.param("W_O", (h * dv, d), ("concat", "d_model"), INIT)
    return rec.op("linear", "attn_out", z, W_O)  # (B, T, d)


def absorbed(rec: Recorder, q_nope: Ref, W_UK: Ref, c: Ref, s_rope: Ref) -> Ref:
    """The same scores without expanding the cache: q·(c·W_UK)ᵀ = (q·W_UKᵀ)·cᵀ, the up-projection folded into the
    query (one row per new token) instead of applied to every cached position."""
    q_lat = rec.op("matmul", "q_absorbed", q_nope, W_UK, transpose_b=True)  # (B, h, T, r)
    s_lat = rec.op("matmul", "scores_latent", q_lat, c, transpose_b=True)  # (B, h, T, S)
    return rec.op("add", "scores_absorbed", s_lat, s_rope)  # (B, h, T, S) = scores


# The notation of latent attention's own steps (explain.models.notation puts them before the Llama rows). Notes may
# name {q_rank}, {kv_rank}, {d_nope}, {d_rope}, {d_value}, {cache_mla} and {cache_mha} (numbers per token per layer).
def cache_numbers(cfg: Config) -> tuple[int, int]:
    """Numbers cached per token per layer: (latent attention's, plain attention's with the same heads)."""
    return cfg.latent.cache_per_token(), cfg.latent.plain_cache_per_token(cfg.n_heads)


__all__ = ["LATENT_EPS", "absorbed", "attention", "cache_numbers"]
