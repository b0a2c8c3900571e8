"""Benchmark: generation at GPT-2-small size (12 layers, d_model 768, 12 heads, d_ff 3072, vocabulary 50257,
context 1024): a 64-token prompt, then 20 new tokens on the key/value cache (temperature 0.8, top-k 50,
top-p 0.95, seeded draws).

Each new token's traced step (the engine's own ``gpt_step`` and ``next_token``, recording every operation of
the new position and the sampling steps) is timed against an untraced numpy step written below: the same
cached forward of one position (per-head BLAS matmuls, preallocated K/V buffers) and the same sampling, with
nothing kept. Both start from the same cache; the two are interleaved token by token, so drift in the machine's
speed hits both alike; the reference's tokens and logits must equal the traced ones. Target: each new token's
traced step ≤ 1.25 × the untraced one (median and worst reported). Memory: the bytes each new token's steps add
to the trace, and the cache (one buffer per layer for K and V, allocated once), from the trace itself and from
tracemalloc.

Run: python tests/benchmarks/bench_generate.py [--prompt 64] [--new 20] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs a tiny model, 4 prompt tokens and 3 new ones, and asserts
no target: it checks the benchmark still runs and its traced and untraced steps still agree.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

import numpy as np

from explain.core.names import gen_scope, gen_step
from explain.core.registry import MODELS, forward_of
from explain.core.sampling import make_sampling
from explain.engine.api import generation_bytes, plan
from explain.engine.request import prepare_run
from explain.engine.weights import init_params
from explain.models.generate import next_token
from explain.models.kvcache import KVCache, layer_caches
from explain.models.notation import notation
from explain.models.zoo import gpt_step
from explain.ops import kernels
from explain.trace import Generation
from explain.trace.recorder import Recorder

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
TINY = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, d_vocab=64, n_ctx=64)  # --quick


class Reference:
    """An untraced cached GPT-2 step in plain numpy: one new position through every block, then sampling."""

    def __init__(self, p: dict, L: int, caches: list[tuple[np.ndarray, np.ndarray]], capacity: int) -> None:
        self.p, self.L = p, L
        self.K, self.V = [], []
        self.t = caches[0][0].shape[-2]
        for k, v in caches:  # (B, h, T, m) → buffers (B, h, capacity, m)
            K = np.empty(k.shape[:-2] + (capacity, k.shape[-1]))
            V = np.empty_like(K)
            K[..., :self.t, :], V[..., :self.t, :] = k, v
            self.K.append(K)
            self.V.append(V)

    def step(self, token: np.ndarray, s, n: int) -> tuple[np.ndarray, np.ndarray]:
        p, t = self.p, self.t
        x = p["W_E"][token] + p["W_pos"][t]  # (B, 1, d)
        for i in range(self.L):
            b = f"blocks.{i}."
            h = kernels.layer_norm(x, p[b + "ln1.w"], p[b + "ln1.b"])
            q, k, v = (h[:, None] @ p[b + f"attn.W_{c}"] + p[b + f"attn.b_{c}"][:, None] for c in "QKV")  # (B,h,1,m)
            self.K[i][..., t, :], self.V[i][..., t, :] = k[..., 0, :], v[..., 0, :]
            K, V = self.K[i][..., :t + 1, :], self.V[i][..., :t + 1, :]
            a = kernels.softmax(q @ np.swapaxes(K, -1, -2) / np.sqrt(q.shape[-1]))  # (B, h, 1, t+1)
            z = kernels.merge_heads(a @ V)  # (B, 1, h·m)
            x = x + z @ p[b + "attn.W_O"] + p[b + "attn.b_O"]
            h = kernels.layer_norm(x, p[b + "ln2.w"], p[b + "ln2.b"])
            x = x + kernels.gelu(h @ p[b + "mlp.W_in"] + p[b + "mlp.b_in"]) @ p[b + "mlp.W_out"] + p[b + "mlp.b_out"]
        logits = kernels.layer_norm(x, p["ln_final.w"], p["ln_final.b"]) @ p["W_E"].T  # (B, 1, V)
        z = kernels.top_p_filter(kernels.top_k_filter(logits / s.temperature, s.top_k), s.top_p)
        u = np.random.default_rng([s.seed, n]).random(z.shape[:-1])
        self.t += 1
        return logits, kernels.sample(kernels.softmax(z), u)


def prompt_forward(cfg, inp, params, s) -> tuple[Recorder, object]:
    """The prompt's forward and its first token, recorded as explain.generate records them."""
    rec = Recorder(cfg, params, False, notation(cfg))
    forward_of(MODELS[cfg.model])(rec, cfg, inp)
    with rec.scope(gen_scope(0)):
        token = next_token(rec, rec.ref("logits"), s, 0)
    return rec, token


