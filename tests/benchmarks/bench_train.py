"""Benchmark: ``explain train``'s speed, and (with --full) the documented training run whole.

Measured in one process, on the shipped model's sizes and the built-in corpus:

- tokens per second of the training loop (:func:`explain.train.loop.train`: batches, the untraced step, AdamW,
  the held-out loss every 25 steps) against a bare untraced numpy step of the same model on the same batches
  (:func:`explain.train.step.loss_and_grads` and AdamW, nothing else); goal: loop ≤ 1.5 × the bare step's time
  per token. For scale, one recorded step (``explain.run(..., backward=True)``, every gradient a step) too;
- with ``--full``: the documented command (``explain train gpt``, 2000 steps) timed whole (goal ≤ 10 minutes on
  the 2-core machine), its final training and held-out losses against the shipped model's checked-in curve
  (explain/checkpoints/trained/gpt-tiny/explain_train.json; the run is seeded and single-threaded, so they should agree to
  1e-6, the tolerance stated here; a different BLAS may round differently).

Run: python tests/benchmarks/bench_train.py [--steps N] [--full] [--quick] (--quick: 3 steps of a tiny model,
no target; CI runs it so the script keeps working)
"""

from __future__ import annotations

import argparse
import json
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # as explain train does
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import explain  # noqa: E402
from explain.checkpoints.trained import SHIPPED  # noqa: E402
from explain.core.config import make_config  # noqa: E402
from explain.core.words import Tokenizer  # noqa: E402
from explain.train import SIZES, Settings, initial_params, train_model  # noqa: E402
from explain.train.corpus import builtin_corpus  # noqa: E402
from explain.train.loop import encode_lines, make_rows  # noqa: E402
from explain.train.step import AdamW, loss_and_grads  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = dict(SIZES)
    if args.quick:
        args.steps, args.full = 3, False
        sizes.update(d_model=16, n_heads=2, n_layers=1, d_ff=32, n_ctx=16)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.steps} steps, batch 16 × {sizes['n_ctx']} tokens")
    s = Settings(steps=args.steps)
    t0 = time.perf_counter()
    _, res = train_model("gpt", settings=s, **sizes)
    loop = time.perf_counter() - t0  # includes building the corpus and the initial weights, as a user waits
    tokens = args.steps * s.batch_size * sizes["n_ctx"]
    corpus = builtin_corpus()
    tok = Tokenizer(corpus.train + corpus.held_out)
    cfg = make_config("gpt", **sizes, d_vocab=len(tok), seed=0)
    P = initial_params(cfg)
    rng = np.random.default_rng([0, 2])
    ids = encode_lines(corpus.train, tok)
    batches = [make_rows(ids, s.batch_size, cfg.n_ctx, rng) for _ in range(args.steps)]
    opt = AdamW(lr=s.lr)
    t0 = time.perf_counter()
    for b in batches:
        _, G = loss_and_grads(P, b, cfg.n_layers, cfg.n_heads)
        opt.step(P, G)
    bare = time.perf_counter() - t0
    steps_only = res.seconds  # the loop itself, from its first step (no corpus or weights to build)
    print(f"training loop: {tokens / steps_only:,.0f} tokens/s ({steps_only:.1f} s; with building the corpus and the "
          f"weights {loop:.1f} s); bare untraced step: {tokens / bare:,.0f} tokens/s ({bare:.1f} s); loop / bare = "
          f"{steps_only / bare:.2f} (goal ≤ 1.5)")
    t0 = time.perf_counter()
    explain.run("gpt", tokens=[int(i) for i in batches[0][0]], weights=P, backward=True, **sizes, d_vocab=len(tok))
    rec = time.perf_counter() - t0
    loss_and_grads(P, batches[0][:1], cfg.n_layers, cfg.n_heads)
    t0 = time.perf_counter()
    loss_and_grads(P, batches[0][:1], cfg.n_layers, cfg.n_heads)
    bare1 = time.perf_counter() - t0
    print(f"one sequence, recorded (explain.run backward=True): {rec * 1000:.0f} ms; untraced: {bare1 * 1000:.1f} ms "
          f"(recorded / untraced = {rec / bare1:.0f}: why explain train takes the untraced path)")
    if args.full:
        info = json.loads((SHIPPED / "explain_train.json").read_text())
        t0 = time.perf_counter()
        _, res = train_model("gpt", settings=Settings())
        whole = time.perf_counter() - t0
        want_train, want_val = info["losses"][-1], info["val_losses"][-1][1]
        print(f"documented run: {whole:.0f} s (goal ≤ 600 s); final training loss {res.losses[-1]:.6f} (curve "
              f"{want_train:.6f}), held-out {res.val_losses[-1][1]:.6f} (curve {want_val:.6f}); agree to 1e-6: "
              f"{abs(res.losses[-1] - want_train) < 1e-6 and abs(res.val_losses[-1][1] - want_val) < 1e-6}")


if __name__ == "__main__":
    main()
