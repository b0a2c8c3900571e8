"""Start-up time of ``explain shapes gpt`` against ``python -c "import click"`` (the floor for any click CLI).

Each command runs in a fresh interpreter, several times; the script prints the best and median wall times and
their ratio, all measured in this one run. There is no hard target for shapes (only ``explain check`` has a
start-up budget); the figure shows what importing the engine's shape path costs on top of click.

    python tests/benchmarks/bench_shapes_startup.py [--repeat 15] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs each command once, with no warm-up: it checks the
benchmark still runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c 'import click'": [sys.executable, "-c", "import click"],
    "explain shapes gpt": [sys.executable, "-m", "explain", "shapes", "gpt"],
    "explain shapes gpt (GPT-2 small, --seq 1024)": [
        sys.executable, "-m", "explain", "shapes", "gpt", "--d-model", "768", "--heads", "12", "--layers", "12",
        "--d-ff", "3072", "--vocab", "50257", "--context", "1024", "--seq", "1024"],
    "python -c 'import numpy' (for scale)": [sys.executable, "-c", "import numpy"],
}


def timed(cmd: list[str], repeat: int, warm: bool = True) -> list[float]:
    if warm:
        subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache and .pyc files
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="each command once, no warm-up (CI: does it run?)")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    results = {name: timed(cmd, repeat, warm=not args.quick) for name, cmd in COMMANDS.items()}
    floor = min(results["python -c 'import click'"])
    print(f"{'command':48} {'best':>8} {'median':>8} {'best / click':>13}")
    for name, times in results.items():
        best, med = min(times), statistics.median(times)
        print(f"{name:48} {best * 1000:7.1f}ms {med * 1000:7.1f}ms {best / floor:12.2f}x")


if __name__ == "__main__":
    main()
