"""Latent attention's notation rows (:mod:`explain.models.notation` reads them), and the widths and cache sizes
their notes name (:func:`notation_context`)."""

from __future__ import annotations

from explain.core.config import Config
from explain.core.names import On

NOTATION = [
    (On("attn.q_a"), "*", "c_Q", "Queries start small: x̂·W_DQ compresses {d_model} features to q_lora_rank = "
                                 "{q_rank}."),
    (On("attn.ln_q"), "*", "ĉ_Q", "RMSNorm of the compressed query, with its own γ (ε 1e-6)."),
    (On("attn.q_nope"), "*", "Q_C", "The first {d_nope} features of each query head: the part that is never rotated."),
    (On("attn.q_rope"), "*", "Q_R", "The last {d_rope} features of each query head: the part that carries the "
                                    "position."),
    (On("attn.kv_a"), "*", "[c_KV, k_R]", "One projection serves every head: x̂·W_DKV gives the latent ({kv_rank}) "
                                          "and the rotary key ({d_rope}), one head that all {n_heads} heads share."),
    (On("attn.kv_latent"), "*", "c_KV", "The latent that every key and value comes from: {kv_rank} numbers per token."),
    (On("attn.ln_kv"), "*", "ĉ_KV", "RMSNorm of the latent (ε 1e-6). With the rotary key, this is all a generation "
                                    "caches: {cache_mla} numbers per token per layer, where plain attention with "
                                    "these heads caches {cache_mha}."),
    (On("attn.k_rope"), "*", "k_R", "The rotary key: {d_rope} numbers per token, one for all the heads."),
    (On("attn.k_nope"), "*", "K_C", "Every head's key from the one latent: ĉ_KV·W_UK, {kv_rank} → {d_nope} features "
                                    "per head."),
    (On("attn.v"), "matmul", "V", "Every head's value from the same latent: ĉ_KV·W_UV, {kv_rank} → {d_value} "
                                  "features per head."),
    (On("attn.scores_nope"), "*", "S_C", "The content part of the scores: Q_C·K_Cᵀ, with no position in it."),
    (On("attn.scores_rope"), "*", "S_R", "The position part: each head's rotated query part against the one shared "
                                         "rotated key."),
    (On("attn.latent_cache", new_token=True), "*", "C_cache", "The cache holds the latent of every earlier position, "
                                                              "and the new one is appended: {kv_rank} numbers per "
                                                              "token, where plain attention keeps a key and a value "
                                                              "for each of the {n_heads} heads."),
    (On("attn.rot_k_cache", new_token=True), "*", "kR_cache", "And the rotary keys: {d_rope} numbers per token. "
                                                              "Together {cache_mla} per token per layer, against "
                                                              "{cache_mha} for plain attention."),
    (On("attn.k_nope", new_token=True), "*", "K_C", "The naive way: every cached latent expanded into every head's "
                                                    "key again, at every new token."),
    (On("attn.scores", new_token=True), "add", "S", "The new query's scores against every key, naively: S_C + S_R."),
    (On("attn.q_absorbed", new_token=True), "*", "Q_L", "The absorbed way: fold W_UK into the query instead, Q_L = "
                                                        "Q_C·W_UKᵀ. Since q·(c·W_UK)ᵀ = (q·W_UKᵀ)·cᵀ, one row per "
                                                        "head, {kv_rank} wide, meets the cached latents directly."),
    (On("attn.scores_latent", new_token=True), "*", "S_C", "The content scores read straight off the cache: "
                                                           "Q_L·C_cacheᵀ, equal to the naive S_C; no key was "
                                                           "expanded."),
    (On("attn.scores_absorbed", new_token=True), "*", "S", "The absorbed scores, S_C + S_R: the same numbers as "
                                                           "attn.scores (to rounding). The rotary part cannot be "
                                                           "absorbed: the rotation sits between the two matrices."),
    (On("attn.scores"), "add", "S", "Scores = S_C + S_R: the same as one dot product of [Q_C, Q_R] with [K_C, k_R]."),
]


def notation_context(cfg: Config) -> dict[str, int | str]:
    """The widths and cache sizes the notes above name."""
    lat = cfg.latent
    return dict(q_note=f"Every head's query from the compressed one: ĉ_Q·W_UQ, {lat.qk_nope_head_dim} + "
                       f"{lat.qk_rope_head_dim} features per head.", q_rank=lat.q_lora_rank, kv_rank=lat.kv_lora_rank, d_nope=lat.qk_nope_head_dim,
                d_rope=lat.qk_rope_head_dim, d_value=lat.v_head_dim, cache_mla=lat.cache_per_token(),
                cache_mha=lat.plain_cache_per_token(cfg.n_heads))
