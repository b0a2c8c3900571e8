"""`--checkpoint DIR` from the command line: `run` (JSON values equal to transformers' numbers, plain output
with the checkpoint's token labels), `params`, `shapes` and `export`; bad checkpoints give one line
`Error: …` naming the file and key, with exit code 1 (2 for usage errors), never a traceback."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from explain.cli import main

TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
EXPECTED = np.load(TINY / "expected.npz", allow_pickle=False)
TEXT = str(EXPECTED["text_1"])
IDS = ",".join(str(int(t)) for t in EXPECTED["tokens_1"])


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_line_error(result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for n in needles:
        assert n in lines[0], (n, lines[0])


def _step(doc: dict, name: str) -> dict:
    return next(s for s in doc["steps"] if s["name"] == name)


@pytest.mark.parametrize("source", [("--text", TEXT), ("--tokens", IDS)])
def test_run_json_matches_transformers(source: tuple[str, str]) -> None:
    r = invoke("run", "gpt", "--checkpoint", TINY, *source, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["config"]["d_model"] == 16 and doc["config"]["d_vocab"] == 300
    # JSON floats round-trip exactly, so the tolerance is the engine's (1e-9, see the unit tests).
    np.testing.assert_allclose(np.array(_step(doc, "logits")["values"])[0], EXPECTED["logits_1"], rtol=0, atol=1e-9)
    assert abs(_step(doc, "loss")["values"] - float(EXPECTED["loss_1"])) <= 1e-9
    assert doc["tokens"][:3] == ["Y", "our", "␣"]  # ids are labelled by the tokenizer too


def test_run_plain_shows_the_checkpoint_tokens() -> None:
    r = invoke("run", "gpt", "--checkpoint", TINY, "--text", "The cat is happy", "--plain")
    assert r.exit_code == 0, r.output
    assert "tokens: The ␣cat ␣is ␣happy" in r.output
    assert "(300, 16)" in r.output  # W_E from the checkpoint, not the tiny default


def test_params_writes_the_checkpoint_under_engine_names_and_runs_back(tmp_path: Path) -> None:
    out = tmp_path / "gpt2_tiny.npz"
    r = invoke("params", "gpt", "--checkpoint", TINY, "--tokens", "1", "-o", out)
    assert r.exit_code == 0, r.output
    with np.load(out) as z:
        assert z["blocks.0.attn.W_Q"].shape == (2, 16, 8) and z["W_E"].shape == (300, 16)
    # The same numbers with no checkpoint: the .npz and the config given as options.
    r = invoke("run", "gpt", "--weights", out, "--d-model", "16", "--heads", "2", "--layers", "2", "--vocab", "300",
               "--tokens", IDS, "--json")
    assert r.exit_code == 0, r.output
    np.testing.assert_allclose(np.array(_step(json.loads(r.output), "logits")["values"])[0], EXPECTED["logits_1"],
                               rtol=0, atol=1e-9)


def test_shapes_take_the_dimensions_from_config_json() -> None:
    r = invoke("shapes", "gpt", "--checkpoint", TINY, "--text", "The cat is happy")
    assert r.exit_code == 0, r.output
    assert "d_model 16, 2 heads × d_head 8, d_ff 64, 2 layers, vocab 300, context 32" in r.output
    assert "→ (1, 4, 300)" in r.output and "The ␣cat ␣is ␣happy" in r.output


@pytest.mark.skipif(importlib.util.find_spec("explain.commands.export") is None,
                    reason="explain export has not landed yet")
def test_export_a_checkpoint_run_reproduces_it(tmp_path: Path) -> None:
    out = tmp_path / "gpt2_tiny.py"
    r = invoke("export", "gpt", "--checkpoint", TINY, "--text", TEXT, "-o", out)
    assert r.exit_code == 0, r.output
    done = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()  # its own check against the recorded values, then what it did not check
    assert any(line.startswith("ok: ") for line in lines), done.stdout
    assert lines[-1].startswith("the other ") and "steps are given" in lines[-1], done.stdout


def test_bad_checkpoints_give_one_line(tmp_path: Path) -> None:
    one_line_error(invoke("run", "gpt", "--checkpoint", tmp_path / "nope", "--plain"), 1, "does not exist")
    one_line_error(invoke("run", "multihead", "--checkpoint", TINY, "--plain"), 2, "use 'gpt'")
    one_line_error(invoke("run", "gpt", "--checkpoint", TINY, "--heads", "4", "--plain"), 2, "--heads 4 conflicts")
    d = tmp_path / "ck"
    shutil.copytree(TINY, d)
    cfg = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**cfg, "activation_function": "silu"}))
    for cmd in ("run", "shapes"):
        one_line_error(invoke(cmd, "gpt", "--checkpoint", d, "--tokens", "1,2"), 1, str(d / "config.json"),
                       "activation_function 'silu'")
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "model.safetensors").write_bytes((TINY / "model.safetensors").read_bytes()[:1000])
    one_line_error(invoke("run", "gpt", "--checkpoint", d, "--tokens", "1,2", "--plain"), 1,
                   f"cannot read '{d / 'model.safetensors'}'")
    (d / "model.safetensors").write_bytes((TINY / "model.safetensors").read_bytes())  # whole again: the truncated
    (d / "tokenizer.json").unlink()  # file is refused on opening, before the text needs the tokenizer
    one_line_error(invoke("run", "gpt", "--checkpoint", d, "--text", "hi", "--plain"), 1,
                   "has no tokenizer.json; give --tokens")


def test_missing_packages_name_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the default install since issue 41; a broken environment without them is told what to install."""
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    one_line_error(invoke("run", "gpt", "--checkpoint", TINY, "--text", "hi", "--plain"), 1,
                   "pip install safetensors tokenizers", "tokenizers")
    # the weights need no extra: numpy reads model.safetensors (explain.io.tensorfile)
    assert invoke("run", "gpt", "--checkpoint", TINY, "--tokens", "1,2", "--plain").exit_code == 0
    r = invoke("shapes", "gpt", "--checkpoint", TINY, "--tokens", "1,2")
    assert r.exit_code == 0, r.output
