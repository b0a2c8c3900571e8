"""Benchmark: the tiled attention kernel (--attention-kernel tiled, the online softmax) against the plain one, on a
random-weight gpt (d_model 256, 8 heads, 4 layers, d_ff 1024, vocabulary 512) over T tokens, in one process.

For each tile size (and plain): the median wall time of N traced runs (and, last, of a run with --backward, whose
tiled gradients come from FlashAttention's backward, the tiles recomputed), the steps recorded, the bytes the trace
holds (trace.nbytes: every tile's scores and weights are kept, so the trace of a tiled run is not smaller; what
the kernel never holds at once is the (T, T) matrix) and the largest attention array one step holds. The tiled
outputs are checked equal to the plain ones (1e-13 relative to the largest value) before any time is printed.

Run: python tests/benchmarks/bench_tiled.py [--runs N] [--tokens T] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs tiny sizes once and asserts no target.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import explain

SIZE = dict(d_model=256, n_heads=8, n_layers=4, d_ff=1024, d_vocab=512, n_ctx=1024)
TINY = dict(d_model=16, n_heads=2, n_layers=1, d_ff=32, d_vocab=64, n_ctx=64)


def timed(runs: int, **options) -> tuple[float, explain.Trace]:
    times, trace = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        trace = explain.run("gpt", **options)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), trace


def largest_attention(trace) -> int:
    return max(s.output.nbytes for s in trace.steps if ".attn." in s.name and s.output is not None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one run, no target (CI: does it still run?)")
    args = ap.parse_args()
    size = TINY if args.quick else SIZE
    if args.quick:
        args.runs, args.tokens = 1, 10
    ids = [int(i) for i in np.random.default_rng(0).integers(0, size["d_vocab"], args.tokens)]
    common = dict(tokens=ids, random_weights=True, **size)
    explain.run("gpt", **{**common, "tokens": ids[:4]})  # imports and caches warmed before anything is timed
    base, plain = timed(args.runs, **common)
    zs = {s.name: s.output for s in plain.steps if s.name.endswith("attn.z")}
    print(f"gpt {size}, {args.tokens} tokens, median of {args.runs}")
    print(f"{'kernel':>14} {'time s':>8} {'× plain':>8} {'steps':>6} {'trace MiB':>10} {'largest attn MiB':>17}")
    print(f"{'plain':>14} {base:8.3f} {1:8.2f} {len(plain.steps):6d} {plain.nbytes / 2**20:10.1f} "
          f"{largest_attention(plain) / 2**20:17.2f}")
    for tile in sorted({max(1, args.tokens // 16), args.tokens // 4, args.tokens // 3, args.tokens} - {0}):
        t, tiled = timed(args.runs, attention_kernel="tiled", attention_tile=tile, **common)
        for name, z in zs.items():
            diff = float(np.abs(tiled[name].output - z).max())
            assert diff <= 1e-13 * float(np.abs(z).max()), (name, tile, diff)
        print(f"{f'tiled {tile}':>14} {t:8.3f} {t / base:8.2f} {len(tiled.steps):6d} {tiled.nbytes / 2**20:10.1f} "
              f"{largest_attention(tiled) / 2**20:17.2f}")
    # --backward: the plain kernel's recorded backward against FlashAttention's (the tiles recomputed)
    tile = max(1, args.tokens // 4)
    back, plain_b = timed(args.runs, backward=True, **common)
    t, tiled_b = timed(args.runs, backward=True, attention_kernel="tiled", attention_tile=tile, **common)
    grads = [f"{p}.grad" for p in plain_b.specs if f"{p}.grad" in plain_b]
    scale = max(float(np.abs(plain_b[g].output).max()) for g in grads)
    worst = max(float(np.abs(tiled_b[g].output - plain_b[g].output).max()) for g in grads) / scale
    assert worst <= 1e-13, worst
    print(f"--backward: plain {back:.3f} s, tiled {tile} {t:.3f} s ({t / back:.2f} ×); gradients equal to "
          f"{worst:.1e} of the largest")


if __name__ == "__main__":
    main()
