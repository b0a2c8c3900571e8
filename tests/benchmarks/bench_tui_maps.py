"""Benchmark: opening the layer × head grid (``m``) and the model map (``M``) at GPT-2 small size (d_model 768,
12 heads, 12 layers, d_ff 3072, vocabulary 50257, context 1024) on 16 and on 1,024 tokens.

The app runs in a real pseudo-terminal of 200×50 (where the grid shows all 12 × 12 tiles) that answers
Textual's synchronized-output query, so every frame ends with a marker (the harness of bench_tui_startup.py).
Each key is pressed from the step screen, left to go quiet, and closed with Escape, several times. Two figures
a key: **open**, the key to the end of the first frame of the new screen; **done**, the key to the last frame
before the screen goes quiet. The help screen (``?``) is measured the same way as a baseline: it computes
nothing, so it is what pushing and painting any screen costs (the grid pools a page of more than 4 M weights in a thread, its tiles dotted
until then: at 1,024 tokens the 144 patterns hold 151 M). Target: open ≤ 100 ms for both keys at both sizes.
The 1,024-token trace takes about a minute and 10 GB to build.

    python tests/benchmarks/bench_tui_maps.py [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) opens each screen once on a small gpt (16 wide, 2 layers, 16
tokens) and asserts no target: it checks the benchmark still runs.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_tui_startup import PYTHON, Terminal  # noqa: E402 - the shared pseudo-terminal harness

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
SMALL = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, n_ctx=64)
WORDS = "the cat sat on the mat and the dog is happy".split()
KEYS = {"m": b"m", "M": b"M", "?": b"?"}  # ? (help, no computation): what any screen costs Textual
NAMES = {"m": "grid (m)", "M": "map (M) ", "?": "help (?)"}
SIZE = (200, 50)


def child(kind: str, n: int) -> None:
    """Build the trace and open the TUI on it (run in the pseudo-terminal)."""
    import explain
    from explain.tui import open_trace

    text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
    trace = explain.run("gpt", text=text, **(GPT2 if kind == "gpt2" else SMALL))
    assert trace["tokens"].shape == (1, n), trace["tokens"].shape
    open_trace(trace)


def measure(kind: str, n: int, keys: list[str], times: int) -> dict[str, tuple[list[float], list[float]]]:
    term = Terminal([PYTHON, __file__, "--child", kind, str(n)], size=SIZE)
    out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in keys}
    try:
        if not term.wait_frames(1, timeout=900):
            raise SystemExit(f"{kind} {n}: no first frame")
        term.wait_quiet(1.0, timeout=120)
        for _ in range(times):
            for key in keys:
                before = len(term.frames)
                sent = term.send(KEYS[key])
                if not term.wait_frames(before + 1, timeout=30):
                    raise SystemExit(f"{kind} {n}: no frame after {key!r}")
                term.wait_quiet(1.5, timeout=120)  # the grid's thread pools a layer in well under this, loaded or not
                out[key][0].append(term.frames[before] - sent)
                out[key][1].append(term.frames[-1] - sent)
                before = len(term.frames)
                term.send(b"\x1b")  # a lone Escape: the step screen repaints once it is back
                if not term.wait_frames(before + 1, timeout=120):
                    raise SystemExit(f"{kind} {n}: Escape did not close the screen of {key!r}")
                term.wait_quiet(0.3, timeout=30)
        return out
    finally:
        term.send(b"q")
        term.wait_exit(30)


def main(quick: bool = False) -> None:
    runs = [("small", 16)] if quick else [("gpt2", 16), ("gpt2", 1024)]
    keys = list(KEYS)
    print(f"key → the screen open, {SIZE[0]}×{SIZE[1]} pty (median of {1 if quick else 5} opens)")
    for kind, n in runs:
        res = measure(kind, n, keys, 1 if quick else 5)
        for key, (opened, done) in res.items():
            name = NAMES[key]
            print(f"  {'small gpt' if kind == 'small' else 'GPT-2 small'}, {n:5d} tokens, {name}: open "
                  f"{statistics.median(opened) * 1000:7.1f} ms (max {max(opened) * 1000:7.1f}), done "
                  f"{statistics.median(done) * 1000:7.1f} ms")
    print("  target: open ≤ 100 ms for the grid and the map (help: the same push and paint with nothing to compute)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main(quick="--quick" in sys.argv)
