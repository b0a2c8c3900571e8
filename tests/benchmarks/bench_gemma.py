"""Benchmark: Gemma 3 270M (the catalogue's gemma3-270m: Q4_K_M GGUF, 262,144-token vocabulary) from start to the
first new token, "Once upon a" → " time". Goal: ≤ 15 s on the 2-core machine.

In one process, phase by phase (wall and CPU seconds, RSS): import explain; open the GGUF (metadata: explain's own
reader, :mod:`explain.checkpoints.gguf_file`; and, for comparison, the ``gguf`` package's GGUFReader on the same
file); build the SentencePiece tokenizer and encode; read and dequantize every tensor to float64; the forward of
the prompt and the first new token (explain.generate, greedy, one token); the peak RSS. Then the command itself in
a fresh process (``explain generate --checkpoint FILE --text … --greedy --max-new-tokens 1 --plain``): its wall
and CPU time and peak RSS. The load average is printed first: the machine is shared, and CPU seconds are the
figure that does not move with it.

Run: python tests/benchmarks/bench_gemma.py [--quick] [--no-gguf-reader]
(fetches 238 MB once into explain's cache: ``explain fetch gemma3-270m``)

``--quick`` (CI: tests/house/test_benchmarks.py) runs the same phases on the tiny Gemma 3 GGUF the tests write
(tests/helpers/gemma_files.py), with no download and no target: does the benchmark still run?
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))

PROMPT = "Once upon a"


def rss(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


class Phase:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        wall, cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu
        print(f"  {self.name:<40} {wall:7.2f} s wall {cpu:7.2f} s CPU   RSS {rss() / 2**20:7,.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tiny GGUF, no download, no target (CI: does it run?)")
    ap.add_argument("--no-gguf-reader", action="store_true", help="skip timing the gguf package's reader")
    args = ap.parse_args()
    if args.quick:
        from gemma_files import write_gguf

        path = write_gguf(Path(tempfile.mkdtemp()) / "tiny.gguf", "Q8_0")
    else:
        from gemma3_270m import gemma3_gguf

        path = gemma3_gguf()
    print(f"{path.name}: {path} ({path.stat().st_size / 2**20:.1f} MiB); load average {os.getloadavg()}")
    start, start_cpu = time.perf_counter(), time.process_time()
    with Phase("import explain"):
        import explain
        from explain.checkpoints.open import open_checkpoint
    with Phase("open: metadata (explain's reader)"):
        ck = open_checkpoint(str(path))
    with Phase("tokenizer: build + encode"):
        ids = ck.encode(PROMPT)
    with Phase("read + dequantize to float64"):
        ck.params()
    with Phase("forward + first token"):
        trace = explain.generate("gemma", checkpoint=ck, text=PROMPT, greedy=True, max_new_tokens=1)
    new = explain.generated_ids(trace)[0][0]
    p = float(trace["gen.0.probs"].output[0, 0, new])
    print(f"  start → first token: {time.perf_counter() - start:.2f} s wall, {time.process_time() - start_cpu:.2f} s"
          f" CPU; ids {ids} → {new} {ck.label(new)} p = {p:.4f}; peak RSS {rss('VmHWM') / 2**30:.2f} GiB")
    del trace, ck
    if not args.no_gguf_reader:
        with Phase("for comparison: gguf's GGUFReader"):
            from gguf import GGUFReader

            GGUFReader(str(path))

    exe = Path(sys.executable).with_name("explain")
    cmd = [str(exe), "generate", "--checkpoint", str(path), "--text", PROMPT, "--greedy", "--max-new-tokens", "1",
           "--plain"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    drawn = next(line for line in out.splitlines() if line.startswith("drawn:"))
    print(f"command, fresh process: {time.perf_counter() - t:.2f} s wall, {cpu:.2f} s CPU, peak RSS "
          f"{after.ru_maxrss / 2**20:.2f} GiB; {drawn}")


if __name__ == "__main__":
    main()
