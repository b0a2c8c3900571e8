"""Benchmark: the activation-patching sweep at GPT-2-small size (12 layers, d_model 768, 12 heads, d_ff 3072,
vocabulary 50257, seeded weights), 16 tokens, every layer × position of the blocks' inputs: 12 × 16 = 192
patched runs, each keeping one number (the logit difference at the last position).

Compared with the same number of full forward passes of the engine (the model's own recorded forward, the
one ``explain run`` does: every op through the recorder, logits, probabilities and loss), timed in the same run:
a sample of ``--forwards`` forwards, their median × 192 (a full 192 would only repeat the same forward). Also
reported against the forward's steps up to the logits alone (the steps the sweep could at most recompute).
Target: sweep ≤ 0.75 × the 192 forwards. Memory: peak bytes the sweep allocates (tracemalloc, which numpy
reports to), beside the two runs' traces, and the process's peak RSS.

Run: python tests/benchmarks/bench_patching.py [--tokens 16] [--forwards 5] [--quick]

``--quick`` (CI: does it still run?) uses a tiny model, 6 tokens and one forward, and asserts no target.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import time
import tracemalloc

import numpy as np

from explain.engine.api import _record
from explain.engine.request import prepare_run
from explain.engine.weights import init_params
from explain.interp.patching import Runs, needed_for, rerun, sweep_runs

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
TINY = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, d_vocab=64, n_ctx=64)  # --quick


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--forwards", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, no target (CI: does it still run?)")
    args = ap.parse_args()
    sizes = TINY if args.quick else GPT2
    if args.quick:
        args.tokens, args.forwards = 6, 1
    rng = np.random.default_rng(0)
    ids = rng.integers(3, sizes["d_vocab"], size=args.tokens)
    bad = ids.copy()
    bad[args.tokens // 3] = (ids[args.tokens // 3] + 1) % sizes["d_vocab"]  # one token changed
    runs_ = []
    params = None
    for seq in (ids, bad):
        cfg, inp = prepare_run("gpt", tokens=",".join(map(str, seq)), **sizes)
        if params is None:
            planned = _record(cfg, inp, None, shape_only=True)
            params = init_params(planned.specs, cfg.seed)
        runs_.append((cfg, inp))
    with np.errstate(all="ignore"):
        clean, corrupt = (_record(c, i, params, shape_only=False) for c, i in runs_)
    word, vs = int(ids[-1]), int(ids[0])
    runs = Runs(clean, corrupt, word, vs, "w", "w2")

    def forward() -> float:
        t0 = time.perf_counter()
        _record(*runs_[1], params, shape_only=False)
        return time.perf_counter() - t0

    def to_logits() -> float:  # the forward's steps up to the logits, through the same ops
        need = needed_for(corrupt, "logits")
        t0 = time.perf_counter()
        rerun(corrupt, "embed", corrupt["embed"].output.copy(), "logits", None, need)
        return time.perf_counter() - t0

    gc.collect()
    full = statistics.median(forward() for _ in range(args.forwards))
    partial = statistics.median(to_logits() for _ in range(args.forwards))
    n = sizes["n_layers"] * args.tokens
    tracemalloc.start()
    t0 = time.perf_counter()
    executed: list[str] = []
    s = sweep_runs(runs, "resid", executed)
    sweep_s = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"load average {os.getloadavg()[0]:.2f}; {'tiny' if args.quick else 'GPT-2 small'} size, {args.tokens} tokens, "
          f"{n} patch points")
    print(f"one full forward (recorded, with logits, probs, loss): median of {args.forwards} = {full:.3f} s; "
          f"× {n} = {full * n:.1f} s")
    print(f"its steps up to the logits: median {partial:.3f} s; × {n} = {partial * n:.1f} s")
    print(f"sweep: {sweep_s:.1f} s, {len(executed):,} steps computed ({len(executed) / n:.1f} per patch point; a "
          f"forward records {len(corrupt):,})")
    print(f"ratio sweep / {n} full forwards = {sweep_s / (full * n):.3f} (target ≤ 0.75); / {n} forwards to the "
          f"logits = {sweep_s / (partial * n):.3f}")
    print(f"peak memory the sweep allocated: {peak / 2**20:.1f} MiB (the two runs' traces: "
          f"{(clean.nbytes + corrupt.nbytes) / 2**20:.1f} MiB); process peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"recovered fraction: max {np.max(s.recovered):.3f} at {np.unravel_index(np.argmax(s.recovered), s.recovered.shape)}")


if __name__ == "__main__":
    main()
