"""BERT (Devlin et al. 2019), as Hugging Face's ``BertModel`` computes it, and the sentence embedding that
sentence-transformers builds on it (all-MiniLM-L6-v2): the three embeddings (token, learned position, token type)
added and layer-normed, post-LN blocks with a bias on every linear layer, GELU with erf, the padding mask; then
mean pooling over each text's real tokens ([CLS] and [SEP] included), L2 normalisation, and the cosines of every
pair of texts.

Why two texts are similar is recorded too, word pair by word pair: mean pooling is linear, so once the two lengths
‖e‖ are fixed the cosine is exactly a sum over the pairs (token i of one text, token j of the other) of
h_i·h_j / (n_a·n_b·‖e_a‖·‖e_b‖) (``pairs.A_B.parts``; ranked in ``.ranked``; summed in ``.total``).

BertModel's pooler (tanh(W·h_[CLS] + b), for next-sentence prediction) is carried as parameters, so a parameter
count equals BertModel's, but the sentence embedding does not use it. Weights are initialised as transformers
does: N(0, 0.02) for every matrix and embedding, biases 0, γ = 1.
"""

from __future__ import annotations

from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.core.names import pair_scope
from explain.models.layers import key_padding, layer_norm, sdpa
from explain.ops.pairs import ranked_pairs
from explain.trace.recorder import Recorder, Ref

INIT = "normal_0.02"  # transformers' initializer_range
TOKEN_TYPES = 2  # BERT's type_vocab_size: segment A and segment B (a single text is all A)


def weight(rec: Recorder, name: str, shape: tuple[int, ...], axes: tuple[str, ...], sym: str | None = None) -> Ref:
    return rec.param(name, shape, axes, INIT, sym=sym)


def bias(rec: Recorder, name: str, shape: tuple[int, ...], axes: tuple[str, ...]) -> Ref:
    return rec.param(name, shape, axes, "zeros")


def embeddings(rec: Recorder, cfg: Config, inp: Inputs) -> Ref:
    """Token embedding + token type (segment) embedding + learned position embedding, then LayerNorm."""
    B, T, d = inp.batch, inp.seq_len, cfg.d_model
    W_E = weight(rec, "W_E", (cfg.d_vocab, d), ("vocab", "d_model"), sym="W_E")
    W_pos = weight(rec, "W_pos", (cfg.n_ctx, d), ("pos", "d_model"), sym="W_pos")
    W_type = weight(rec, "W_type", (TOKEN_TYPES, d), ("token_type", "d_model"), sym="W_type")
    tokens = rec.input("tokens", inp.ids, ("batch", "pos"), shape=(B, T))
    x = rec.op("embed", "embed", tokens, W_E)  # (B, T, d)
    x = rec.op("add", "embed_typed", x, rec.op("slice", "type_embed", W_type, axis=-2, stop=1))  # every token: type 0
    x = rec.op("add", "embed_sum", x, rec.op("pos_embed", "pos_embed", W_pos, n=T))  # (B, T, d)
    return layer_norm(rec, cfg, "embed_ln", x)  # (B, T, d)


def heads(rec: Recorder, cfg: Config, x: Ref, name: str) -> Ref:
    """X·W_s + b_s for every head: (B, h, T, d_head)."""
    h, d, m, s = cfg.n_heads, cfg.d_model, cfg.head_dim, name.upper()
    W = weight(rec, f"W_{s}", (h, d, m), ("head", "d_model", "d_head"))
    b = [bias(rec, f"b_{s}", (h, m), ("head", "d_head"))] if cfg.qkv_bias else []
    return rec.op("linear_heads", name, x, W, *b)


def attention(rec: Recorder, cfg: Config, x: Ref, pad: Ref | None) -> Ref:
    """Multi-head self-attention, every token seeing every other (only <pad> keys are hidden)."""
    h, m, d = cfg.n_heads, cfg.head_dim, cfg.d_model
    with rec.scope("attn"):
        q, k, v = heads(rec, cfg, x, "q"), heads(rec, cfg, x, "k"), heads(rec, cfg, x, "v")  # (B, h, T, m)
        z = rec.op("merge_heads", "concat", sdpa(rec, q, k, v, m, causal=False, pad=pad))  # (B, T, h·m)
        W_O, b_O = weight(rec, "W_O", (h * m, d), ("concat", "d_model")), bias(rec, "b_O", (d,), ("d_model",))
    return rec.op("linear", "attn_out", z, W_O, b_O)  # (B, T, d)


