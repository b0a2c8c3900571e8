"""The numbers of tutorials 18–20 (the logit lens, direct logit attribution and activation patching on the trained
GPT in the wheel), re-derived by a plain numpy GPT-2 forward written here: it reads the shipped
``model.safetensors`` by its Hugging Face names and ``tokenizer.json``'s vocabulary, with none of explain's
readers, ops or interp code. Each expectation in a TOML and each number its narration quotes is compared with this
forward, at the tutorial's tolerance or at the precision the narration prints."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

safetensors_numpy = pytest.importorskip("safetensors.numpy")

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "explain" / "checkpoints" / "trained" / "gpt-tiny"
CONFIG = json.loads((FOLDER / "config.json").read_text())
VOCAB: dict[str, int] = json.loads((FOLDER / "tokenizer.json").read_text())["model"]["vocab"]
WORDS = {i: w for w, i in VOCAB.items()}
W = {k: v.astype(np.float64) for k, v in safetensors_numpy.load_file(str(FOLDER / "model.safetensors")).items()}
H = CONFIG["n_head"]
EPS = CONFIG["layer_norm_epsilon"]


def ids(text: str) -> list[int]:
    return [VOCAB[w] for w in text.lower().split()]  # the tutorials' texts are lower-case words of the vocabulary


def ln(x: np.ndarray, p: str) -> np.ndarray:
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + EPS) * W[p + ".weight"] + W[p + ".bias"]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def heads(x: np.ndarray, layer: int) -> np.ndarray:
    """Each head's write to the residual (H, T, d): its z times its own rows of c_proj (no bias)."""
    p = f"transformer.h.{layer}.attn"
    q, k, v = np.split(x @ W[p + ".c_attn.weight"] + W[p + ".c_attn.bias"], 3, axis=-1)
    T, d = x.shape
    dh = d // H
    out = []
    for h in range(H):
        s = slice(h * dh, (h + 1) * dh)
        sc = q[:, s] @ k[:, s].T / np.sqrt(dh)
        sc[np.triu_indices(T, 1)] = -np.inf
        out.append(softmax(sc) @ v[:, s] @ W[p + ".c_proj.weight"][s])
    return np.stack(out)


def mlp(x: np.ndarray, layer: int) -> np.ndarray:
    p = f"transformer.h.{layer}.mlp"
    h = x @ W[p + ".c_fc.weight"] + W[p + ".c_fc.bias"]
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))  # gelu_new
    return h @ W[p + ".c_proj.weight"] + W[p + ".c_proj.bias"]


def forward(text: str, patch: tuple[str, int, np.ndarray] | None = None) -> dict:
    """Every residual point (pre0, mid0, post0, mid1, post1), the parts of the last one, and the logits.
    ``patch`` = (point, position, vector) replaces that point's row before the rest is computed."""
    t = ids(text)
    x = W["transformer.wte.weight"][t] + W["transformer.wpe.weight"][: len(t)]
    parts = {"embed": W["transformer.wte.weight"][t], "pos_embed": W["transformer.wpe.weight"][: len(t)]}
    points = {}

    def at(name: str, x: np.ndarray) -> np.ndarray:
        if patch is not None and patch[0] == name:
            x = x.copy()
            x[patch[1]] = patch[2]
        points[name] = x
        return x

    x = at("blocks.0.resid_pre", x)
    for layer in range(CONFIG["n_layer"]):
        hw = heads(ln(x, f"transformer.h.{layer}.ln_1"), layer)
        for h in range(H):
            parts[f"blocks.{layer} head {h}"] = hw[h]
        parts[f"blocks.{layer} attn bias"] = np.broadcast_to(W[f"transformer.h.{layer}.attn.c_proj.bias"], x.shape)
        x = at(f"blocks.{layer}.resid_mid", x + hw.sum(0) + W[f"transformer.h.{layer}.attn.c_proj.bias"])
        m = mlp(ln(x, f"transformer.h.{layer}.ln_2"), layer)
        parts[f"blocks.{layer}.mlp_out"] = m
        x = at(f"blocks.{layer}.resid_post", x + m)
    logits = ln(x, "transformer.ln_f") @ W["transformer.wte.weight"].T
    return {"points": points, "parts": parts, "logits": logits, "final": x}


