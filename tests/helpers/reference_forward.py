"""Plain, untraced numpy forwards of every model, written independently of the engine (no explain.ops.kernels, no
ops, no recorder): the reference the traced runs are checked against. Each takes the trace's parameters by
name and returns a dict of the few values the test compares."""

from __future__ import annotations

import numpy as np


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _ln(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    sd = np.sqrt(x.var(-1, keepdims=True) + eps)  # np.var is the biased variance
    return (x - mu) / sd * w + b


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _causal(t_q, t_k):
    return np.tril(np.ones((t_q, t_k))) == 0  # True where masked


def _pe(n, d):
    pe = np.zeros((n, d))
    for pos in range(n):
        for i in range(0, d, 2):
            pe[pos, i] = np.sin(pos / 10000 ** (i / d))
            if i + 1 < d:
                pe[pos, i + 1] = np.cos(pos / 10000 ** (i / d))
    return pe


def mha(P, p, xq, xkv, causal):
    """Multi-head attention by explicit loops over heads (the textbook way, not einsum)."""
    heads = []
    for s in range(P[f"{p}.W_Q"].shape[0]):
        q = xq @ P[f"{p}.W_Q"][s] + P[f"{p}.b_Q"][s]
        k = xkv @ P[f"{p}.W_K"][s] + P[f"{p}.b_K"][s]
        v = xkv @ P[f"{p}.W_V"][s] + P[f"{p}.b_V"][s]
        sc = q @ k.T / np.sqrt(q.shape[-1])
        if causal:
            sc = np.where(_causal(*sc.shape), -np.inf, sc)
        heads.append(_softmax(sc) @ v)
    return np.concatenate(heads, axis=-1) @ P[f"{p}.W_O"] + P[f"{p}.b_O"]


def simple(P, X, normalize="softmax"):
    s = X @ X.T
    a = _softmax(s) if normalize == "softmax" else s / s.sum(1, keepdims=True)
    return {"attn.pattern": a, "attn.z": a @ X}


def single_head(P, X, causal=False):
    q = X @ P["attn.W_Q"] + P["attn.b_Q"]
    k = X @ P["attn.W_K"] + P["attn.b_K"]
    v = X @ P["attn.W_V"] + P["attn.b_V"]
    s = q @ k.T / np.sqrt(k.shape[1])
    if causal:
        s = np.where(_causal(*s.shape), -np.inf, s)
    a = _softmax(s)
    return {"attn.pattern": a, "attn.z": a @ v}


def multihead(P, X):
    return {"attn_out": mha(P, "attn", X, X, False)}


def synthesizer(P, X):
    """CS224N a5 dense synthesizer, written as in the assignment: w1 per head, relu, @ w2[:, :T] + b2[:T]."""
    T = X.shape[0]
    heads = []
    for s in range(P["attn.W_1"].shape[0]):
        hid = np.maximum(X @ P["attn.W_1"][s] + P["attn.b_1"][s], 0)
        logits = hid @ P["attn.W_2"][:, :T] + P["attn.b_2"][:T]
        logits = np.where(_causal(T, T), -np.inf, logits)
        v = X @ P["attn.W_V"][s] + P["attn.b_V"][s]
        heads.append(_softmax(logits) @ v)
    return {"attn_out": np.concatenate(heads, -1) @ P["attn.W_O"] + P["attn.b_O"]}


def _ffn(P, p, x, act):
    return act(x @ P[f"{p}.mlp.W_in"] + P[f"{p}.mlp.b_in"]) @ P[f"{p}.mlp.W_out"] + P[f"{p}.mlp.b_out"]


def _encode(P, ids, n_layers, prefix=""):
    d = P[f"{prefix}W_E"].shape[1]
    x = P[f"{prefix}W_E"][ids] * np.sqrt(d) + _pe(len(ids), d)
    for i in range(n_layers):
        p = f"{prefix}blocks.{i}"
        x = _ln(x + mha(P, f"{p}.attn", x, x, False), P[f"{p}.ln1.w"], P[f"{p}.ln1.b"])
        x = _ln(x + _ffn(P, p, x, lambda h: np.maximum(h, 0)), P[f"{p}.ln2.w"], P[f"{p}.ln2.b"])
    return x


def encoder(P, ids, n_layers):
    return {f"blocks.{n_layers - 1}.ln2": _encode(P, ids, n_layers)}


def transformer(P, src, tgt_in, labels, n_layers):
    """Untied (encoder.W_E, decoder.W_E, unembed.W_U + b_U) or, when P has one W_E, tied as in §3.4 of the paper:
    both embeddings and the pre-softmax linear (W_Eᵀ, no bias) are the same matrix."""
    tied = "W_E" in P
    if tied:
        P = {**P, "encoder.W_E": P["W_E"], "decoder.W_E": P["W_E"], "unembed.W_U": P["W_E"].T,
             "unembed.b_U": np.zeros(P["W_E"].shape[0])}
    mem = _encode(P, src, n_layers, "encoder.")
    d = P["decoder.W_E"].shape[1]
    y = P["decoder.W_E"][tgt_in] * np.sqrt(d) + _pe(len(tgt_in), d)
    for i in range(n_layers):
        p = f"decoder.blocks.{i}"
        y = _ln(y + mha(P, f"{p}.self_attn", y, y, True), P[f"{p}.ln1.w"], P[f"{p}.ln1.b"])
        y = _ln(y + mha(P, f"{p}.cross_attn", y, mem, False), P[f"{p}.ln2.w"], P[f"{p}.ln2.b"])
        y = _ln(y + _ffn(P, p, y, lambda h: np.maximum(h, 0)), P[f"{p}.ln3.w"], P[f"{p}.ln3.b"])
    logits = y @ P["unembed.W_U"] + P["unembed.b_U"]
    probs = _softmax(logits)
    loss = -np.mean(np.log(probs[np.arange(len(labels)), labels]))
    return {"logits": logits, "probs": probs, "loss": loss}


def gpt(P, ids, n_layers):
    """ids: (B, T). Pre-LN GPT-2 with the tied unembedding."""
    B, T = ids.shape
    x = P["W_E"][ids] + P["W_pos"][:T]
    for i in range(n_layers):
        p = f"blocks.{i}"
        x = x + np.stack([mha(P, f"{p}.attn", h, h, True) for h in _ln(x, P[f"{p}.ln1.w"], P[f"{p}.ln1.b"])])
        x = x + _ffn(P, p, _ln(x, P[f"{p}.ln2.w"], P[f"{p}.ln2.b"]), _gelu)
    logits = _ln(x, P["ln_final.w"], P["ln_final.b"]) @ P["W_E"].T
    probs = _softmax(logits)
    # next-token cross-entropy: position t predicts token t+1
    picked = np.array([[probs[b, t, ids[b, t + 1]] for t in range(T - 1)] for b in range(B)])
    return {"logits": logits, "probs": probs, "loss": -np.mean(np.log(picked))}


def _rms(x, w, eps):
    return x / np.sqrt((x**2).mean(-1, keepdims=True) + eps) * w


def _rope(x, theta):
    """Rotate-half RoPE, position p = row index: pair (i, i + d/2) turns by p·θ^(−2i/d)."""
    T, d = x.shape[-2], x.shape[-1]
    ang = np.arange(T)[:, None] * theta ** (-np.arange(0, d, 2) / d)[None, :]
    c, s = np.cos(ang), np.sin(ang)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * c - b * s, b * c + a * s], axis=-1)


