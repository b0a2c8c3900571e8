"""No module in the user's working folder or in a checkpoint's folder is ever imported by explain or by a child it
starts (issue 36, item 1).

A tokenizer.json with a pre-tokenizer regex explain does not know is encoded in a child process. That child once
ran ``python -c`` in the working folder, so a ``json.py`` there was imported and ran. Here a folder holds
``resource.py``, ``json.py``, ``tokenizers.py``, ``numpy.py`` and ``sitecustomize.py``, each writing a canary
file when imported; it is both the working folder and the checkpoint folder of every command that can start a
child, and no canary may appear.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from badfixtures import LLAMA_CONFIG, _llama_tensors, _safetensors, hostile_tokenizer  # noqa: E402

pytest.importorskip("tokenizers")
# the installed entry point, as a user runs it (``python -m explain`` would put the working folder on the path
# of explain's own process: that is the user's choice of command, not explain's doing)
EXPLAIN = [str(Path(sys.executable).parent / "explain")]
CANARY_MODULES = ("resource", "json", "tokenizers", "numpy", "sitecustomize")


def _evil_folder(d: Path, canary: Path) -> Path:
    """A Llama checkpoint whose tokenizer has an unknown (harmless) regex, beside modules that leave a canary."""
    d.mkdir()
    (d / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    (d / "model.safetensors").write_bytes(_safetensors(_llama_tensors()))
    (d / "tokenizer.json").write_text(json.dumps(hostile_tokenizer(r"\s+")))
    for name in CANARY_MODULES:
        (d / f"{name}.py").write_text(f"open({str(canary)!r}, 'a').write({name!r} + '\\n')\n")
    return d


@pytest.mark.parametrize("command", [
    ["run", "llama", "--checkpoint", ".", "--text", "abc dd", "--plain"],
    ["generate", "llama", "--checkpoint", ".", "--text", "abc dd", "--max-new-tokens", "1", "--greedy", "--plain"],
])
def test_no_module_of_the_working_or_checkpoint_folder_runs(tmp_path: Path, command: list[str]) -> None:
    canary = tmp_path / "canary.txt"
    folder = _evil_folder(tmp_path / "evilmodel", canary)
    proc = subprocess.run([*EXPLAIN, *command], cwd=folder, capture_output=True, text=True, timeout=120)
    assert not canary.exists(), f"user code ran: {canary.read_text()!r}"
    # the run went through the sandboxed tokenizer (not a refusal before it): it printed steps and exited 0
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


def test_the_child_is_isolated() -> None:
    """The tokenizer child runs ``python -I`` with a short environment: no PYTHONPATH, no PYTHONSTARTUP."""
    from explain.checkpoints import tokenizer_guard as guard

    assert guard.child_command("pass")[1] == "-I"
    os.environ["PYTHONSTARTUP"] = "/nonexistent"
    try:
        env = guard.child_env(A="1")
    finally:
        del os.environ["PYTHONSTARTUP"]
    assert env["A"] == "1" and "PYTHONPATH" not in env and "PYTHONSTARTUP" not in env