def lens(x: np.ndarray) -> np.ndarray:
    return softmax(ln(x, "transformer.ln_f") @ W["transformer.wte.weight"].T)


def rank(row: np.ndarray, word: str) -> int:
    return int((row > row[VOCAB[word]]).sum()) + 1


def contributions(run: dict, word: str, pos: int = -1) -> dict[str, float]:
    """Each part's share of logit[word] through ln_f with σ frozen at the run's (TransformerLens's convention),
    and the β term."""
    x = run["final"][pos]
    sigma = np.sqrt(x.var() + EPS)
    u = W["transformer.wte.weight"][VOCAB[word]]
    out = {k: float((p[pos] - p[pos].mean()) / sigma * W["transformer.ln_f.weight"] @ u) for k, p in run["parts"].items()}
    out["final norm β"] = float(W["transformer.ln_f.bias"] @ u)
    return out


def tutorial(name: str) -> dict:
    return tomllib.loads((ROOT / "tutorials" / f"{name}.toml").read_text())


def expect(doc: dict, step: str) -> dict:
    return next(s for s in doc["stops"] if s["step"] == step).get("expect", {})


def test_the_forward_is_the_model_that_writes_mat() -> None:
    """The plain forward reproduces the shipped model's documented answer (issue 24: 'mat' with p 0.94)."""
    p = softmax(forward("the cat sat on the")["logits"])[-1]
    assert WORDS[int(np.argmax(p))] == "mat" and round(float(p[VOCAB["mat"]]), 2) == 0.94


def test_18_the_logit_lens() -> None:
    doc = tutorial("18-the-logit-lens")
    text = doc["options"]["text"]
    run = forward(text)
    P = {k: lens(v)[-1] for k, v in run["points"].items()}
    np.testing.assert_array_almost_equal(P["blocks.1.resid_post"], softmax(run["logits"])[-1], decimal=14)
    for stop in doc["stops"]:
        point = stop["step"].removeprefix("lens.").removesuffix(".probs")
        got = P.get(point, P["blocks.1.resid_post"])  # 'probs' is the model's own: the last point
        b, t, w = stop["cell"]
        assert (t, w) == (len(ids(text)) - 1, VOCAB["mat"])
        assert abs(got[w] - stop["expect"]["value"]) <= doc["tol"], stop["step"]
    # what the narration says
    pre, mid, post0, mid1 = (P[f"blocks.{k}"] for k in ("0.resid_pre", "0.resid_mid", "0.resid_post", "1.resid_mid"))
    assert WORDS[int(np.argmax(pre))] == "the" and round(pre.max(), 2) == 0.68
    assert rank(pre, "mat") == 38 and round(pre[VOCAB["mat"]], 4) == 0.0001 and len(VOCAB) == 70
    assert WORDS[int(np.argmax(mid))] == "<bos>" and round(mid.max(), 2) == 0.34
    assert rank(mid, "mat") == 12 and round(mid[VOCAB["mat"]], 4) == 0.0105
    assert WORDS[int(np.argmax(post0))] == "mat" and round(post0.max(), 2) == 0.58
    assert round(mid1[VOCAB["mat"]], 2) == 0.73


COPY = "fish book tired cat man hungry fish book"


def test_19_which_head_writes_the_word() -> None:
    doc = tutorial("19-which-head-writes-the-word")
    assert doc["options"]["text"] == COPY and doc["interp"]["attribute"] == "tired"
    run = forward(COPY)
    mid1 = lens(run["points"]["blocks.1.resid_mid"])[-1]
    post0 = lens(run["points"]["blocks.0.resid_post"])[-1]
    assert abs(mid1[VOCAB["tired"]] - expect(doc, "lens.blocks.1.resid_mid.probs")["value"]) <= doc["tol"]
    assert rank(post0, "tired") == 38 and rank(mid1, "tired") == 1 and round(mid1[VOCAB["tired"]], 2) == 0.44
    c = contributions(run, "tired")
    assert len(c) == 15
    assert abs(sum(c.values()) - run["logits"][-1, VOCAB["tired"]]) < 1e-10  # the parts add up to the logit
    ranked = sorted(c, key=lambda k: -abs(c[k]))
    assert ranked[0] == "blocks.1 head 2" and round(c[ranked[0]], 2) == 6.88
    # the stop's cell indexes the recorded parts in explain's order: embed, pos_embed, then per block its heads,
    # attention bias and MLP; cell 10 is blocks.1 head 2 in that order
    stop = next(s for s in doc["stops"] if s["step"] == "attrib.contributions")
    assert stop["cell"] == [2 + (H + 2) + 2]
    assert abs(c["blocks.1 head 2"] - stop["expect"]["value"]) <= doc["tol"]
    assert abs(run["logits"][-1, VOCAB["tired"]] - expect(doc, "attrib.total")["values"]) <= doc["tol"]


