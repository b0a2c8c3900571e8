"""Tutorial 27's numbers (What BERT sees, on all-MiniLM-L6-v2), derived again with a plain numpy BertModel written
without explain (tests/helpers/reference_bert.py): every stop's expectation and every figure its narration and answers
quote, to their 4 decimals. The tutorial machinery checks explain's run against the same expectations, so explain,
this derivation and the text agree. Marked network (the model is fetched once per run): fails, never skips."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import reference_bert
from minilm import minilm

pytestmark = pytest.mark.network
TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "27-what-bert-sees.toml"


def derive() -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The steps the stops expect, and the narrated figures by name."""
    doc = tomllib.loads(TUTORIAL.read_text())
    folder = minilm()
    batch = reference_bert.encode(folder, doc["options"]["text"])
    out = reference_bert.encoder(folder, batch)
    h, real = out["hidden"], out["real"]
    n = real.sum(1)
    pooled = (h * real[..., None]).sum(1) / n[:, None]
    length = np.linalg.norm(pooled, axis=1)
    norm = pooled / length[:, None]
    cos = norm @ norm.T
    T = h.shape[1]
    ids = np.array([b + [0] * (T - len(b)) for b in batch])

    def parts(a: int, b: int) -> np.ndarray:
        return h[a, : int(n[a])] @ h[b, : int(n[b])].T / (n[a] * n[b] * length[a] * length[b])

    def ranked(p: np.ndarray) -> np.ndarray:
        flat = p.reshape(-1)
        return flat[np.argsort(-np.abs(flat), kind="stable")][:, None]

    p01, p02 = parts(0, 1), parts(0, 2)
    steps = {"tokens": ids, "key_padding": 1 - real, "blocks.0.attn.pattern": out["pattern0"],
             "blocks.0.attn.pad_masked": out["pad_masked0"],
             "blocks.0.mlp.post": out["gelu0"], "sentence.pooled": pooled, "sentence.norm": norm,
             "sentence.cos": cos, "pairs.0_1.parts": p01, "pairs.0_1.ranked": ranked(p01),
             "pairs.0_1.total": p01.sum(), "pairs.0_2.ranked": ranked(p02), "loss": 1 - cos[0, 1]}
    neg = p02[p02 < 0]
    r01 = ranked(p01)[:, 0]
    figures = {
        "cls→sep": out["pattern0"][0, 0, 0, 7], "cls→cls": out["pattern0"][0, 0, 0, 0],
        "gelu min": min(0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in np.linspace(-1, -0.5, 50001)),
        "pooled": pooled[0, 0], "length0": length[0], "length1": length[1], "length2": length[2],
        "norm": norm[0, 0], "cos01": cos[0, 1], "cos02": cos[0, 2], "cos12": cos[1, 2],
        "eating·eating": p01[4, 4], "man·man": p01[2, 2], "food·eating": p01[5, 4], "food·bread": p01[5, 8],
        "first five": r01[:5].sum(), "negative sum": neg.sum(), "positive sum": p02[p02 > 0].sum(),
        "man·baby": p02[2, 6], "loss": 1 - cos[0, 1],
    }
    counts = {"tokens": [int(x) for x in n], "parts01": p01.size, "parts02": p02.size, "negative": neg.size,
              "positive": int((p02 > 0).sum()), "man with girl only": [j for j, v in enumerate(p02[2]) if v > 0]}
    assert counts == {"tokens": [8, 11, 9], "parts01": 88, "parts02": 72, "negative": 48, "positive": 24,
                      "man with girl only": [2]}, counts
    assert (p01 > 0).all() and ids[0, 0] == 101 and ids[0, 7] == 102
    return steps, figures


def test_every_expectation_is_derived_again() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    steps, _ = derive()
    for stop in doc["stops"]:
        want, got = stop["expect"], np.asarray(steps[stop["step"]])
        if "shape" in want:
            assert list(got.shape) == want["shape"], stop["step"]
        if "value" in want:
            v = got[tuple(stop["cell"])]
            assert v == want["value"] or abs(v - want["value"]) < 5e-5, stop["step"]  # −inf is itself
        if "values" in want:
            np.testing.assert_allclose(np.asarray(want["values"], dtype=float), got, atol=5e-5, err_msg=stop["step"])
        if "min" in want:
            assert got.min() >= want["min"], stop["step"]


def test_the_narrated_figures() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    text = " ".join(" ".join(s.get(k, "") for k in ("narration", "answer")) for s in doc["stops"])
    quoted = {float(x.replace("−", "-")) for x in re.findall(r"[−-]?\d+\.\d{4}\b", text)}
    _, figures = derive()
    said = {name: round(float(v), 4) for name, v in figures.items()}
    missing = {name: v for name, v in said.items() if v not in quoted}
    assert not missing, f"derived but not in the narration: {missing}"
    assert quoted <= set(said.values()), f"quoted but not derived: {quoted - set(said.values())}"
