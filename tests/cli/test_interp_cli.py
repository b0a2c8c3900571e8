"""``explain lens`` (and, as they land, ``attribute`` and ``patch``): tables, one JSON document, an exported
script that recomputes the recorded numbers, and one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli.clitools import invoke, one_line_error
from tests.conftest import DATA

CKPT = str(DATA / "gpt2_tiny")


def test_lens_prints_each_layer_with_the_words_rank():
    out = invoke("lens", "gpt", "--word", "happy", "--plain")
    assert out.exit_code == 0, out.output
    assert "logit lens" in out.output and "rank of 'happy'" in out.output
    for label in ("0+attn", "1+attn"):
        assert label in out.output


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
    (("lens", "gpt", "--word", "cat", "--plain", "--json"), 2, "choose one of"),
    (("lens", "gpt", "--word", "cat", "-o", "x.txt"), 2, "*.py"),
])
def test_lens_refusals_are_one_line(args, code, needle):
    one_line_error(invoke(*args), code, needle)
