"""``explain check`` must not import numpy, textual or rich: it has to start about as fast as click does.

Each case runs the real CLI in a fresh interpreter and looks at ``sys.modules`` afterwards; one case also reads
``-X importtime`` of ``python -m explain check``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from clitools import HEAVY, heavy_imports, importtime_packages

CASES = {
    "expression": ["softmax(Q @ K.T / sqrt(d_k)) @ V", "--shape", "Q=seq,d_k", "--shape", "K=seq,d_k",
                   "--shape", "V=seq,d_v", "--dim", "seq=10", "--dim", "d_k=64", "--dim", "d_v=32"],
    "einsum": ["b s d, d h -> b s h", "--dim", "b=2", "--dim", "s=5", "--dim", "d=8", "--dim", "h=4"],
    "json": ["x.reshape(2, -1).sum(axis=0, keepdims=True)", "--shape", "x=4,6", "--json"],
    "shape error": ["Q @ K", "--shape", "Q=4,8", "--shape", "K=4,8"],
    "usage error": ["foo(x)", "--shape", "x=3"],
    "help": ["--help"],
}


@pytest.mark.parametrize("args", list(CASES.values()), ids=list(CASES))
def test_check_imports_no_heavy_packages(args: list[str]) -> None:
    heavy, proc = heavy_imports("check", *args)
    assert heavy == [], f"explain check imported {heavy}"


def test_importtime_shows_no_numpy_or_textual() -> None:
    imported, proc = importtime_packages("check", "a @ b.T", "--shape", "a=2,3", "--shape", "b=4,3")
    assert proc.returncode == 0, proc.stderr
    assert "shape: (2, 4)" in proc.stdout
    assert "click" in imported and "explain" in imported  # the measurement did see the imports
    assert not imported & set(HEAVY)


def test_function_check_imports_no_heavy_packages(tmp_path) -> None:
    src = tmp_path / "m.py"
    src.write_text('import numpy as np\nimport torch\n\ndef f(x: Float[Tensor, "b t c"]):\n    return x.view(b, t, 2, c // 2)\n')
    heavy, proc = heavy_imports("check", f"{src}::f", "--dim", "b=2", "--dim", "t=3", "--dim", "c=4")
    assert proc.returncode == 0, proc.stderr
    assert heavy == [], f"explain check FILE::function imported {heavy}"


def test_the_new_rules_load_only_when_a_line_needs_them() -> None:
    """Issue 45: the benchmark's attention line (softmax over the last axis, scaled by √ of the summed axis) loads
    none of the semantic rules; a softmax over the heads does."""
    lazy = ("explain.check.roles", "explain.check.semantic", "explain.check.repair", "explain.check.expect",
            "explain.check.layout")

    def loaded(*args: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", "check", *args],
                              capture_output=True, text=True, timeout=300)
        return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}

    assert not loaded(*CASES["expression"]) & set(lazy)
    assert "explain.check.semantic" in loaded("F.softmax(s, dim=1)", "--shape", "s=B,H,T,T", "--dim", "B=2",
                                              "--dim", "H=12", "--dim", "T=10")


def test_piped_check_loads_no_progress_machinery() -> None:
    """Issue 38 (c): the catalogue's progress reporter cost every command ~1.6M instructions at startup; piped
    (stderr not a terminal, as the benchmark runs it) ``explain check`` now imports neither the reporter nor bars."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", "check", *CASES["expression"]],
                          capture_output=True, text=True, timeout=300)
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert proc.returncode == 0 and "explain.check" in loaded, proc.stderr[-500:]
    assert not {"explain.core.progress", "explain.commands.bars"} & loaded


@pytest.mark.parametrize("terminal", [True, False])
def test_bars_are_installed_only_for_a_terminal(monkeypatch, terminal: bool) -> None:
    """On a terminal a command's long work shows rich's bars (the lazy reporter); piped, progress's default plain
    notices stay, which is what the piped reporter was before it became lazy."""
    from explain import cli
    from explain.commands.bars import LazyBars
    from explain.core import progress

    monkeypatch.setattr(cli.os, "isatty", lambda fd: terminal)
    before = progress._current[-1]
    with cli._bars():
        inside = progress._current[-1]
    assert isinstance(inside, LazyBars) is terminal
    assert (inside is before) is not terminal
    assert progress._current[-1] is before  # the reporter is removed when the command ends


def test_each_form_loads_only_its_own_checker() -> None:
    """explain/check/__init__ imported the einsum and expression checkers eagerly beside its lazy table, so the
    CLI's `from explain.check import render` loaded both whatever form was checked (bench_check_startup)."""
    def loaded(*args: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", "check", *args],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-500:]
        return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}

    expression, einsum = loaded(*CASES["expression"]), loaded(*CASES["einsum"])
    assert "explain.check.expr" in expression and "explain.check.einsum" not in expression
    assert "explain.check.einsum" in einsum and "explain.check.expr" not in einsum
