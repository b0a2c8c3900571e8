"""The Llama decoder (Touvron et al. 2023), as Hugging Face's ``LlamaForCausalLM`` computes it: pre-norm blocks
with RMSNorm, rotary position embeddings on the queries and keys (rotate-half), grouped-query attention (key/value
heads shared by groups of query heads), the SwiGLU MLP, and no biases (Qwen2 adds them to Q, K and V:
``--qkv-bias``). The output layer is the embedding matrix transposed (tied) or its own W_U.

Weights are initialised as transformers does, N(0, 0.02) for every matrix and γ = 1, so at initialisation
the logits are near 0 and the loss near ln(vocabulary).
"""

from __future__ import annotations

from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.models import mla
from explain.models.kvcache import KVCache
from explain.models.layers import key_padding, next_token_head, sdpa
from explain.models.moe import moe_mlp
from explain.trace.recorder import Recorder, Ref

INIT = "normal_0.02"  # transformers' initializer_range


def rms_norm(rec: Recorder, cfg: Config, name: str, x: Ref) -> Ref:
    """RMSNorm over d_model with a learned scale γ (ones)."""
    with rec.scope(name):
        w = rec.param("w", (cfg.d_model,), ("d_model",), "ones", sym="γ")
    return rec.op("rms_norm", name, x, w, eps=cfg.ln_eps)


def weight(rec: Recorder, name: str, shape: tuple[int, ...], axes: tuple[str, ...]) -> Ref:
    return rec.param(name, shape, axes, INIT)


def heads(rec: Recorder, cfg: Config, x: Ref, name: str, n: int) -> Ref:
    """X·W_s (+ b_s with --qkv-bias) for each of ``n`` heads: (…, n, T, d_head)."""
    W = weight(rec, f"W_{name.upper()}", (n, cfg.d_model, cfg.head_dim), ("head", "d_model", "d_head"))
    b = [rec.param(f"b_{name.upper()}", (n, cfg.head_dim), ("head", "d_head"), "zeros")] if cfg.qkv_bias else []
    return rec.op("linear_heads", name, x, W, *b)


def attention(rec: Recorder, cfg: Config, x: Ref, pos: int = 0, cache: KVCache | None = None,
              pad: Ref | None = None, layer: int = 0) -> Ref:
    """Grouped-query attention with rotary positions (or latent attention: :mod:`explain.models.mla`). ``pos`` is
    the position of x's first row; with a ``cache`` (generation) x is one new position whose rotated K and V are
    appended to the cached ones. A sliding layer (--window) hides the keys a window or more back, and its cache
    keeps only the window."""
    if cfg.attention == "mla":  # DeepSeek's latent attention, its own module
        return mla.attention(rec, cfg, x, pos, cache, pad)
    h, kv, m = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    rope = cfg.rope(layer, pos)
    with rec.scope("attn"):
        q = heads(rec, cfg, x, "q", h)  # (B, h, T, m)
        k = heads(rec, cfg, x, "k", kv)  # (B, kv, T, m)
        v = heads(rec, cfg, x, "v", kv)  # (B, kv, T, m)
        q = rec.op("rope", "rot_q", q, **rope)  # (B, h, T, m)
        k = rec.op("rope", "rot_k", k, **rope)  # (B, kv, T, m)
        if cache is not None:
            k, v = cache.extend(rec, k, v, pos)  # (B, kv, S+1, m); a sliding layer's: its window's last only
        if kv < h:  # each key/value head serves h // kv query heads
            k = rec.op("repeat_kv", "k_rep", k, n=h // kv)  # (B, h, S, m)
            v = rec.op("repeat_kv", "v_rep", v, n=h // kv)  # (B, h, S, m)
        window = cfg.window(layer) if cache is None else None  # a cached window holds only keys it may see
        z = sdpa(rec, q, k, v, m, causal=cache is None, pad=pad, window=window)  # (B, h, T, m)
        z = rec.op("merge_heads", "concat", z)  # (B, T, h·m)
        W_O = weight(rec, "W_O", (h * m, cfg.d_model), ("concat", "d_model"))
    return rec.op("linear", "attn_out", z, W_O)  # (B, T, d)


def mlp(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """SwiGLU: W_out·(silu(x·W_gate) ⊙ x·W_in), d_model → d_ff → d_model, no biases."""
    d, f = cfg.d_model, cfg.ff_dim
    with rec.scope("mlp"):
        gate = rec.op("linear", "pre", x, weight(rec, "W_gate", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        up = rec.op("linear", "pre_linear", x, weight(rec, "W_in", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        x = rec.op("swiglu", "post", gate, up)  # (B, T, f)
        W_out = weight(rec, "W_out", (f, d), ("d_ff", "d_model"))
    return rec.op("linear", "mlp_out", x, W_out)  # (B, T, d)


def block(rec: Recorder, cfg: Config, x: Ref, pos: int = 0, cache: KVCache | None = None,
          pad: Ref | None = None, layer: int = 0) -> Ref:
    """Pre-norm: attention and the MLP each read an RMS-normalised copy of the residual stream and add to it.
    With --experts the MLP of block ``layer`` may be a mixture of experts (:mod:`explain.models.moe`)."""
    x = rec.op("add", "resid_mid", x, attention(rec, cfg, rms_norm(rec, cfg, "ln1", x), pos, cache, pad, layer))
    ffn = moe_mlp if cfg.moe_layer(layer) else mlp
    return rec.op("add", "resid_post", x, ffn(rec, cfg, rms_norm(rec, cfg, "ln2", x)))  # (B, T, d)


def unembed(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """Logits: x·W_Eᵀ when the output layer is tied to the embedding, else x·W_U."""
    if cfg.tie_embeddings:
        return rec.op("linear", "logits", x, rec.reuse("W_E"), transpose_w=True)  # (B, T, V)
    with rec.scope("unembed"):
        W_U = weight(rec, "W_U", (cfg.d_model, cfg.d_vocab), ("d_model", "vocab"))
    return rec.op("linear", "logits", x, W_U)  # (B, T, V)


def llama(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Embed the tokens (no position embedding: positions enter through the rotations), run the blocks, a
    final RMSNorm, the logits and the next-token cross-entropy."""
    B, T = inp.batch, inp.seq_len
    W_E = rec.param("W_E", (cfg.d_vocab, cfg.d_model), ("vocab", "d_model"), INIT, sym="W_E")
    tokens = rec.input("tokens", inp.ids, ("batch", "pos"), shape=(B, T))
    x, pad = rec.op("embed", "embed", tokens, W_E), key_padding(rec, inp)  # (B, T, d)
    for i in range(cfg.n_layers):
        with rec.scope(f"blocks.{i}"):
            x = block(rec, cfg, x, pad=pad, layer=i)  # (B, T, d)
    next_token_head(rec, inp, unembed(rec, cfg, rms_norm(rec, cfg, "ln_final", x)))  # (B, T, V)


def llama_step(rec: Recorder, cfg: Config, token: Ref, pos: int, caches: list[KVCache]) -> Ref:
    """The forward pass of the one new position ``pos`` of a generation on the key/value cache."""
    x = rec.op("embed", "embed", token, rec.reuse("W_E"))  # (B, 1, d)
    for i, cache in enumerate(caches):
        with rec.scope(f"blocks.{i}"):
            x = block(rec, cfg, x, pos, cache, layer=i)  # (B, 1, d)
    return unembed(rec, cfg, rms_norm(rec, cfg, "ln_final", x))  # (B, 1, V)


__all__ = ["llama", "llama_step"]
