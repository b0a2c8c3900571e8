"""The decoder-only GPT (Radford et al. 2019, GPT-2): token + learned position embeddings, pre-LN blocks
(ln1 → causal multi-head attention → add, ln2 → GELU MLP → add), a final layer norm, logits through the tied
embedding matrix, and the next-token cross-entropy. Shapes carry a batch axis: (B, T, d_model)."""

from __future__ import annotations

from explain.config import Config
from explain.inputs import Inputs
from explain.models.attention import multi_head_attention, token_input
from explain.models.blocks import feed_forward, layer_norm, next_token_loss
from explain.trace import Recorder, Ref


def gpt_block(rec: Recorder, cfg: Config, p: str, x: Ref) -> Ref:
    """x + attn(ln1(x)), then x + mlp(ln2(x)): the residual stream passes through, sublayers add to it."""
    h = layer_norm(rec, cfg, f"{p}.ln1", x, "x̂", note="Pre-LN: normalise before attention (GPT-2).")
    a = multi_head_attention(rec, cfg, f"{p}.attn", h, h, causal=True)  # (B, T, d)
    x = rec.op("add", f"{p}.resid_mid", x, a, sym="x", note="Add the attention output to the residual stream.")
    h = layer_norm(rec, cfg, f"{p}.ln2", x, "x̂", note="Pre-LN: normalise before the MLP.")
    f = feed_forward(rec, cfg, p, h, "gelu")  # (B, T, d)
    return rec.op("add", f"{p}.resid_post", x, f, sym="x", note="Add the MLP output to the residual stream.")


def gpt(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """Embed, run the blocks, unembed, and score the next-token predictions."""
    rec.labels["pos"] = inp.tokens
    B, T = inp.batch, inp.seq_len
    tok = token_input(rec, cfg, inp)  # (B, T, d)
    W_pos = rec.param("W_pos", (cfg.n_ctx, cfg.d_model), ("pos", "d_model"), "normal", sym="W_pos")
    pos = rec.op("pos_embed", "pos_embed", W_pos, n=T, sym="P",  # (T, d)
                 note="Learned positional embedding: row p of W_pos is added at position p.")
    x = rec.op("add", "blocks.0.resid_pre", tok, pos, sym="x",  # (B, T, d): the residual stream begins
               note="The residual stream starts as token embedding + position embedding (broadcast over the batch).")
    for i in range(cfg.n_layers):
        x = gpt_block(rec, cfg, f"blocks.{i}", x)
    x = layer_norm(rec, cfg, "ln_final", x, "x̂", note="A last layer norm before the unembedding.")
    W_E = rec.reuse("W_E")  # tied: the unembedding is the embedding matrix, transposed
    logits = rec.op("linear", "logits", x, W_E, transpose_w=True, sym="logits",  # (B, T, d_vocab)
                    note="Logits: the residual stream times W_Eᵀ (the unembedding is tied to the embedding), "
                         "one score per vocabulary word at each position.")
    rec.op("softmax", "probs", logits, sym="P", note="Softmax over the vocabulary: the next-token probabilities.")
    lp = rec.op("log_softmax", "log_probs", logits, sym="log P")
    if T < 2:
        return  # one token predicts nothing that the input contains: no loss
    lp = rec.op("slice", "log_probs_pred", lp, axis=-2, stop=T - 1, sym="log P[:, :-1]",
                note="Position t predicts token t+1; the last position has nothing after it to check against.")
    labels = [ids[1:] for ids in inp.ids]
    next_token_loss(rec, lp, labels, (B, T - 1), ("batch", "pos"))
