"""Benchmark: key press → repaint in the TUI, on a GPT-2-small-size trace (d_model 768, 12 heads, 12 layers,
d_ff 3072, vocabulary 50257, context 1024, 128 tokens) against the same presses on a 4-token toy gpt.

The app runs in a real pseudo-terminal (120×40) that answers Textual's synchronized-output query, so every
frame ends with a marker; the latency of a key is the time from writing it to the end of the next frame.
Between keys the screen is left to go quiet. The keys walk through every kind of step (next step, cell
cursor, slice, the last steps with the 50257-wide logits and probabilities). Targets: median under 50 ms,
and within 2× of the toy model. Building the big trace takes a few seconds and about 2 GB of memory.

    python tests/benchmarks/bench_tui_keys.py [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) measures five presses on the toy and on a small gpt (16 wide,
2 layers, 16 tokens) and asserts no target: it checks the benchmark still runs.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_tui_startup import PYTHON, Terminal  # noqa: E402 - the shared pseudo-terminal harness

BIG = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
SMALL = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, n_ctx=64)  # --quick's "big"
WORDS = "the cat sat on the mat and the dog is happy".split()
# every press changes what is shown on both models (so each one repaints): 30 steps forward, the cell cursor,
# back into the attention steps, the heads, then from the end (loss) back through the vocabulary-wide steps
KEYS: list[bytes] = ([b"n"] * 30 + [b"l"] * 3 + [b"p"] * 4 + [b"s"] * 4 + [b"\x1b[F"] + [b"p"] * 10
                     + [b"l"] * 5)


def child(kind: str) -> None:
    """Build the trace and open the TUI on it (run in the pseudo-terminal)."""
    import explain
    from explain.tui import open_trace

    if kind in ("big", "small"):
        n = 128 if kind == "big" else 16
        text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
        trace = explain.run("gpt", text=text, **(BIG if kind == "big" else SMALL))
        assert trace["tokens"].shape == (1, n), trace["tokens"].shape
    else:
        trace = explain.run("gpt")  # "The cat is happy": 4 tokens
    open_trace(trace)


def measure(kind: str, keys: list[bytes]) -> list[float]:
    term = Terminal([PYTHON, __file__, "--child", kind])
    try:
        if not term.wait_frames(1, timeout=180):
            raise SystemExit(f"{kind}: no first frame")
        term.wait_quiet(0.5)
        out = []
        for key in keys:
            before = len(term.frames)
            sent = term.send(key)
            if not term.wait_frames(before + 1, timeout=10):
                raise SystemExit(f"{kind}: no repaint after press {len(out) + 1} ({key!r})")
            out.append(term.frames[before] - sent)
            term.wait_quiet(0.1)
        return out
    finally:
        term.send(b"q")
        term.wait_exit(30)


def main(quick: bool = False) -> None:
    keys = KEYS[:5] if quick else KEYS
    toy = measure("toy", keys)
    big = measure("small" if quick else "big", keys)
    mt, mb = statistics.median(toy), statistics.median(big)
    p90 = lambda xs: sorted(xs)[int(0.9 * len(xs))]  # noqa: E731
    print(f"key press → repaint, {len(keys)} presses each, 120×40 pty")
    print(f"  toy gpt (4 tokens):            median {mt * 1000:6.1f} ms  p90 {p90(toy) * 1000:6.1f}  "
          f"max {max(toy) * 1000:6.1f}")
    print(f"  {'small gpt (16 tokens)' if quick else 'GPT-2-small size (128 tokens)'}: median {mb * 1000:6.1f} ms  p90 {p90(big) * 1000:6.1f}  "
          f"max {max(big) * 1000:6.1f}")
    print(f"  ratio big / toy: {mb / mt:.2f}×  (target ≤ 2×; median target < 50 ms)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main(quick="--quick" in sys.argv)
