"""The Gemma tutorial's numbers, derived again here from its own weights with numpy alone (no explain): every stop's
expected values, and the figures its narration quotes (4 decimals): the rotate-half and interleaved rotations of
the same query, and the score a misread layout gives. The run is checked against the same expectations by the
tutorial machinery, so explain, this derivation and the text agree."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "28-the-gemma-block.toml"
IDS = [45, 46, 4, 47, 48, 8]  # once upon a time there was
EPS, WINDOW, SCALAR, LOCAL = 1e-6, 3, 4, 10000.0


def rms(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * (1 + w)  # Gemma's gain 1 + w


def rope(x: np.ndarray, theta: float, interleaved: bool = False) -> np.ndarray:
    """Rows at positions 0, 1, …: pairs (i, i + d/2), or (2i, 2i + 1) interleaved, turned by p·θ^(−2i/d)."""
    d = x.shape[-1]
    ang = np.arange(len(x))[:, None] * theta ** (-np.arange(d // 2) * 2 / d)
    c, s = np.cos(ang), np.sin(ang)
    a, b = (x[:, 0::2], x[:, 1::2]) if interleaved else (x[:, : d // 2], x[:, d // 2:])
    out = np.empty_like(x)
    if interleaved:
        out[:, 0::2], out[:, 1::2] = a * c - b * s, b * c + a * s
    else:
        out[:, : d // 2], out[:, d // 2:] = a * c - b * s, b * c + a * s
    return out


def derive() -> dict[str, np.ndarray]:
    doc = tomllib.loads(TUTORIAL.read_text())
    w = doc["weights"]
    emb = np.array(w["W_E"]["values"], dtype=float)
    x = emb[IDS] * np.sqrt(4)  # × √d_model
    h = rms(x, np.array(w["blocks.0.ln1.w"], dtype=float))
    q = rms(h @ np.array(w["blocks.0.attn.W_Q"][0], dtype=float), np.zeros(4))
    k = rms(h @ np.array(w["blocks.0.attn.W_K"][0], dtype=float), np.zeros(4))
    rq, rk = rope(q, LOCAL), rope(k, LOCAL)
    s = rq @ rk.T / np.sqrt(SCALAR)
    i, j = np.arange(6)[:, None], np.arange(6)[None, :]
    masked = np.where((j > i) | (i - j >= WINDOW), -np.inf, s)
    # layer 0 writes nothing (W_O, W_out zero): its MLP and layer 1 read the embeddings' own rows
    x_hat = rms(x, np.zeros(4))
    gate, up = x_hat @ np.array(w["blocks.0.mlp.W_gate"], float), x_hat @ np.array(w["blocks.0.mlp.W_in"], float)
    post = 0.5 * gate * (1 + np.tanh(np.sqrt(2 / np.pi) * (gate + 0.044715 * gate ** 3))) * up
    q1 = rope(rms(x_hat @ np.array(w["blocks.1.attn.W_Q"][0], float), np.zeros(4)), 1e6)  # a full layer: θ 10⁶
    stored = [0, 2, 1, 3]  # a GGUF's row order: rotate-half pairs (0, 2), (1, 3) stored as (0, 1), (2, 3)
    qs, ks = q[:, stored], k[:, stored]
    return {"embed_scaled": x, "blocks.0.ln1": h, "blocks.0.attn.q_norm": q, "blocks.0.attn.rot_q": rq,
            "blocks.0.attn.window_masked": masked, "blocks.0.mlp.post": post, "blocks.1.attn.rot_q": q1,
            "interleaved": rope(q, LOCAL, interleaved=True)[1],
            "score": s[5, 4], "score_interleaved": (rope(qs, LOCAL, True) @ rope(ks, LOCAL, True).T)[5, 4] / 2,
            "score_misread": (rope(qs, LOCAL) @ rope(ks, LOCAL).T)[5, 4] / 2}


def test_every_expectation_is_derived_again() -> None:
    doc, got = tomllib.loads(TUTORIAL.read_text()), derive()
    checked = 0
    for stop in doc["stops"]:
        expect = stop.get("expect")
        if not expect:
            continue
        want = np.array(expect["values"], dtype=float)
        mine = got[stop["step"]][expect["index"][-1]]  # the index is (batch, [head,] position): a row per position
        np.testing.assert_allclose(mine, want, atol=1e-5, err_msg=stop["step"])
        checked += 1
    assert checked == 7


def test_the_narrated_figures() -> None:
    doc, got = tomllib.loads(TUTORIAL.read_text()), derive()
    text = " ".join(s["narration"] for s in doc["stops"]).replace("−", "-").replace("\n", " ")
    figures = [*got["blocks.0.attn.q_norm"][1], *got["blocks.0.attn.rot_q"][1], *got["interleaved"],
               got["score"], got["score_misread"], got["blocks.0.attn.window_masked"][5, 3], got["blocks.0.mlp.post"][1, 0],
               *got["blocks.1.attn.rot_q"][1]]
    for value in figures:
        assert f"{value:.4f}" in text, f"{value:.4f}"
    assert abs(got["score_interleaved"] - got["score"]) < 1e-12  # stored interleaved, turned interleaved: the same
    assert abs(got["score_misread"] - got["score"]) > 0.5  # turned by halves: quietly another model
    assert f"{LOCAL ** -0.5:g}" in text and f"{1e6 ** -0.5:g}" in text  # the slow pair's frequencies, 0.01 and 0.001
