"""The original transformer (Vaswani et al. 2017): the post-LN ``encoder`` stack and the full encoder-decoder
``transformer``, plus the feed-forward, layer-norm and loss pieces that ``gpt`` shares."""

from __future__ import annotations

import math

from explain.config import Config
from explain.inputs import Inputs
from explain.models.attention import linear_params, multi_head_attention, token_input
from explain.trace import Recorder, Ref


def layer_norm(rec: Recorder, cfg: Config, name: str, x: Ref, sym: str, note: str | None = None) -> Ref:
    """LayerNorm over d_model with learned γ (w, ones) and β (b, zeros)."""
    w = rec.param(f"{name}.w", (cfg.d_model,), ("d_model",), "ones", sym="γ")
    b = rec.param(f"{name}.b", (cfg.d_model,), ("d_model",), "zeros", sym="β")
    return rec.op("layer_norm", name, x, w, b, eps=cfg.ln_eps, sym=sym, note=note)


def feed_forward(rec: Recorder, cfg: Config, p: str, x: Ref, act: str) -> Ref:
    """Position-wise feed-forward: act(x·W_in + b_in)·W_out + b_out, d_model → d_ff → d_model."""
    W_in, b_in = linear_params(rec, f"{p}.mlp", cfg.d_model, cfg.ff_dim, "W_in", "b_in", ("d_model", "d_ff"))
    pre = rec.op("linear", f"{p}.mlp.pre", x, W_in, b_in, sym="H",  # (T, d_ff)
                 note=f"Feed-forward, first layer: widen each position from {cfg.d_model} to {cfg.ff_dim} features.")
    post = rec.op(act, f"{p}.mlp.post", pre, sym="H'")
    W_out, b_out = linear_params(rec, f"{p}.mlp", cfg.ff_dim, cfg.d_model, "W_out", "b_out", ("d_ff", "d_model"))
    return rec.op("linear", f"{p}.mlp_out", post, W_out, b_out, sym="F",  # (T, d_model)
                  note="Feed-forward, second layer: back to d_model. Each position is transformed on its own.")


def embed_with_positions(rec: Recorder, cfg: Config, inp: Inputs, prefix: str, axis: str) -> Ref:
    """Token embedding ×√d_model plus the sinusoidal positional encoding (§3.4 and §3.5 of the paper)."""
    x = token_input(rec, cfg, inp, prefix, axis)  # (T, d)
    if inp.embeddings is None or prefix == "decoder.":
        x = rec.op("scale", f"{prefix}embed_scaled", x, divisor=math.sqrt(cfg.d_model), multiply=True,
                   label="√d_model", source=f"np.sqrt({cfg.d_model})", sym="X'",
                   note=f"The paper multiplies the embeddings by √d_model = {math.sqrt(cfg.d_model):.4g} (§3.4).")
    n = x.shape[-2]
    pe = rec.op("sinusoid", f"{prefix}pos_embed", n=n, d=cfg.d_model, sym="PE")
    return rec.op("add", f"{prefix}blocks.0.resid_pre", x, pe, sym="X₀",
                  note="Add the positional encoding, so the same word at two positions gives two different vectors.")


def add_norm(rec: Recorder, cfg: Config, p: str, i: int, x: Ref, sub: Ref, what: str) -> Ref:
    """Add & Norm (post-LN): LayerNorm(x + Sublayer(x))."""
    s = rec.op("add", f"{p}.add{i}", x, sub, sym="x + sub",
               note=f"Residual connection: add the {what} output to its input.")
    return layer_norm(rec, cfg, f"{p}.ln{i}", s, "N", note="Layer norm after the residual add (post-LN).")


def encoder_block(rec: Recorder, cfg: Config, p: str, x: Ref) -> Ref:
    """Self-attention, add & norm, feed-forward, add & norm."""
    a = multi_head_attention(rec, cfg, f"{p}.attn", x, x, causal=False)
    x = add_norm(rec, cfg, p, 1, x, a, "self-attention")
    f = feed_forward(rec, cfg, p, x, "relu")
    return add_norm(rec, cfg, p, 2, x, f, "feed-forward")


def decoder_block(rec: Recorder, cfg: Config, p: str, x: Ref, memory: Ref) -> Ref:
    """Masked self-attention, add & norm, encoder-decoder attention (K, V from the encoder), add & norm,
    feed-forward, add & norm."""
    a = multi_head_attention(rec, cfg, f"{p}.self_attn", x, x, causal=True)
    x = add_norm(rec, cfg, p, 1, x, a, "masked self-attention")
    c = multi_head_attention(rec, cfg, f"{p}.cross_attn", x, memory, causal=False)
    x = add_norm(rec, cfg, p, 2, x, c, "encoder-decoder attention")
    f = feed_forward(rec, cfg, p, x, "relu")
    return add_norm(rec, cfg, p, 3, x, f, "feed-forward")


def encode(rec: Recorder, cfg: Config, inp: Inputs, prefix: str = "", axis: str = "pos") -> Ref:
    x = embed_with_positions(rec, cfg, inp, prefix, axis)
    for i in range(cfg.n_layers):
        x = encoder_block(rec, cfg, f"{prefix}blocks.{i}", x)
    return x


def next_token_loss(rec: Recorder, log_probs: Ref, labels: list | list[list], shape: tuple, batch_axes: tuple) -> None:
    """Cross-entropy: pick the log-probability of each correct next token, negate, average."""
    targets = rec.input("targets", labels, batch_axes, "y", "The correct next token at each position.", shape=shape)
    picked = rec.op("pick", "correct_log_probs", log_probs, targets, sym="log p(y)")
    per = rec.op("neg", "token_loss", picked, sym="ℓ",
                 note="Cross-entropy at each position: −log p(correct next token). p = 1 costs 0; p → 0 costs ∞.")
    rec.op("mean", "loss", per, sym="L", note="The loss: the mean of −log p(correct next token) over positions.")


def encoder(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """A stack of post-LN encoder blocks over the input."""
    rec.labels["pos"] = inp.tokens
    encode(rec, cfg, inp)


def transformer(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """The encoder-decoder: encode the source; decode the target (shifted right, <bos> first) with masked
    self-attention and attention over the encoder's output; a linear layer to the vocabulary; softmax."""
    rec.labels.update(src=inp.tokens, tgt=inp.target_tokens)
    memory = encode(rec, cfg, inp, "encoder.", "src")  # (S, d)
    dec_in = Inputs(ids=[inp.target_ids], tokens=inp.target_tokens)
    y = embed_with_positions(rec, cfg, dec_in, "decoder.", "tgt")  # (T, d)
    for i in range(cfg.n_layers):
        y = decoder_block(rec, cfg, f"decoder.blocks.{i}", y, memory)
    W_U, b_U = linear_params(rec, "unembed", cfg.d_model, cfg.d_vocab, "W_U", "b_U", ("d_model", "vocab"))
    logits = rec.op("linear", "logits", y, W_U, b_U, sym="logits",  # (T, d_vocab)
                    note="The final linear layer: one score per vocabulary word at each decoder position.")
    rec.op("softmax", "probs", logits, sym="P", note="Softmax over the vocabulary: the next-word probabilities.")
    lp = rec.op("log_softmax", "log_probs", logits, sym="log P")
    next_token_loss(rec, lp, inp.label_ids, (len(inp.label_ids),), ("tgt",))
