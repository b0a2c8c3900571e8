"""Scaling benchmark: ``explain check FILE.py::fn`` on functions of n and 8·n statements.

Not a test (pytest collects test_*.py only): ``python tests/benchmarks/bench_check_function.py``. The checker
walks a function once; each statement's source is cut from lines split once (issue 36: it was
``ast.get_source_segment``, which splits the whole file on every call, so 4,000 statements took 49 s and
60,000 ran past 120 s). The report gives the time of each size in one run and the ratio of the two: linear is
about 8, quadratic about 64. Exits 1 if the ratio is over ``--max-ratio`` (16).

``--quick`` (CI: tests/house/test_benchmarks.py) uses 250 and 2,000 statements, one repetition, no target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _source(n: int) -> str:
    body = "\n".join(f"    y{i} = torch.softmax(x @ w, dim=-1) + y{i - 1}" if i else "    y0 = x @ w"
                     for i in range(n))
    return f"def fn(x, w):\n{body}\n    return y{n - 1}\n"


def _time(path: Path, runs: int) -> float:
    # the arguments' shapes given, so every statement is checked (a string annotation is not a shape: with it alone
    # every line was skipped and the benchmark timed the skip path only)
    cmd = [sys.executable, "-m", "explain", "check", f"{path}::fn", "--shape", "x=B,T,C", "--shape", "w=C,C",
           "--dim", "B=2", "--dim", "T=3", "--dim", "C=4"]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        times.append(time.perf_counter() - t)
        if "skipped" in out or "shape: (2, 3, 4)" not in out:
            raise SystemExit(f"the checker did not check every statement of {path.name}: {out[-500:]}")
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one run, no target (CI)")
    # 2,000: the larger file (16,000 statements, ~0.8 MB) stays under check's 1,000,000-byte file limit
    ap.add_argument("--n", type=int, default=2000, help="the smaller function's statements (the larger: 8×)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=16.0)
    args = ap.parse_args()
    n, runs = (250, 1) if args.quick else (args.n, args.runs)
    with tempfile.TemporaryDirectory() as d:
        small, big = Path(d) / "small.py", Path(d) / "big.py"
        small.write_text(_source(n))
        big.write_text(_source(8 * n))
        t_small, t_big = _time(small, runs), _time(big, runs)
    ratio = t_big / t_small
    print(f"explain check FILE.py::fn, median of {runs}: {n:,} statements {t_small:.2f} s, {8 * n:,} statements "
          f"{t_big:.2f} s; ratio {ratio:.1f} (linear ≈ 8 less the start-up's share, quadratic ≈ 64)")
    if not args.quick and ratio > args.max_ratio:
        print(f"over the target ratio {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
