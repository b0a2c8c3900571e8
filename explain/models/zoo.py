"""The models, in the order a course meets them: ``simple``, ``attention``, ``causal``, ``multihead``,
``synthesizer`` (attention alone), ``encoder`` and ``transformer`` (Vaswani et al. 2017, post-LN), ``gpt``
(Radford et al. 2019, pre-LN, batched) and ``llama`` (in :mod:`explain.models.llama`). Each is a function ``(rec, cfg, inputs)`` that records its steps;
the layers are in :mod:`explain.models.layers`, the symbols and narration in :mod:`explain.models.notation`.
"""

from __future__ import annotations

from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.models.kvcache import KVCache
from explain.models.layers import (
    GPT2_STD,
    embed,
    embedding_matrix,
    head_params,
    key_padding,
    layer_norm,
    linear_params,
    mlp,
    next_token_head,
    next_token_loss,
    sdpa,
    unembed,
)
from explain.models.layers import attention as mha
from explain.trace.recorder import Recorder, Ref


def simple(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Self-attention with no trainable weights (Build an LLM from Scratch, §3.3): X·Xᵀ, normalise, ·X."""
    x, pad = embed(rec, cfg, inp, batched=inp.batched), key_padding(rec, inp)  # (T, d)
    with rec.scope("attn"):
        s = rec.op("matmul", "scores", x, x, transpose_b=True)  # (T, T)
        if pad is not None:
            s = rec.op("pad_mask", "pad_masked", s, pad)
        a = rec.op("sum_normalize" if cfg.normalize == "sum" else "softmax", "pattern", s)  # (T, T)
        rec.op("weighted_sum", "z", a, x)  # (T, d)


def single_head(rec: Recorder, cfg: Config, inp: Inputs, causal: bool) -> None:
    """Scaled dot-product attention with one head: Q, K, V projections, softmax(Q·Kᵀ/√d_k)·V."""
    x, pad = embed(rec, cfg, inp, batched=inp.batched), key_padding(rec, inp)  # (T, d)
    d, m, axes, bias = cfg.d_model, cfg.head_dim, ("d_model", "d_head"), cfg.qkv_bias
    with rec.scope("attn"):
        q = rec.op("linear", "q", x, *linear_params(rec, d, m, "W_Q", "b_Q", axes, bias))  # (T, m)
        k = rec.op("linear", "k", x, *linear_params(rec, d, m, "W_K", "b_K", axes, bias))  # (T, m)
        v = rec.op("linear", "v", x, *linear_params(rec, d, m, "W_V", "b_V", axes, bias))  # (T, m)
        sdpa(rec, q, k, v, m, causal, pad)  # (T, m)


def attention(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    single_head(rec, cfg, inp, causal=cfg.causal)


def causal(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    single_head(rec, cfg, inp, causal=True)


def multihead(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Multi-head self-attention over the inputs; with --causal --no-qkv-bias --d-out, the book's
    MultiHeadAttention (Build an LLM from Scratch, §3.6)."""
    x, pad = embed(rec, cfg, inp, batched=inp.batched), key_padding(rec, inp)  # (T, d)
    mha(rec, cfg, "attn", x, causal=cfg.causal, pad=pad, d_out=cfg.out_dim)  # (T, d_out)


def synthesizer(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Dense synthesizer attention (Tay et al. 2020; CS224N a5): the attention logits come from X alone,
    ReLU(X·W₁ + b₁)·W₂ + b₂ per head, with a causal mask; there is no Q·Kᵀ and no √d scaling."""
    x, pad = embed(rec, cfg, inp, batched=inp.batched), key_padding(rec, inp)  # (T, d)
    h, m, T = cfg.n_heads, cfg.head_dim, inp.seq_len
    with rec.scope("attn"):
        hid = rec.op("relu", "relu", rec.op("linear_heads", "hidden", x, *head_params(rec, cfg, "W_1", "b_1")))
        W2 = rec.param("W_2", (m, cfg.n_ctx), ("d_head", "pos"), "uniform", m)  # a column per context position
        b2 = rec.param("b_2", (cfg.n_ctx,), ("pos",), "uniform", m)
        W2 = rec.op("slice", "W_2_used", W2, axis=-1, stop=T)  # (m, T)
        b2 = rec.op("slice", "b_2_used", b2, axis=-1, stop=T)  # (T,)
        s = rec.op("mask", "masked", rec.op("linear", "scores", hid, W2, b2))  # (h, T, T)
        if pad is not None:
            s = rec.op("pad_mask", "pad_masked", s, pad)
        a = rec.op("softmax", "pattern", s)  # (h, T, T)
        v = rec.op("linear_heads", "v", x, *head_params(rec, cfg, "W_V", "b_V"))  # (h, T, m)
        z = rec.op("merge_heads", "concat", rec.op("weighted_sum", "z", a, v))  # (T, h·m)
        W_O, b_O = linear_params(rec, h * m, cfg.d_model, "W_O", "b_O", ("concat", "d_model"))
    rec.op("linear", "attn_out", z, W_O, b_O)  # (T, d)


def embed_positions(rec: Recorder, cfg: Config, inp: Inputs, axis: str, batched: bool,
                    W_E: Ref | None = None) -> Ref:
    """Token embedding ×√d_model plus the sinusoidal positional encoding (§3.4 and §3.5 of the paper)."""
    x = embed(rec, cfg, inp, axis, batched, W_E)  # (T, d)
    if inp.embeddings is None:  # given embeddings are used as they are
        x = rec.op("scale", "embed_scaled", x, root="d_model", n=cfg.d_model, multiply=True)
    pe = rec.op("sinusoid", "pos_embed", n=x.shape[-2], d=cfg.d_model)  # (T, d)
    return rec.op("add", "blocks.0.resid_pre", x, pe)  # (T, d)


def encoder_block(rec: Recorder, cfg: Config, x: Ref, pad: Ref | None = None) -> Ref:
    """Post-LN: x = LayerNorm(x + Sublayer(x)) after self-attention, then after the feed-forward."""
    x = layer_norm(rec, cfg, "ln1", rec.op("add", "add1", x, mha(rec, cfg, "attn", x, pad=pad)))  # (T, d)
    return layer_norm(rec, cfg, "ln2", rec.op("add", "add2", x, mlp(rec, cfg, x, "relu")))  # (T, d)


def decoder_block(rec: Recorder, cfg: Config, y: Ref, memory: Ref, pad: Ref | None = None,
                  memory_pad: Ref | None = None) -> Ref:
    """Masked self-attention, attention over the encoder's output (K, V from memory), feed-forward. ``pad``
    hides the target's <pad> keys, ``memory_pad`` the source's."""
    y = layer_norm(rec, cfg, "ln1", rec.op("add", "add1", y, mha(rec, cfg, "self_attn", y, causal=True, pad=pad)))
    y = layer_norm(rec, cfg, "ln2", rec.op("add", "add2", y, mha(rec, cfg, "cross_attn", y, memory,
                                                                 pad=memory_pad)))
    return layer_norm(rec, cfg, "ln3", rec.op("add", "add3", y, mlp(rec, cfg, y, "relu")))  # (T, d)


def encode(rec: Recorder, cfg: Config, inp: Inputs, axis: str = "pos",
           W_E: Ref | None = None) -> tuple[Ref, Ref | None]:
    """The encoder stack's output, and the source's padding (None when there is none)."""
    x, pad = embed_positions(rec, cfg, inp, axis, inp.batched, W_E), key_padding(rec, inp, axis)  # (S, d)
    for i in range(cfg.n_layers):
        with rec.scope(f"blocks.{i}"):
            x = encoder_block(rec, cfg, x, pad)
    return x, pad


def encoder(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """A stack of post-LN encoder blocks over the input."""
    encode(rec, cfg, inp)


def transformer(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """The encoder-decoder: encode the source; decode the target (shifted right, <bos> first) with masked
    self-attention and attention over the encoder's output; a linear layer to the vocabulary; softmax."""
    rec.labels.update(src=inp.tokens, tgt=inp.target_tokens)
    B = inp.batched  # a batch axis first when the source is a batch
    W_E = embedding_matrix(rec, cfg) if cfg.tie_embeddings else None  # §3.4: one matrix, three uses
    with rec.scope("encoder"):
        memory, memory_pad = encode(rec, cfg, inp, "src", W_E)  # (S, d)
    with rec.scope("decoder"):
        tgt = Inputs(ids=inp.target_ids, tokens=inp.target_tokens, lengths=inp.target_lengths, pad_id=inp.pad_id)
        y, pad = embed_positions(rec, cfg, tgt, "tgt", B, W_E), key_padding(rec, tgt, "tgt")  # (T, d)
        for i in range(cfg.n_layers):
            with rec.scope(f"blocks.{i}"):
                y = decoder_block(rec, cfg, y, memory, pad, memory_pad)  # (T, d)
    logits = unembed(rec, cfg, y, W_E)  # (T, d_vocab): y·W_Eᵀ when tied (§3.4), else y·W_U + b_U
    rec.op("softmax", "probs", logits)
    log_probs = rec.op("log_softmax", "log_probs", logits)
    labels = inp.label_ids if B else inp.label_ids[0]
    shape, axes = ((len(labels), len(labels[0])), ("batch", "tgt")) if B else ((len(labels),), ("tgt",))
    next_token_loss(rec, log_probs, labels, shape, axes, padded=inp.target_lengths is not None)


def gpt_block(rec: Recorder, cfg: Config, x: Ref, cache: KVCache | None = None, pad: Ref | None = None) -> Ref:
    """Pre-LN: the residual stream passes through; attention and the MLP read a normalised copy and add to it.
    With a key/value ``cache``, x is one new position of a generation (:mod:`explain.models.generate`); ``pad``
    hides the <pad> keys of a padded batch."""
    x = rec.op("add", "resid_mid", x, mha(rec, cfg, "attn", layer_norm(rec, cfg, "ln1", x), causal=True,
                                          cache=cache, pad=pad))
    return rec.op("add", "resid_post", x, mlp(rec, cfg, layer_norm(rec, cfg, "ln2", x), "gelu"))  # (B, T, d)


def gpt(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Embed tokens and positions, run the blocks, a final layer norm, logits through the tied embedding
    matrix, and the next-token cross-entropy."""
    T = inp.seq_len
    tok, pad = embed(rec, cfg, inp, batched=True), key_padding(rec, inp)  # (B, T, d); pad None unless padded
    W_pos = rec.param("W_pos", (cfg.n_ctx, cfg.d_model), ("pos", "d_model"), "normal", std=GPT2_STD)
    x = rec.op("add", "blocks.0.resid_pre", tok, rec.op("pos_embed", "pos_embed", W_pos, n=T))  # (B, T, d)
    for i in range(cfg.n_layers):
        with rec.scope(f"blocks.{i}"):
            x = gpt_block(rec, cfg, x, pad=pad)  # (B, T, d)
    next_token_head(rec, inp, tied_logits(rec, layer_norm(rec, cfg, "ln_final", x)))  # (B, T, d_vocab)


def tied_logits(rec: Recorder, x: Ref) -> Ref:
    """GPT's output layer: x·W_Eᵀ, the embedding matrix tied (Press and Wolf 2017, as GPT-2)."""
    return rec.op("linear", "logits", x, rec.reuse("W_E"), transpose_w=True)  # (B, T, d_vocab)


def gpt_step(rec: Recorder, cfg: Config, token: Ref, pos: int, caches: list[KVCache]) -> Ref:
    """The forward pass of the one new position ``pos`` of a generation on the key/value cache: embed, blocks,
    final LN, logits."""
    x = rec.op("embed", "embed", token, rec.reuse("W_E"))  # (B, 1, d)
    x = rec.op("add", "blocks.0.resid_pre", x, rec.op("pos_embed", "pos_embed", rec.reuse("W_pos"), n=1, start=pos))
    for i, cache in enumerate(caches):
        with rec.scope(f"blocks.{i}"):
            x = gpt_block(rec, cfg, x, cache)  # (B, 1, d)
    return tied_logits(rec, layer_norm(rec, cfg, "ln_final", x))  # (B, 1, d_vocab)
