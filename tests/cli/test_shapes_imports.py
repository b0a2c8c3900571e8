"""``explain shapes`` must not import numpy, textual or rich: the model code runs on shapes alone.

Each case runs the real CLI in a fresh interpreter and looks at ``sys.modules`` afterwards; one case reads
``python -X importtime -m explain shapes gpt``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("numpy", "textual", "rich")

# Runs the CLI like the console script does, then reports which heavy packages got imported (on stderr,
# after the command's own output).
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
    "default": ["gpt"],
    "gpt2 size": ["gpt", "--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab",
                  "50257", "--context", "1024", "--seq", "1024"],
    "json": ["transformer", "--json"],
    "weights ignored": ["attention", "--weights", "x.npz"],
    "config error": ["gpt", "--d-model", "10", "--heads", "4"],
    "help": ["--help"],
}


@pytest.mark.parametrize("args", list(CASES.values()), ids=list(CASES))
def test_shapes_imports_no_heavy_packages(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", WRAPPER, "shapes", *args], capture_output=True, text=True,
                          timeout=60)
    marker = [line for line in proc.stderr.splitlines() if line.startswith("HEAVY=")]
    assert marker, proc.stderr
    assert marker[-1] == "HEAVY=", f"explain shapes imported {marker[-1][6:]}"
    assert "Traceback" not in proc.stderr


def test_importtime_shows_no_numpy_or_textual() -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", "shapes", "gpt"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "total: 2,376 parameters" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "click" in imported and "explain" in imported  # the measurement did see the imports
    assert not imported & set(HEAVY)
