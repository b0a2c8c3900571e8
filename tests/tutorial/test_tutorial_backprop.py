"""Tutorial 14's numbers, re-derived with plain numpy from its own TOML (embeddings, weights, given ∂L/∂Z),
never from the engine: the forward scores and weights, and every gradient the tutorial expects, from the
textbook formulas written out here."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _array(spec) -> np.ndarray:
    if isinstance(spec, dict):
        out = np.full(spec["shape"], float(spec.get("fill", 0.0)))
        if "values" in spec:
            c = np.array(spec["values"], dtype=float)
            out[tuple(slice(0, n) for n in c.shape)] = c
        return out
    return np.array(spec, dtype=float)


def test_backprop_tutorial_expects_what_the_formulas_give() -> None:
    doc = tomllib.loads((ROOT / "tutorials" / "14-backpropagation-through-attention.toml").read_text())
    X = _array(doc["options"]["embeddings"])
    W = {k.split(".")[1]: _array(v) for k, v in doc["weights"].items()}
    G = _array(doc["options"]["grad_output"])
    d_k = doc["options"]["d_head"]
    Q, K, V = X @ W["W_Q"] + W["b_Q"], X @ W["W_K"] + W["b_K"], X @ W["W_V"] + W["b_V"]
    S = Q @ K.T
    Sp = S / np.sqrt(d_k)
    future = np.triu(np.ones(S.shape, dtype=bool), k=1)
    Sm = np.where(future, -np.inf, Sp)
    A = np.exp(Sm - Sm.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    dA = G @ V.T  # Z = A·V
    dSm = A * (dA - (dA * A).sum(-1, keepdims=True))  # the softmax Jacobian, row by row
    dSp = np.where(future, 0.0, dSm)  # a masked score gets no gradient
    dS = dSp / np.sqrt(d_k)
    dQ = dS @ K
    stops = {s["step"]: s["expect"] for s in doc["stops"]}
    tol = 1e-12
    np.testing.assert_allclose(stops["attn.scaled"]["values"], Sp, atol=tol)
    np.testing.assert_allclose(stops["attn.pattern"]["values"], A, atol=1e-10)
    np.testing.assert_allclose(stops["attn.pattern.grad"]["values"], dA, atol=tol)
    np.testing.assert_allclose(stops["attn.masked.grad"]["values"], dSm, atol=1e-10)
    np.testing.assert_allclose(stops["attn.scores.grad"]["values"], dS, atol=1e-12)
    np.testing.assert_allclose(stops["attn.q.grad"]["values"], dQ[:, 2], atol=1e-12)
    # the story the narration tells: the saturated row's gradient is about a million times smaller
    assert 1e5 < abs(dS[1, 1]) / abs(dS[2, 1]) < 1e7
    assert np.all(dSp[future] == 0) and dA[0, 1] == 1
