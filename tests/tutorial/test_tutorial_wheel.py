"""The wheel carries the tutorials (pyproject force-includes ``tutorials`` as ``explain/_tutorials``) and the
loader finds them there: the wheel is built for real with pip, unpacked, and imported in a fresh interpreter
whose ``explain`` is the unpacked one (no repo ``tutorials/`` next to it). About 4 s; skipped only when pip
cannot build at all (no network for the isolated build's hatchling)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"pip could not build the wheel here: {last}")
    return next(out.glob("*.whl"))


def test_the_wheel_holds_every_tutorial_byte_for_byte(wheel: Path) -> None:
    shipped = sorted((ROOT / "tutorials").glob("*.toml"))
    with zipfile.ZipFile(wheel) as z:
        inside = {n.rsplit("/", 1)[-1]: n for n in z.namelist() if n.startswith("explain/_tutorials/")}
        for p in shipped:
            assert p.name in inside, f"{p.name} is not in the wheel"
            assert z.read(inside[p.name]) == p.read_bytes()


def test_an_installed_wheel_finds_its_tutorials(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    code = (
        "import json, explain, explain.tutorial as t\n"
        "files = t.shipped_files()\n"
        "tuts = t.list_tutorials()\n"
        "trace = t.run_tutorial(t.load_tutorial('thinking-machines'))\n"
        "print(json.dumps({'explain': explain.__file__, 'first': str(files[0]), 'names': [x.name for x in tuts],\n"
        "                  'score': float(trace['attn.scores'].output[0, 0])}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["explain"].startswith(str(site)), "the unpacked wheel's explain was imported"
    assert doc["first"].startswith(str(site / "explain" / "_tutorials"))
    assert doc["names"] == sorted(p.stem for p in (ROOT / "tutorials").glob("*.toml"))
    assert doc["score"] == 112.0
