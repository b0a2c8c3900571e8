"""The layers the models are built from, as in nanoGPT's ``model.py``: linear, layer norm, embeddings,
scaled dot-product attention, multi-head attention, the MLP and the next-token loss.

Every operation goes through the recorder (``rec.op``), so the same code runs on arrays or on shapes alone.
Names are relative to the recorder's scope; symbols and narration come from :mod:`explain.models.notation`.
Shapes at line end are for one sequence of T tokens; a batch adds a leading axis.
"""

from __future__ import annotations

import math

from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.core.names import tile_scope, tile_sup
from explain.core.padding import IGNORE_INDEX, ignore_padding, key_padding_mask
from explain.models.kvcache import KVCache
from explain.trace.recorder import Recorder, Ref

GPT2_STD = 0.02  # GPT-2's (and nanoGPT's) std of every weight and embedding at initialisation


def gpt2_init(cfg: Config) -> bool:
    """Whether the model initialises as GPT-2 does (its registry entry says so) rather than as torch's layers."""
    return cfg.spec.can("gpt2_init")


def weight_std(cfg: Config, resid: bool = False) -> float:
    """GPT-2's std: 0.02, and 0.02/√(2·n_layers) for a projection into the residual stream (W_O, W_out), so
    the stream's variance does not grow with depth (the GPT-2 paper, §2.3; nanoGPT's ``c_proj`` init)."""
    return GPT2_STD / math.sqrt(2 * cfg.n_layers) if resid else GPT2_STD


def linear_params(rec: Recorder, d_in: int, d_out: int, w: str = "W", b: str = "b",
                  axes: tuple[str, str] = ("d_in", "d_out"), bias: bool = True, resid: bool = False) -> tuple[Ref, ...]:
    """A weight (d_in, d_out) and bias (d_out,), initialised like nn.Linear (uniform ±1/√d_in), or as GPT-2
    (N(0, 0.02²), biases 0; ``resid``: a projection into the residual stream); no bias when ``bias`` is False
    (the book's ``qkv_bias=False``)."""
    if gpt2_init(rec.config):
        W = rec.param(w, (d_in, d_out), axes, "normal", d_in, std=weight_std(rec.config, resid))
        return (W, rec.param(b, (d_out,), axes[1:], "zeros", d_in)) if bias else (W,)
    W = rec.param(w, (d_in, d_out), axes, "uniform", d_in)
    return (W, rec.param(b, (d_out,), axes[1:], "uniform", d_in)) if bias else (W,)


def head_params(rec: Recorder, cfg: Config, w: str, b: str, d_out: int | None = None,
                bias: bool = True) -> tuple[Ref, ...]:
    """Per-head weights (h, d_model, d_head) and biases (h, d_head), uniform ±1/√d_model (GPT-2: N(0, 0.02²)
    and 0)."""
    h, d, m = cfg.n_heads, cfg.d_model, d_out or cfg.head_dim
    if gpt2_init(cfg):
        W = rec.param(w, (h, d, m), ("head", "d_model", "d_head"), "normal", d, std=GPT2_STD)
        return (W, rec.param(b, (h, m), ("head", "d_head"), "zeros", d)) if bias else (W,)
    W = rec.param(w, (h, d, m), ("head", "d_model", "d_head"), "uniform", d)
    return (W, rec.param(b, (h, m), ("head", "d_head"), "uniform", d)) if bias else (W,)


def layer_norm(rec: Recorder, cfg: Config, name: str, x: Ref) -> Ref:
    """LayerNorm over d_model with learned γ (w, ones) and β (b, zeros)."""
    with rec.scope(name):
        w = rec.param("w", (cfg.d_model,), ("d_model",), "ones", sym="γ")
        b = rec.param("b", (cfg.d_model,), ("d_model",), "zeros", sym="β")
    return rec.op("layer_norm", name, x, w, b, eps=cfg.ln_eps)


def embedding_matrix(rec: Recorder, cfg: Config) -> Ref:
    """W_E (d_vocab, d_model), one row per token, initialised N(0, 1) like nn.Embedding (GPT-2: N(0, 0.02²))."""
    std = GPT2_STD if gpt2_init(cfg) else 1.0
    return rec.param("W_E", (cfg.d_vocab, cfg.d_model), ("vocab", "d_model"), "normal", sym="W_E", std=std)


def embed(rec: Recorder, cfg: Config, inp: Inputs, axis: str = "pos", batched: bool = False,
          W_E: Ref | None = None) -> Ref:
    """X: the given embeddings, or the token ids looked up in W_E (its own, or a shared ``W_E``)."""
    if inp.embeddings is not None:
        lead = ("batch",) if inp.embeddings.ndim == 3 else ()
        return rec.input("embed", inp.embeddings, lead + (axis, "d_model"))  # ([B,] T, d)
    ids, shape = (inp.ids, (inp.batch, inp.seq_len)) if batched else (inp.ids[0], (inp.seq_len,))
    tokens = rec.input("tokens", ids, ("batch", axis) if batched else (axis,), shape=shape)
    W_E = W_E if W_E is not None else embedding_matrix(rec, cfg)
    return rec.op("embed", "embed", tokens, W_E)  # (T, d)


