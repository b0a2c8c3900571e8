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
