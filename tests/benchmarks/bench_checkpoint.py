"""Benchmark: a GPT-2-small checkpoint (124M parameters) through ``--checkpoint``, 128 tokens.

Writes a synthetic checkpoint to a temporary folder (deleted afterwards): config.json with GPT-2-small's
config, model.safetensors of random float32 tensors with the real key names and shapes (~500 MB), and a
byte-level tokenizer.json of 50,257 tokens (no merges, so 128 ASCII characters are 128 tokens). Then, in one
process, it measures:

- open (config.json), token labels (tokenizer.json), encode, plan (the shapes command's work);
- weights: model.safetensors → float64 engine parameters (time, RSS growth);
- the run: ``explain.run("gpt", checkpoint=DIR, text=…)`` from the folder, cold (time, trace.nbytes, RSS growth
  against the bytes of weights + trace it keeps);
- if they exist: a TUI key press on that trace (explain.tui), and the export of the run (explain.export).

Run: python tests/benchmarks/bench_checkpoint.py [--tokens 128] [--keep DIR] [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) runs tiny sizes once and asserts no target: it checks the
benchmark still runs (and its own correctness checks still hold).
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.shape_rules import fmt_shape
from explain.engine.api import plan

GPT2_SMALL = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_positions": 1024,
              "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-05, "scale_attn_weights": True, "tie_word_embeddings": True,
              "bos_token_id": 50256, "eos_token_id": 50256}
TINY = dict(GPT2_SMALL, vocab_size=300, n_positions=64, n_embd=16, n_layer=2, n_head=2,  # --quick
            bos_token_id=299, eos_token_id=299)


def rss(field: str = "VmRSS") -> int:
    """Resident set size of this process (VmRSS) or its peak (VmHWM), bytes, from /proc (no psutil needed)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> None:
    """Start VmHWM afresh (Linux: writing 5 to clear_refs resets the peak to the current RSS)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def write_checkpoint(folder: Path, config: dict) -> None:
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    rng = np.random.default_rng(0)
    d, V, n_ctx, L = config["n_embd"], config["vocab_size"], config["n_positions"], config["n_layer"]
    shapes = {"transformer.wte.weight": (V, d), "transformer.wpe.weight": (n_ctx, d),
              "transformer.ln_f.weight": (d,), "transformer.ln_f.bias": (d,)}
    for i in range(L):
        p = f"transformer.h.{i}."
        shapes.update({p + "ln_1.weight": (d,), p + "ln_1.bias": (d,), p + "attn.c_attn.weight": (d, 3 * d),
                       p + "attn.c_attn.bias": (3 * d,), p + "attn.c_proj.weight": (d, d), p + "attn.c_proj.bias": (d,),
                       p + "ln_2.weight": (d,), p + "ln_2.bias": (d,), p + "mlp.c_fc.weight": (d, 4 * d),
                       p + "mlp.c_fc.bias": (4 * d,), p + "mlp.c_proj.weight": (4 * d, d), p + "mlp.c_proj.bias": (d,)})
    tensors = {}
    for k, shape in shapes.items():
        if k.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            tensors[k] = (1 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:  # GPT-2's initializer_range
            tensors[k] = (0.02 * rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    del tensors
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    # A byte-level vocabulary of GPT-2's size: the 256 byte symbols, then made-up multi-byte tokens.
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {c: i for i, c in enumerate(alphabet)}
    for j in range(V - 1 - len(vocab)):  # "Ġ" + three byte symbols spelling j: all distinct
        vocab["Ġ" + "".join(alphabet[b] for b in j.to_bytes(3, "big"))] = len(vocab)
    vocab["<|endoftext|>"] = V - 1
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(folder / "tokenizer.json"))


def timed(f, *args, **kwargs):
    t = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--keep", metavar="DIR", help="write the checkpoint here and keep it")
    ap.add_argument("--quick", action="store_true", help="a tiny checkpoint, no target (CI: does it still run?)")
    args = ap.parse_args()
    config = TINY if args.quick else GPT2_SMALL
    if args.quick:
        args.tokens = 8
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_gpt2_small_"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _, t_write = timed(write_checkpoint, folder, config)
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"synthetic {'tiny' if args.quick else 'GPT-2-small'} checkpoint: {mib(size)} on disk, written in "
              f"{t_write:.1f} s")
        gc.collect()
        measure(folder, "".join("abcdefghij klmnopqrstuvwxyz"[i % 27] for i in range(args.tokens)),
                config["vocab_size"], 1 if args.quick else 10)
    finally:
        if not args.keep:
            shutil.rmtree(folder)
            print(f"deleted {folder}")


def measure(folder: Path, text: str, vocab_size: int, presses: int) -> None:
    ck, t_open = timed(open_checkpoint, folder)
    labels, t_labels = timed(ck.vocab_labels)
    ids, t_encode = timed(ck.encode, text)
    assert len(labels) == vocab_size and len(ids) == len(text), (len(labels), len(ids))
    planned, t_plan = timed(plan, "gpt", checkpoint=folder, text=text)
    print(f"open config.json {t_open * 1e3:.1f} ms, {vocab_size:,} token labels {t_labels * 1e3:.0f} ms, "
          f"encode {len(ids)} tokens {t_encode * 1e3:.1f} ms, plan (shapes) {t_plan * 1e3:.0f} ms")

    r0 = rss()
    params, t_load = timed(ck.params)
    p_bytes = sum(a.nbytes for a in params.values())
    print(f"weights: {sum(a.size for a in params.values()):,} parameters ({mib(p_bytes)} float64) loaded in "
          f"{t_load:.2f} s; RSS +{mib(rss() - r0)} ({(rss() - r0) / p_bytes:.2f} × their bytes)")
    del ck, params
    gc.collect()

    r0 = rss()
    reset_peak()
    trace, t_run = timed(explain.run, "gpt", checkpoint=str(folder), text=text)
    grown, peak = rss() - r0, rss("VmHWM") - r0
    kept = sum(a.nbytes for a in trace.params.values()) + trace.nbytes
    print(f"run from the folder ({len(ids)} tokens, {len(trace)} steps): {t_run:.2f} s = {t_run / t_load:.2f} × the "
          f"weights' load; trace.nbytes {mib(trace.nbytes)} (planned {mib(planned.nbytes)}); "
          f"RSS +{mib(grown)} = {grown / kept:.2f} × (weights + trace = {mib(kept)}), peak +{mib(peak)} = "
          f"{peak / kept:.2f} ×")
    assert np.isfinite(trace["loss"].output)
    tui_latency(trace, presses)
    export_time(folder, text)


async def _key_times(trace, plan: list[tuple[str | None, str, int]]) -> list[tuple[str, tuple, list[float]]]:
    """Drive the real app with Textual's pilot in this process: for each (step to go to or None, key, n),
    the seconds of n presses of key, each until the app is idle again (its repaint included)."""
    from explain.tui.app import ExplainApp

    app = ExplainApp(trace)
    out = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen

        async def press(key: str) -> float:
            t = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            return time.perf_counter() - t

        for step, key, n in plan:
            if step is not None:
                await press("home")
                while screen.view.step.name != step:
                    await press("right")
            shape = screen.view.step.shape
            out.append((key, shape, sorted([await press(key) for _ in range(n)])))
    return out


def tui_latency(trace, presses: int = 10) -> None:
    """Key-press latency in the TUI on this trace against the same keys on the default tiny gpt (4 tokens,
    d_model 8), if the TUI exists."""
    try:
        import explain.tui.app  # noqa: F401
    except ImportError:
        print("TUI: explain.tui.app does not exist yet; key-press latency not measured here")
        return
    import asyncio

    plan = [(None, "right", presses), ("blocks.0.attn.pattern", "s", presses), ("logits", "l", presses),
            ("logits", "L", presses), ("logits", "right", min(6, presses))]
    if presses == 1:  # --quick: only the keys near the start (walking to the logits is 40 presses a model)
        plan = plan[:2]
    what = ["next step from the start", "next head on blocks.0.attn.pattern", "cell right on logits",
            "pan a window right on logits", "next step, logits → probs → …"]
    big = asyncio.run(_key_times(trace, plan))
    small = big if presses == 1 else asyncio.run(_key_times(explain.run("gpt"), plan))  # --quick: one app
    print("TUI key presses (pilot, 120×40): median on GPT-2-small / median on the tiny gpt")
    for label, (key, shape, t), (_, _, t0) in zip(what, big, small):  # as many as were measured
        m, m0 = t[len(t) // 2], t0[len(t0) // 2]
        print(f"  {key!r:8} {label} {fmt_shape(shape)}: {m * 1e3:.0f} ms (max {t[-1] * 1e3:.0f}) / "
              f"{m0 * 1e3:.0f} ms = {m / m0:.2f}")


def export_time(folder: Path, text: str) -> None:
    """The export of this run to a numpy script, if `explain export` exists."""
    from click.testing import CliRunner

    from explain.cli import main as cli

    if "export" not in cli.list_commands(None) or cli.get_command(None, "export") is None:
        print("export: 'explain export' does not exist yet; not measured")
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "gpt2_small.py"
        t = time.perf_counter()
        r = CliRunner().invoke(cli, ["export", "gpt", "--checkpoint", str(folder), "--text", text, "-o", str(out)])
        dt = time.perf_counter() - t
        files = sorted(Path(tmp).iterdir())
        print(f"export: exit {r.exit_code} in {dt:.2f} s, wrote {', '.join(f'{f.name} {mib(f.stat().st_size)}' for f in files)}"
              + (f"; output: {r.output.strip()[:200]}" if r.exit_code else ""))


if __name__ == "__main__":
    main()
