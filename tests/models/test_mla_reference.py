"""``llama --attention mla`` against transformers' DeepseekV3ForCausalLM in float64: every step of the forward,
every parameter's gradient (autograd) and greedy generation on the latent cache (``generate(do_sample=False)``),
for DeepSeek-V3's block in small ("v3": a dense first layer, then the grouped sigmoid router with its choosing bias
off zero, its scaling and a shared expert, issue 43's mixture of experts) and for dense blocks.
The references are in tests/data/mla/, written once by tests/data/make_mla_fixtures.py (no torch here).
Tolerance: 1e-10, relative and absolute; the naive and absorbed scores of a generation agree to 1e-12."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "mla"
CASES = ("v3", "dense", "half")  # half: the rotate-half layout (rope_interleave false; --rope-layout half)
TOL = dict(rtol=1e-10, atol=1e-10)


def load(case: str) -> tuple[dict, dict, dict]:
    cfg = json.loads((DATA / f"{case}_config.json").read_text())
    with np.load(DATA / f"{case}_weights.npz") as w, np.load(DATA / f"{case}_expected.npz") as e:
        return cfg, {k: w[k] for k in w.files}, {k: e[k] for k in e.files}


def options(cfg: dict, expected: dict) -> dict:
    return dict(cfg, tokens=[int(t) for t in expected["tokens"]])


@pytest.mark.parametrize("case", CASES)
def test_every_step_matches_transformers(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, **options(cfg, expected))
    steps = {k: v for k, v in expected.items() if not k.startswith(("grad:", "generated", "moe:")) and k != "tokens"}
    assert len(steps) > 25 * cfg["n_layers"]
    for name, want in steps.items():
        got = trace[name].output
        np.testing.assert_allclose(got, np.reshape(want, got.shape), err_msg=f"{case}: {name}", **TOL)
        assert got.size == want.size


@pytest.mark.parametrize("case", CASES)
def test_every_parameter_gradient_matches_autograd(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, backward=True, **options(cfg, expected))
    grads = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}
    choosing = {n for n in trace.params if n.endswith("b_choice")}  # the router's choosing bias has no gradient
    assert set(grads) == set(trace.params) - choosing  # every parameter, nothing missing
    for name, want in grads.items():
        np.testing.assert_allclose(trace[f"{name}.grad"].output, want, err_msg=f"{case}: {name}.grad", **TOL)


@pytest.mark.parametrize("case", CASES)
def test_greedy_generation_on_the_latent_cache_matches_generate(case: str) -> None:
    cfg, weights, expected = load(case)
    new = expected["generated"]
    trace = explain.generate("llama", weights=weights, greedy=True, max_new_tokens=len(new), ignore_eos=True,
                             **options(cfg, expected))
    assert explain.generated_ids(trace) == [new.tolist()]
    names = trace.generation.steps
    ours = [trace["logits"].output[0, -1]] + [trace[n.replace(".next", ".logits")].output[0, 0] for n in names[1:]]
    np.testing.assert_allclose(np.stack(ours), expected["generated_logits"], rtol=1e-5, atol=1e-5)  # float32 out
    caches = [s for s in trace if s.op == "kv_append"]
    assert {s.name.rsplit(".", 1)[-1] for s in caches} == {"latent_cache", "rot_k_cache"}  # nothing else cached
    T, r, dr = len(expected["tokens"]), cfg["kv_lora_rank"], cfg["qk_rope_head_dim"]
    last = len(new) - 1
    assert trace[f"gen.{last}.blocks.0.attn.latent_cache"].shape == (1, 1, T + last, r)
    assert trace[f"gen.{last}.blocks.0.attn.rot_k_cache"].shape == (1, 1, T + last, dr)
    for n in range(1, len(new)):
        for i in range(cfg["n_layers"]):
            at = f"gen.{n}.blocks.{i}.attn."
            np.testing.assert_allclose(trace[at + "scores_absorbed"].output, trace[at + "scores"].output,
                                       rtol=1e-12, atol=1e-12)


def test_the_choosing_bias_changes_a_choice() -> None:
    # the "v3" case would not test the bias if every choice were the same without it: the grouped top-k by hand
    cfg, weights, expected = load("v3")
    scores = expected["blocks.1.mlp.router_scores"][0]  # (T, E)
    bias = weights["blocks.1.mlp.b_choice"]
    G, kg, k = cfg["n_group"], cfg["topk_group"], cfg["experts_per_token"]

    def choose(s: np.ndarray) -> set[int]:
        groups = np.sort(s.reshape(G, -1), axis=1)[:, -2:].sum(axis=1)  # a group: the sum of its top 2
        kept = np.argsort(-groups, kind="stable")[:kg]
        masked = np.full_like(s, -np.inf)
        for g in kept:
            n = len(s) // G
            masked[g * n:(g + 1) * n] = s[g * n:(g + 1) * n]
        return set(np.argsort(-masked, kind="stable")[:k].tolist())

    with_bias = [choose(row + bias) for row in scores]
    assert with_bias == [set(np.flatnonzero(row).tolist()) for row in expected["blocks.1.mlp.choice"][0]]
    assert with_bias != [choose(row) for row in scores]
