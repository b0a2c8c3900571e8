"""The backward pass from the command line: --backward in --plain, --json, shapes and export; the objective
options; one-line errors for every wrong combination (exit 2 for usage, 1 for a file that is wrong)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from clitools import invoke, one_line_error


def test_plain_and_json_carry_the_gradient_steps() -> None:
    r = invoke("run", "causal", "--backward", "--plain")
    assert r.exit_code == 0 and "attn.scaled.grad  [mask.grad]" in r.output and "∂L/∂L = 1" in r.output
    doc = json.loads(invoke("run", "gpt", "--backward", "--json").output)
    names = [s["name"] for s in doc["steps"]]
    assert names.index("loss.grad") < names.index("W_E.grad") == len(names) - 1


def test_shapes_list_the_gradient_steps_without_running() -> None:
    r = invoke("shapes", "gpt", "--backward", "--match", "blocks.0.attn.pattern*", "--no-params")
    assert r.exit_code == 0
    assert "blocks.0.attn.pattern.grad" in r.output and "weighted_sum.grad" in r.output


def test_lr_shows_the_loss_after_one_step() -> None:
    r = invoke("run", "gpt", "--lr", "0.5", "--plain")
    assert r.exit_code == 0 and "loss_after" in r.output and ": down" in r.output


def test_objective_files(tmp_path) -> None:
    g = tmp_path / "dZ.npy"
    np.save(g, np.ones((2, 4)))
    r = invoke("run", "attention", "--backward", "--grad-output", str(g), "--json")
    doc = json.loads(r.output)
    step = next(s for s in doc["steps"] if s["name"] == "attn.z.grad")
    assert step["op"] == "input" and step["values"] == [[1.0] * 4] * 2
    t = tmp_path / "target.csv"
    t.write_text("1,2,3,4\n5,6,7,8\n")
    assert invoke("run", "attention", "--backward", "--output-target", str(t), "--plain").exit_code == 0


def test_wrong_combinations_are_one_line_errors(tmp_path) -> None:
    one_line_error(invoke("run", "gpt", "--backward", "--grad-output", "x.npy"), 2, "has a loss")
    one_line_error(invoke("run", "attention", "--output-target", "x.npy"), 2, "add --backward")
    one_line_error(invoke("run", "attention", "--lr", "-1"), 2, "--lr must be a positive")
    one_line_error(invoke("run", "attention", "--backward", "--grad-output", str(tmp_path / "none.npy")), 1,
                   "does not exist")
    bad = tmp_path / "bad.npy"
    np.save(bad, np.ones((3, 4)))
    one_line_error(invoke("run", "attention", "--backward", "--grad-output", str(bad)), 1,
                   "shape [3, 4]", "[2, 4]")


def test_exported_backward_range_runs_and_checks_itself(tmp_path) -> None:
    out = tmp_path / "bw.py"
    r = invoke("export", "gpt", "--backward", "--from", "blocks.1.attn.pattern.grad", "--to", "blocks.1.ln1.grad",
               "-o", str(out))
    assert r.exit_code == 0, r.output
    proc = subprocess.run([sys.executable, "-I", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "steps match the recorded values" in proc.stdout, proc.stderr
