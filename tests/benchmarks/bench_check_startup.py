"""Startup benchmark: ``explain check`` against ``python -c "import click"``.

Not a test (pytest collects test_*.py only): run it by hand, ``python tests/benchmarks/bench_check_startup.py``.
Both commands are launched as fresh processes, interleaved so drift in machine load hits both alike; the
report gives the median and best of each, and the ratio of medians, which must stay within 1.2 (issue 28).
Exits 1 if the ratio is over ``--max-ratio``.

The budget applies to explain as it runs once installed: ``pip install`` compiles every module to bytecode, so
a launch reads ``.pyc`` files. When PYTHONDONTWRITEBYTECODE is set (as in some dev containers) an editable
checkout is compiled from source on every launch while click's site-packages come precompiled; that round is
printed for information, and the budgeted round caches bytecode under a temporary PYTHONPYCACHEPREFIX, so
nothing is written into the checkout.

Wall time on a shared 2-core machine is noisy, so when valgrind is installed the report adds the number of
instructions each command executes (callgrind), which load does not change: a cross-check of the ratio.

``--quick`` (CI: tests/house/test_benchmarks.py) launches each command once, one round, and asserts no
budget: it checks the benchmark still runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECK_ARGS = ["check", "softmax(Q @ K.T / sqrt(d_k)) @ V", "--shape", "Q=seq,d_k", "--shape", "K=seq,d_k",
              "--shape", "V=seq,d_v", "--dim", "seq=10", "--dim", "d_k=64", "--dim", "d_v=32"]


def explain_command() -> list[str]:
    """The console script next to this interpreter (what users run), else ``python -m explain``."""
    script = Path(sys.executable).with_name("explain")
    if script.exists():
        return [str(script)]
    found = shutil.which("explain")
    return [found] if found else [sys.executable, "-m", "explain"]


def launch(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def measure(label: str, runs: int, env: dict[str, str] | None = None) -> float:
    """Time both commands ``runs`` times each, print the figures, return the ratio of medians."""
    baseline = [sys.executable, "-c", "import click"]
    check = explain_command() + CHECK_ARGS
    launch(baseline, env), launch(check, env)  # warm the OS file cache (and the bytecode cache, if on)
    times: dict[str, list[float]] = {"import click": [], "explain check": []}
    for _ in range(runs):
        times["import click"].append(launch(baseline, env))
        times["explain check"].append(launch(check, env))
    print(label)
    for name, ts in times.items():
        print(f"  {name:<14} median {statistics.median(ts) * 1000:6.1f} ms   best {min(ts) * 1000:6.1f} ms   "
              f"({len(ts)} runs)")
    ratio = statistics.median(times["explain check"]) / statistics.median(times["import click"])
    best_ratio = min(times["explain check"]) / min(times["import click"])
    print(f"  ratio (median) {ratio:.2f}   ratio (best) {best_ratio:.2f}")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=20, help="launches of each command (default 20)")
    parser.add_argument("--max-ratio", type=float, default=1.2, help="fail above this ratio (default 1.2)")
    parser.add_argument("--quick", action="store_true", help="one launch each, no budget (CI: does it still run?)")
    opts = parser.parse_args()
    if opts.quick:
        measure("one launch each (--quick, no budget):", 1)
        return 0

    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        measure("as this environment runs it (modules compiled at every launch; not budgeted):", opts.runs)
        with tempfile.TemporaryDirectory() as cache:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = cache
            ratio = measure("with bytecode cached (as an installed explain runs):", opts.runs, env)
            instruction_counts(env)
    else:
        ratio = measure("with bytecode cached (as an installed explain runs):", opts.runs)
        instruction_counts(None)
    print(f"budget {opts.max_ratio:.2f}: {'ok' if ratio <= opts.max_ratio else 'OVER'}")
    return 0 if ratio <= opts.max_ratio else 1


def instruction_counts(env: dict[str, str] | None) -> None:
    """Print the instructions each command executes (valgrind's callgrind), if valgrind is installed."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("instructions: valgrind not installed, skipped")
        return
    counts = {}
    for name, cmd in (("import click", [sys.executable, "-c", "import click"]),
                      ("explain check", explain_command() + CHECK_ARGS)):
        out = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                             capture_output=True, text=True, env=env).stderr
        found = [line.split("Collected :")[1] for line in out.splitlines() if "Collected :" in line]
        if not found:
            print("instructions: valgrind gave no count, skipped")
            return
        counts[name] = int(found[-1].split()[0])
    print("instructions executed (valgrind; load does not change them):")
    for name, n in counts.items():
        print(f"  {name:<14} {n / 1e6:8.1f} M")
    print(f"  ratio {counts['explain check'] / counts['import click']:.2f}")

if __name__ == "__main__":
    sys.exit(main())
