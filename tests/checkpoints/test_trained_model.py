"""The trained GPT that ships in the wheel (explain/checkpoints/trained/gpt-tiny, made by the documented
``explain train gpt -o explain/checkpoints/trained/gpt-tiny``) has learned what the issue asks, measured with the recorded
forward pass: the grammar's fixed next words, and copying by an induction head. Each number is computed
from the model here; the thresholds are the issue's."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from trained_checks import fixed_accuracy, induction, p_next

import explain
from explain.checkpoints.trained import SHIPPED
from explain.train import Settings


def test_the_shipped_model_is_small_and_whole():
    files = {p.name: p.stat().st_size for p in SHIPPED.iterdir()}
    assert set(files) == {"config.json", "model.safetensors", "tokenizer.json", "explain_train.json"}
    assert sum(files.values()) < 3_000_000  # a few MB at most


@pytest.mark.parametrize("prompt, word", [("the cat sat on the", "mat"), ("your journey starts with one", "step")])
def test_fixed_next_words(prompt, word):
    p, top = p_next(SHIPPED, prompt, word)
    assert top == word and p >= 0.5, (prompt, top, p)


def test_top1_accuracy_on_held_out_sentences():
    acc, n = fixed_accuracy(SHIPPED)
    assert n >= 15 and acc >= 0.9, (acc, n)


def test_induction_copies_and_one_head_looks_back():
    p, attention, head = induction(SHIPPED)
    assert p >= 0.5, p
    assert attention >= 0.5, (head, attention)


def test_greedy_generation_writes_mat():
    tr = explain.generate("gpt", trained=True, text="the cat sat on the", max_new_tokens=1, greedy=True)
    assert tr.weights == "trained: gpt-tiny"
    assert explain.engine.api.generated_ids(tr)[0][0] == list(tr.labels["vocab"]).index("mat")


def test_opens_without_the_extras():
    """The core install has neither safetensors nor tokenizers: numpy alone reads the shipped folder."""
    code = ("import sys; sys.modules['safetensors'] = None; sys.modules['tokenizers'] = None\n"
            "import explain, json\n"
            "t = explain.run('gpt', trained=True, text='the cat sat on the zebra')\n"
            "print(json.dumps([t.weights, t.unknown_words, t['probs'].output[0, -2].tolist()]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    label, unknown, probs = json.loads(out)
    assert label == "trained: gpt-tiny" and unknown == ["zebra"]
    here = explain.run("gpt", trained=True, text="the cat sat on the zebra")["probs"].output[0, -2]
    np.testing.assert_allclose(probs, here, rtol=0, atol=1e-12)


def test_documented_command_reproduces_the_first_50_losses(tmp_path):
    """The documented command, run for its first 50 steps (as a user would type it, in a process of its own, so
    it sets its one BLAS thread as it does when it trains the shipped model), against the shipped model's own
    curve (explain_train.json): the warm-up covers the 50 steps, so the total number of steps does not change
    them."""
    info = json.loads((SHIPPED / "explain_train.json").read_text())
    assert Settings(**info["settings"]) == Settings() and Settings().warmup >= 50  # the command's defaults
    out = tmp_path / "first-50"
    subprocess.run([sys.executable, "-m", "explain", "train", "gpt", "--steps", "50", "-o", str(out)], check=True,
                   capture_output=True, text=True, timeout=600)
    losses = json.loads((out / "explain_train.json").read_text())["losses"]
    np.testing.assert_allclose(losses, info["losses"][:50], rtol=0, atol=1e-9)