def test_a_word_of_the_trained_vocabulary_is_its_id_there() -> None:
    """--trained names the shipped tokenizer's ids, not those of a vocabulary built from the text ('tired' is no
    built-in word: it was once read as another id, and its rank came out 65 where it is the top word)."""
    import explain.interp as interp

    run = forward(COPY)
    got = interp.attribute("gpt", "tired", trained=True, text=COPY, position=-1)  # the reference's last position
    assert abs(float(got.trace["attrib.total"].output) - run["logits"][-1, VOCAB["tired"]]) < 1e-9
    rows = interp.logit_lens("gpt", "tired", trained=True, text=COPY, position=-1).rows
    assert [r.rank for r in rows] == [rank(lens(x)[-1], "tired") for x in run["points"].values()]


def recovered(clean: dict, corrupt: dict, patched: dict, pos: int = -1) -> float:
    def diff(r: dict) -> float:
        return float(r["logits"][pos, VOCAB["tired"]] - r["logits"][pos, VOCAB["happy"]])
    return (diff(patched) - diff(corrupt)) / (diff(clean) - diff(corrupt))


def test_20_which_position_carries_the_word() -> None:
    doc = tutorial("20-which-position-carries-the-word")
    spec = doc["interp"]["patch"]
    assert doc["options"]["text"] == COPY and (spec["word"], spec["vs"]) == ("tired", "happy")
    clean, corrupt = forward(COPY), forward(spec["corrupt"])
    step, pos = spec["step"], spec["position"]
    patched = forward(spec["corrupt"], (step, pos, clean["points"][step][pos]))
    b, t, w = expect_cell = next(s for s in doc["stops"] if s["step"] == "logits")["cell"]
    assert (t, w) == (7, VOCAB["tired"]), expect_cell
    assert abs(patched["logits"][t, w] - expect(doc, "logits")["value"]) <= doc["tol"]
    for name in (f"patch.clean.{step}", f"patch.{step}"):  # the clean row, and the same row patched in
        stop = next(s for s in doc["stops"] if s["step"] == name)
        assert stop["cell"][1] == pos and abs(clean["points"][step][pos, stop["cell"][2]] - stop["expect"]["value"]) <= doc["tol"]
    assert (round(clean["points"][step][pos, 0], 4), round(corrupt["points"][step][pos, 0], 4)) == (0.2755, 0.1568)
    # what the narration says
    d = {k: float(r["logits"][-1, VOCAB["tired"]] - r["logits"][-1, VOCAB["happy"]])
         for k, r in (("clean", clean), ("corrupt", corrupt), ("patched", patched))}
    assert (round(d["clean"], 2), round(d["corrupt"], 2)) == (1.25, -0.07)
    assert (round(d["clean"], 4), round(d["corrupt"], 4), round(d["patched"], 4)) == (1.2528, -0.0705, 1.0925)
    assert round(float(patched["logits"][-1, VOCAB["tired"]]), 4) == 7.4353
    assert round(float(patched["logits"][-1, VOCAB["happy"]]), 4) == 6.3429
    fractions = [recovered(clean, corrupt, forward(spec["corrupt"], (step, p, clean["points"][step][p])))
                 for p in range(len(ids(COPY)))]
    assert round(fractions[2], 2) == 0.88 and round(fractions[3], 2) == 0.18
    assert all(abs(f) < 0.005 for i, f in enumerate(fractions) if i not in (2, 3))  # "the other positions nothing"
