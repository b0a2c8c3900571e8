"""Every model's traced run equals a plain, untraced numpy forward of the same weights
(tests/helpers/reference_forward.py, written without the engine's ops or kernels). Tolerance: rtol 1e-10,
atol 1e-12 — the two compute the same float64 arithmetic in different orders (einsum vs per-head loops)."""

from __future__ import annotations

import numpy as np
import pytest
import reference_forward as ref

import explain

TOL = dict(rtol=1e-10, atol=1e-12)


def _close(trace, expected: dict) -> None:
    for name, value in expected.items():
        np.testing.assert_allclose(trace[name].output, value, err_msg=name, **TOL)


def test_simple_softmax_and_sum() -> None:
    for norm in ("softmax", "sum"):
        t = explain.run("simple", normalize=norm, seed=3)
        _close(t, ref.simple(t.params, t["embed"].output, norm))


@pytest.mark.parametrize("model,causal", [("attention", False), ("causal", True)])
def test_single_head(model: str, causal: bool) -> None:
    t = explain.run(model, text="the cat sat on the mat", d_model=6, seed=1)
    _close(t, ref.single_head(t.params, t["embed"].output, causal))


def test_multihead_with_uneven_head_width() -> None:
    # d_head given explicitly: h·m need not equal d_model (W_O is h·m × d).
    t = explain.run("multihead", n_heads=3, d_model=8, d_head=5, seed=2)
    assert t["attn.q"].shape == (3, 6, 5) and t["attn.concat"].shape == (6, 15)
    _close(t, ref.multihead(t.params, t["embed"].output))


def test_synthesizer() -> None:
    t = explain.run("synthesizer", seed=4)
    _close(t, ref.synthesizer(t.params, t["embed"].output))


def test_encoder() -> None:
    t = explain.run("encoder", text="your journey starts with one step", n_layers=3, seed=5)
    _close(t, ref.encoder(t.params, t["tokens"].output, 3))


@pytest.mark.parametrize("tied", [True, False])
def test_transformer(tied: bool) -> None:
    t = explain.run("transformer", text="thinking machines", target="denkende maschinen", seed=6,
                    tie_embeddings=tied)
    assert ("W_E" in t.params) is tied and ("unembed.W_U" in t.params) is not tied
    ids = t["encoder.tokens"].output
    tgt = t["decoder.tokens"].output
    labels = t["targets"].output
    assert list(tgt[1:]) == list(labels[:-1])  # the decoder input is the target shifted right
    _close(t, ref.transformer(t.params, ids, tgt, labels, t.config.n_layers))


def test_gpt_batch_of_two() -> None:
    t = explain.run("gpt", text=["the cat is happy", "the dog is hungry"], n_layers=2, seed=7)
    ids = t["tokens"].output
    assert ids.shape == (2, 4)
    out = ref.gpt(t.params, ids, 2)
    _close(t, out)
    assert t["logits"].shape == (2, 4, t.config.d_vocab)


def test_gpt_loss_is_mean_negative_log_prob_of_next_token() -> None:
    t = explain.run("gpt", random_weights=True, text="The cat is happy", seed=0)
    probs = t["probs"].output[0]
    ids = t["tokens"].output[0]
    by_hand = -np.mean([np.log(probs[i, ids[i + 1]]) for i in range(len(ids) - 1)])
    assert float(t["loss"].output) == pytest.approx(by_hand, rel=1e-12)
