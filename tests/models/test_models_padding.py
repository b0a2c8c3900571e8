"""Batches and padding for every model that takes text, checked by invariance: each text of a right-padded
batch must get, at its real positions, exactly what it gets when run alone with the same weights (the padding
mask hides the <pad> keys, so nothing of the padding may leak into a real position); and the loss must be the
mean over the real targets only (torch's ``ignore_index``). Tolerance 1e-12 absolute: the same float64
arithmetic. The torch references for the same mechanics are in test_models_torch_fixtures.py.

The texts use only built-in words, so a text has the same ids alone as in the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain.core.errors import ExplainError
from explain.core.padding import IGNORE_INDEX

TEXTS = ["the cat sat on the mat", "a dog is happy", "the cat"]
ATOL = 1e-12


def alone(model: str, batch, text: str, **kw):
    """The same model run on one text with the batch's weights (and vocabulary size)."""
    return explain.run(model, text=text, weights=dict(batch.params), d_vocab=batch.config.d_vocab,
                       seed=batch.config.seed, **kw)


@pytest.mark.parametrize("model,step,kw", [
    ("simple", "attn.z", {}),
    ("attention", "attn.z", {}),
    ("causal", "attn.z", {}),
    ("multihead", "attn_out", {"causal": True}),
    ("synthesizer", "attn_out", {}),
    ("encoder", "blocks.1.ln2", {}),
])
def test_each_text_of_a_padded_batch_gets_what_it_gets_alone(model: str, step: str, kw: dict) -> None:
    t = explain.run(model, text=TEXTS, seed=3, **kw)
    T = t["tokens"].shape[-1]
    assert t["tokens"].shape == (3, 6) and t[step].shape[0] == 3  # batch axis first
    pad_steps = [s.name for s in t if s.op == "pad_mask"]
    assert pad_steps and all(s.endswith("pad_masked") for s in pad_steps)
    assert t.labels["pos"] == ["the", "cat", "sat", "on", "the", "mat"]
    for b, text in enumerate(TEXTS):
        n = len(text.split())
        one = alone(model, t, text, **kw)
        np.testing.assert_allclose(t[step].output[b, ..., :n, :], one[step].output[..., :n, :], atol=ATOL, rtol=0)
        assert np.all(t["tokens"].output[b, n:] == t["tokens"].output[2, -1])  # <pad> after the text
    assert T == 6


def test_gpt_padded_batch_logits_and_loss_ignore_the_padding() -> None:
    t = explain.run("gpt", random_weights=True, text=TEXTS, seed=4)
    targets = t["targets"].output
    lengths = [len(x.split()) for x in TEXTS]
    assert [int((row != IGNORE_INDEX).sum()) for row in targets] == [n - 1 for n in lengths]
    total, count = 0.0, 0
    for b, text in enumerate(TEXTS):
        n = lengths[b]
        one = alone("gpt", t, text)
        np.testing.assert_allclose(t["logits"].output[b, :n], one["logits"].output[0], atol=ATOL, rtol=0)
        total += float(one["token_loss"].output.sum())
        count += n - 1
    # the batch loss is the mean over every real target of every text, padded targets not counted
    assert float(t["loss"].output) == pytest.approx(total / count, abs=ATOL)
    assert np.all(t["token_loss"].output[targets == IGNORE_INDEX] == 0.0)


def test_transformer_padded_sources_and_targets() -> None:
    targets = ["the dog", "a cat is happy", "a dog"]
    t = explain.run("transformer", text=TEXTS, target=targets, seed=5)
    assert {"encoder.key_padding", "decoder.key_padding"} <= set(t.names())
    assert "decoder.blocks.0.self_attn.masked" in t and "decoder.blocks.0.self_attn.pad_masked" in t
    assert "decoder.blocks.0.cross_attn.pad_masked" in t and "decoder.blocks.0.cross_attn.masked" not in t
    total, count = 0.0, 0
    for b, (src, tgt) in enumerate(zip(TEXTS, targets)):
        m = len(tgt.split()) + 1  # <bos> + target
        one = alone("transformer", t, src, target=tgt)
        np.testing.assert_allclose(t["logits"].output[b, :m], one["logits"].output, atol=ATOL, rtol=0)
        total += float(one["token_loss"].output.sum())
        count += m
    assert float(t["loss"].output) == pytest.approx(total / count, abs=ATOL)


