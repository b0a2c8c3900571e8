"""Benchmark: the cost of recording, at GPT-2-small size (12 layers, d_model 768, 12 heads, d_ff 3072,
vocabulary 50257, context 1024), 128 tokens.

Measured in one process, against a plain untraced numpy forward of the same weights
(tests/unit/reference_forward.py: per-head BLAS matmuls, keeping nothing but what it returns):

- time: median of N runs each; target traced ≤ 1.25 × untraced;
- memory: bytes the trace keeps alive (tracemalloc, which numpy reports its allocations to) against the bytes
  of the tensors it holds (trace.nbytes); target ≤ 1.5.

Run: python tests/benchmarks/bench_engine.py [--runs N] [--tokens T]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))

import numpy as np  # noqa: E402
import reference_forward as ref  # noqa: E402

import explain  # noqa: E402
from explain.api import plan  # noqa: E402
from explain.weights import init_params  # noqa: E402

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=128)
    args = ap.parse_args()
    tokens = ",".join(str(7 + (i * 31) % 40) for i in range(args.tokens))
    opts = dict(GPT2, tokens=tokens)

    t0 = time.perf_counter()
    specs = plan("gpt", **opts).specs
    params = init_params(specs, seed=0)
    print(f"weights: {sum(p.size for p in params.values()):,} parameters, built in {time.perf_counter() - t0:.1f} s")
    ids = np.array([[int(t) for t in tokens.split(",")]])

    traced, plain = [], []
    for _ in range(args.runs):  # interleaved, so drift in the machine's speed hits both alike
        gc.collect()
        t = time.perf_counter()
        out = ref.gpt(params, ids, 12)
        plain.append(time.perf_counter() - t)
        del out
        gc.collect()
        t = time.perf_counter()
        trace = explain.run("gpt", weights=params, **opts)
        traced.append(time.perf_counter() - t)
        del trace
    check = explain.run("gpt", weights=params, **opts)
    np.testing.assert_allclose(check["logits"].output, ref.gpt(params, ids, 12)["logits"], rtol=1e-9, atol=1e-9)
    del check
    mt, mp = statistics.median(traced), statistics.median(plain)
    print(f"time: traced {mt:.2f} s, untraced {mp:.2f} s (medians of {args.runs}); ratio {mt / mp:.3f} "
          f"(target ≤ 1.25) {'OK' if mt / mp <= 1.25 else 'OVER'}")

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    trace = explain.run("gpt", weights=params, **opts)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    ratio = held / trace.nbytes
    print(f"memory: trace holds {trace.nbytes / 2**20:.0f} MiB of tensors in {len(trace)} steps; "
          f"{held / 2**20:.0f} MiB kept alive; ratio {ratio:.3f} (target ≤ 1.5) {'OK' if ratio <= 1.5 else 'OVER'}")


if __name__ == "__main__":
    main()
