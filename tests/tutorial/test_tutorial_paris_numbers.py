"""Tutorial 25 ("Where does Paris come from?") narrates numbers of SmolLM2-135M-Instruct; each is re-derived here
by a numpy pass written apart from explain (the GGUF read with the ``gguf`` package alone, q/k rows un-permuted as
llama.cpp stored them, RMSNorm, rotate-half RoPE, grouped-query attention and SwiGLU written out, float64), and
the narration is held to print them as derived: the prediction, the logit lens ranks, the attribution's parts, the
patch's logit differences and recovered fractions (this run's, and one block earlier).

The tutorial's run is "The capital of France is" with the residual after block 23 at position 3 taken from "The
capital of Germany is" ([interp.patch]), so the numbers below are of that patched run, and the plain France
run's where the narration says so. Marked ``network``: SmolLM2 comes from the package registry (the catalogue)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from smollm2 import _rms, _rope, _unpermute, _weights, smollm2_gguf_or_fail

pytestmark = pytest.mark.network
TUTORIAL = Path(__file__).resolve().parents[2] / "tutorials" / "26-where-does-paris-come-from.toml"
FRANCE = [504, 3575, 282, 4649, 314]  # transformers' tokenizer (test_smollm2.py)
GERMANY = [504, 3575, 282, 4521, 314]
PARIS, BERLIN, HEADS, KV, LAYERS = 7042, 11452, 9, 3, 30


class Model:
    """SmolLM2's forward on five tokens, keeping what the tutorial reads."""

    def __init__(self, path) -> None:
        W = _weights(path)
        self.f = lambda name: W[name].astype(np.float64)  # noqa: E731
        self.E = self.f("token_embd.weight")
        self.w_final = self.f("output_norm.weight")

    def run(self, ids: list[int], patch: tuple[int, int, np.ndarray] | None = None) -> dict:
        """The residual after each block's attention and MLP, every head's and MLP's output at the last position;
        ``patch`` = (layer, position, vector) replaces that block's output at that position."""
        f, T = self.f, len(ids)
        x = self.E[ids]
        out = {"embed": x.copy(), "mid": [], "post": [], "heads": {}, "mlps": {}}
        for layer in range(LAYERS):
            p = f"blk.{layer}."
            h = _rms(x, f(p + "attn_norm.weight"))
            q = (h @ _unpermute(f(p + "attn_q.weight"), HEADS).T).reshape(T, HEADS, -1).transpose(1, 0, 2)
            k = (h @ _unpermute(f(p + "attn_k.weight"), KV).T).reshape(T, KV, -1).transpose(1, 0, 2)
            v = (h @ f(p + "attn_v.weight").T).reshape(T, KV, -1).transpose(1, 0, 2)
            q, k = _rope(q), _rope(k)
            W_O = f(p + "attn_output.weight")
            d = q.shape[-1]
            attn = np.zeros_like(x)
            for hh in range(HEADS):
                g = hh // (HEADS // KV)
                s = q[hh] @ k[g].T / np.sqrt(d)
                s[np.triu_indices(T, 1)] = -np.inf
                a = np.exp(s - s.max(-1, keepdims=True))
                part = (a / a.sum(-1, keepdims=True) @ v[g]) @ W_O[:, hh * d:(hh + 1) * d].T
                out["heads"][(layer, hh)] = part[-1]
                attn += part
            x = x + attn
            out["mid"].append(x.copy())
            h = _rms(x, f(p + "ffn_norm.weight"))
            gate = h @ f(p + "ffn_gate.weight").T
            mlp = (gate / (1 + np.exp(-gate)) * (h @ f(p + "ffn_up.weight").T)) @ f(p + "ffn_down.weight").T
            out["mlps"][layer] = mlp[-1]
            x = x + mlp
            if patch is not None and patch[0] == layer:
                x[patch[1]] = patch[2]
            out["post"].append(x.copy())
        out["logits"] = _rms(x, self.w_final) @ self.E.T
        return out

    def lens_rank(self, resid: np.ndarray) -> int:
        logits = _rms(resid[-1], self.w_final) @ self.E.T
        return int((logits > logits[PARIS]).sum()) + 1

    def lens_prob(self, resid: np.ndarray) -> float:
        logits = _rms(resid[-1], self.w_final) @ self.E.T
        e = np.exp(logits - logits.max())
        return float(e[PARIS] / e.sum())


@pytest.fixture(scope="module")
def runs():
    model = Model(smollm2_gguf_or_fail())
    france, germany = model.run(FRANCE), model.run(GERMANY)
    patched = model.run(FRANCE, (23, 3, germany["post"][23][3]))
    earlier = model.run(FRANCE, (22, 3, germany["post"][22][3]))
    return model, france, germany, patched, earlier


@pytest.fixture(scope="module")
def narration() -> dict[str, str]:
    doc = tomllib.loads(TUTORIAL.read_text())
    return {s["step"]: " ".join(s["narration"].split()) for s in doc["stops"]}


def _diff(run: dict) -> float:
    """logit[␣Berlin] − logit[␣Paris] at the last position."""
    return float(run["logits"][-1, BERLIN] - run["logits"][-1, PARIS])


