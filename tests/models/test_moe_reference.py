"""The mixture of experts against transformers in float64: ``MixtralForCausalLM`` (softmax router, renormalised),
``Qwen2MoeForCausalLM`` (not renormalised, a gated shared expert, a dense first layer, q/k/v biases) and a
DeepSeek-V3-style router (sigmoid scores, a choosing bias off zero, 4 groups of 3 experts of which 2 are kept,
renormalised and scaled ×2.5, 2 shared experts, a dense first layer) on Llama blocks, written out in torch and
checked there against transformers' DeepseekV3MoE. Every step of the forward and every parameter's gradient
(autograd), and greedy generation. In every mixture layer, one position's last expert chosen and first not chosen
differ by 1e-9 (and, grouped, the last group kept and the first dropped), so the choice is checked where it is
nearly a tie. The references are in tests/data/moe/, written once by tests/data/make_moe_fixtures.py (no torch
here). Tolerance: 1e-10, relative and absolute."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import reference_forward as ref

import explain
from explain.core.config import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "moe"
CASES = ("mixtral", "qwen2_moe", "deepseek")
TOL = dict(rtol=1e-10, atol=1e-10)
_CACHE: dict[str, tuple[dict, dict, dict]] = {}


def load(case: str) -> tuple[dict, dict, dict]:
    if case not in _CACHE:
        cfg = json.loads((DATA / f"{case}_config.json").read_text())
        with np.load(DATA / f"{case}_weights.npz") as w, np.load(DATA / f"{case}_expected.npz") as e:
            _CACHE[case] = cfg, {k: w[k] for k in w.files}, {k: e[k] for k in e.files}
    return _CACHE[case]


def options(cfg: dict, expected: dict) -> dict:
    return dict(cfg, tokens=[int(t) for t in expected["tokens"]])


def steps_of(expected: dict) -> dict:
    return {k: v for k, v in expected.items()
            if not k.startswith(("grad:", "generated")) and k not in ("tokens", "near_ties")}


@pytest.mark.parametrize("case", CASES)
def test_every_step_and_every_gradient_match(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, backward=True, **options(cfg, expected))
    steps = steps_of(expected)
    moe = [k for k in steps if ".mlp." in k and k.split(".mlp.")[1] in
           ("router_logits", "router_scores", "choice", "kept_weights", "experts.pre", "experts.pre_linear",
            "experts.post", "experts.out")]
    assert len(moe) == 8 * (cfg["n_layers"] - cfg.get("first_k_dense_replace", 0))  # every mixture step is here
    for name, want in steps.items():
        got = trace[name].output
        assert got.size == want.size, name
        np.testing.assert_allclose(got, np.reshape(want, got.shape), err_msg=f"{case}: {name}", **TOL)
    grads = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}
    choosing = {n for n in trace.params if n.endswith("b_choice")}  # choosing has no gradient (nor in torch)
    assert set(grads) == set(trace.params) - choosing
    assert (cfg["router"] == "sigmoid") == bool(choosing)
    for name, want in grads.items():
        np.testing.assert_allclose(trace[f"{name}.grad"].output, want, err_msg=f"{case}: {name}.grad", **TOL)
    for name in choosing:
        assert f"{name}.grad" not in trace and np.any(weights[name] != 0)  # the bias is off zero


@pytest.mark.parametrize("case", CASES)
def test_the_near_ties_are_chosen_as_transformers_chose(case: str) -> None:
    """Each mixture layer has a position where the last expert taken beats the first left out by 1e-9; the choice
    there is transformers' (checked in the step test too), and the drill-down names the margin."""
    cfg, weights, expected = load(case)
    trace = explain.run("llama", weights=weights, **options(cfg, expected))
    for layer, position, gap, group_gap in expected["near_ties"]:
        assert 0 < gap < 2e-9 and (np.isnan(group_gap) or 0 < group_gap < 2e-9)
        name = f"blocks.{int(layer)}.mlp.choice"
        chosen = np.nonzero(trace[name].output[0, int(position)])[0]
        want = expected[name].reshape(trace[name].shape)
        np.testing.assert_array_equal(chosen, np.nonzero(want[0, int(position)])[0])
        ex = trace.explain(name, (0, int(position), int(chosen[-1])))
        assert any("margin" in line for line in ex.lines), ex.lines


@pytest.mark.parametrize("case", CASES)
def test_greedy_generation_matches(case: str) -> None:
    cfg, weights, expected = load(case)
    new = expected["generated"]
    trace = explain.generate("llama", weights=weights, greedy=True, max_new_tokens=len(new), ignore_eos=True,
                             **options(cfg, expected))
    assert explain.generated_ids(trace) == [new.tolist()]


@pytest.mark.parametrize("case", CASES)
def test_a_plain_numpy_forward_agrees(case: str) -> None:
    """tests/helpers/reference_forward.py's llama_moe (transformers' way: each expert on its rows only), the
    benchmark's baseline, against the same references."""
    cfg, weights, expected = load(case)
    out = ref.llama_moe(weights, expected["tokens"][None], make_config("llama", **cfg))
    np.testing.assert_allclose(out["logits"].reshape(expected["logits"].shape), expected["logits"], **TOL)
    np.testing.assert_allclose(out["loss"], expected["loss"], **TOL)
