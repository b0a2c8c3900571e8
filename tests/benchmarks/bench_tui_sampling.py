"""Benchmark: live sampling (``D`` on a generation's step) at GPT-2 small size (d_model 768, 12 heads, 12 layers,
d_ff 3072, vocabulary 50257, random weights; a 16-token prompt, 4 new tokens, the screen on new token 1).

The app runs in a real pseudo-terminal of 120×40 that answers Textual's synchronized-output query, so every frame
ends with a marker (the harness of bench_tui_startup.py). Each key changes one setting (t/T the temperature, k/K
top-k, p/P top-p, s/S the seed) and is left to go quiet before the next. Two figures a key: **repaint**, the key
to the end of the first frame after it (the draw redone over 50,257 logits: z / T, the top-k sort, the top-p
argsort, three softmaxes, the bars and the arithmetic); **regenerated**, the key to the last frame before quiet
(the later tokens regenerated in the worker, which waits 0.15 s for more keys first). Target: repaint ≤ 50 ms.
The trace takes about 20 s to build.

    python tests/benchmarks/bench_tui_sampling.py [--quick]

``--quick`` (CI: tests/house/test_benchmarks.py) presses each key once on a small gpt (16 wide, 2 layers) and
asserts no target: it checks the benchmark still runs.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_tui_startup import PYTHON, Terminal  # noqa: E402 - the shared pseudo-terminal harness

GPT2 = dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072, d_vocab=50257, n_ctx=1024)
SMALL = dict(d_model=16, n_heads=2, n_layers=2, d_ff=64, n_ctx=64)
WORDS = "the cat sat on the mat and the dog is happy".split()
KEYS = "tTkKpPsS"  # lower then raise each setting: the run stays near where it started
SIZE = (120, 40)


def child(kind: str) -> None:
    """Build the generation's trace and open the TUI on new token 1's draw (run in the pseudo-terminal)."""
    import explain
    from explain.tui import open_trace

    text = " ".join(WORDS[i % len(WORDS)] for i in range(16))
    trace = explain.generate("gpt", text=text, max_new_tokens=4, temperature=0.9, ignore_eos=True, random_weights=True,
                             **(GPT2 if kind == "gpt2" else SMALL))
    open_trace(trace, start="gen.1.next")


def measure(kind: str, times: int) -> dict[str, tuple[list[float], list[float]]]:
    term = Terminal([PYTHON, __file__, "--child", kind], size=SIZE)
    out: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in KEYS}
    try:
        if not term.wait_frames(1, timeout=900):
            raise SystemExit(f"{kind}: no first frame")
        term.wait_quiet(1.0, timeout=120)
        before = len(term.frames)
        term.send(b"D")
        if not term.wait_frames(before + 1, timeout=60):
            raise SystemExit(f"{kind}: D opened nothing")
        term.wait_quiet(1.0, timeout=120)
        for _ in range(times):
            for key in KEYS:
                before = len(term.frames)
                sent = term.send(key.encode())
                if not term.wait_frames(before + 1, timeout=30):
                    raise SystemExit(f"{kind}: no frame after {key!r}")
                term.wait_quiet(1.0 if kind == "small" else 3.0, timeout=120)  # the regeneration has come and been painted
                out[key][0].append(term.frames[before] - sent)
                out[key][1].append(term.frames[-1] - sent)
        return out
    finally:
        before = len(term.frames)
        term.send(b"\x1b")  # close the sampling screen (the run stays as it was), then quit
        term.wait_frames(before + 1, timeout=30)  # a q sent before Textual has read the lone Escape is alt+q
        term.wait_quiet(0.3, timeout=30)
        term.send(b"q")
        try:
            term.wait_exit(30)
        except Exception:  # never leave the app running (a Textual app on a closed pty spins a core)
            term.proc.kill()
            raise


def main(quick: bool = False) -> None:
    kind, times = ("small", 1) if quick else ("gpt2", 5)
    print(f"live sampling, key → repaint, {SIZE[0]}×{SIZE[1]} pty, {'small gpt' if quick else 'GPT-2 small'} "
          f"(median of {times}; load {os.getloadavg()[0]:.1f})")
    res = measure(kind, times)
    for key, (painted, done) in res.items():
        print(f"  {key}: repaint {statistics.median(painted) * 1000:6.1f} ms (max {max(painted) * 1000:6.1f}), "
              f"regenerated {statistics.median(done) * 1000:7.1f} ms")
    every = [t for painted, _ in res.values() for t in painted]
    print(f"  all keys: repaint median {statistics.median(every) * 1000:.1f} ms, max {max(every) * 1000:.1f} ms "
          f"(target ≤ 50 ms; load after {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main(quick="--quick" in sys.argv)