def _swiglu_mlp(x, wg, wi, wo):
    g = x @ wg
    return (g / (1 + np.exp(-g)) * (x @ wi)) @ wo


def _route(scores, bias, k, n_group, topk_group):
    """Indices (N, k) of the chosen experts: ranked by scores + bias, in the best groups, ties to the lower index."""
    c = scores + bias
    N, E = c.shape
    if n_group > 1:
        g = np.sort(c.reshape(N, n_group, E // n_group), axis=-1)[..., -2:].sum(-1)
        keep = np.zeros((N, n_group), bool)
        np.put_along_axis(keep, np.argsort(-g, axis=-1, kind="stable")[:, :topk_group], True, axis=-1)
        c = np.where(np.repeat(keep, E // n_group, axis=-1), c, -np.inf)
    return np.argsort(-c, axis=-1, kind="stable")[:, :k]


def _moe(P, p, x, cfg):
    """The mixture as transformers runs it: each expert on the rows routed to it only, added in with its weight."""
    logits = x @ P[f"{p}.W_router"]
    scores = _softmax(logits) if cfg.router == "softmax" else 1 / (1 + np.exp(-logits))
    bias = P.get(f"{p}.b_choice", 0.0)
    idx = _route(scores, bias, cfg.experts_per_token, cfg.n_group, cfg.topk_group)
    w = np.take_along_axis(scores, idx, axis=-1)
    if cfg.norm_topk_prob:
        w = w / w.sum(-1, keepdims=True)
    w = w * cfg.routed_scaling_factor
    out = np.zeros_like(x)
    for e in range(P[f"{p}.experts.W_gate"].shape[0]):
        rows, slot = np.nonzero(idx == e)
        if rows.size:
            y = _swiglu_mlp(x[rows], P[f"{p}.experts.W_gate"][e], P[f"{p}.experts.W_in"][e], P[f"{p}.experts.W_out"][e])
            out[rows] += w[rows, slot, None] * y  # a token goes to an expert once: rows are distinct
    if cfg.n_shared_experts:
        s = _swiglu_mlp(x, P[f"{p}.shared.W_gate"], P[f"{p}.shared.W_in"], P[f"{p}.shared.W_out"])
        if cfg.shared_expert_gate:
            s = s / (1 + np.exp(-(x @ P[f"{p}.W_shared_gate"])))
        out = out + s
    return out, idx, w


def llama_moe(P, ids, cfg):
    """ids: (B, T). A Llama decoder (RMSNorm, rotate-half RoPE, grouped-query attention, SwiGLU; q/k/v biases with
    qkv_bias) whose
    MLPs after the first cfg.first_k_dense_replace are mixtures of experts; ``cfg`` an explain Config (read for its
    numbers only). Returns the logits, probabilities, loss and each mixture layer's chosen experts and weights."""
    B, T = ids.shape
    h, kv, m, eps = cfg.n_heads, cfg.kv_heads, cfg.head_dim, cfg.ln_eps
    x = P["W_E"][ids]
    chosen = {}
    for i in range(cfg.n_layers):
        p = f"blocks.{i}"
        a = _rms(x, P[f"{p}.ln1.w"], eps)[:, None]  # (B, 1, T, d): every head reads it
        q, k, v = (a @ P[f"{p}.attn.W_{n}"] + (P[f"{p}.attn.b_{n}"][:, None] if cfg.qkv_bias else 0.0)
                   for n in "QKV")  # (B, heads, T, m); k and v have the key/value heads
        q, k = _rope(q, cfg.rope_theta), _rope(k, cfg.rope_theta)
        k, v = np.repeat(k, h // kv, axis=1), np.repeat(v, h // kv, axis=1)  # query head s reads kv head s // (h/kv)
        sc = np.where(_causal(T, T), -np.inf, q @ k.swapaxes(-1, -2) / np.sqrt(m))
        z = (_softmax(sc) @ v).transpose(0, 2, 1, 3).reshape(B, T, h * m)  # heads side by side
        x = x + z @ P[f"{p}.attn.W_O"]
        a = _rms(x, P[f"{p}.ln2.w"], eps).reshape(B * T, -1)
        if cfg.n_experts is not None and i >= cfg.first_k_dense_replace:
            y, idx, w = _moe(P, f"{p}.mlp", a, cfg)
            chosen[i] = (idx.reshape(B, T, -1), w.reshape(B, T, -1))
        else:
            y = _swiglu_mlp(a, P[f"{p}.mlp.W_gate"], P[f"{p}.mlp.W_in"], P[f"{p}.mlp.W_out"])
        x = x + y.reshape(B, T, -1)
    logits = _rms(x, P["ln_final.w"], eps) @ (P["W_E"].T if cfg.tie_embeddings else P["unembed.W_U"])
    probs = _softmax(logits)
    picked = np.array([[probs[b, t, ids[b, t + 1]] for t in range(T - 1)] for b in range(B)])
    return {"logits": logits, "probs": probs, "loss": -np.mean(np.log(picked)), "chosen": chosen}
