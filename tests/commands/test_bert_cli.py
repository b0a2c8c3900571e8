"""`bert` from the command line: --tokens repeated makes a batch (it used to replace the first), padded as --text
is; the sentence head's steps print; a lone text has cosines but no loss; bad inputs are one line."""

from __future__ import annotations

import json
from pathlib import Path

from clitools import invoke, one_line_error


def test_tokens_repeat_for_a_batch() -> None:
    result = invoke("run", "bert", "--tokens", "3,4,5,6", "--tokens", "7,8", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["tokens"]["shape"] == [2, 4] and "blocks.0.attn.pad_masked" in steps
    assert steps["pairs.0_1.parts"]["shape"] == [4, 2]
    one = json.loads(invoke("run", "gpt", "--random-weights", "--tokens", "3,1,4", "--json").stdout)
    assert {s["name"]: s for s in one["steps"]}["tokens"]["shape"] == [1, 3]  # one --tokens: as before
    two = json.loads(invoke("run", "gpt", "--random-weights", "--tokens", "3,1,4", "--tokens", "5,9,2",
                            "--json").stdout)
    assert {s["name"]: s for s in two["steps"]}["tokens"]["shape"] == [2, 3]


def test_one_text_has_cosines_but_no_loss() -> None:
    result = invoke("run", "bert", "--text", "the cat sat", "--json")
    assert result.exit_code == 0, result.output
    names = [s["name"] for s in json.loads(result.stdout)["steps"]]
    assert "sentence.cos" in names and "loss" not in names and not any(n.startswith("pairs.") for n in names)


def test_three_texts_give_every_pair() -> None:
    result = invoke("run", "bert", "--text", "a man eats", "--text", "a man eats bread", "--text", "the girl",
                    "--plain")
    assert result.exit_code == 0, result.output
    for pair in ("0_1", "0_2", "1_2"):
        assert f"pairs.{pair}.total" in result.output


def test_bad_inputs_are_one_line() -> None:
    one_line_error(invoke("run", "bert", "--tokens", "3,x"), 2, "--tokens takes whole numbers")
    one_line_error(invoke("run", "bert", "--tokens", "3,4", "--tokens", ""), 2, "--tokens is empty")
    one_line_error(invoke("run", "bert", "--causal"), 2, "unmasked by design")


DATA = Path(__file__).resolve().parents[1] / "data" / "bert"


def test_shapes_counts_bertmodel_from_a_config_alone() -> None:
    for folder, count in (("bert-base-uncased", "109,482,240"), ("all-MiniLM-L6-v2", "22,713,216")):
        result = invoke("shapes", "--checkpoint", str(DATA / "configs" / folder), "--no-steps")
        assert result.exit_code == 0, result.output
        assert f"total: {count} parameters" in result.stdout
        assert "pooler" in result.stdout
        doc = json.loads(invoke("shapes", "--checkpoint", str(DATA / "configs" / folder), "--json").stdout)
        assert f"{doc['n_params']:,}" == count and "n_fixed" not in doc


def test_a_checkpoint_run_and_its_refusals() -> None:
    folder = str(DATA / "hf_bert")
    result = invoke("run", "--checkpoint", folder, "--text", "A man is eating food.", "--text", "A baby.", "--plain")
    assert result.exit_code == 0, result.output
    assert "[CLS] a man is eating food . [SEP]" in " ".join(result.output.split()) and "pairs.0_1.total" in result.output
    one_line_error(invoke("run", "bert", "--checkpoint", folder, "--text", "a man is eating food " * 6), 1,
                   "the input has 32 tokens but the checkpoint's context is 24")
    one_line_error(invoke("run", "bert", "--checkpoint", str(DATA / "configs" / "all-MiniLM-L6-v2"), "--tokens",
                          "101,102"), 1, "has no model.safetensors")
