"""``bert`` against transformers' BertModel in float64 with the sentence head of sentence-transformers (mean pooling
over the real tokens, L2 norm) and the loss 1 − cos(text 1, text 2): every step transformers exposes and every
parameter's gradient (autograd), for the default size and a larger config with a padded batch of three. The
references are in tests/data/bert/, written once by tests/data/make_bert_fixtures.py (no torch here). A <pad>
position's own row is computed by both and used by neither, so steps are compared at the real positions.
Tolerance: 1e-10, relative and absolute."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import explain

DATA = Path(__file__).resolve().parents[1] / "data" / "bert"
CASES = ("default", "padded")
TOL = dict(rtol=1e-10, atol=1e-10)


def load(case: str) -> tuple[dict, dict, dict]:
    cfg = json.loads((DATA / f"{case}_config.json").read_text())
    with np.load(DATA / f"{case}_weights.npz") as w, np.load(DATA / f"{case}_expected.npz") as e:
        return cfg, {k: w[k] for k in w.files}, {k: e[k] for k in e.files}


def options(cfg: dict, expected: dict) -> dict:
    batch = [[int(t) for t in row[:n]] for row, n in zip(expected["tokens"], expected["lengths"])]
    return dict(cfg, tokens=batch)


def real(arr: np.ndarray, axes: tuple[str, ...], lengths: np.ndarray) -> list[np.ndarray]:
    """Each batch item's cells at its real positions (every axis named pos: queries, and the keys of scores)."""
    if axes[:1] != ("batch",):
        return [arr]
    out = []
    for b, n in enumerate(lengths):
        item = arr[b]
        for axis, name in enumerate(axes[1:]):
            if name == "pos":
                item = np.take(item, range(n), axis=axis)
        out.append(item)
    return out


def test_the_default_case_is_the_default_model() -> None:
    from explain.core.registry import MODELS

    cfg, _, _ = load("default")
    defaults = MODELS["bert"].defaults
    assert {k: cfg[k] for k in defaults} == defaults


@pytest.mark.parametrize("case", CASES)
def test_every_step_matches_transformers(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("bert", weights=weights, **options(cfg, expected))
    lengths = expected["lengths"]
    steps = {k: v for k, v in expected.items() if not k.startswith("grad:") and k not in ("tokens", "lengths")}
    assert len(steps) > 17 * cfg["n_layers"]
    assert ("blocks.0.attn.pad_masked" in trace.names()) == (case == "padded")
    for name, want in steps.items():
        got = trace[name].output
        if name == "type_embed":  # explain's one row of W_type (every token is type 0), added to every position
            assert got.shape == (1, cfg["d_model"])
            got = np.broadcast_to(got, want.shape)
        axes = trace[name].axes
        for g, w in zip(real(got, axes, lengths), real(np.reshape(want, got.shape), axes, lengths)):
            np.testing.assert_allclose(g, w, err_msg=f"{case}: {name}", **TOL)


@pytest.mark.parametrize("case", CASES)
def test_every_parameter_gradient_matches_autograd(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("bert", weights=weights, backward=True, **options(cfg, expected))
    grads = {k[5:]: v for k, v in expected.items() if k.startswith("grad:")}
    assert set(grads) == set(trace.params)  # every parameter, nothing missing
    for name, want in grads.items():
        if name.startswith("pooler."):  # carried, not used: transformers' gradient is 0, explain records none
            assert not want.any() and f"{name}.grad" not in trace.names()
            continue
        np.testing.assert_allclose(trace[f"{name}.grad"].output, want, err_msg=f"{case}: {name}.grad", **TOL)


@pytest.mark.parametrize("case", CASES)
def test_every_pair_sums_to_its_cosine(case: str) -> None:
    cfg, weights, expected = load(case)
    trace = explain.run("bert", weights=weights, **options(cfg, expected))
    cos = expected["sentence.cos"]
    B = len(cos)
    for a in range(B):
        for b in range(a + 1, B):
            parts = trace[f"pairs.{a}_{b}.parts"].output
            assert parts.shape == (expected["lengths"][a], expected["lengths"][b])
            assert abs(parts.sum() - cos[a, b]) < 1e-12
            assert abs(float(trace[f"pairs.{a}_{b}.total"].output) - cos[a, b]) < 1e-12
            ranked = trace[f"pairs.{a}_{b}.ranked"].output[:, 0]
            assert sorted(ranked.tolist()) == sorted(parts.reshape(-1).tolist())
            assert np.all(np.diff(np.abs(ranked)) <= 0)
