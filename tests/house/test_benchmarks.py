"""Every benchmark script still runs: each ``tests/benchmarks/bench_*.py --quick`` (tiny sizes, one
repetition, no speed or memory target asserted) in a subprocess of its own, so a benchmark that an API change
breaks fails CI instead of rotting unseen. The full runs stay scripts that print their ratios."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))


def test_there_are_benchmarks() -> None:
    assert len(BENCHMARKS) >= 9, BENCHMARKS


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_runs_in_quick_mode(script: Path, tmp_path: Path) -> None:
    assert "--quick" in script.read_text(), f"{script.name} has no --quick mode"
    env = {k: v for k, v in os.environ.items() if k != "EXPLAIN_MAX_BYTES"}
    done = subprocess.run([sys.executable, str(script), "--quick"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"{script.name} --quick failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"{script.name} --quick printed nothing"
