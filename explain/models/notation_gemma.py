"""Gemma's notation rows (:mod:`explain.models.notation` puts them under ``OWN["gemma"]``, after its cache rows and
GPT's rows for a generation's new tokens), and what the notes say of a value a GGUF file did not store."""

from __future__ import annotations

from typing import Any

from explain.core.names import On

Row = tuple[str | On, str, str, str | None]  # explain.models.notation's

GEMMA_CACHE: list[Row] = [
    (On("attn.k_cache", new_token=True), "*", "K_cache", "The cache: earlier positions' keys are kept and the new "
                                                         "one's appended. A sliding layer keeps only the last "
                                                         "{sliding_window}: no query will look further back."),
    (On("attn.v_cache", new_token=True), "*", "V_cache", "The values are cached the same way (a sliding layer: its "
                                                         "window only)."),
]

GEMMA: list[Row] = [
    ("embed", "*", "x", "Each token id picks its row of W_E. There is no position embedding: positions enter "
                        "through the rotation of Q and K in every block."),
    ("embed_scaled", "*", "x", "Gemma multiplies the embeddings by √d_model = √{n} = {sqrt_n:.4g}: W_E is also the "
                               "output layer, and its rows are small."),
    (On("ln1", block=True, stack=""), "*", "x̂", "RMSNorm before attention. Gemma's gain is 1 + w, the stored w "
                                                 "around 0."),
    (On("ln1_post", block=True, stack=""), "*", "Ô", "The attention output is RMS-normalised (gain 1 + w) before it "
                                                     "joins the stream: Gemma normalises each branch twice, on the "
                                                     "way in and on the way out."),
    (On("ln2", block=True, stack=""), "*", "x̂", "RMSNorm before the MLP (Gemma's pre_feedforward_layernorm)."),
    (On("ln2_post", block=True, stack=""), "*", "F̂", "The MLP output is RMS-normalised (gain 1 + w) before it joins "
                                                      "the stream."),
    ("ln_final", "*", "x̂", "A last RMSNorm (gain 1 + w) before the output layer."),
    (On("attn.q_norm"), "*", "Q̂", "QK-norm: every query head's row is RMS-normalised over its {d_head} dimensions "
                                   "(gain 1 + w, one w per dimension, shared by the heads) before the rotation."),
    (On("attn.k_norm"), "*", "K̂", "QK-norm on the keys too: the scores Q̂·K̂ᵀ cannot grow just because Q or K grew."),
    (On("attn.rot_q"), "*", "Qᵣ", "Rotate every normalised query: pair (i, i + {half}) at position p turns by "
                                  "p·θ^(−2i/{d_head}), θ = {theta:,.0f} here (sliding layers {local_theta:,.0f}, "
                                  "full layers {rope_theta:,.0f}).{assumed_theta}"),
    (On("attn.rot_k"), "*", "Kᵣ", "Rotate every key the same way, with this layer's θ = {theta:,.0f}."),
    (On("attn.k_rep"), "*", "Kᵣ", "Grouped-query attention: {n_heads} query heads, {n_kv_heads} key/value head(s); "
                                  "query head h reads key head h // {group}."),
    (On("attn.v_rep"), "*", "V", "The values are shared the same way: query head h reads value head h // {group}."),
    (On("attn.scores"), "*", "S", "Scores: rotated queries against rotated keys. Row i is query i."),
    (On("attn.scaled"), "*", "S'", "Divide by √query_pre_attn_scalar = √{n} = {sqrt_n:g}, Gemma's scale (the heads "
                                   "are {d_head} wide).{assumed_scale}"),
    (On("attn.window_masked"), "*", "S_w", "Sliding window of {window}: query i sees keys i − {window} + 1 … i only; "
                                           "a key {window} or more back gets −inf (the future was masked "
                                           "already).{assumed_pattern}"),
    (On("mlp.pre"), "*", "G", "The gate: x̂·W_gate, {d_model} → {d_ff} features (no bias)."),
    (On("mlp.pre_linear"), "*", "U", "The up projection: x̂·W_in, {d_model} → {d_ff} features (no bias)."),
    (On("mlp.post"), "*", "H", "GeGLU: gelu(G) ⊙ U, GELU's tanh approximation of the gate deciding how much of each "
                               "feature of U passes."),
    (On("mlp_out"), "*", "F", "The down projection: H·W_out, back to {d_model} features."),
    (On("resid_mid", block=True, stack=""), "*", "x", "Add the normalised attention output to the residual stream."),
    (On("resid_post", block=True, stack=""), "*", "x", "Add the normalised MLP output to the residual stream."),
    ("logits", "*", "logits", "Logits: the residual stream times {unembed_llama}, one score per vocabulary word at "
                              "each position."),
    ("probs", "*", "P", "Softmax over the vocabulary: the next-token probabilities."),
    ("log_probs_pred", "*", "log P[:, :-1]",
     "Position t predicts token t+1; the last position has nothing after it to check against."),
]

ASSUMED = {  # what a GGUF did not store, and llama.cpp's value the run took instead
    "assumed_pattern": ("layer_types", " The file stores no layer pattern: llama.cpp's gemma3 rule, a full layer "
                                       "every 6th."),
    "assumed_theta": ("rope_local_base_freq", " The file stores no local θ: {local_theta:g} is llama.cpp's for "
                                              "gemma3's sliding layers."),
    "assumed_scale": ("query_pre_attn_scalar", " The file stores no attention scale: head_dim^-½, llama.cpp's."),
}


def assumed_context(cfg: Any) -> dict[str, str]:
    given = cfg.assumed.split(",")
    return {k: text.format(local_theta=cfg.local_theta) if key in given else "" for k, (key, text) in ASSUMED.items()}


__all__ = ["GEMMA", "GEMMA_CACHE", "assumed_context"]
