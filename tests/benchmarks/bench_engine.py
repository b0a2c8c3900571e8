"""Benchmark: the cost of recording, at GPT-2-small size (12 layers, d_model 768, 12 heads, d_ff 3072,
vocabulary 50257, context 1024), 128 tokens.

Measured in one process, against a plain untraced numpy forward of the same weights
(tests/helpers/reference_forward.py: per-head BLAS matmuls, keeping nothing but what it returns):

- time: median of N runs each; target traced ≤ 1.1 × untraced (issue 16; TransformerLens's run_with_cache
  costs 1.67 × a plain numpy forward in float64); and, like for like, against the reference using explain's
  own kernels, which isolates the price of recording;
- CPU time (user, system) and page faults of each, medians: less at the mercy of other processes than the
  wall clock, and the system time shows the price of the fresh pages the kept tensors need;
- where the time goes: one more traced run with each op kind's compute timed, so the rest (planning, checks,
  recording) shows as the remainder;
- memory: bytes the trace keeps alive (tracemalloc, which numpy reports its allocations to) against the bytes
  of the tensors it holds (trace.nbytes); target ≤ 1.5.

Run: python tests/benchmarks/bench_engine.py [--runs N] [--tokens T] [--keep-freed-memory] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs tiny sizes once and asserts no target: it checks the
benchmark still runs (and its own correctness checks still hold).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "helpers"))

import numpy as np  # noqa: E402
import reference_forward as ref  # noqa: E402

import explain  # noqa: E402
from explain.engine.api import plan  # noqa: E402
from explain.engine.weights import init_params  # noqa: E402

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
TINY = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, d_vocab=64, n_ctx=64)  # --quick


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--keep-freed-memory", action="store_true",
                    help="run again with glibc keeping freed memory (no fresh pages for the trace after the "
                         "first run), to show how much of the ratio is the kernel handing out new pages")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one run, no target (CI: does it still run?)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.tokens = 1, 8
    if args.keep_freed_memory:
        # A trace keeps every tensor (440 MiB here), and each first touch of a fresh page is a page fault;
        # the untraced forward reuses its freed temporaries. Kept in the process, that cost goes away from the
        # second run on.
        print(keep_freed_memory())
    tokens = ",".join(str(7 + (i * 31) % 40) for i in range(args.tokens))
    opts = dict(TINY if args.quick else GPT2, tokens=tokens)
    heads = opts["n_heads"]

    t0 = time.perf_counter()
    specs = plan("gpt", **opts).specs
    params = init_params(specs, seed=0)
    print(f"weights: {sum(p.size for p in params.values()):,} parameters, built in {time.perf_counter() - t0:.1f} s")
    ids = np.array([[int(t) for t in tokens.split(",")]])

    traced, plain, same_kernels = [], [], []  # (wall, user, system, page faults) of each run
    load = os.getloadavg()[0]
    for _ in range(args.runs):  # interleaved, so drift in the machine's speed hits all alike
        gc.collect()
        with measured(plain):
            out = ref.gpt(params, ids, heads)
        del out
        gc.collect()
        with explains_kernels(), measured(same_kernels):
            out = ref.gpt(params, ids, heads)
        del out
        gc.collect()
        with measured(traced):
            trace = explain.run("gpt", weights=params, **opts)
        del trace
    check = explain.run("gpt", weights=params, **opts)
    np.testing.assert_allclose(check["logits"].output, ref.gpt(params, ids, heads)["logits"], rtol=1e-9, atol=1e-9)
    del check
    mt, mp = (statistics.median(r[0] for r in runs) for runs in (traced, plain))
    print(f"load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} now (2 busy cores make every figure "
          "slower and more scattered)")
    print(f"time: traced {mt:.2f} s, untraced {mp:.2f} s (medians of {args.runs}); ratio {mt / mp:.3f} "
          f"(target ≤ 1.1) {'OK' if mt / mp <= 1.1 else 'OVER'}")
    # explain's GELU, softmax and layer norm are quicker than the reference's textbook spellings (x * x * x
    # for x**3, in-place steps). Against the reference using them too, the ratio is the price of recording
    # alone: every tensor kept (fresh pages), log_softmax over the vocabulary, a step the reference never takes
    # (it logs only the picked probabilities), and the Python of recording (no finiteness check of the weights:
    # init_params's arrays are known finite).
    mk = statistics.median(r[0] for r in same_kernels)
    print(f"like for like: untraced with explain's kernels {mk:.2f} s; ratio {mt / mk:.3f} (recording alone)")
    # CPU time is less at the mercy of other processes than the wall clock; the system time is mostly the
    # kernel handing out (and zeroing) the fresh pages that the kept tensors need.
    cpu = {name: [statistics.median(r[i] for r in runs) for i in (1, 2, 3)]
           for name, runs in (("traced", traced), ("untraced", plain), ("with explain's kernels", same_kernels))}
    print("cpu (medians; user time counts every BLAS thread): " + "; ".join(
        f"{name} {u:.2f} s user + {sy:.2f} s system, {f:,.0f} page faults" for name, (u, sy, f) in cpu.items()))
    where_the_time_goes(params, opts)

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


@contextlib.contextmanager
def measured(into: list):
    """Append (wall time, user time, system time, minor page faults) of the block to ``into``. The wall time is
    what the ratio compares; the clock is read inside the resource counters, so it times the block alone."""
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    try:
        yield
    finally:
        wall = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        into.append((wall, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt))


def keep_freed_memory() -> str:
    """Ask glibc's malloc to keep the memory this process frees (``--keep-freed-memory``): no array gets pages of
    its own from the kernel (``M_MMAP_MAX`` 0: the heap serves every size) and the heap is never trimmed, so from
    the second run on every array lands in pages the process has touched before, and what is left of a ratio is
    computation. Returns a line for the report, saying whether it took effect.

    Why ``mallopt`` and not the ``MALLOC_*_`` variables: glibc refuses a ``MALLOC_MMAP_THRESHOLD_`` above
    32 MiB, so arrays above that (the vocabulary's gradients, 294 MiB each) still came from fresh pages."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process runs on
    except (OSError, AttributeError):
        return "keep freed memory: not glibc (no mallopt), so not in effect"
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # <malloc.h>
    ok = mallopt(M_MMAP_MAX, 0) == 1 and mallopt(M_TRIM_THRESHOLD, 2**31 - 1) == 1
    return ("keep freed memory: in effect (malloc serves every size from its heap and never trims it)" if ok
            else "keep freed memory: mallopt refused, so not in effect")


@contextlib.contextmanager
def explains_kernels():
    """The reference forward with explain's own GELU, softmax and layer norm in place of its own."""
    from explain.ops import kernels

    saved = ref._gelu, ref._softmax, ref._ln
    ref._gelu, ref._softmax, ref._ln = kernels.gelu, kernels.softmax, kernels.layer_norm
    try:
        yield
    finally:
        ref._gelu, ref._softmax, ref._ln = saved


def where_the_time_goes(params: dict, opts: dict) -> None:
    """One traced run with every op kind's compute timed; the remainder is planning, checks and recording."""
    from collections import Counter

    from explain import ops

    spent: Counter[str] = Counter()
    originals = {kind: type(op).compute for kind, op in ops.REGISTRY.items()}

    def timed(kind, compute):
        def run(self, *arrays, **attrs):
            t = time.perf_counter()
            try:
                return compute(self, *arrays, **attrs)
            finally:
                spent[kind] += time.perf_counter() - t
        return run

    patched = {type(op) for op in ops.REGISTRY.values()}
    saved = {cls: cls.__dict__.get("compute") for cls in patched}
    for kind, op in ops.REGISTRY.items():
        type(op).compute = timed(kind, originals[kind])
    try:
        gc.collect()
        t = time.perf_counter()
        trace = explain.run("gpt", weights=params, **opts)
        total = time.perf_counter() - t
    finally:
        for cls, compute in saved.items():
            if compute is None:
                del cls.compute
            else:
                cls.compute = compute
    del trace
    in_ops = sum(spent.values())
    print(f"where the time goes (one traced run, {total:.2f} s): op computations {in_ops:.2f} s, the rest "
          f"(inputs, config, shape-only plan, memory and weight checks, recording) {total - in_ops:.2f} s")
    for kind, sec in spent.most_common(8):
        print(f"  {kind:14s} {sec:6.2f} s  {100 * sec / total:4.1f} %")


if __name__ == "__main__":
    main()
