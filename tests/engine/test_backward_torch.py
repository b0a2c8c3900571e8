"""Every gradient of every model (activations and parameters), at the default config and a larger one, equals
PyTorch autograd in float64 to 1e-10.

The expected values are in tests/data/backward/*.npz, written once by tests/data/make_backward_expected.py,
which builds each model again in torch from the weights alone (no torch here)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "backward"
CASES = sorted(p.stem for p in DATA.glob("*.npz"))
TOL = dict(rtol=1e-10, atol=1e-10)


def load(case: str) -> dict:
    with np.load(DATA / f"{case}.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def run_case(data: dict):
    meta = json.loads(str(data["case"]))
    opts = dict(meta["options"])
    params = {k.split(":", 1)[1]: v for k, v in data.items() if k.startswith("param:")}
    for k in meta["objective"]:
        opts[k] = data[f"given:{k}"]
    if "embeddings" in opts:
        opts["embeddings"] = data["given:embeddings"]
    if meta["lr"] is not None:
        opts["lr"] = meta["lr"]
    return meta, explain.run(meta["model"], weights=params, backward=True, **opts)


def test_every_model_has_a_default_and_a_larger_case():
    models = {c.split("_")[0] for c in CASES}
    assert models == {"simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt"}
    assert {c.split("_")[0] for c in CASES if c.endswith("_big")} == models


@pytest.mark.parametrize("case", CASES)
def test_gradients_match_torch(case):
    data = load(case)
    meta, trace = run_case(data)
    expected = {k.split(":", 1)[1]: v for k, v in data.items() if k.startswith("grad:")}
    if "grad_output" not in meta["objective"]:
        np.testing.assert_allclose(trace["loss"].output, data["loss"], **TOL)
    # the same set of values has a gradient in both: nothing missing, nothing extra
    ours = {s.name[: -len(".grad")] for s in trace if s.name.endswith(".grad") and s.name != "loss.grad"}
    theirs = set(expected) - {"loss"}
    assert ours == theirs, (sorted(ours - theirs), sorted(theirs - ours))
    for name, want in expected.items():
        got = trace[f"{name}.grad"].output
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, err_msg=f"{case}: {name}.grad", **TOL)


def test_sgd_step_and_loss_after_match_torch():
    data = load("gpt_lr")
    _, trace = run_case(data)
    updated = {k.split(":", 1)[1]: v for k, v in data.items() if k.startswith("updated:")}
    assert {s.name[: -len(".updated")] for s in trace if s.op == "sgd"} == set(updated)
    for name, want in updated.items():
        np.testing.assert_allclose(trace[f"{name}.updated"].output, want, **TOL)
    np.testing.assert_allclose(trace["loss_after"].output, data["loss_after"], **TOL)
    assert float(data["loss_after"]) < float(data["loss"])  # the step went downhill
