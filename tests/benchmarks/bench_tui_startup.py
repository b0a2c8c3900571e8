"""Benchmark: the whole process, from launch to the first frame, of ``explain`` (the TUI on the default
walkthrough) against a minimal Textual app that shows one Static, measured in the same run.

Each program runs in a real pseudo-terminal (120×40) with EXPLAIN_TUI_EXIT_AFTER_FIRST_FRAME=1, which makes it
exit right after its first frame; the figure is the wall time of the whole process (interpreter start,
imports, the run of the model, the first frame, exit). Runs alternate between the two programs; medians are
compared. Target: explain within 1.5× of the minimal app.

Both programs run as installed: ``pip install .`` compiles every module to bytecode, as Textual's own modules
are in site-packages. An editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise recompile explain's
sources on every launch while Textual loads bytecode, which measures the checkout, not the product; so the
benchmark compiles the explain package once (``compileall``, what pip does) and launches from a scratch
directory, so the working directory cannot shadow the installed package.

    python tests/benchmarks/bench_tui_startup.py [RUNS] [--before DIR] [--instructions] | --quick

``--before DIR`` compares with another checkout (a worktree of the commit before, for the 5 % rule): its
``explain`` runs from DIR (on PYTHONPATH, as this checkout's does then), interleaved with this checkout's and
the minimal app in one run. ``--instructions`` counts instructions instead of timing: each program runs once
under ``valgrind --tool=callgrind`` (PYTHONHASHSEED=0, one BLAS thread), whose count of the whole process is
the same from run to run, so it compares two commits on a loaded machine where wall-clock medians are noise.

``--quick`` (CI: tests/house/test_benchmarks.py) launches each program once, with no warm-up and no
compileall, and asserts no target: it checks the benchmark still runs.

This module also holds the pseudo-terminal harness (:class:`Terminal`) that bench_tui_keys.py uses.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRATCH = tempfile.mkdtemp(prefix="explain-bench-")  # a neutral working directory (nothing to shadow imports)
PYTHON = sys.executable
EXIT_ENV = "EXPLAIN_TUI_EXIT_AFTER_FIRST_FRAME"
SYNC_QUERY = b"\x1b[?2026$p"  # Textual asks whether the terminal does synchronized output …
SYNC_REPLY = b"\x1b[?2026;2$y"  # … and we say yes, so every frame ends with SYNC_END
SYNC_END = b"\x1b[?2026l"

MINIMAL_APP = """
import os
from textual.app import App
from textual.widgets import Static

