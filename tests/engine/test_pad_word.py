"""Issue 42 item 12: the trained GPT pads a batch with <eos> (its vocabulary has no <pad>) but every label said
<pad>; the labels now say the word the padding uses, and the drill-downs say 'padding'."""

from __future__ import annotations

import explain

TEXTS = ["the cat is happy", "a dog"]


def test_the_trained_gpt_labels_its_padding_as_it_pads():
    trace = explain.run("gpt", trained=True, text=TEXTS)
    vocab = trace.labels["vocab"]
    ids = trace["tokens"].output[1]
    words = trace.batch_labels["pos"][1]
    assert words[2:] == [vocab[int(i)] for i in ids[2:]] == ["<eos>", "<eos>"]
    ex = trace.explain("blocks.0.attn.pad_masked", (1, 0, 3, 3))
    assert "<pad>" not in " ".join(ex.lines) and "is padding" in ex.lines[0]


def test_a_word_tokenizer_still_pads_with_pad():
    trace = explain.run("gpt", random_weights=True, text=TEXTS)
    assert trace.batch_labels["pos"][1][2:] == ["<pad>", "<pad>"]
