"""The model options from the command line: --causal, --no-qkv-bias, --d-out (the book's §3.6 from a shell),
--untie-embeddings, batches of texts of different lengths (--text repeated, --target repeated), and one-line
errors where an option does not apply."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from clitools import invoke, one_line_error

MODELS = Path(__file__).resolve().parent.parent / "data" / "models"
# "Build a Large Language Model (From Scratch)", §3.6.2, printed context_vecs (each batch row)
BOOK_3_6 = [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
            [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]


def test_book_3_6_from_the_command_line(tmp_path: Path) -> None:
    with np.load(MODELS / "book_3_6_expected.npz", allow_pickle=False) as z:
        np.save(tmp_path / "batch.npy", z["embeddings"])
    res = invoke("run", "multihead", "--embeddings", str(tmp_path / "batch.npy"), "--weights",
                 str(MODELS / "book_3_6_weights.npz"), "--heads", "2", "--d-head", "1", "--d-out", "2",
                 "--causal", "--no-qkv-bias", "--json")
    assert res.exit_code == 0, res.output
    steps = {s["name"]: s for s in json.loads(res.stdout)["steps"]}
    assert steps["attn.masked"]["op"] == "mask"
    np.testing.assert_allclose(np.array(steps["attn_out"]["values"], dtype=float), [BOOK_3_6, BOOK_3_6], atol=5e-5)


def test_padded_batch_from_the_command_line() -> None:
    res = invoke("run", "transformer", "--text", "the cat sat", "--text", "a dog", "--target", "the dog",
                 "--target", "a cat is happy", "--plain")
    assert res.exit_code == 0, res.output
    assert "encoder.blocks.0.attn.pad_masked" in res.stdout and "decoder.key_padding" in res.stdout


def test_shapes_know_the_options() -> None:
    res = invoke("shapes", "multihead", "--causal", "--d-out", "3", "--no-qkv-bias", "--text", "a b c",
                 "--text", "a")
    assert res.exit_code == 0, res.output
    assert "attn.masked" in res.stdout and "attn.pad_masked" in res.stdout and "attn.b_Q" not in res.stdout


def test_options_that_do_not_apply_are_one_line_errors() -> None:
    one_line_error(invoke("run", "encoder", "--causal", "--plain"), 2, "unmasked by design", "transformer")
    one_line_error(invoke("run", "gpt", "--untie-embeddings", "--plain"), 2, "--untie-embeddings", "'transformer'")
    one_line_error(invoke("run", "transformer", "--text", "a b", "--text", "a", "--target", "x", "--target", "y",
                          "--target", "z", "--plain"), 2, "one --target per --text")


def test_export_of_a_padded_batch_runs_and_says_what_it_holds(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "pad.py"
    res = invoke("export", "gpt", "--text", "the cat sat on the mat", "--text", "a dog is happy", "--layers", "1",
                 "-o", str(out))
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "Tokens of batch item 1: a dog is happy <pad> <pad>" in text and "padding_mask(" in text and "!= -100" in text
    done = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().startswith("ok:"), done.stdout + done.stderr
    res = invoke("export", "multihead", "--causal", "--no-qkv-bias", "--d-out", "3", "-o", str(tmp_path / "m.py"))
    assert res.exit_code == 0, res.output
    assert "Options: --causal --no-qkv-bias --d-out 3." in (tmp_path / "m.py").read_text()


def test_a_generation_from_prompts_of_different_lengths_is_refused_in_one_line() -> None:
    res = invoke("generate", "gpt", "--text", "the cat sat on", "--text", "a dog", "--plain")
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "Error: the prompts of a generation must have the same number of tokens, got [4, 2]; give texts of the "
        "same length, or generate from each text alone"]
