"""``explain lens`` (and, as they land, ``attribute`` and ``patch``): tables, one JSON document, an exported
script that recomputes the recorded numbers, and one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from clitools import invoke, one_line_error

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)

CKPT = str(DATA / "gpt2_tiny")


def test_lens_prints_each_layer_with_the_words_rank():
    out = invoke("lens", "gpt", "--word", "happy", "--plain")
    assert out.exit_code == 0, out.output
    assert "logit lens" in out.output and "rank of 'happy'" in out.output
    for label in ("0+attn", "1+attn"):
        assert label in out.output
    # each table's title is one whole line above it (a table title wraps to the table's width: the narrow
    # second table's read "after position 4 (the): the" / "next word, read after each" / "layer")
    lines = out.output.splitlines()
    assert "logit lens: the top word at each position, read after each layer" in lines
    assert any(line.endswith(": the next word, read after each layer") and line.startswith("after position")
               for line in lines)


def test_lens_json_is_one_document():
    out = invoke("lens", "gpt", "--checkpoint", CKPT, "--text", "The cat is", "--word", " happy", "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["word"] == " happy" and [r["layer"] for r in doc["layers"]] == ["0", "0+attn", "1", "1+attn", "2"]
    assert doc["layers"][-1]["step"] == "lens.blocks.1.resid_post.logits"
    assert all(1 <= r["rank"] <= 300 and 0 < r["prob"] < 1 for r in doc["layers"])


def test_lens_export_recomputes_its_steps(tmp_path):
    script = tmp_path / "lens.py"
    out = invoke("lens", "gpt", "--word", "happy", "--json", "-o", str(script))
    assert out.exit_code == 0, out.output
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "ok: 15 steps match the recorded values" in run.stdout


@pytest.mark.parametrize("args, code, needle", [
    (("lens", "encoder", "--word", "cat"), 2, "post-LN"),
    (("lens", "gpt", "--checkpoint", CKPT, "--text", "The cat is", "--word", " mat"), 1, "is 2 tokens"),
    (("lens", "gpt", "--word", "Paris"), 1, "not in the vocabulary"),
    (("lens", "gpt", "--trained", "--word", "zebra"), 1, "'zebra' is not in the vocabulary"),  # not read as <unk>
    (("lens", "gpt", "--word", "cat", "--plain", "--json"), 2, "choose one of"),
    (("lens", "gpt", "--word", "cat", "-o", "x.txt"), 2, "*.py"),
    # a batch was read as item 0 alone, after its last position: "after position 3 (<pad>)"
    (("lens", "gpt", "--text", "the cat", "--text", "a dog is happy", "--word", "happy"), 2, "give --text once"),
])
def test_lens_refusals_are_one_line(args, code, needle):
    one_line_error(invoke(*args), code, needle)


def test_attribute_ranks_the_parts_and_shows_their_sum():
    out = invoke("attribute", "gpt", "--random-weights", "--word", "happy", "--vs", "cat", "--plain")
    assert out.exit_code == 0, out.output
    assert "logit['happy'] − logit['cat']" in out.output and "blocks.1 head 1" in out.output
    assert "sum of the 11 contributions" in out.output and "TransformerLens" in out.output


def test_attribute_json_and_export(tmp_path):
    script = tmp_path / "attr.py"
    out = invoke("attribute", "gpt", "--checkpoint", CKPT, "--text", "The cat is", "--word", " happy", "--json",
                 "-o", str(script))
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert abs(doc["sum"] - doc["logit"]) < 1e-10 and "TransformerLens" in doc["convention"]
    assert abs(sum(p["contribution"] for p in doc["parts"]) - doc["logit"]) < 1e-10
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "ok: 6 steps match" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("args, code, needle", [
    (("attribute", "transformer", "--word", "cat"), 2, "post-LN"),
    (("attribute", "gpt", "--word", "Paris"), 1, "not in the vocabulary"),
    (("attribute", "gpt", "--trained", "--word", "mat", "--vs", "zebra"), 1, "'zebra' is not in the vocabulary"),
    (("attribute", "gpt", "--word", "cat", "--vs", "cat"), 2, "is --word itself"),
    (("attribute", "gpt"), 2, "--word"),
    (("attribute", "gpt", "--text", "the cat", "--text", "a dog is happy", "--word", "happy"), 2, "give --text once"),
])
def test_attribute_refusals_are_one_line(args, code, needle):
    one_line_error(invoke(*args), code, needle)


PATCH = ("patch", "gpt", "--checkpoint", CKPT, "--text", "The cat is", "--corrupt", "The step is", "--word", " happy",
         "--vs", " the")


def test_patch_sweep_draws_the_recovered_fraction():
    out = invoke(*PATCH, "--sweep", "resid", "--plain")
    assert out.exit_code == 0, out.output
    assert "recovered fraction" in out.output and "blocks.0.resid_pre" in out.output and "␣step" in out.output
    doc = json.loads(invoke(*PATCH, "--sweep", "heads", "--json").stdout)
    assert doc["columns"] == ["head 0", "head 1"] and len(doc["recovered"]) == 2


def test_patch_one_step_reports_and_exports(tmp_path):
    out = invoke(*PATCH, "--step", "blocks.0.resid_pre", "--position", "0", "--plain")
    assert out.exit_code == 0 and "the patch changes nothing" in out.output, out.output
    script = tmp_path / "patch.py"
    out = invoke(*PATCH, "--step", "blocks.0.resid_pre", "--position", "1", "--json", "-o", str(script))
    doc = json.loads(out.stdout)
    assert doc["recovered"] == pytest.approx(1.0, abs=1e-12) and doc["notes"] == []
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0 and "steps match the recorded values" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("extra, code, needle", [
    (("--step", "blocks.0.mlp_out", "--sweep", "mlp"), 2, "not both or neither"),
    ((), 2, "not both or neither"),
    (("--sweep", "mlp", "--position", "1"), 2, "each in turn"),
    (("--step", "blocks.5.mlp_out"), 2, "no step named"),
    (("--step", "blocks.0.mlp_out", "--head", "1"), 2, "head axis"),
    (("--step", "blocks.0.mlp_out", "--position", "9"), 2, "blocks.0.mlp_out's 3 positions; give 0–2"),  # '3 poss'
    (("--step", "blocks.0.attn.z", "--head", "2"), 2, "blocks.0.attn.z's 2 heads; give 0–1"),
])
def test_patch_refusals_are_one_line(extra, code, needle):
    one_line_error(invoke(*PATCH, *extra), code, needle)


def test_patch_runs_of_different_lengths_are_refused():
    one_line_error(invoke("patch", "gpt", "--checkpoint", CKPT, "--text", "The cat is", "--corrupt", "The dog is",
                          "--word", " happy", "--vs", " the", "--sweep", "resid"), 1, "same length")
