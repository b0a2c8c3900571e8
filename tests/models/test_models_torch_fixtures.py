"""The book's and PyTorch's numbers for the model options: causal multi-head attention, bias-free projections,
batches with the batch axis first, right-padded batches with a padding mask and an ignored loss target.

The references are fixtures written once by ``tests/data/make_model_fixtures.py`` with torch 2.13 (no torch
here) and, for §3.6, the book's printed tensor. Tolerances: 5e-5 against printed 4-decimal numbers (half a unit
of the last printed digit); 1e-10 relative / 1e-12 absolute against torch's float64 (the same arithmetic in
another order).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explain

DATA = Path(__file__).resolve().parent.parent / "data"
MODELS = DATA / "models"
TOL = dict(rtol=1e-10, atol=1e-12)
PRINTED = 5e-5

# "Build a Large Language Model (From Scratch)", §3.6.2, the printed context_vecs (both batch rows alike).
BOOK_3_6 = [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
            [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]


def load(name: str) -> dict[str, np.ndarray]:
    with np.load(MODELS / name, allow_pickle=False) as z:
        return {k: z[k] for k in z}


def test_book_3_6_multihead_reproduces_the_printed_context_vectors() -> None:
    exp = load("book_3_6_expected.npz")
    t = explain.run("multihead", embeddings=exp["embeddings"], weights=str(MODELS / "book_3_6_weights.npz"),
                    n_heads=2, d_head=1, d_out=2, causal=True, qkv_bias=False)
    out = t["attn_out"].output
    assert out.shape == (2, 6, 2)  # (batch, tokens, d_out), as the book's torch.Size([2, 6, 2])
    np.testing.assert_allclose(out, np.array([BOOK_3_6, BOOK_3_6]), atol=PRINTED)
    np.testing.assert_allclose(out, exp["context_vecs"], **TOL)
    np.testing.assert_allclose(t["attn.pattern"].output, exp["attn_weights"], **TOL)
    assert t["attn.masked"].op == "mask"  # the causal mask is the same step as in 'causal'
    assert not {"attn.b_Q", "attn.b_K", "attn.b_V"} & set(t.params)  # qkv_bias=False: no biases on Q, K, V


def test_causal_multihead_matches_scaled_dot_product_attention_is_causal() -> None:
    exp = load("causal_mha_expected.npz")
    t = explain.run("multihead", embeddings=exp["embeddings"], weights=str(MODELS / "causal_mha_weights.npz"),
                    n_heads=2, causal=True)
    assert t["attn.q"].shape == (2, 2, 5, 4)  # (batch, head, T, d_head)
    np.testing.assert_allclose(t["attn.z"].output, exp["z"], **TOL)
    np.testing.assert_allclose(t["attn_out"].output, exp["out"], **TOL)


def test_padded_batch_matches_multihead_attention_with_key_padding_mask() -> None:
    exp = load("padded_mha_expected.npz")
    texts = [str(s) for s in exp["texts"]]
    t = explain.run("multihead", text=texts, weights=str(MODELS / "padded_mha_weights.npz"), n_heads=2)
    np.testing.assert_array_equal(t["tokens"].output, exp["ids"])
    assert "attn.pad_masked" in t and "attn.masked" not in t  # a padding mask, and no causal mask
    np.testing.assert_allclose(t["attn.pattern"].output, exp["pattern"], **TOL)
    np.testing.assert_allclose(t["attn_out"].output, exp["out"], **TOL)
    # every padded key gets weight exactly 0, for every query of its sequence
    hidden = exp["key_padding_mask"][:, None, None, :].repeat(6, axis=2).repeat(2, axis=1)
    assert np.all(t["attn.pattern"].output[hidden] == 0.0)


def test_padded_gpt2_batch_matches_hugging_face_and_cross_entropy_ignore_index() -> None:
    pytest.importorskip("safetensors")
    pytest.importorskip("tokenizers")
    exp = load("padded_gpt2_expected.npz")
    texts = [str(s) for s in exp["texts"]]
    t = explain.run("gpt", checkpoint=str(DATA / "gpt2_tiny"), text=texts)
    np.testing.assert_array_equal(t["tokens"].output, exp["ids"])
    np.testing.assert_allclose(t["logits"].output, exp["logits"], rtol=1e-9, atol=1e-9)  # float32 weights
    assert float(t["loss"].output) == pytest.approx(float(exp["loss"]), rel=1e-10)
    assert t["blocks.0.attn.masked"].op == "mask" and t["blocks.0.attn.pad_masked"].op == "pad_mask"