def key_padding(rec: Recorder, inp: Inputs, axis: str = "pos") -> Ref | None:
    """The (batch, T) padding of a right-padded batch, 1 where a position is <pad> (torch's key_padding_mask);
    None when the batch needed no padding."""
    if inp.lengths is None:
        return None
    return rec.input("key_padding", key_padding_mask(inp.lengths, inp.seq_len), ("batch", axis),
                     shape=(inp.batch, inp.seq_len))


def sdpa(rec: Recorder, q: Ref, k: Ref, v: Ref, d_k: int, causal: bool, pad: Ref | None = None,
         window: int | None = None, root: str = "d_k") -> Ref:
    """Scaled dot-product attention, softmax(Q·Kᵀ/√d_k [+ causal mask] [+ window mask] [+ padding mask])·V, one
    recorded step per operation. The masks are steps of their own: they hide different cells for different
    reasons. ``window``: a sliding layer's, hiding the keys i − j ≥ window back; ``root``: the name of the
    scale's n (Gemma divides by √query_pre_attn_scalar). With ``--attention-kernel tiled`` the same result comes
    from :func:`tiled_sdpa`."""
    if rec.config.attention_kernel == "tiled":
        return tiled_sdpa(rec, q, k, v, d_k, causal, pad, window, root)
    s = rec.op("matmul", "scores", q, k, transpose_b=True)  # (T, T)
    return attend(rec, s, v, d_k, causal, pad, window, root)


def attend(rec: Recorder, s: Ref, v: Ref, d_k: int, causal: bool, pad: Ref | None = None,
           window: int | None = None, root: str = "d_k") -> Ref:
    """The rest of :func:`sdpa` from its scores ``s``: scale by 1/√d_k, the masks, softmax, the weighted sum of
    ``v`` (latent attention makes its scores in two parts, :mod:`explain.models.mla`)."""
    s = rec.op("scale", "scaled", s, root=root, n=d_k)
    if causal:
        s = rec.op("mask", "masked", s)  # the future: above the diagonal
    if window is not None:
        s = rec.op("window_mask", "window_masked", s, window=window)  # the distant past: i − j ≥ window
    if pad is not None:
        s = rec.op("pad_mask", "pad_masked", s, pad)  # the <pad> keys: whole columns, per sequence
    a = rec.op("softmax", "pattern", s)  # (T, T), rows sum to 1
    return rec.op("weighted_sum", "z", a, v)  # (T, d_k)


def tiled_sdpa(rec: Recorder, q: Ref, k: Ref, v: Ref, d_k: int, causal: bool, pad: Ref | None = None,
               window: int | None = None, root: str = "d_k") -> Ref:
    """The online softmax (FlashAttention, Dao et al. 2022, Algorithm 1): keys and values in tiles of
    ``--tile`` positions; per query row a running max m, a running sum ℓ and an accumulator O, rescaled by
    exp(m_old − m_new) whenever the max grows; Z = O / ℓ after the last tile. The (T, T) score matrix is
    never built (:mod:`explain.ops.tiled`)."""
    S, B = k.shape[-2], rec.config.attention_tile
    m = ell = o = None
    for t, start in enumerate(range(0, S, B)):
        stop, sup = min(start + B, S), tile_sup(t)
        with rec.scope(tile_scope(t)):
            s = rec.op("tile_scores", "scores", q, k, *([pad] if pad is not None else []), start=start, stop=stop,
                       n=d_k, causal=causal, sym=f"S{sup}", **({"window": window} if window is not None else {}),
                       root=root)  # (T, stop − start)
            new_m = rec.op("tile_max", "max", s, *([m] if m is not None else []), sym=f"m{sup}")  # (T, 1)
            alpha = rec.op("tile_rescale", "rescale", m, new_m, sym=f"α{sup}") if m is not None else None  # (T, 1)
            p = rec.op("tile_exp", "exp", s, new_m, sym=f"P̃{sup}")  # (T, stop − start)
            ell = rec.op("tile_sum", "sum", p, *([ell, alpha] if alpha is not None else []), sym=f"ℓ{sup}")  # (T, 1)
            o = rec.op("tile_acc", "acc", p, v, *([o, alpha] if alpha is not None else []), start=start, stop=stop,
                       sym=f"O{sup}")  # (T, d_k)
            m = new_m
    # Q, K, V (and the padding) too: the drill-down sets the plain kernel's value beside the tiled one
    return rec.op("tile_normalize", "z", o, ell, m, q, k, v, *([pad] if pad is not None else []), n=d_k,
                  causal=causal, tile=B, **({"window": window} if window is not None else {}))  # (T, d_k)


