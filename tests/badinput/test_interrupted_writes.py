"""Interrupted writes (issue 29): ``explain params … -o FILE.npz`` killed by SIGKILL, SIGTERM or SIGINT once
about 20 MB of a ~430 MB parameter file are written, with and without ``--force``, leaves the old file (or no
file) or the new one, whole, every time; SIGTERM and SIGINT leave no temporary file; SIGKILL's leftover is
removed by the next write to the folder. ``explain run … --save FILE.npz --force``, whose file is written while
the run records (a writer thread), is interrupted the same way.

The kill is timed by watching the temporary sibling grow, so it lands mid-write whatever the machine's speed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from explain.io.atomic import PREFIX

# 40,000 × 1,024 float64 token embeddings and one 1,024-wide block: 429 MB in 20 arrays
BIG = ["gpt", "--d-model", "1024", "--heads", "8", "--layers", "1", "--vocab", "40000"]
N_PARAMS = 20
AT = 20 * 2**20


def _temp(d: Path) -> Path | None:
    names = [n for n in os.listdir(d) if n.startswith(PREFIX)]
    return d / names[0] if names else None


def _interrupt(d: Path, sig: int, force: bool, writer: str = "params") -> int:
    """Start the big write into ``d/w.npz`` (``params -o``, or ``run --save``), send ``sig`` once its temporary
    sibling holds AT bytes; the exit code."""
    out = ["-o", "w.npz"] if writer == "params" else ["--save", "w.npz"]
    args = [sys.executable, "-m", "explain", "params" if writer == "params" else "run", *BIG, *out,
            *(["--force"] if force else [])]
    # SIGINT as a terminal delivers Ctrl-C: a run started in the background without job control (CI under nohup
    # or `&`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt: the write ran to its end
    proc = subprocess.Popen(args, cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        tmp = _temp(d)
        try:
            if tmp is not None and tmp.stat().st_size >= AT:
                break
        except FileNotFoundError:
            pass
        time.sleep(0.002)
    assert proc.poll() is None, f"the write ended before it could be interrupted: {proc.stderr.read()!r}"
    proc.send_signal(sig)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail(f"{signal.Signals(sig).name}: the process did not end")
    proc.stderr.close()
    return proc.returncode


def _whole(path: Path, writer: str = "params") -> bool:
    with zipfile.ZipFile(path) as zf:
        if zf.testzip() is not None:
            return False
    with np.load(path) as z:
        n = len(z.files) == N_PARAMS if writer == "params" else "logits" in z.files and len(z.files) > N_PARAMS
        return n and all(z[k].size for k in z.files)


@pytest.fixture(scope="module")
def old_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A small, whole parameter file: the user's previous file that --force would replace."""
    d = tmp_path_factory.mktemp("old")
    subprocess.run([sys.executable, "-m", "explain", "params", "attention", "-o", "old.npz"], cwd=d, check=True,
                   capture_output=True, timeout=120)
    return (d / "old.npz").read_bytes()


@pytest.mark.parametrize("force", [False, True], ids=["new", "force"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_an_interrupted_write_leaves_the_old_file_or_the_new_one(tmp_path: Path, old_file: bytes, sig: int,
                                                                 force: bool) -> None:
    target = tmp_path / "w.npz"
    if force:
        target.write_bytes(old_file)
    code = _interrupt(tmp_path, sig, force)
    assert code != 0
    if target.exists() and hashlib.sha256(target.read_bytes()).digest() != hashlib.sha256(old_file).digest():
        assert _whole(target), "the file at the path is neither the old one nor the new one whole"
    elif not force:
        assert not target.exists()
    left = _temp(tmp_path)
    if sig != signal.SIGKILL:
        assert left is None, "a caught signal must remove the temporary file"
        return
    assert left is not None  # nothing can catch SIGKILL: the next write to the folder removes the leftover
    subprocess.run([sys.executable, "-m", "explain", "params", "attention", "-o", "next.npz"], cwd=tmp_path,
                   check=True, capture_output=True, timeout=120)
    assert _temp(tmp_path) is None and (tmp_path / "next.npz").exists()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_an_interrupted_save_leaves_the_old_file_or_the_new_one(tmp_path: Path, old_file: bytes, sig: int) -> None:
    """run --save streams the file from a writer thread while the main thread computes: a signal caught in the
    main thread stops the writer and removes the temporary file before the process ends."""
    target = tmp_path / "w.npz"
    target.write_bytes(old_file)
    assert _interrupt(tmp_path, sig, True, "save") != 0
    if hashlib.sha256(target.read_bytes()).digest() != hashlib.sha256(old_file).digest():
        assert _whole(target, "save"), "the file at the path is neither the old one nor the new one whole"
    assert (_temp(tmp_path) is None) == (sig != signal.SIGKILL)
