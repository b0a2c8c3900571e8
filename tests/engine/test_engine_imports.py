"""The core imports neither textual nor click, and the shape-only path imports no numpy (checked in a fresh
interpreter, so nothing else the test session imported can hide it)."""

from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_core_run_imports_no_textual_or_click() -> None:
    mods = _modules_after("import explain; explain.run('gpt'); import explain.render.plain")
    assert "numpy" in mods
    assert not {"textual", "click"} & mods


def test_plan_imports_no_numpy() -> None:
    mods = _modules_after("from explain.engine.api import plan; plan('gpt', d_model=768, n_heads=12)")
    assert not {"numpy", "textual", "click", "rich"} & mods
