"""The Gemma 3 text decoder (Gemma Team 2025, "Gemma 3 Technical Report"), as Hugging Face's ``Gemma3ForCausalLM``
computes it. What differs from the Llama block (:mod:`explain.models.llama`, whose projections, rotation and
output layer it reuses):

- the embeddings are multiplied by √d_model;
- every RMSNorm scales by (1 + w), its stored w starting at 0, and a block normalises four times: before and
  after attention, before and after the MLP (the "after" norms sit inside the residual branch, so the stream
  stays a sum);
- queries and keys are RMS-normalised per head (QK-norm, over d_head) before the rotation;
- the scores are divided by √query_pre_attn_scalar, not √d_head;
- local and global layers: a sliding layer sees only the ``--window`` most recent keys and rotates with its own
  θ (10,000), a full layer sees every earlier key (θ 1,000,000); Gemma 3 has five sliding layers to one full;
- the MLP is GeGLU: down(gelu_tanh(gate(x)) ⊙ up(x)).

Weights are initialised as transformers does: N(0, 0.02) for every matrix and w = 0 for the norms (a gain of 1).
"""

from __future__ import annotations

from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.models.kvcache import KVCache
from explain.models.layers import key_padding, next_token_head, sdpa
from explain.models.llama import INIT, unembed, weight
from explain.trace.recorder import Recorder, Ref


def norm(rec: Recorder, cfg: Config, name: str, x: Ref, width: int | None = None) -> Ref:
    """Gemma's RMSNorm: x / √(mean(x²) + ε) · (1 + w) over d_model (or over d_head for QK-norm: ``width``)."""
    with rec.scope(name):
        w = rec.param("w", (width or cfg.d_model,), ("d_head" if width else "d_model",), "zeros", sym="w")
    return rec.op("rms_norm", name, x, w, eps=cfg.ln_eps, plus_one=True)


def project(rec: Recorder, cfg: Config, x: Ref, name: str, n: int) -> Ref:
    """X·W_s for each of ``n`` heads, no bias: (…, n, T, d_head)."""
    W = weight(rec, f"W_{name.upper()}", (n, cfg.d_model, cfg.head_dim), ("head", "d_model", "d_head"))
    return rec.op("linear_heads", name, x, W)


def attention(rec: Recorder, cfg: Config, x: Ref, layer: int, pos: int = 0, cache: KVCache | None = None,
              pad: Ref | None = None) -> Ref:
    """Grouped-query attention with QK-norm, the layer's rotary base and, in a sliding layer, the window."""
    h, kv, m = cfg.n_heads, cfg.kv_heads, cfg.head_dim
    rope = cfg.rope(layer, pos)
    with rec.scope("attn"):
        q = norm(rec, cfg, "q_norm", project(rec, cfg, x, "q", h), m)  # (B, h, T, m)
        k = norm(rec, cfg, "k_norm", project(rec, cfg, x, "k", kv), m)  # (B, kv, T, m)
        v = project(rec, cfg, x, "v", kv)  # (B, kv, T, m)
        q = rec.op("rope", "rot_q", q, **rope)  # (B, h, T, m)
        k = rec.op("rope", "rot_k", k, **rope)  # (B, kv, T, m)
        if cache is not None:
            k, v = cache.extend(rec, k, v, pos)  # (B, kv, S+1, m); a window's last keys only
        if kv < h:  # each key/value head serves h // kv query heads
            k = rec.op("repeat_kv", "k_rep", k, n=h // kv)  # (B, h, S, m)
            v = rec.op("repeat_kv", "v_rep", v, n=h // kv)  # (B, h, S, m)
        window = cfg.window(layer) if cache is None else None  # a cached window holds only keys it may see
        z = sdpa(rec, q, k, v, cfg.attn_scalar, causal=cache is None, pad=pad, window=window,
                 root="query_pre_attn_scalar")  # (B, h, T, m)
        z = rec.op("merge_heads", "concat", z)  # (B, T, h·m)
        W_O = weight(rec, "W_O", (h * m, cfg.d_model), ("concat", "d_model"))
    return rec.op("linear", "attn_out", z, W_O)  # (B, T, d)


def mlp(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """GeGLU: W_out·(gelu(x·W_gate) ⊙ x·W_in), d_model → d_ff → d_model, no biases."""
    d, f = cfg.d_model, cfg.ff_dim
    with rec.scope("mlp"):
        gate = rec.op("linear", "pre", x, weight(rec, "W_gate", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        up = rec.op("linear", "pre_linear", x, weight(rec, "W_in", (d, f), ("d_model", "d_ff")))  # (B, T, f)
        x = rec.op("geglu", "post", gate, up)  # (B, T, f)
        W_out = weight(rec, "W_out", (f, d), ("d_ff", "d_model"))
    return rec.op("linear", "mlp_out", x, W_out)  # (B, T, d)


def block(rec: Recorder, cfg: Config, x: Ref, layer: int, pos: int = 0, cache: KVCache | None = None,
          pad: Ref | None = None) -> Ref:
    """Four norms: each branch reads a normalised copy of the stream and is normalised again before it is added."""
    a = attention(rec, cfg, norm(rec, cfg, "ln1", x), layer, pos, cache, pad)  # (B, T, d)
    x = rec.op("add", "resid_mid", x, norm(rec, cfg, "ln1_post", a))  # (B, T, d)
    f = mlp(rec, cfg, norm(rec, cfg, "ln2", x))  # (B, T, d)
    return rec.op("add", "resid_post", x, norm(rec, cfg, "ln2_post", f))  # (B, T, d)


def embed(rec: Recorder, cfg: Config, tokens: Ref) -> Ref:
    """The token's row of W_E times √d_model (Gemma's scaled embedding)."""
    x = rec.op("embed", "embed", tokens, rec.reuse("W_E"))  # (B, T, d)
    return rec.op("scale", "embed_scaled", x, root="d_model", n=cfg.d_model, multiply=True)  # (B, T, d)


def gemma(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Embed and scale the tokens, run the blocks (local and global), a final norm, the logits and the
    next-token cross-entropy."""
    B, T = inp.batch, inp.seq_len
    rec.param("W_E", (cfg.d_vocab, cfg.d_model), ("vocab", "d_model"), INIT, sym="W_E")
    tokens = rec.input("tokens", inp.ids, ("batch", "pos"), shape=(B, T))
    x, pad = embed(rec, cfg, tokens), key_padding(rec, inp)  # (B, T, d)
    for i in range(cfg.n_layers):
        with rec.scope(f"blocks.{i}"):
            x = block(rec, cfg, x, i, pad=pad)  # (B, T, d)
    next_token_head(rec, inp, unembed(rec, cfg, norm(rec, cfg, "ln_final", x)))  # (B, T, V)


def gemma_step(rec: Recorder, cfg: Config, token: Ref, pos: int, caches: list[KVCache]) -> Ref:
    """The forward pass of the one new position ``pos`` of a generation on the key/value cache."""
    x = embed(rec, cfg, token)  # (B, 1, d)
    for i, cache in enumerate(caches):
        with rec.scope(f"blocks.{i}"):
            x = block(rec, cfg, x, i, pos, cache)  # (B, 1, d)
    return unembed(rec, cfg, norm(rec, cfg, "ln_final", x))  # (B, 1, V)


__all__ = ["gemma", "gemma_step"]
