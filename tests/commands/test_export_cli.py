"""`explain export` from the command line: one step, a range, the whole run, a notebook, stdout; and every
kind of bad input giving one line `Error: …` with its exit code, never a traceback, nothing overwritten."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from clitools import invoke, one_line_error


def run_python(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(path)], cwd=path.parent, capture_output=True, text=True,
                          timeout=120)


def test_help_has_examples() -> None:
    r = invoke("export", "--help")
    assert r.exit_code == 0 and "Examples:" in r.output and "--from" in r.output and "--format" in r.output


def test_one_step_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "scores.py"
    r = invoke("export", "gpt", "--random-weights", "--step", "blocks.0.attn.scores", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout == ""  # the report is a diagnostic, on stderr
    assert f"wrote {out}" in r.stderr and "1 step computed and checked" in r.stderr
    proc = run_python(out)
    assert proc.returncode == 0 and "ok: blocks.0.attn.scores matches" in proc.stdout, proc.stderr


def test_range_from_to(tmp_path: Path) -> None:
    out = tmp_path / "attn.py"
    r = invoke("export", "gpt", "--random-weights", "--from", "blocks.0.attn.q", "--to", "blocks.0.attn_out", "-o", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "blocks_0_ln1 = np.array(" in text  # the range starts from the recorded ln1
    assert "\nembed = " not in text
    proc = run_python(out)
    assert proc.returncode == 0 and "ok: 10 steps" in proc.stdout, proc.stderr


def test_open_ended_ranges(tmp_path: Path) -> None:
    r = invoke("export", "attention", "--to", "attn.k", "-o", str(tmp_path / "a.py"))
    assert r.exit_code == 0 and "3 steps computed and checked (and 1 input, given, not counted)" in r.stderr
    r = invoke("export", "attention", "--from", "attn.pattern", "-o", str(tmp_path / "b.py"))
    assert r.exit_code == 0 and "2 steps computed and checked;" in r.stderr
    for name in ("a.py", "b.py"):
        assert run_python(tmp_path / name).returncode == 0


def test_whole_run_with_model_options_and_sidecar(tmp_path: Path) -> None:
    out = tmp_path / "gpt.py"
    r = invoke("export", "gpt", "--random-weights", "--layers", "1", "--d-model", "12", "--heads", "3", "--text", "a cat sat", "-o",
               str(out))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "gpt.npz").exists() and "gpt.npz" in r.stderr
    text = out.read_text()
    assert "d_model=12, n_heads=3" in text and "blocks_1" not in text
    proc = run_python(out)
    assert proc.returncode == 0 and "ok:" in proc.stdout, proc.stderr


def test_notebook_by_suffix_or_format(tmp_path: Path) -> None:
    pytest.importorskip("nbformat")
    r = invoke("export", "causal", "-o", str(tmp_path / "c.ipynb"))
    assert r.exit_code == 0 and (tmp_path / "c.ipynb").exists(), r.output
    r = invoke("export", "causal", "--format", "ipynb", "-o", str(tmp_path / "d.py"))
    one_line_error(r, 2, "*.ipynb", "d.ipynb")


def test_stdout(tmp_path: Path) -> None:
    r = invoke("export", "attention", "-o", "-")
    assert r.exit_code == 0 and r.stderr == ""
    script = tmp_path / "s.py"
    script.write_text(r.stdout)
    proc = run_python(script)
    assert proc.returncode == 0 and "ok: 8 steps" in proc.stdout, proc.stderr


def test_stdout_refuses_a_sidecar_or_a_notebook() -> None:
    one_line_error(invoke("export", "gpt", "--random-weights", "-o", "-"), 2, "sidecar", "-o gpt.py")
    r = invoke("export", "gpt", "--random-weights", "--from", "blocks.0.attn.q", "--to", "blocks.0.attn.z", "-o", "-")
    assert r.exit_code == 0  # a small range fits in literals
    one_line_error(invoke("export", "gpt", "--random-weights", "--format", "ipynb", "-o", "-"), 2, "notebook", "stdout", ".ipynb")


def test_bad_step_names_suggest() -> None:
    one_line_error(invoke("export", "gpt", "--random-weights", "--step", "blocks.0.attn.score", "-o", "-"), 2,
                   "blocks.0.attn.score", "did you mean", "'blocks.0.attn.scores'")
    one_line_error(invoke("export", "gpt", "--random-weights", "--from", "blocks.0.atn.q", "-o", "-"), 2, "'blocks.0.attn.q'")


def test_from_after_to() -> None:
    one_line_error(invoke("export", "gpt", "--random-weights", "--from", "blocks.0.attn_out", "--to", "blocks.0.attn.q", "-o", "-"), 2,
                   "--from 'blocks.0.attn_out'", "after", "--to 'blocks.0.attn.q'")


def test_step_with_range_is_a_usage_error() -> None:
    one_line_error(invoke("export", "gpt", "--random-weights", "--step", "loss", "--from", "logits", "-o", "-"), 2, "--step", "--from")


def test_existing_files_are_not_overwritten(tmp_path: Path) -> None:
    out, side = tmp_path / "gpt.py", tmp_path / "gpt.npz"
    out.write_bytes(b"# mine\n")
    one_line_error(invoke("export", "gpt", "--random-weights", "-o", str(out)), 2, "exists", "--force")
    assert out.read_bytes() == b"# mine\n" and not side.exists()
    out.unlink()
    side.write_bytes(b"my arrays")
    one_line_error(invoke("export", "gpt", "--random-weights", "-o", str(out)), 2, "gpt.npz", "exists", "--force")
    assert side.read_bytes() == b"my arrays" and not out.exists()
    r = invoke("export", "gpt", "--random-weights", "-o", str(out), "--force")
    assert r.exit_code == 0 and side.read_bytes() != b"my arrays"
    assert run_python(out).returncode == 0


def test_bad_paths(tmp_path: Path) -> None:
    one_line_error(invoke("export", "gpt", "--random-weights", "-o", str(tmp_path / "nowhere" / "x.py")), 2, "does not exist")
    one_line_error(invoke("export", "gpt", "--random-weights", "-o", str(tmp_path / "x.txt")), 2, "*.py")
    one_line_error(invoke("export", "nope", "-o", "-"), 2)
    assert list(tmp_path.iterdir()) == []


def test_a_whole_run_says_which_steps_are_given(tmp_path: Path) -> None:
    # issue 42 item 12: a 47-step run's script printed 'ok: 45 steps match' and nothing of the other two
    import explain

    n = len(explain.run("gpt", random_weights=True, text="the cat sat"))
    out = tmp_path / "run.py"
    r = invoke("export", "gpt", "--random-weights", "--text", "the cat sat", "-o", str(out))
    assert r.exit_code == 0, r.output
    proc = run_python(out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"ok: {n - 2} steps match the recorded values" in proc.stdout
    assert f"the other 2 of the {n} steps are given: tokens, targets" in proc.stdout, proc.stdout