def mlp(rec: Recorder, cfg: Config, x: Ref) -> Ref:
    """GELU(x·W_in + b_in)·W_out + b_out, d_model → d_ff → d_model."""
    d, f = cfg.d_model, cfg.ff_dim
    with rec.scope("mlp"):
        W_in, b_in = weight(rec, "W_in", (d, f), ("d_model", "d_ff")), bias(rec, "b_in", (f,), ("d_ff",))
        x = rec.op("gelu_erf", "post", rec.op("linear", "pre", x, W_in, b_in))  # (B, T, f)
        W_out, b_out = weight(rec, "W_out", (f, d), ("d_ff", "d_model")), bias(rec, "b_out", (d,), ("d_model",))
    return rec.op("linear", "mlp_out", x, W_out, b_out)  # (B, T, d)


def block(rec: Recorder, cfg: Config, x: Ref, pad: Ref | None) -> Ref:
    """Post-LN: x = LayerNorm(x + attention(x)), then x = LayerNorm(x + MLP(x))."""
    x = layer_norm(rec, cfg, "ln1", rec.op("add", "add1", x, attention(rec, cfg, x, pad)))  # (B, T, d)
    return layer_norm(rec, cfg, "ln2", rec.op("add", "add2", x, mlp(rec, cfg, x)))  # (B, T, d)


def words_of(inp: Inputs) -> list[list[str]]:
    """Each text's real tokens (no <pad>), as the rulers show them."""
    items = inp.batch_tokens or [inp.tokens]
    lengths = inp.lengths or [inp.seq_len] * inp.batch
    return [list(items[b] if b < len(items) else [])[:n] or [f"#{t}" for t in inp.ids[b][:n]]
            for b, n in enumerate(lengths)]


def text_labels(words: list[list[str]]) -> list[str]:
    """One label per text for the cosines' rulers: the words no other text has ('food', 'piece of bread'), since
    texts that begin alike would show the same first letters in a narrow column; all its words when it has none
    of its own."""
    out = []
    for b, w in enumerate(words):
        others = {x.lower() for a, v in enumerate(words) if a != b for x in v}
        own = [x for x in w if x.lower() not in others]
        out.append(" ".join(own or w))
    return out


def pairs(rec: Recorder, x: Ref, pooled: Ref, cos: Ref, words: list[list[str]]) -> None:
    """cos(text a, text b) for every pair a < b, split over their word pairs, ranked, and summed back."""
    for a in range(len(words)):
        for b in range(a + 1, len(words)):
            said = dict(a=a, b=b, words_a=tuple(words[a]), words_b=tuple(words[b]))
            with rec.scope(pair_scope(a, b)):
                parts = rec.op("pair_parts", "parts", x, pooled, n_a=len(words[a]), n_b=len(words[b]), **said)
                rec.op("rank_parts", "ranked", parts, **said)  # (n_a·n_b,)
                rec.op("pair_total", "total", parts, cos, **said)  # Σ parts = cos[a, b]
            if not rec.shape_only:
                rec.labels[f"pairs{a}_{b}"] = [f"{words[a][i]} · {words[b][j]}" for i, j in ranked_pairs(parts.value)]


def bert(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """The encoder, then the sentence head: mean pooling, L2 norm, the cosines, the pairs; with two texts or
    more, the loss 1 − cos(text 1, text 2)."""
    x, pad = embeddings(rec, cfg, inp), key_padding(rec, inp)  # (B, T, d); pad None unless padded
    for i in range(cfg.n_layers):
        with rec.scope(f"blocks.{i}"):
            x = block(rec, cfg, x, pad)  # (B, T, d)
    with rec.scope("pooler"):  # BertModel's, for a parameter count equal to its own: the sentence head skips it
        weight(rec, "W", (cfg.d_model, cfg.d_model), ("d_model", "d_model"))
        bias(rec, "b", (cfg.d_model,), ("d_model",))
    words = words_of(inp)
    for b, w in enumerate(words):
        rec.labels[f"text{b}"] = w
    rec.labels["text"] = text_labels(words)
    with rec.scope("sentence"):
        pooled = rec.op("mean_pool", "pooled", x, *([pad] if pad is not None else []))  # (B, d)
        e = rec.op("l2_normalize", "norm", pooled)  # (B, d), each row of length 1
        cos = rec.op("matmul", "cos", e, e, transpose_b=True)  # (B, B)
    pairs(rec, x, pooled, cos, words)
    if inp.batch > 1:
        rec.op("cosine_loss", "loss", cos, a=0, b=1)


__all__ = ["bert"]
