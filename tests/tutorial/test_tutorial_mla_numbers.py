"""The latent-attention tutorial's numbers, derived again here from its own weights with numpy alone (no explain):
every stop's expected values, and the figures its narration quotes (4 decimals), DeepSeek-V3's cache sizes
included. The run is checked against the same expectations by the tutorial machinery, so explain, this derivation
and the text agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np

TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "25-latent-attention.toml"
EPS, LATENT_EPS = 1e-5, 1e-6  # the block's RMSNorm ε; the latent norms' (transformers' DeepseekV3RMSNorm default)
IDS = [3, 25, 28, 28]  # the cat sat, then the generated 'sat' at position 3


def rms(x: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x**2).mean(-1, keepdims=True) + eps)


def turn(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """One rotary pair (x0, x1) turned by p radians (a 2-wide rotary part has the one frequency θ⁰ = 1)."""
    a, b = x[..., 0], x[..., 1]
    return np.stack([a * np.cos(p) - b * np.sin(p), b * np.cos(p) + a * np.sin(p)], -1)


def derive() -> dict[str, np.ndarray]:
    """Every position's values (the prompt's 3 and the new token's), by the formulas of DeepSeek-V2 §2.1."""
    w = tomllib.loads(TUTORIAL.read_text())["weights"]
    emb = np.zeros((45, 4))
    rows = np.array(w["W_E"]["values"], dtype=float)
    emb[: len(rows)] = rows
    xh = rms(emb[IDS], EPS)
    arr = {k: np.array(v, dtype=float) for k, v in w.items() if isinstance(v, list)}  # the rest: zeros, unread
    kv = xh @ arr["blocks.0.attn.W_DKV"][0]  # (T, r + dr): the latent, then the rotary key
    c, k_rope = rms(kv[:, :2], LATENT_EPS), kv[:, 2:]
    pos = np.arange(len(IDS), dtype=float)
    rot_k = turn(k_rope, pos)
    cq = rms(xh @ arr["blocks.0.attn.W_DQ"], LATENT_EPS)
    q = np.einsum("tr,hrm->htm", cq, arr["blocks.0.attn.W_UQ"])  # (h, T, dn + dr)
    q_nope, rot_q = q[..., :2], turn(q[..., 2:], pos)
    W_UK = arr["blocks.0.attn.W_UK"]
    k_nope = np.einsum("tr,hrd->htd", c, W_UK)
    scores = q_nope @ np.swapaxes(k_nope, -1, -2) + rot_q @ rot_k.T  # (h, T, T): every pair, masked or not
    q_absorbed = np.einsum("htd,hrd->htr", q_nope, W_UK)
    return {"kv_a": kv, "ln_kv": c, "k_nope": k_nope, "rot_k": rot_k, "scores": scores,
            "q_absorbed": q_absorbed, "scores_absorbed": q_absorbed @ c.T + rot_q @ rot_k.T}


def want(stop: dict, got: dict[str, np.ndarray]) -> np.ndarray:
    """The derived values a stop's expectation names, laid out as the step is (batch, head, position, width):
    a prompt step holds positions 0–2; the new token's (``gen.1.…``) its one row, position 3, against all 4; the
    caches hold all 4 positions of the one shared head."""
    name = stop["step"].rsplit(".", 1)[-1]
    if name in ("latent_cache", "rot_k_cache"):
        value = got["ln_kv" if name == "latent_cache" else "rot_k"][None]
    elif stop["step"].startswith("gen.1."):
        value = got[name][:, 3:4, :4]
    elif name == "scores":
        value = got[name][:, :3, :3]
    else:
        value = got[name][..., :3, :] if got[name].ndim == 3 else got[name][None, :3]
    value = value[None]  # the batch
    return value[tuple(stop["expect"]["index"])] if "index" in stop["expect"] else value


def test_every_expectation_is_derived_again() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    got = derive()
    checked = 0
    for stop in doc["stops"]:
        if "values" not in stop.get("expect", {}):
            continue
        np.testing.assert_allclose(np.array(stop["expect"]["values"], dtype=float), want(stop, got), atol=1e-7,
                                   err_msg=stop["step"])
        checked += 1
    assert checked >= 7


def test_naive_and_absorbed_are_the_same_scores() -> None:
    got = derive()
    np.testing.assert_allclose(got["scores_absorbed"], got["scores"], rtol=0, atol=1e-12)


def test_the_narrated_figures() -> None:
    doc = tomllib.loads(TUTORIAL.read_text())
    text = " ".join(" ".join(s.get(k, "") for k in ("narration", "answer")) for s in doc["stops"])
    got = derive()
    figures = {
        # the cache: per token per layer, here and in DeepSeek-V3 (kv_lora_rank + qk_rope_head_dim, against every
        # head's key (no-rope + rotary) and value)
        "2 + 2 = 4": 2 + 2, "2 × (2 + 2 + 2) = 12": 2 * (2 + 2 + 2), "512 + 64 = 576": 512 + 64,
        "128 × (128 + 64 + 128) = 40,960": 128 * (128 + 64 + 128),
        "71×": int(40_960 / 576),
        f"{got['rot_k'][1, 0]:.4f}": 0, f"{got['rot_k'][1, 1]:.4f}": 0,  # 'cat' at position 1: cos 1 ± sin 1
        f"{got['scores'][0, 2, 1]:.4f}": 0,  # 'sat' against 'cat' in head 0: content 2 + position 2·cos 1
        f"2·cos 1 = {2 * np.cos(1) * 0.999995 * 0.999995:.4f}": 0,
    }
    for figure in figures:
        assert figure in text, figure
    assert int(40_960 / 576) == 71
    for number in re.findall(r"\b\d+\.\d{4}\b", text):  # every 4-decimal number quoted is a value derived here
        values = np.concatenate([np.ravel(v) for v in got.values()] + [np.ravel(np.cos(np.arange(4.0))),
                                                                        np.ravel(np.sin(np.arange(4.0)))])
        assert np.any(np.isclose(np.abs(values), float(number), atol=6e-5)), number
