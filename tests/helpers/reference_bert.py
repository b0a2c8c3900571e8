"""A plain, untraced numpy BertModel with sentence-transformers' mean pooling and normalisation, written from the
paper and transformers' modeling_bert.py without explain's ops, kernels or checkpoint reader: the safetensors read
with ``safetensors.numpy``, erf from the standard library, the tokenizer through ``tokenizers`` directly. The
MiniLM tests hold explain to it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

_erf = np.vectorize(math.erf)


def _ln(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def encode(folder: Path, texts: list[str]) -> list[list[int]]:
    """Each text's ids: [CLS] … [SEP], no padding, no truncation."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return [tok.encode(t).ids for t in texts]


def encoder(folder: Path, batch: list[list[int]]) -> dict[str, np.ndarray]:
    """BertModel's last hidden state (B, T, d), which positions are real (B, T), the first layer's attention
    masked scores and pattern (B, h, T, T) and its GELU output (B, T, d_ff)."""
    cfg = json.loads((folder / "config.json").read_text())
    t = {k.removeprefix("bert."): v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}
    h, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    B, T = len(batch), max(len(b) for b in batch)
    ids = np.array([b + [0] * (T - len(b)) for b in batch])
    real = np.array([[1.0] * len(b) + [0.0] * (T - len(b)) for b in batch])
    x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.token_type_embeddings.weight"][0]
    x = x + t["embeddings.position_embeddings.weight"][:T]
    x = _ln(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    hide = np.where(real[:, None, None, :] > 0, 0.0, -np.inf)
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(name: str, v: np.ndarray, p: str = p) -> np.ndarray:
            return v @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        def heads(v: np.ndarray) -> np.ndarray:
            return v.reshape(B, T, h, -1).transpose(0, 2, 1, 3)

        q, k, v = (heads(lin(f"attention.self.{s}", x)) for s in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1]) + hide
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        z = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, -1)
        x = _ln(x + lin("attention.output.dense", z), t[p + "attention.output.LayerNorm.weight"],
                t[p + "attention.output.LayerNorm.bias"], eps)
        f = lin("intermediate.dense", x)
        f = 0.5 * f * (1 + _erf(f / math.sqrt(2)))
        if i == 0:
            first = dict(pad_masked0=s, pattern0=a, gelu0=f)
        x = _ln(x + lin("output.dense", f), t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps)
    return dict(hidden=x, real=real, **first)


def sentence_embeddings(folder: Path, batch: list[list[int]]) -> np.ndarray:
    """(B, d): mean over each text's tokens of BertModel's last hidden state, divided by its length."""
    out = encoder(folder, batch)
    x, real = out["hidden"], out["real"]
    return (x * real[..., None]).sum(1) / real.sum(1, keepdims=True)


def cosines(e: np.ndarray) -> np.ndarray:
    u = e / np.linalg.norm(e, axis=-1, keepdims=True)
    return u @ u.T
