"""Running exported scripts in a clean interpreter (``python -I``, explain made unimportable) and reading what they
print: shared by the export tests and every family's export test."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

# Run batched scripts in one interpreter; `explain` is made unimportable, so a script that needed it would fail.
DRIVER = """
import runpy, sys
sys.modules["explain"] = None
for path in sys.argv[1:]:
    print("==", path)
    runpy.run_path(path, run_name="__main__")
"""


def run_script(path: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", str(path)], cwd=cwd, capture_output=True, text=True, timeout=120)


def run_batch(paths: list[Path], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-c", DRIVER, *map(str, paths)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def passed(proc: subprocess.CompletedProcess, n_checked: int | None = None) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ok: " in proc.stdout
    if n_checked is not None and n_checked > 1:
        assert f"ok: {n_checked} steps match the recorded values" in proc.stdout, proc.stdout


def imported_modules(text: str) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mods.add((node.module or "").split(".")[0])
    return mods