class Minimal(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        if os.environ.get("EXPLAIN_TUI_EXIT_AFTER_FIRST_FRAME"):
            self.call_after_refresh(self.exit)

Minimal().run()
"""


class Terminal:
    """A program in a pseudo-terminal: its output is read on a thread, frames are counted by SYNC_END."""

    def __init__(self, argv: list[str], size: tuple[int, int] = (120, 40), env: dict[str, str] | None = None):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        full_env = {**os.environ, "TERM": "xterm-256color", "COLORTERM": "truecolor", **(env or {})}
        full_env.pop("NO_COLOR", None)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=full_env, cwd=SCRATCH,
                                     close_fds=True, start_new_session=True)
        os.close(slave)
        self.frames: list[float] = []  # perf_counter time of each frame's end
        self.last_output = self.started
        self._tail = b""
        self._done = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._done.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                if self.proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                break
            if not data:
                break
            now = time.perf_counter()
            self.last_output = now
            chunk = self._tail + data  # a sequence may be split between two reads
            if SYNC_QUERY in chunk:
                os.write(self.master, SYNC_REPLY)
                chunk = chunk.replace(SYNC_QUERY, b"")
            self.frames.extend([now] * (chunk.count(SYNC_END) - self._tail.count(SYNC_END)))
            self._tail = chunk[-16:]

    def send(self, keys: bytes) -> float:
        t = time.perf_counter()
        os.write(self.master, keys)
        return t

    def wait_frames(self, n: int, timeout: float = 60.0) -> bool:
        end = time.perf_counter() + timeout
        while len(self.frames) < n and time.perf_counter() < end:
            time.sleep(0.001)
        return len(self.frames) >= n

    def wait_quiet(self, quiet: float = 0.15, timeout: float = 30.0) -> None:
        """Until no output has come for ``quiet`` seconds (animations and late repaints are over)."""
        end = time.perf_counter() + timeout
        while time.perf_counter() < end and time.perf_counter() - self.last_output < quiet:
            time.sleep(0.01)

    def wait_exit(self, timeout: float = 120.0) -> float:
        self.proc.wait(timeout)
        ended = time.perf_counter()
        self._done.set()
        self._reader.join(1)
        os.close(self.master)
        return ended - self.started

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.wait_exit()


def compile_package(roots: list[Path] | None = None) -> None:
    """Bytecode for the explain package of each checkout in ``roots`` (by default the one installed), as
    ``pip install`` writes it."""
    import compileall
    import importlib.util

    folders = [root / "explain" for root in roots] if roots else \
        importlib.util.find_spec("explain").submodule_search_locations or []
    for folder in folders:
        compileall.compile_dir(folder, quiet=1)


def launch(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """One launch to its exit: the seconds to the exit and to the first frame. A launch that fails or draws
    nothing ends the benchmark."""
    term = Terminal(argv, env={EXIT_ENV: "1", **(env or {})})
    seconds = term.wait_exit(600)
    if term.proc.returncode != 0 or not term.frames:
        raise SystemExit(f"{argv} failed (exit {term.proc.returncode}, {len(term.frames)} frames)")
    return seconds, term.frames[0] - term.started


def instructions(argv: list[str], env: dict[str, str] | None = None) -> int:
    """The instructions the whole process executes (callgrind's total), launch to exit."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        launch(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *argv],
               {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", **(env or {})})
        totals = [line for line in Path(out.name).read_text().splitlines() if line.startswith("totals:")]
    return int(totals[0].split()[1])


def main(runs: int = 15, quick: bool = False, before: Path | None = None, count: bool = False) -> None:
    programs = {"explain (default walkthrough)": ([PYTHON, "-m", "explain"], {})}
    if before is not None:  # both checkouts from their own folder, the same way
        programs = {"explain, this checkout": ([PYTHON, "-m", "explain"], {"PYTHONPATH": str(ROOT)}),
                    f"explain, {before}": ([PYTHON, "-m", "explain"], {"PYTHONPATH": str(before)})}
    programs["minimal Textual app"] = ([PYTHON, "-c", MINIMAL_APP], {})
    if not quick:
        compile_package(None if before is None else [ROOT, before])
    if count:
        counted = {name: instructions(argv, env) for name, (argv, env) in programs.items()}
        base = counted["minimal Textual app"]
        print("instructions, launch → first frame → exit (callgrind, whole process, 120×40 pty)")
        for name, n in counted.items():
            print(f"  {name:32s} {n / 1e6:9.1f} M  ({n / base:.2f}× the minimal app)")
        if before is not None:
            a, b = list(counted.values())[:2]
            print(f"  this checkout / before: {a / b:.4f} ({(a / b - 1) * 100:+.2f} %)")
        return
    if not quick:
        for argv, env in programs.values():  # warm the file cache
            launch(argv, env)
    walls: dict[str, list[float]] = {name: [] for name in programs}
    firsts: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(runs):  # interleaved, so a change of load touches every program alike
        for name, (argv, env) in programs.items():
            wall, first = launch(argv, env)
            walls[name].append(wall)
            firsts[name].append(first)
    base = statistics.median(walls["minimal Textual app"])
    print(f"launch → first frame → exit, median of {runs} runs each (interleaved), 120×40 pty")
    for name in programs:
        w, f = statistics.median(walls[name]), statistics.median(firsts[name])
        print(f"  {name:32s} {w * 1000:7.1f} ms  (min {min(walls[name]) * 1000:.1f}; first frame at "
              f"{f * 1000:.1f})  ratio {w / base:.2f}×")
    if before is not None:
        a, b = (statistics.median(w) for w in list(walls.values())[:2])
        print(f"  this checkout / before: {a / b:.3f} ({(a / b - 1) * 100:+.1f} %)")
    print("  target: explain ≤ 1.5× the minimal app")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="each program once, no target (CI)")
    parser.add_argument("--before", type=Path, help="a checkout of the commit before, compared in the same run")
    parser.add_argument("--instructions", action="store_true", help="count instructions under callgrind")
    args = parser.parse_args()
    main(1 if args.quick else args.runs, args.quick, args.before.resolve() if args.before else None,
         args.instructions)
