"""Tutorial 12 ("From logits to text") against a pencil-and-paper derivation in plain numpy: its hand-made
weights make the last position's logits 0.99998 × (W_E[v, 0] − W_E[v, 1]); temperature, top-k, top-p and
softmax are then written out here without explain's kernels. Also: the [generate] table's errors, and
per-sequence temperatures."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.core.errors import UsageError
from explain.core.sampling import make_sampling
from explain.tutorial import check_tutorial, load_tutorial
from explain.tutorial.errors import TutorialError

ROOT = Path(__file__).resolve().parents[2]
TOML = ROOT / "tutorials" / "12-from-logits-to-text.toml"


def by_hand() -> dict[str, np.ndarray]:
    """The tutorial's numbers from its weights: layer norm of the row (1, 0) is (1, −1)·0.5/√(0.25 + ε)."""
    doc = tomllib.loads(TOML.read_text())
    W = np.zeros((45, 2))
    rows = doc["weights"]["W_E"]["values"]
    W[:len(rows)] = rows
    scale = 0.5 / math.sqrt(0.25 + 1e-5)
    logits = scale * (W[:, 0] - W[:, 1])  # the last token, 'is' (id 6), is (1, 0)
    out = {"logits": logits}
    for T in (0.5, 1.0, 2.0):
        z = logits / T
        keep = np.argsort(-z)[:3]  # top-k 3 (no ties here)
        zk = np.full_like(z, -np.inf)
        zk[keep] = z[keep]
        p = np.exp(zk - zk.max())
        p /= p.sum()
        ranked = np.argsort(-p)
        before = np.concatenate([[0.0], np.cumsum(p[ranked])[:-1]])
        zp = zk.copy()
        zp[ranked[before >= 0.85]] = -np.inf  # top-p 0.85
        q = np.exp(zp - zp.max())
        out[f"T{T}"], out[f"k{T}"], out[f"p{T}"], out[f"probs{T}"] = z, zk, zp, q / q.sum()
    return out


def test_the_tutorial_numbers_are_the_hand_derivation() -> None:
    hand = by_hand()
    report = check_tutorial(load_tutorial("12-from-logits-to-text"))
    trace = report.trace
    np.testing.assert_allclose(trace["gen.0.next_logits"].output[0, 0], hand["logits"], atol=1e-12)
    for b, T in enumerate((0.5, 1.0, 2.0)):
        for step, key in (("temperature", "T"), ("top_k", "k"), ("top_p", "p"), ("probs", "probs")):
            np.testing.assert_allclose(trace[f"gen.0.{step}"].output[b, 0], hand[f"{key}{T}"], atol=1e-12)
    # the survivors of both filters: 1, 2 and 3 words, as the narration says
    assert [int(np.isfinite(hand[f"p{T}"]).sum()) for T in (0.5, 1.0, 2.0)] == [1, 2, 3]
    # the numbers the narration quotes
    assert hand["probs1.0"][29] == pytest.approx(1 / (1 + math.exp(-1)), abs=1e-4)
    assert hand["probs2.0"][29] == pytest.approx(1 / (1 + math.exp(-0.5) + math.exp(-1)), abs=1e-4)
    soft = {T: np.exp(hand["logits"] / T) / np.exp(hand["logits"] / T).sum() for T in (0.5, 1.0, 2.0)}
    assert [round(float(soft[T][29]), 2) for T in (0.5, 1.0, 2.0)] == [0.86, 0.60, 0.23]
    assert "cumulative 0.8668 ≥ p = 0.8500 before it" in trace.explain("gen.0.top_p", (0, 0, 30)).lines
    assert "rank 4 > k = 3" in trace.explain("gen.0.top_k", (0, 0, 28)).lines


def test_generate_table_errors_are_located(tmp_path: Path) -> None:
    text = TOML.read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("top_p = 0.85", "top_p = 1.5"))
    with pytest.raises(TutorialError, match="top-p must be more than 0 and at most 1"):
        check_tutorial(load_tutorial(bad))
    bad.write_text(text.replace("top_k = 3", "top_kk = 3"))
    with pytest.raises(TutorialError, match="unknown key 'top_kk' in \\[generate\\]"):
        load_tutorial(bad)


def test_per_sequence_temperatures() -> None:
    trace = explain.generate("gpt", text=["the cat", "the cat"], max_new_tokens=1, temperature=[0.5, 2.0])
    z = trace["gen.0.next_logits"].output
    np.testing.assert_allclose(trace["gen.0.temperature"].output, z / np.array([0.5, 2.0])[:, None, None])
    assert trace["gen.0.temperature"].formula.endswith("(T = 0.5000, 2 for sequences 0, 1, … in turn)")
    with pytest.raises(UsageError, match="temperatures per sequence must be positive"):
        make_sampling(temperature=[0.5, 0.0])
    with pytest.raises(Exception, match="2 temperatures need logits with 2 sequences"):
        explain.generate("gpt", text="the cat", temperature=[0.5, 2.0])
