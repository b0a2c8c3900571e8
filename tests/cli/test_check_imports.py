"""``explain check`` must not import numpy, textual or rich: it has to start about as fast as click does.

Each case runs the real CLI in a fresh interpreter and looks at ``sys.modules`` afterwards; one case also reads
``-X importtime`` of ``python -m explain check``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "textual", "rich")

# Runs the CLI like the console script does, then reports which heavy packages got imported.
WRAPPER = """
import sys
from explain.cli import main
try:
    main(sys.argv[1:], prog_name="explain")
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "textual", "rich"})
sys.stderr.write("\\nHEAVY=" + ",".join(heavy) + "\\n")
"""

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
    proc = subprocess.run([sys.executable, "-c", WRAPPER, "check", *args], capture_output=True, text=True,
                          timeout=60)
    marker = [line for line in proc.stderr.splitlines() if line.startswith("HEAVY=")]
    assert marker, proc.stderr
    assert marker[-1] == "HEAVY=", f"explain check imported {marker[-1][6:]}"


def test_importtime_shows_no_numpy_or_textual() -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", "check", "a @ b.T",
                           "--shape", "a=2,3", "--shape", "b=4,3"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "shape: (2, 4)" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "click" in imported and "explain" in imported  # the measurement did see the imports
    assert not imported & set(HEAVY)
