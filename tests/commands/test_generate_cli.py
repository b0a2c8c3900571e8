"""``explain generate`` as a user types it: --plain and --json on the GPT-2 test checkpoint, one-line errors for
every bad option, and the predictions that ``explain run`` now prints wherever there are logits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clitools import invoke, one_line_error

CKPT = str(Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny")
BASE = ("generate", "gpt", "--checkpoint", CKPT, "--text", "The cat")


def test_plain_prints_steps_predictions_and_the_generated_text() -> None:
    r = invoke(*BASE, "--max-new-tokens", "5", "--top-k", "3", "--plain", "--ignore-eos")
    assert r.exit_code == 0, r.output
    out = r.output
    for needle in ("gen.0.top_k", "gen.4.next", "gen.1.blocks.0.attn.k_cache", "next-token predictions",
                   "generated 5 token(s), sampled at temperature 1, top-k 3, seed 0", "← drawn",
                   "next token after position 0", "← next in the text"):
        assert needle in out, needle
    assert "The cat is happy" in out  # the draws with seed 0 (test_generate checks the ids themselves)


def test_json_is_one_document_with_the_new_tokens_and_predictions() -> None:
    r = invoke(*BASE, "--max-new-tokens", "3", "--greedy", "--json", "--ignore-eos")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    gen = doc["generation"]
    assert gen["greedy"] and gen["max_new_tokens"] == 3 and len(gen["new_tokens"][0]) == 3
    assert gen["steps"] == ["gen.0.next", "gen.1.next", "gen.2.next"]
    steps = {s["name"]: s for s in doc["steps"]}
    assert [steps[n]["values"][0][0] for n in gen["steps"]] == gen["new_tokens"][0]
    last = doc["predictions"][-1]
    assert last["actual_is"] == "drawn" and last["actual"]["id"] == gen["new_tokens"][0][-1]
    assert last["top"][0]["rank"] == 1 and abs(sum(c["prob"] for c in last["top"])) <= 1


def test_temperature_zero_says_it_is_greedy() -> None:
    r = invoke(*BASE, "--max-new-tokens", "2", "--temperature", "0", "--json")
    assert r.exit_code == 0
    assert "note: temperature 0 means greedy decoding" in r.stderr
    assert json.loads(r.stdout)["generation"]["greedy"]


def test_top_k_beyond_the_vocabulary_is_noted() -> None:
    r = invoke(*BASE, "--max-new-tokens", "1", "--top-k", "100000", "--seed", "1", "--json")
    assert r.exit_code == 0
    vocab = json.loads(r.stdout)["config"]["d_vocab"]
    assert f"note: --top-k 100000 keeps every token (the vocabulary has {vocab})" in r.stderr
    r = invoke(*BASE, "--max-new-tokens", "1", "--top-k", "2", "--seed", "1", "--json")
    assert "note:" not in r.stderr


@pytest.mark.parametrize("args,code,needle", [
    (("--temperature", "-1"), 2, "--temperature must be 0 or more"),
    (("--temperature", "nan"), 2, "--temperature is NaN"),
    (("--top-k", "0"), 2, "--top-k must be a whole number of at least 1"),
    (("--top-p", "1.2"), 2, "--top-p must be more than 0 and at most 1"),
    (("--top-p", "0"), 2, "--top-p must be more than 0 and at most 1"),
    (("--max-new-tokens", "0"), 2, "--max-new-tokens must be a whole number of at least 1"),
    (("--max-new-tokens", "40"), 1, "use --max-new-tokens 31 or less"),
    (("--greedy", "--top-p", "0.9"), 2, "--greedy takes the most probable token"),
    # session 9: accepted, and the seed changed nothing (as --greedy --temperature, which is refused)
    (("--greedy", "--seed", "3"), 2, "greedy decoding draws nothing at random, so --seed would have no effect"),
    (("--temperature", "0", "--seed", "3"), 2, "drop --seed, or sample instead"),
    (("--top-k", "three"), 2, "'three' is not a valid integer"),
    (("--plain", "--json"), 2, "choose one of --plain and --json"),
])
def test_bad_options_are_one_line_errors(args, code, needle) -> None:
    one_line_error(invoke(*BASE, *args), code, needle)


def test_generation_needs_gpt() -> None:
    one_line_error(invoke("generate", "encoder", "--plain"), 2, "use 'gpt' or 'llama' or 'gemma', not 'encoder'")


def test_run_prints_predictions_with_the_correct_tokens_rank() -> None:
    r = invoke("run", "gpt", "--checkpoint", CKPT, "--text", "The cat is happy", "--plain")
    assert r.exit_code == 0
    assert "next token after position 0" in r.output and "next in the text: '␣cat' (id 285), rank 1" in r.output
    doc = json.loads(invoke("run", "transformer", "--json").output)
    assert {p["actual_is"] for p in doc["predictions"]} == {"target"}


def test_the_text_help_of_generate_promises_no_padding() -> None:
    """generate refuses prompts of different lengths, so its --text help says so instead of run's padding."""
    out = invoke("generate", "--help").output
    assert "a generation pads none" in " ".join(out.split())
    assert "right-padded" not in out
