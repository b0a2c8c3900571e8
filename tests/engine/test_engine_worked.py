"""Worked numbers from the literature, reproduced by the engine.

- Build an LLM from Scratch (Raschka), ch. 3.3: "Your journey starts with one step", 6 tokens × 3 dims. The
  book prints the scores for the query "journey", the weights by sum and by softmax, and z(2), to 4 decimals;
  tolerance 5e-5 (half a unit in the last printed place).
- The Illustrated Transformer (Alammar): q₁·k₁ = 112, q₁·k₂ = 96, ÷ √64 = 14 and 12, softmax 0.88 and 0.12.
  Query/key vectors are chosen by hand to give exactly those dot products (all values exact in binary).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import explain

JOURNEY = np.array([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                    [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
WORDS = "Your journey starts with one step"
BOOK = 5e-5


def test_journey_scores_weights_and_context() -> None:
    t = explain.run("simple", embeddings=JOURNEY, text=WORDS)
    np.testing.assert_allclose(t["attn.scores"].output[1], [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865], atol=BOOK)
    np.testing.assert_allclose(t["attn.pattern"].output[1], [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581], atol=BOOK)
    np.testing.assert_allclose(t["attn.z"].output[1], [0.4419, 0.6515, 0.5683], atol=BOOK)
    # the book's full 6×6 weight matrix, first row, and all six context vectors' first row
    np.testing.assert_allclose(t["attn.pattern"].output[0], [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452], atol=BOOK)
    np.testing.assert_allclose(t["attn.z"].output[0], [0.4421, 0.5931, 0.5790], atol=BOOK)
    assert t.labels["pos"] == WORDS.split()


def test_journey_normalised_by_sum() -> None:
    t = explain.run("simple", embeddings=JOURNEY, normalize="sum")
    np.testing.assert_allclose(t["attn.pattern"].output[1], [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656], atol=BOOK)
    assert t["attn.pattern"].output[1].sum() == pytest.approx(1.0, abs=1e-12)


def thinking_machines_weights(d_k: int = 64) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Embeddings e₀, e₁ (one-hot) and W_Q, W_K, W_V whose rows are q₁; k₁, k₂; v₁, v₂."""
    X = np.zeros((2, d_k))
    X[0, 0] = X[1, 1] = 1.0
    W = {n: np.zeros((d_k, d_k)) for n in ("W_Q", "W_K", "W_V")}
    W["W_Q"][0] = 2.0  # q₁ = (2, …, 2)
    W["W_Q"][1] = 1.0
    W["W_K"][0] = 0.875  # k₁: q₁·k₁ = 64 · 2 · 0.875 = 112
    W["W_K"][1] = 0.75  # k₂: q₁·k₂ = 64 · 2 · 0.75 = 96
    W["W_V"][0, :2] = [1.0, 0.0]  # v₁
    W["W_V"][1, :2] = [0.0, 1.0]  # v₂
    params = {f"attn.{n}": w for n, w in W.items()}
    params.update({f"attn.b_{n[-1]}": np.zeros(d_k) for n in W})
    return X, params


def test_illustrated_transformer_numbers() -> None:
    X, params = thinking_machines_weights()
    t = explain.run("attention", embeddings=X, weights=params, text="Thinking Machines")
    assert t["attn.scores"].output[0, 0] == 112.0 and t["attn.scores"].output[0, 1] == 96.0
    assert t["attn.scaled"].output[0, 0] == 14.0 and t["attn.scaled"].output[0, 1] == 12.0
    e = math.exp(2)  # softmax(14, 12) = (e²/(e²+1), 1/(e²+1)), by hand
    np.testing.assert_allclose(t["attn.pattern"].output[0], [e / (e + 1), 1 / (e + 1)], rtol=1e-12)
    assert round(t["attn.pattern"].output[0, 0], 2) == 0.88 and round(t["attn.pattern"].output[0, 1], 2) == 0.12
    # z₁ = 0.88·v₁ + 0.12·v₂ with v₁ = e₀, v₂ = e₁
    np.testing.assert_allclose(t["attn.z"].output[0, :2], [e / (e + 1), 1 / (e + 1)], rtol=1e-12)


def test_illustrated_transformer_cell_explanations() -> None:
    X, params = thinking_machines_weights()
    t = explain.run("attention", embeddings=X, weights=params, text="Thinking Machines")
    ex = t.explain("attn.scores", (0, 0))
    assert ex.value == 112.0
    assert len(ex.rows) == 64 and sum(r[3] for r in ex.rows) == 112.0
    assert "sum of 64 products = 112" in ex.lines
    ex = t.explain("attn.scaled", (0, 0))
    assert "112 / 8 = 14" in ex.lines and "√d_k = 8" in ex.lines[0]
    ex = t.explain("attn.pattern", (0, 0))
    assert [r[3] for r in ex.rows] == pytest.approx([1.0, math.exp(-2)])  # exps after subtracting the max 14
    assert round(ex.value, 2) == 0.88