def caches(rec: Recorder, cfg, n: int, capacity: int) -> list[KVCache]:
    """Every layer's cache after the prompt (n = 0) or after new token n, as explain.generate builds it."""
    return layer_caches(rec, cfg, capacity, None if n == 0 else n)


def traced_step(rec: Recorder, cfg, token, pos: int, cache: list[KVCache], s, n: int):
    with rec.scope(gen_scope(n)):
        logits = gpt_step(rec, cfg, token, pos, cache)
        return logits, next_token(rec, logits, s, n)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--new", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, no target (CI: does it still run?)")
    args = ap.parse_args()
    if args.quick:
        args.prompt, args.new = 4, 3
    tokens = [7 + (i * 31) % 40 for i in range(args.prompt)]
    s = make_sampling(args.new, temperature=0.8, top_k=50, top_p=0.95, seed=1)
    opts = dict(TINY if args.quick else GPT2, tokens=tokens)

    t0 = time.perf_counter()
    planned = plan("gpt", sampling=s, **opts)
    params = init_params(planned.specs, seed=0)
    print(f"weights: {sum(a.size for a in params.values()):,} parameters, built in {time.perf_counter() - t0:.1f} s")
    cfg, inp = prepare_run("gpt", **opts)
    L, T, capacity = cfg.n_layers, inp.seq_len, inp.seq_len + args.new - 1

    # time: token by token, the reference first, then the traced step from the same cache
    rec, token = prompt_forward(cfg, inp, params, s)
    ref = Reference(params, L, [(c.keys.value, c.values.value) for c in caches(rec, cfg, 0, capacity)], capacity)
    traced, plain = [], []
    for n in range(1, args.new):
        gc.collect()
        t = time.perf_counter()
        ref_logits, ref_token = ref.step(token.value, s, n)
        plain.append(time.perf_counter() - t)
        gc.collect()
        t = time.perf_counter()
        logits, token = traced_step(rec, cfg, token, T + n - 1, caches(rec, cfg, n - 1, capacity), s, n)
        traced.append(time.perf_counter() - t)
        np.testing.assert_allclose(logits.value, ref_logits, rtol=0, atol=1e-9)
        assert np.array_equal(token.value, ref_token), n
    ratios = [a / b for a, b in zip(traced, plain)]
    print(f"per new token (tokens 1..{args.new - 1}, after the prompt's {T}): traced median "
          f"{statistics.median(traced) * 1e3:.0f} ms, untraced median {statistics.median(plain) * 1e3:.0f} ms")
    print(f"ratio traced/untraced: median {statistics.median(ratios):.3f}, worst {max(ratios):.3f} (target ≤ 1.25)")
    del rec, ref, token, logits

    # memory, in a second pass (tracemalloc slows every allocation, so it stays out of the timing above)
    gc.collect()
    rec, token = prompt_forward(cfg, inp, params, s)
    grew = []
    tracemalloc.start()
    for n in range(1, args.new):
        before = tracemalloc.get_traced_memory()[0]
        _, token = traced_step(rec, cfg, token, T + n - 1, caches(rec, cfg, n - 1, capacity), s, n)
        grew.append(tracemalloc.get_traced_memory()[0] - before)
    tracemalloc.stop()
    rec.generation = Generation(s, (tuple(tokens),), tuple(gen_step(n, "next") for n in range(args.new)))
    trace = rec.trace()
    mem, mib = generation_bytes(trace), 2**20
    print(f"memory: each new token's steps hold {mem['per_token'] / mib:.2f} MiB (the plan says "
          f"{generation_bytes(planned)['per_token'] / mib:.2f} MiB); tracemalloc: the first new token kept "
          f"{grew[0] / mib:.2f} MiB (with the K/V cache buffers), each later one a median "
          f"{statistics.median(grew[1:]) / mib:.2f} MiB; the cache holds {mem['cache'] / mib:.1f} MiB once, for "
          f"every token; the prompt's forward {mem['prompt'] / mib:.0f} MiB")
    print("(timings on a machine shared with other jobs: ratios measured in one run)")


if __name__ == "__main__":
    main()