def test_a_batch_of_equal_lengths_has_no_padding_mask() -> None:
    t = explain.run("multihead", text=["the cat sat", "a dog ran"])
    assert t["attn.pattern"].shape == (2, 2, 3, 3)
    assert not any(s.op == "pad_mask" for s in t) and "key_padding" not in t


def test_explanations_say_which_cells_each_mask_hid_and_why() -> None:
    t = explain.run("gpt", text=TEXTS, n_layers=1)
    pad = t.explain("blocks.0.attn.pad_masked", (2, 0, 1, 3))  # text 2 ("the cat"): key 3 is <pad>
    assert "padding: key 3 '<pad>' of sequence 2 is padding" in pad.lines[0] and pad.value == float("-inf")
    kept = t.explain("blocks.0.attn.pad_masked", (0, 0, 3, 1))
    assert "real token" in kept.lines[0]
    causal = t.explain("blocks.0.attn.masked", (0, 0, 1, 3))
    assert "comes after query position 1" in causal.lines[0]
    ignored = t.explain("correct_log_probs", (2, 3))
    assert "ignore_index" in ignored.lines[1] and ignored.value == 0.0  # lines[0] names the token (ed00d29)
    loss = t.explain("loss", ())
    assert "ignored" in loss.title


@pytest.mark.parametrize("model,kw,needle", [
    ("encoder", {"causal": True}, "unmasked by design"),
    ("gpt", {"causal": True}, "always causal"),
    ("simple", {"qkv_bias": False}, "--no-qkv-bias applies to the 'attention'"),
    ("synthesizer", {"qkv_bias": False}, "--no-qkv-bias applies to the 'attention'"),
    ("gpt", {"tie_embeddings": False}, "--untie-embeddings applies to the 'transformer' or 'llama' or 'gemma' models only"),
    ("gpt", {"d_out": 3}, "--d-out 3 applies to the 'multihead' model only"),
    ("simple", {"text": TEXTS, "normalize": "sum"}, "cannot skip padding"),
    ("transformer", {"text": TEXTS, "target": ["a", "b"]}, "one --target per --text"),
])
def test_options_refused_where_they_do_not_apply(model: str, kw: dict, needle: str) -> None:
    with pytest.raises(ExplainError, match=needle):
        explain.run(model, **kw)


def test_batched_embeddings_keep_the_batch_axis() -> None:
    x = np.random.default_rng(0).normal(size=(2, 4, 6))
    t = explain.run("attention", embeddings=x, causal=True)
    assert t["attn.pattern"].shape == (2, 4, 4) and t["attn.masked"].op == "mask"
    for b in range(2):
        one = explain.run("attention", embeddings=x[b], weights=dict(t.params), causal=True)
        np.testing.assert_allclose(t["attn.z"].output[b], one["attn.z"].output, atol=ATOL, rtol=0)


def test_each_batch_row_is_labelled_with_its_own_tokens() -> None:
    from explain.render.step import axis_labels

    t = explain.run("gpt", text=TEXTS, n_layers=1)
    step = t["blocks.0.attn.pad_masked"]  # (batch, head, query, key)
    assert axis_labels(t, step, 3, (0, 0)) == ["the", "cat", "sat", "on", "the", "mat"]
    assert axis_labels(t, step, 3, (1, 1)) == ["a", "dog", "is", "happy", "<pad>", "<pad>"]
    assert axis_labels(t, step, 2, (2, 0)) == ["the", "cat", "<pad>", "<pad>", "<pad>", "<pad>"]
    tt = explain.run("transformer", text=TEXTS, target=["the dog", "a cat is happy", "a dog"])
    assert axis_labels(tt, tt["decoder.blocks.0.cross_attn.pattern"], 3, (2, 0)) == \
        ["the", "cat", "<pad>", "<pad>", "<pad>", "<pad>"]
    assert axis_labels(tt, tt["decoder.blocks.0.cross_attn.pattern"], 2, (0, 0)) == \
        ["<bos>", "the", "dog", "<pad>", "<pad>"]


def test_the_padding_flags_are_booleans_not_token_ids():
    """key_padding holds 1/0 flags (torch's bool mask), so its cells are not named as words of the vocabulary
    (a flag 1 once read 'id 1 (<eos>)')."""
    t = explain.run("gpt", random_weights=True, text=["the cat sat on the mat", "a dog is happy"])
    step = t["key_padding"]
    assert step.output.dtype == bool
    ex = t.explain(step, (1, 4))
    assert ex.lines == ["pad[1, 4] = 1"]
    assert "id" not in " ".join(ex.lines)