def attention(rec: Recorder, cfg: Config, name: str, x: Ref, memory: Ref | None = None, causal: bool = False,
              cache: KVCache | None = None, pad: Ref | None = None, d_out: int | None = None) -> Ref:
    """Multi-head attention: h heads, each with its own W_Q, W_K, W_V (d × m); concatenate; project with W_O
    (to d_out, by default d_model). Queries come from ``x``; keys and values from ``memory`` (the encoder's
    output) or, by default, ``x``; ``pad`` hides the keys that are <pad>.
    With a key/value ``cache`` (generation: :class:`~explain.models.kvcache.KVCache`), x is one new position
    whose K and V are appended to the cached ones; it comes after all of them, so nothing is masked."""
    h, m, bias = cfg.n_heads, cfg.head_dim, cfg.qkv_bias
    x_kv = x if memory is None else memory
    with rec.scope(name):
        q = rec.op("linear_heads", "q", x, *head_params(rec, cfg, "W_Q", "b_Q", bias=bias))  # (h, T, m)
        k = rec.op("linear_heads", "k", x_kv, *head_params(rec, cfg, "W_K", "b_K", bias=bias))  # (h, S, m)
        v = rec.op("linear_heads", "v", x_kv, *head_params(rec, cfg, "W_V", "b_V", bias=bias))  # (h, S, m)
        if cache is not None:
            k, v = cache.extend(rec, k, v)  # (h, S+1, m) each
            causal = False
        z = sdpa(rec, q, k, v, m, causal, pad)  # (h, T, m)
        z = rec.op("merge_heads", "concat", z)  # (T, h·m)
        W_O, b_O = linear_params(rec, h * m, d_out or cfg.d_model, "W_O", "b_O", ("concat", "d_model"), resid=True)
    return rec.op("linear", f"{name}_out", z, W_O, b_O)  # (T, d)


def mlp(rec: Recorder, cfg: Config, x: Ref, act: str) -> Ref:
    """Position-wise feed-forward: act(x·W_in + b_in)·W_out + b_out, d_model → d_ff → d_model."""
    with rec.scope("mlp"):
        x = rec.op("linear", "pre", x, *linear_params(rec, cfg.d_model, cfg.ff_dim, "W_in", "b_in",
                                                      ("d_model", "d_ff")))  # (T, d_ff)
        x = rec.op(act, "post", x)  # (T, d_ff)
        W_out, b_out = linear_params(rec, cfg.ff_dim, cfg.d_model, "W_out", "b_out", ("d_ff", "d_model"), resid=True)
    return rec.op("linear", "mlp_out", x, W_out, b_out)  # (T, d)


def unembed(rec: Recorder, cfg: Config, x: Ref, W_E: Ref | None = None) -> Ref:
    """Logits, one score per vocabulary word: x·W_Eᵀ with a tied embedding matrix, else x·W_U + b_U."""
    if W_E is not None:
        return rec.op("linear", "logits", x, W_E, transpose_w=True)  # (T, d_vocab)
    with rec.scope("unembed"):
        W_U, b_U = linear_params(rec, cfg.d_model, cfg.d_vocab, "W_U", "b_U", ("d_model", "vocab"))
    return rec.op("linear", "logits", x, W_U, b_U)  # (T, d_vocab)


def next_token_loss(rec: Recorder, log_probs: Ref, labels: list, shape: tuple, axes: tuple,
                    padded: bool = False) -> Ref:
    """Cross-entropy: pick the log-probability of each correct next token, negate, average. In a padded batch a
    target that is padding holds IGNORE_INDEX and is left out of the mean, as torch's ``ignore_index``."""
    ignore = {"ignore_index": IGNORE_INDEX} if padded else {}
    y = rec.input("targets", labels, axes, shape=shape)
    picked = rec.op("pick", "correct_log_probs", log_probs, y, **ignore)
    per = rec.op("neg", "token_loss", picked)
    return rec.op("mean", "loss", per, y, **ignore) if padded else rec.op("mean", "loss", per)


def next_token_head(rec: Recorder, inp: Inputs, logits: Ref) -> None:
    """A decoder's end: the next-token probabilities, their logs and, for two tokens or more, the cross-entropy
    of each position's prediction of the token after it (a <pad> next token ignored)."""
    B, T = inp.batch, inp.seq_len
    rec.op("softmax", "probs", logits)
    log_probs = rec.op("log_softmax", "log_probs", logits)
    if T < 2:
        return  # one token predicts nothing the input contains: no loss
    log_probs = rec.op("slice", "log_probs_pred", log_probs, axis=-2, stop=T - 1)  # (B, T-1, V)
    labels = [ids[1:] for ids in inp.ids]
    if inp.lengths is not None:  # a next token that is <pad> is nothing to learn: ignore_index
        labels = ignore_padding(labels, [n - 1 for n in inp.lengths])
    next_token_loss(rec, log_probs, labels, (B, T - 1), ("batch", "pos"), padded=inp.lengths is not None)