def _probs(run: dict) -> np.ndarray:
    z = run["logits"][-1]
    e = np.exp(z - z.max())
    return e / e.sum()


def test_the_prediction(runs, narration) -> None:
    _, france, _, patched, _ = runs
    p = _probs(patched)
    top = np.argsort(-p)[:5]
    assert top.tolist() == [PARIS, 260, 5145, 2250, 4528]  # ␣Paris ␣the ␣La ␣Le ␣London
    said = narration["probs"]
    assert "**␣Paris 0.7999**, ␣the 0.0531, ␣La 0.0092, ␣Le 0.0091, ␣London 0.0089" in said
    assert [f"{p[i]:.4f}" for i in top] == ["0.7999", "0.0531", "0.0092", "0.0091", "0.0089"]
    assert f"{p[BERLIN]:.4f}" == "0.0007" and "␣Berlin (11452) gets 0.0007" in said
    assert f"{_probs(france)[PARIS]:.4f}" == "0.7725" and "France run gives ␣Paris 0.7725" in said


def test_the_lens_ranks(runs, narration) -> None:
    model, france, _, patched, _ = runs
    said = narration["lens.blocks.23.resid_mid.probs"]
    assert model.lens_rank(patched["embed"]) == 4316 and "rank **4316** of 49,152" in said
    # blocks 0 to 22: between about 2,000 and 5,000 (the France run's: the patch comes after block 23)
    before = [model.lens_rank(r) for r in france["mid"][:23] + france["post"][:23]]
    assert 2000 <= min(before) and max(before) <= 5100, before
    ranks = {"**2079** after `blocks.22.resid_post`": model.lens_rank(patched["post"][22]),
             "**359** after block 23's attention": model.lens_rank(patched["mid"][23]),
             "396 after block 23's MLP": model.lens_rank(patched["post"][23]),
             "**84** after block 24": model.lens_rank(patched["post"][24]),
             "34 after block 26": model.lens_rank(patched["post"][26]),
             "**7** after block 27": model.lens_rank(patched["post"][27]),
             "**3** after block 28": model.lens_rank(patched["post"][28]),
             "**1** after the last, block 29": model.lens_rank(patched["post"][29])}
    for text, rank in ranks.items():
        assert text in said and int(text.strip("*").split("*")[0].split()[0]) == rank, (text, rank)
    assert f"{model.lens_prob(patched['mid'][23]):.10f}".rstrip("0") == "0.0000000004"
    assert "p = 0.0000000004" in said


def test_the_attribution(runs, narration) -> None:
    model, _, _, patched, _ = runs
    x = patched["post"][29][-1]
    scale = 1 / np.sqrt((x * x).mean() + 1e-5)  # the final norm's scale, frozen at its value in the run
    direction = model.w_final * (model.E[PARIS] - model.E[BERLIN])
    parts = {"embed": patched["embed"][-1]}
    parts.update({f"blocks.{lay} head {h}": v for (lay, h), v in patched["heads"].items()})
    parts.update({f"blocks.{lay}.mlp_out": v for lay, v in patched["mlps"].items()})
    contrib = {k: float(scale * v @ direction) for k, v in parts.items()}
    total = sum(contrib.values())
    logit_diff = -_diff(patched)
    assert abs(total - logit_diff) < 1e-9
    ranked = sorted(contrib.items(), key=lambda kv: -abs(kv[1]))[:5]
    assert [(k, f"{v:+.4f}") for k, v in ranked] == [
        ("blocks.23 head 4", "+3.2532"), ("blocks.29.mlp_out", "-2.5917"), ("blocks.29 head 0", "-1.5144"),
        ("blocks.29 head 1", "+1.4774"), ("blocks.22.mlp_out", "+0.9066")]
    said = narration["attrib.contributions"]
    for text in ("head 4 of block 23: +3.2532", "block 29's MLP −2.5917", "block 29's head 0 −1.5144",
                 "head 1 +1.4774", "block 22's MLP +0.9066"):
        assert text in said, text
    said = narration["attrib.total"]
    p, b = patched["logits"][-1, PARIS], patched["logits"][-1, BERLIN]
    assert f"{total:.4f}" == "7.0363" and f"{p:.4f}" == "17.5075" and f"{b:.4f}" == "10.4712"
    assert "**7.0363**, which is logit[␣Paris] 17.5075 − logit[␣Berlin] 10.4712" in said


def test_the_patch(runs, narration) -> None:
    _, france, germany, patched, earlier = runs
    said = narration["logits"]
    clean, corrupt = _diff(germany), _diff(france)
    frac = (_diff(patched) - corrupt) / (clean - corrupt)
    assert f"{_diff(patched):.4f}" == "-7.0363" and "is **−7.0363**, against −6.6627" in said
    assert f"{corrupt:.4f}" == "-6.6627" and f"{clean:.4f}" == "4.7828" and "**+4.7828** in the Germany run" in said
    assert f"{frac:.2f}" == "-0.03" and "is **−0.03**" in said
    frac22 = (_diff(earlier) - corrupt) / (clean - corrupt)
    assert f"{frac22:.2f}" == "0.96" and "the fraction is **0.96**" in said
    assert _diff(earlier) > 0  # ␣Berlin wins one block earlier
