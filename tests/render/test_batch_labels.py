"""Token labels per batch item: every step of a gpt batch labels its positions with the words of the item
shown, the (batch, pos) views name both words where the items differ, and token ids are named by their words."""

from __future__ import annotations

import explain
from explain.render.step import axis_labels

TEXTS = ["The cat is happy", "The dog is happy"]


def batch_trace():
    return explain.run("gpt", random_weights=True, text=TEXTS)


def test_each_item_has_its_own_words():
    trace = batch_trace()
    assert trace.batch_labels["pos"] == [t.split() for t in TEXTS]
    assert trace.labels["pos"] == TEXTS[0].split()  # the first item stays the default
    assert trace.tokens_text() == " | ".join(TEXTS)
    assert trace.item_text(1) == TEXTS[1]


def test_every_batched_step_labels_the_item_shown():
    trace = batch_trace()
    checked = 0
    for step in trace:
        if "batch" not in step.axes or "pos" not in step.axes or len(step.shape) < 3:
            continue
        pos = step.axes.index("pos")
        if step.shape[pos] != len(TEXTS[0].split()):  # log_probs_pred drops the last position: no labels
            continue
        lead = tuple(1 if a == "batch" else 0 for a in step.axes[:-2])
        assert axis_labels(trace, step, pos, lead) == TEXTS[1].split(), step.name
        lead0 = tuple(0 for _ in step.axes[:-2])
        assert axis_labels(trace, step, pos, lead0) == TEXTS[0].split(), step.name
        checked += 1
    assert checked > 10  # embed, residuals, q/k/v, scores, pattern, logits…


def test_batch_by_pos_view_names_both_items():
    trace = batch_trace()
    assert axis_labels(trace, trace["tokens"], 1) == ["The", "cat/dog", "is", "happy"]


def test_token_ids_are_named_by_their_words():
    trace = batch_trace()
    dog = trace.labels["vocab"].index("dog")
    assert trace.explain("tokens", (1, 1)).lines == [f"ids[1, 1] = id {dog} (dog)"]
    assert f"id {dog} (dog)" in trace.explain("embed", (1, 1, 0)).lines[0]
    lines = trace.explain("correct_log_probs", (1, 0)).lines  # ed00d29 put the words first: which token is scored
    assert lines[:2] == ["position 0 reads 'The' and is scored on the next token, 'dog'",
                         f"the correct next token at [1, 0] is id {dog} (dog)"]


def test_single_text_has_no_batch_labels():
    trace = explain.run("gpt", random_weights=True)
    assert trace.batch_labels == {}
    assert axis_labels(trace, trace["tokens"], 1) == trace.labels["pos"]
