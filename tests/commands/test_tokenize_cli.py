"""explain tokenize on the command line: --plain (every stage, the merges with their ranks), --json (one document),
-o (a script that prints the same ids), the trained model's word tokenizer by default, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from clitools import invoke, one_line_error

CKPT = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"


def test_plain_shows_every_stage_of_a_bpe() -> None:
    r = invoke("tokenize", "--checkpoint", str(CKPT), "--text", "The capital", "--plain")
    assert r.exit_code == 0, r.output
    for needle in ("1. normalisation", "2. pre-tokenization", "3. merges", "4. ids", "20 63 61 70 69 74 61 6c",
                   "␣ + c → ␣c", "rank 13", "beats"):
        assert needle in r.output, needle
    assert r.output.rstrip().endswith("ids: 262 270 280 290 65 76")  # the tiny fixture has no 'al' merge


def test_the_text_is_printed_as_typed() -> None:
    """A text with '[bold]' printed 'see␣␣x': rich read the user's text and pieces as markup (found with issue 42's
    notebook tables); ':cat:' would have become an emoji. Fails on the old Console()."""
    r = invoke("tokenize", "--checkpoint", str(CKPT), "--text", "see [bold] x :cat:", "--plain")
    assert r.exit_code == 0, r.output
    assert "text: 'see␣[bold]␣x␣:cat:'" in r.output and "→ 'see␣[bold]␣x␣:cat:'" in r.output
    assert any(line.split()[1:2] == ["bold"] for line in r.output.splitlines())  # the piece 'bold' between [ and ]


def test_the_trained_model_is_the_default() -> None:
    r = invoke("tokenize", "--text", "The cat is happy, İstanbul!", "--plain")
    assert r.exit_code == 0, r.output
    assert "lower-case every letter" in r.output and "ids: 3 25 6 29 42 37 2 2 43" in r.output


def test_json_is_one_document() -> None:
    r = invoke("tokenize", "gpt", "--checkpoint", str(CKPT), "--text", "the cat 😀", "--json")
    doc = json.loads(r.output)
    assert doc["family"] == "bpe" and doc["ids"] == [t["id"] for t in doc["tokens"]]
    assert doc["pieces"][2]["bytes"] == [32, 240, 159, 152, 128] and doc["steps"][0]["kind"] == "merge"


def test_output_writes_a_script_that_prints_the_ids(tmp_path: Path) -> None:
    out = tmp_path / "tok.py"
    r = invoke("tokenize", "--checkpoint", str(CKPT), "--text", "The capital of France", "-o", str(out))
    assert r.exit_code == 0, r.output
    done = subprocess.run([sys.executable, "-I", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    doc = json.loads(invoke("tokenize", "--checkpoint", str(CKPT), "--text", "The capital of France", "--json").output)
    assert [int(x) for x in done.stdout.split()] == doc["ids"]
    again = invoke("tokenize", "--checkpoint", str(CKPT), "--text", "x", "-o", str(out))
    one_line_error(again, 2, "--force")


def test_errors_are_one_line() -> None:
    one_line_error(invoke("tokenize", "--text", "a", "--plain", "--json"), 2, "--plain", "--json")
    one_line_error(invoke("tokenize", "nosuch", "--text", "a"), 2, "unknown model")
    one_line_error(invoke("tokenize", "--checkpoint", "/nonexistent", "--text", "a"), 1, "does not exist")


def test_run_records_the_tokenizer_steps_first() -> None:
    r = invoke("run", "gpt", "--checkpoint", str(CKPT), "--tokenizer-steps", "--text", "The capital", "--json")
    names = [s["name"] for s in json.loads(r.output)["steps"]]
    assert names[:4] == ["tokenizer.text", "tokenizer.normalized", "tokenizer.piece0.symbols",
                         "tokenizer.piece0.merge0"]
    assert names.index("tokenizer.ids") < names.index("tokens")
    one_line_error(invoke("run", "gpt", "--tokenizer-steps", "--tokens", "3,4", "--plain"), 2, "--tokenizer-steps")
