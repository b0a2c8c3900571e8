"""Benchmark: the cost of recording the backward pass, at GPT-2-small size (12 layers, d_model 768, 12 heads,
d_ff 3072, vocabulary 50257, context 1024), 128 tokens.

Measured in one process, from the same recorded forward pass (its outputs are the saved activations both use):

- time: explain's traced backward (:func:`explain.engine.api.with_backward`: every gradient a recorded step) against
  the untraced numpy backward below (written out by hand, in-place accumulation, keeping only the parameter
  gradients); median of N runs each, interleaved; target traced ≤ 1.25 × untraced. The two must agree on every
  parameter's gradient (1e-9), so the comparison is of the same computation;
- CPU time (user, system) and page faults of each, medians: less at the mercy of other processes than the wall
  clock; the system time is mostly the kernel handing out (and zeroing) the fresh pages the kept gradients need
  (the trace keeps ~2 GiB of them, the untraced backward only its parameter gradients), and on a virtual machine
  each first touch of a page the guest has not used lately is dearer still. ``--keep-freed-memory`` runs with
  glibc keeping freed memory in the process (from the second run on no page is new), to show how much of the
  ratio that is;
- fresh memory: the bytes the trace keeps beyond the untraced backward's, and what writing that many bytes of
  memory new to the process costs on this machine, against the gap between the two medians. On a virtual
  machine whose freed pages go back to the host (free page reporting: this project's 2-core CI machine is one),
  that cost is the host's, and it moves with the host's state from run to run;
- memory: the planned bytes of the trace with its gradients against the forward trace alone, the peak RSS,
  and how fast a run that will not fit is refused (before allocating: EXPLAIN_MAX_BYTES set below the plan).

Run: python tests/benchmarks/bench_backward.py [--runs N] [--tokens T] [--layers L] [--keep-freed-memory] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs tiny sizes once and asserts no target: it checks the
benchmark still runs (and its own correctness checks still hold).
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import explain
from explain.core.errors import ResourceError
from explain.engine.api import plan, with_backward
from explain.engine.weights import init_params

sys.path.insert(0, str(Path(__file__).parent))
from bench_engine import keep_freed_memory, measured  # noqa: E402 - shared with the forward's bench

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
TINY = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, d_vocab=64, n_ctx=64)  # --quick


def _ln_back(g, x, w, eps=1e-5):
    """dx, dw, db of layer norm over the last axis."""
    mu = x.mean(-1, keepdims=True)
    sd = np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    xh = (x - mu) / sd
    dxh = g * w
    dx = (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True)) / sd
    d = x.shape[-1]
    return dx, (g * xh).reshape(-1, d).sum(0), g.reshape(-1, d).sum(0)


def _gelu_back(g, x):
    c = np.sqrt(2 / np.pi)
    t = np.tanh(c * (x + 0.044715 * x**3))
    return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x))


def numpy_backward(tr, P: dict, n_layers: int) -> dict:
    """∂loss/∂(every parameter) of the gpt model, by hand, from the forward activations ``tr[name]``."""
    a = lambda n: tr[n].output  # noqa: E731 - the saved activations
    ids, y = a("tokens"), a("targets")
    B, T = ids.shape
    d = P["W_E"].shape[1]
    G: dict = {}
    lp = a("log_probs")
    dlp = np.zeros_like(lp)
    np.put_along_axis(dlp[:, :-1], y[..., None], -1.0 / y.size, axis=-1)
    dlogits = dlp - np.exp(lp) * dlp.sum(-1, keepdims=True)
    xf = a("ln_final")
    G["W_E"] = dlogits.reshape(-1, dlogits.shape[-1]).T @ xf.reshape(-1, d)
    dx, G["ln_final.w"], G["ln_final.b"] = _ln_back(dlogits @ P["W_E"], a(f"blocks.{n_layers - 1}.resid_post"),
                                                    P["ln_final.w"])
    for i in reversed(range(n_layers)):
        p = f"blocks.{i}"
        # MLP: resid_post = resid_mid + mlp_out
        post, pre, h2 = a(f"{p}.mlp.post"), a(f"{p}.mlp.pre"), a(f"{p}.ln2")
        G[f"{p}.mlp.W_out"] = post.reshape(-1, post.shape[-1]).T @ dx.reshape(-1, d)
        G[f"{p}.mlp.b_out"] = dx.reshape(-1, d).sum(0)
        dpre = _gelu_back(dx @ P[f"{p}.mlp.W_out"].T, pre)
        G[f"{p}.mlp.W_in"] = h2.reshape(-1, d).T @ dpre.reshape(-1, dpre.shape[-1])
        G[f"{p}.mlp.b_in"] = dpre.reshape(-1, dpre.shape[-1]).sum(0)
        dln, G[f"{p}.ln2.w"], G[f"{p}.ln2.b"] = _ln_back(dpre @ P[f"{p}.mlp.W_in"].T, a(f"{p}.resid_mid"),
                                                         P[f"{p}.ln2.w"])
        dx = dx + dln
        # attention: resid_mid = resid_pre + attn_out
        cat, A = a(f"{p}.attn.concat"), a(f"{p}.attn.pattern")
        q, k, v, h1 = a(f"{p}.attn.q"), a(f"{p}.attn.k"), a(f"{p}.attn.v"), a(f"{p}.ln1")
        G[f"{p}.attn.W_O"] = cat.reshape(-1, d).T @ dx.reshape(-1, d)
        G[f"{p}.attn.b_O"] = dx.reshape(-1, d).sum(0)
        dcat = dx @ P[f"{p}.attn.W_O"].T
        H, m = q.shape[1], q.shape[-1]
        dz = dcat.reshape(B, T, H, m).transpose(0, 2, 1, 3)
        dA = dz @ v.transpose(0, 1, 3, 2)
        dv = A.transpose(0, 1, 3, 2) @ dz
        dS = A * (dA - (dA * A).sum(-1, keepdims=True)) / np.sqrt(m)  # masked entries: A = 0, so 0
        dq, dk = dS @ k, dS.transpose(0, 1, 3, 2) @ q
        dh = np.zeros_like(h1)
        for name, g in (("Q", dq), ("K", dk), ("V", dv)):
            W = P[f"{p}.attn.W_{name}"]
            dh += (g @ W.transpose(0, 2, 1)).sum(1)
            G[f"{p}.attn.W_{name}"] = np.einsum("btd,bhtm->hdm", h1, g, optimize=True)
            G[f"{p}.attn.b_{name}"] = g.sum((0, 2))
        resid_pre = a(f"blocks.{i - 1}.resid_post") if i else a("blocks.0.resid_pre")
        dln, G[f"{p}.ln1.w"], G[f"{p}.ln1.b"] = _ln_back(dh, resid_pre, P[f"{p}.ln1.w"])
        dx = dx + dln
    np.add.at(G["W_E"], ids.reshape(-1), dx.reshape(-1, d))
    G["W_pos"] = np.zeros_like(P["W_pos"])
    G["W_pos"][:T] = dx.sum(0)
    return G


def fresh_memory(nbytes: int, gap: float, pause: float = 3) -> str:
    """What writing ``nbytes`` of memory new to the process costs on this machine, against ``gap`` (the traced
    median minus the untraced one): the traced backward keeps that many bytes more than the untraced one (every
    activation's gradient, and W_E's two parts beside their sum), each page of them a first touch. Written into
    a fresh anonymous mapping after a pause, so that the memory the runs above freed has had time to go back to
    the kernel (and, on a virtual machine reporting its free pages, to the host), as it does between two presses
    of ``r``."""
    import mmap

    time.sleep(pause)
    runs: list = []
    with measured(runs):
        block = mmap.mmap(-1, nbytes)
        np.frombuffer(block, dtype=np.uint8)[:] = 1
    block.close()
    wall, _, system, faults = runs[0]
    return (f"fresh memory: the traced backward keeps {nbytes / 2**30:.2f} GiB more than the untraced one; writing "
            f"that much memory new to the process here takes {wall:.2f} s ({system:.2f} s system, {faults:,} page "
            f"faults), against {gap:.2f} s between the two medians")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--keep-freed-memory", action="store_true",
                    help="run with glibc keeping freed memory (no fresh pages for the gradients after the first "
                         "run), to show how much of the ratio is the kernel handing out new pages")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one run, no target (CI: does it still run?)")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.tokens, args.layers = 1, 8, 2
    if args.keep_freed_memory:
        print(keep_freed_memory())
    tokens = ",".join(str(7 + (i * 31) % 40) for i in range(args.tokens))
    opts = dict(TINY if args.quick else GPT2, n_layers=args.layers, tokens=tokens)
    fwd_plan, bwd_plan = plan("gpt", **opts), plan("gpt", backward=True, **opts)
    params = init_params(fwd_plan.specs, seed=0)
    weights = sum(p.nbytes for p in params.values())
    print(f"gpt: {args.layers} layers, d_model {opts['d_model']}, vocab {opts['d_vocab']}, {args.tokens} tokens; "
          f"{sum(p.size for p in params.values()):,} parameters")
    print(f"planned memory: weights {weights / 2**30:.2f} GiB, forward trace {fwd_plan.nbytes / 2**30:.2f} GiB, "
          f"with gradients {bwd_plan.nbytes / 2**30:.2f} GiB ({len(fwd_plan)} → {len(bwd_plan)} steps)")

    forward = explain.run("gpt", weights=params, **opts)
    traced, plain = [], []
    for _ in range(args.runs):  # interleaved, so drift in the machine's speed hits both alike
        gc.collect()
        with measured(plain):
            grads = numpy_backward(forward, params, args.layers)
        del grads
        gc.collect()
        with measured(traced):
            full = with_backward(forward)
        del full
    full = with_backward(forward)
    grads = numpy_backward(forward, params, args.layers)
    assert set(grads) == {n for n in params if f"{n}.grad" in full}
    for n, g in grads.items():
        np.testing.assert_allclose(full[f"{n}.grad"].output, g, rtol=1e-9, atol=1e-9, err_msg=n)
    mt, mp = (statistics.median(r[0] for r in runs) for runs in (traced, plain))
    print(f"time: traced backward {mt:.2f} s, untraced numpy backward {mp:.2f} s (medians of {args.runs}); "
          f"ratio {mt / mp:.3f} (target ≤ 1.25) {'OK' if mt / mp <= 1.25 else 'OVER'}; "
          f"all {len(grads)} parameter gradients agree (1e-9); load {os.getloadavg()[0]:.1f}")
    cpu = {name: [statistics.median(r[i] for r in runs) for i in (1, 2, 3)]
           for name, runs in (("traced", traced), ("untraced", plain))}
    print("cpu (medians; user time counts every BLAS thread): " + "; ".join(
        f"{name} {u:.2f} s user + {sy:.2f} s system, {f:,.0f} page faults" for name, (u, sy, f) in cpu.items()))
    print(f"trace with gradients: {full.nbytes / 2**30:.2f} GiB in {len(full)} steps (plan said "
          f"{bwd_plan.nbytes / 2**30:.2f}); peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
    extra = full.nbytes - forward.nbytes - sum(g.nbytes for g in grads.values())
    del full, grads
    print(fresh_memory(extra, mt - mp, pause=0 if args.quick else 3))

    os.environ["EXPLAIN_MAX_BYTES"] = str(int((weights + fwd_plan.nbytes) / 0.8) + 2**20)  # forward fits only
    t = time.perf_counter()
    try:
        explain.run("gpt", weights=params, backward=True, **opts)
        print("refusal: NOT refused")
    except ResourceError as exc:
        print(f"refusal: {time.perf_counter() - t:.3f} s, before allocating: {exc}")
    t = time.perf_counter()
    try:
        with_backward(forward)
        print("refusal (TUI r key): NOT refused")
    except ResourceError:
        print(f"refusal (TUI r key): {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
