"""``gemma`` against transformers' Gemma3ForCausalLM in float64: every step of the forward, every parameter's
gradient (autograd) and greedy generation on the sliding-window cache (``generate(do_sample=False)``), for the
default size (a sliding then a full layer, a window of 4 over 7 tokens) and a larger config where the window
binds harder (3 of 12 positions; heads of 8 in a width of 16, query_pre_attn_scalar 12, an untied output, layers
sliding, full, sliding). The references are in tests/data/gemma/, written once by
tests/data/make_gemma_fixtures.py (no torch here). Tolerance: 1e-10, relative and absolute."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.core.config import make_config
from explain.core.errors import ConfigError

DATA = Path(__file__).resolve().parents[1] / "data" / "gemma"
CASES = ("default", "window")
TOL = dict(rtol=1e-10, atol=1e-10)


def load(case: str) -> tuple[dict, dict, dict]:
    cfg = json.loads((DATA / f"{case}_config.json").read_text())
    with np.load(DATA / f"{case}_weights.npz") as w, np.load(DATA / f"{case}_expected.npz") as e:
        return cfg, {k: w[k] for k in w.files}, {k: e[k] for k in e.files}


def options(cfg: dict, expected: dict) -> dict:
    return dict({k: v for k, v in cfg.items() if k != "ln_eps"}, tokens=[int(t) for t in expected["tokens"]])


def test_the_default_case_is_the_default_model() -> None:
    from explain.core.registry import MODELS

    cfg, _, _ = load("default")
    defaults = MODELS["gemma"].defaults
    assert {k: cfg[k] for k in defaults if k in cfg} == {k: v for k, v in defaults.items() if k in cfg}
    made = make_config("gemma")
    assert [made.layer_kind(i) for i in range(made.n_layers)] == cfg["layer_types"].split(",")
    assert made.attn_scalar == cfg["query_pre_attn_scalar"] and made.ln_eps == cfg["ln_eps"]


@pytest.mark.parametrize("case", CASES)
def test_every_step_matches_transformers(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("gemma", weights=weights, **options(cfg, expected))
    steps = {k: v for k, v in expected.items() if not k.startswith(("grad:", "generated")) and k != "tokens"}
    assert len(steps) > 25 * cfg["n_layers"]
    for name, want in steps.items():
        got = trace[name].output
        np.testing.assert_allclose(got, np.reshape(want, got.shape), err_msg=f"{case}: {name}", **TOL)
    # the causal mask of a sliding layer is checked through its window mask (transformers adds the two at once)
    kinds = cfg["layer_types"].split(",")
    for i, kind in enumerate(kinds):
        assert (f"blocks.{i}.attn.window_masked" in trace) == (kind == "sliding")
        assert trace[f"blocks.{i}.attn.rot_q"].attrs["theta"] == (cfg["rope_local_base_freq"] if kind == "sliding"
                                                                   else cfg["rope_theta"])


@pytest.mark.parametrize("case", CASES)
def test_every_parameter_gradient_matches_autograd(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("gemma", weights=weights, backward=True, **options(cfg, expected))
    grads = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}
    assert set(grads) == set(trace.params)  # every parameter, nothing missing
    for name, want in grads.items():
        np.testing.assert_allclose(trace[f"{name}.grad"].output, want, err_msg=f"{case}: {name}.grad", **TOL)


@pytest.mark.parametrize("case", CASES)
def test_greedy_generation_on_the_window_cache_matches_generate(case: str) -> None:
    cfg, weights, expected = load(case)
    new = expected["generated"]
    trace = explain.generate("gemma", weights=weights, greedy=True, max_new_tokens=len(new), ignore_eos=True,
                             **options(cfg, expected))
    assert explain.generated_ids(trace) == [new.tolist()]
    names = trace.generation.steps  # the logits each token was chosen from: transformers gives them in float32
    ours = [trace["logits"].output[0, -1]] + [trace[n.replace(".next", ".logits")].output[0, 0] for n in names[1:]]
    np.testing.assert_allclose(np.stack(ours), expected["generated_logits"], rtol=1e-5, atol=1e-5)
    # a sliding layer's cache keeps the window: the last token's keys there are the window's, a full layer's all
    W, T, last = cfg["sliding_window"], len(expected["tokens"]), len(new) - 1
    for i, kind in enumerate(cfg["layer_types"].split(",")):
        k = trace[f"gen.{last}.blocks.{i}.attn.k_cache"]
        assert k.shape[-2] == (W if kind == "sliding" else T + last), (i, kind, k.shape)


def test_a_window_hides_a_key_and_says_why() -> None:
    trace = explain.run("gemma")  # "Once upon a time there was a cat": 8 tokens, a window of 4
    step = trace["blocks.0.attn.window_masked"]
    assert np.isneginf(step.output[0, 0, 7, 3]) and np.isfinite(step.output[0, 0, 7, 4])
    text = "\n".join(trace.explain("blocks.0.attn.window_masked", (0, 0, 7, 3)).lines)
    assert "query 7 'cat' − key 3 'time' = 4 ≥ window 4" in text
    kept = "\n".join(trace.explain("blocks.0.attn.window_masked", (0, 0, 7, 4)).lines)
    assert "query 7 'cat' − key 4 'there' = 3 < window 4" in kept
    assert "blocks.1.attn.window_masked" not in trace  # the full layer sees every earlier key
    norm = trace.explain("blocks.0.ln1", (0, 2, 1))
    assert "(1 + " in norm.lines[-2] and "1 + w" in trace["blocks.0.ln1"].formula


def test_layer_kinds_and_their_checks() -> None:
    kinds = lambda **o: [make_config("gemma", **o).layer_kind(i) for i in range(o.get("n_layers", 2))]  # noqa: E731
    assert kinds() == ["sliding", "full"]
    assert kinds(n_layers=6) == ["sliding"] * 5 + ["full"]
    assert kinds(n_layers=7) == ["sliding"] * 5 + ["full", "sliding"]  # Gemma 3 1B's 26 layers end sliding too
    assert kinds(n_layers=3, layer_types="full,sliding_attention,full") == ["full", "sliding", "full"]
    llama = make_config("llama", sliding_window=3)
    assert [llama.layer_kind(i) for i in range(2)] == ["sliding", "sliding"]  # Mistral: every layer
    assert make_config("llama").layer_kind(0) == "full"
    for bad, match in ((dict(layer_types="sliding"), "names 1 layer but there are 2"),
                       (dict(layer_types="sliding,local"), "'local' is not a kind")):
        with pytest.raises(ConfigError, match=match):
            make_config("gemma", sliding_window=4, **bad)
    make_config("llama", sliding_window=4, attention_kernel="tiled")  # the tiled kernel masks the window in each tile
    with pytest.raises(ConfigError, match="names sliding layers but there is no window; add --window N"):
        make_config("llama", layer_types="sliding,full")
    with pytest.raises(ConfigError, match="applies to the 'gemma' model only"):
        make_config("llama", query_pre_attn_scalar=8)


def test_a_llama_with_a_window_is_a_mistral() -> None:
    # Mistral's sliding window on a Llama block: every layer masks the keys 3 or more back, and a generation's cache
    # keeps 3 keys; the scores of a key inside the window are the full model's
    ids = [3, 1, 4, 1, 5, 9, 2]
    full = explain.run("llama", tokens=ids)
    windowed = explain.run("llama", tokens=ids, sliding_window=3)
    s = windowed["blocks.1.attn.window_masked"].output
    assert np.isneginf(s[0, 0, 6, 3]) and s[0, 0, 6, 4] == windowed["blocks.1.attn.masked"].output[0, 0, 6, 4]
    np.testing.assert_array_equal(windowed["blocks.0.attn.scores"].output, full["blocks.0.attn.scores"].output)
    assert not np.allclose(windowed["logits"].output[0, -1], full["logits"].output[0, -1])
    gen = explain.generate("llama", tokens=ids, sliding_window=3, greedy=True, max_new_tokens=3, ignore_eos=True)
    assert gen["gen.2.blocks.0.attn.k_cache"].shape[-2] == 3
    assert "a sliding layer keeps the last 3 positions (6–8)" in "\n".join(
        gen.explain("gen.2.blocks.0.attn.k_cache", (0, 0, 0, 0)).lines)


def test_loss_at_initialisation_is_near_log_vocabulary() -> None:
    # N(0, 0.02) matrices and w = 0 norms (gain 1): logits near 0 and the loss near ln V, as llama's test argues
    ids = [(7 * i + 3) % 500 for i in range(40)]
    trace = explain.run("gemma", tokens=ids, d_vocab=500, d_model=32, n_heads=4, n_kv_heads=2, d_head=8, seed=3,
                        n_ctx=64)
    assert abs(float(trace["loss"].output) - math.log(500)) < 0.2
    assert np.all(trace.params["blocks.0.ln1.w"] == 0.0)
