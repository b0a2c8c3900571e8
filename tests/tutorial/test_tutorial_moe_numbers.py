"""The mixture-of-experts tutorial's numbers, derived again here from its own weights with numpy alone (no explain):
every stop's expected values, and the figures its narration and answers quote (4 decimals). The run is checked
against the same expectations by the tutorial machinery, so explain, this derivation and the text agree."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import numpy as np

TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "24-which-expert-reads-this-word.toml"
EPS = 1e-5  # the Llama block's RMSNorm ε


def derive() -> dict[str, np.ndarray]:
    doc = tomllib.loads(TUTORIAL.read_text())
    w = doc["weights"]
    emb = np.zeros((45, 4))
    rows = np.array(w["W_E"]["values"], dtype=float)
    emb[: len(rows)] = rows
    x = emb[[3, 25, 28]]  # the cat sat
    xh = x / np.sqrt((x**2).mean(-1, keepdims=True) + EPS)  # attention adds nothing (W_O = 0)
    W = np.array(w["blocks.0.mlp.W_router"], dtype=float)
    logits = xh @ W
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    choice = np.zeros_like(p)
    for t, row in enumerate(p):
        top = sorted(range(4), key=lambda e: (-row[e], e))[:2]  # a tie: the lower index
        choice[t, top] = 1
    kept = p * choice / (p * choice).sum(-1, keepdims=True)
    silu = lambda z: z / (1 + np.exp(-z))  # noqa: E731
    G, U, Wo = (np.array(w[f"blocks.0.mlp.experts.{n}"], dtype=float) for n in ("W_gate", "W_in", "W_out"))
    outs = np.stack([np.where(choice[:, [e]] > 0, (silu(xh @ G[e]) * (xh @ U[e])) @ Wo[e], 0) for e in range(4)])
    routed = np.einsum("te,etd->td", kept, outs)
    sg, su, so = (np.array(w[f"blocks.0.mlp.shared.{n}"], dtype=float) for n in ("W_gate", "W_in", "W_out"))
    gate = 1 / (1 + np.exp(-(xh @ np.array(w["blocks.0.mlp.W_shared_gate"], dtype=float))))
    shared = (silu(xh @ sg) * (xh @ su)) @ so
    return {"blocks.0.mlp.router_logits": logits, "blocks.0.mlp.router_scores": p, "blocks.0.mlp.choice": choice,
            "blocks.0.mlp.kept_weights": kept, "blocks.0.mlp.experts.out": outs, "blocks.0.mlp.routed": routed,
            "blocks.0.mlp.shared_gate": gate, "blocks.0.mlp_out": routed + gate * shared, "probs": p}


def test_every_expectation_is_derived_again() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    got = derive()
    for stop in doc["stops"]:
        want = stop["expect"]
        mine = got[stop["step"]][None]
        if "index" in want:
            mine = mine[tuple(want["index"])]
        np.testing.assert_allclose(np.array(want["values"], dtype=float), mine, atol=1e-7, err_msg=stop["step"])


def test_the_narrated_figures() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    text = " ".join(" ".join(s.get(k, "") for k in ("narration", "answer")) for s in doc["stops"])
    got = derive()
    p, kept = got["probs"][1], got["blocks.0.mlp.kept_weights"][1]
    h = got["blocks.0.mlp.experts.out"][0, 1, 0]  # expert 0's output for 'cat'
    figures = {"0.6103": p[0], "0.2245": p[1], "0.0826": p[2], "0.7311": kept[0], "0.2689": kept[1],
               "0.8348": p[0] + p[1], "0.4462": p[0] * h, "0.5344": kept[0] * h, "0.1966": kept[1] * h,
               "3.5231": got["blocks.0.mlp.experts.out"][0, 0, 0], "0.8808": 1 / (1 + math.exp(-2)),
               "0.1192": 1 / (1 + math.exp(2)), "0.1610": got["blocks.0.mlp_out"][1, 2],
               "0.6954": got["blocks.0.mlp_out"][1, 0], "0.3576": got["blocks.0.mlp_out"][1, 1]}
    for said, value in figures.items():
        assert said in text, said
        assert abs(float(said) - value) < 5e-5 + 1e-5, (said, value)  # 4 decimals; ε moves them by ≤ 1e-5
    assert re.search(r"Experts 0 and 2; expert 3 ties with expert 2", text)
    np.testing.assert_array_equal(got["blocks.0.mlp.choice"][0], [1, 0, 1, 0])  # the tie: the lower index
