"""Helpers the CLI tests share: invoking the CLI, asserting a one-line error, and finding out which heavy
packages a command imports (in a fresh interpreter, so nothing the test session imported can hide it)."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from explain.cli import main

HEAVY = ("numpy", "textual", "rich")

# Runs the CLI like the console script does, then reports which heavy packages got imported (on stderr,
# after the command's own output).
_WRAPPER = """
import sys
watched = set(sys.argv.pop(1).split(","))  # the packages to look for; the rest of argv is the command
from explain.cli import main
try:
    main(sys.argv[1:], prog_name="explain")
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & watched)
sys.stderr.write("\\nHEAVY=" + ",".join(heavy) + "\\n")
"""


def invoke(*args: str):
    """The CLI in-process, exceptions propagating (a traceback fails the test instead of hiding in output)."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def one_line_error(result, code: int, *needles: str) -> None:
    """The result is exactly one line ``Error: …`` containing each needle, with exit ``code``, no traceback."""
    assert result.exit_code == code, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for n in needles:
        assert n in lines[0], (n, lines[0])


def heavy_imports(*args: str) -> tuple[list[str], subprocess.CompletedProcess]:
    """Which of numpy/textual/rich ``explain ARGS`` imports, run in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, ",".join(HEAVY), *args], capture_output=True, text=True,
                          timeout=300)
    marker = [line for line in proc.stderr.splitlines() if line.startswith("HEAVY=")]
    assert marker, proc.stderr
    return [m for m in marker[-1][len("HEAVY="):].split(",") if m], proc


def importtime_packages(*args: str) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages ``python -X importtime -m explain ARGS`` reports importing."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "explain", *args], capture_output=True,
                          text=True, timeout=300)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return imported, proc
