"""Reliability benchmark (issue 14): how fast a hopeless request is refused, and what ``--json`` costs.

Prints, measured in this one run (each command a fresh ``python -m explain`` process, its wall time and peak
RSS from ``wait4``):

* the refusal time of ``run``, ``shapes``, ``export`` and ``params`` at 10⁴, 10⁶ and 10⁸ layers, and of a
  1,000-layer, 100,000-wide GPT (refused by the closed-form memory estimate, not by a cap); target < 1 s;
* the peak memory of ``explain run gpt --json`` against ``--plain`` at GPT-2-small size with 256 tokens
  (output to /dev/null); target ≤ 1.2×.

    python tests/benchmarks/bench_reliability.py [--skip-memory] [--quick]

``--quick`` (CI: tests/unit/test_benchmarks.py) refuses one request of each kind at 10⁴ layers, skips the
memory comparison and asserts no target: it checks the benchmark still runs.

The machine may be shared: wall times include interpreter start-up and are worth comparing within one run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

GPT2_SMALL = ["--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab", "50257",
              "--context", "1024"]


def measure(args: list[str]) -> tuple[int, float, int, str]:
    """(exit code, wall seconds, peak RSS bytes, last stderr line) of ``python -m explain ARGS``."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "explain", *args], stdout=null, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        err = proc.stderr.read().decode("utf-8", "replace")
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
    return proc.returncode, wall, usage.ru_maxrss * 1024, (err.strip().splitlines() or [""])[-1]


def refusals(counts: tuple[int, ...] = (10**4, 10**6, 10**8)) -> bool:
    print("refusal of huge layer counts (target < 1 s; includes interpreter start-up)")
    ok = True
    cases = [(cmd, n, extra) for n in counts
             for cmd, extra in (("run", ["--plain"]), ("shapes", []), ("export", ["-o", "/tmp/x-never.py"]),
                                ("params", ["-o", "/tmp/x-never.npz"]))]
    for cmd, n, extra in cases:
        code, wall, rss, line = measure([cmd, "gpt", "--layers", str(n), *extra])
        ok &= code in (1, 2) and wall < 1.0
        print(f"  {cmd:<7} --layers {n:>11,}: exit {code}, {wall:5.2f} s, {rss / 2**20:5.0f} MiB  {line[:70]}")
    code, wall, rss, line = measure(["run", "gpt", "--layers", "1000", "--d-model", "100000", "--heads", "1",
                                     "--plain"])
    ok &= code in (1, 2) and wall < 1.0
    print(f"  run --layers 1,000 --d-model 100,000 (closed-form estimate): exit {code}, {wall:.2f} s  {line[:60]}")
    return ok


def json_memory() -> bool:
    print("peak memory, GPT-2 small, 256 tokens (target: --json ≤ 1.2 × --plain)")
    tokens = ",".join(str(i % 50257) for i in range(256))
    peaks = {}
    for mode in ("--plain", "--json"):
        code, wall, rss, line = measure(["run", "gpt", *GPT2_SMALL, "--tokens", tokens, mode])
        peaks[mode] = rss
        print(f"  {mode:<7}: exit {code}, {wall:6.1f} s, peak {rss / 2**30:.2f} GiB  {line[:60] if code else ''}")
    ratio = peaks["--json"] / peaks["--plain"]
    print(f"  ratio --json / --plain = {ratio:.2f}×")
    return ratio <= 1.2


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    ok = refusals((10**4,) if quick else (10**4, 10**6, 10**8))
    if quick:
        sys.exit(0)
    if "--skip-memory" not in sys.argv:
        ok &= json_memory()
    print("all targets met" if ok else "SOME TARGETS MISSED")
    sys.exit(0 if ok else 1)
