"""``llama`` against transformers' LlamaForCausalLM and Qwen2ForCausalLM in float64: every step of the forward,
every parameter's gradient (autograd) and greedy generation with the cache (``generate(do_sample=False)``), for
the default size, a larger config with 4 query heads sharing 2 key heads and an untied output, and a Qwen2
config with q/k/v biases. The references are in tests/data/llama/, written once by
tests/data/make_llama_fixtures.py (no torch here). Tolerance: 1e-10, relative and absolute."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "llama"
CASES = ("default", "gqa", "qwen2")
TOL = dict(rtol=1e-10, atol=1e-10)


def load(case: str) -> tuple[dict, dict, dict]:
    cfg = json.loads((DATA / f"{case}_config.json").read_text())
    with np.load(DATA / f"{case}_weights.npz") as w, np.load(DATA / f"{case}_expected.npz") as e:
        return cfg, {k: w[k] for k in w.files}, {k: e[k] for k in e.files}


def options(cfg: dict, expected: dict) -> dict:
    return dict(cfg, tokens=[int(t) for t in expected["tokens"]])


def test_the_default_case_is_the_default_model() -> None:
    from explain.core.registry import MODELS

    cfg, _, _ = load("default")
    defaults = MODELS["llama"].defaults
    assert {k: cfg[k] for k in defaults} == defaults


@pytest.mark.parametrize("case", CASES)
def test_every_step_matches_transformers(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, **options(cfg, expected))
    steps = {k: v for k, v in expected.items() if not k.startswith(("grad:", "generated")) and k != "tokens"}
    assert len(steps) > 20 * cfg["n_layers"] // 2
    for name, want in steps.items():
        got = trace[name].output
        np.testing.assert_allclose(got, np.reshape(want, got.shape), err_msg=f"{case}: {name}", **TOL)
        assert got.size == want.size
    # the steps transformers does not expose are checked through the ones after them (pattern, logits)


@pytest.mark.parametrize("case", CASES)
def test_every_parameter_gradient_matches_autograd(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, backward=True, **options(cfg, expected))
    grads = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}
    assert set(grads) == set(trace.params)  # every parameter, nothing missing
    for name, want in grads.items():
        np.testing.assert_allclose(trace[f"{name}.grad"].output, want, err_msg=f"{case}: {name}.grad", **TOL)


@pytest.mark.parametrize("case", CASES)
def test_greedy_generation_with_the_cache_matches_generate(case: str) -> None:
    cfg, weights, expected = load(case)
    new = expected["generated"]
    trace = explain.generate("llama", weights=weights, greedy=True, max_new_tokens=len(new), ignore_eos=True,
                             **options(cfg, expected))
    assert explain.generated_ids(trace) == [new.tolist()]
    # the logits each token was chosen from: transformers hands them back in float32 (so 1e-5, not 1e-10)
    names = trace.generation.steps
    ours = [trace["logits"].output[0, -1]] + [trace[n.replace(".next", ".logits")].output[0, 0] for n in names[1:]]
    np.testing.assert_allclose(np.stack(ours), expected["generated_logits"], rtol=1e-5, atol=1e-5)
    assert any(s.op == "kv_append" for s in trace)  # new positions ran on the cache, not the whole text again


def test_loss_at_initialisation_is_near_log_vocabulary() -> None:
    # N(0, 0.02) weights give logits near 0: every token about equally likely, loss ≈ ln V. The logits are x̂·W with
    # |x̂| ≈ √d and W's entries N(0, 0.02): std 0.02·√32 ≈ 0.11 each; the mean over 39 targets moves the loss by
    # about 0.11/√39 ≈ 0.02 (and log-sum-exp adds σ²/2 ≈ 0.006), so 0.1 is five standard deviations.
    ids = [(7 * i + 3) % 500 for i in range(40)]
    for tied in (True, False):
        trace = explain.run("llama", tokens=ids, d_vocab=500, d_model=32, n_heads=4, n_kv_heads=2, seed=3,
                            n_ctx=64, tie_embeddings=tied)
        assert abs(float(trace["loss"].output) - math.log(500)) < 0.1, tied
    w = trace.params["blocks.0.attn.W_Q"]
    assert abs(w.std() - 0.02) < 0.002 and abs(w.mean()) < 0.002
    assert np.all(trace.params["blocks.0.ln1.w"] == 1.0)
