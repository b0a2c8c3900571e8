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

    python tests/benchmarks/bench_tui_startup.py [RUNS | --quick]

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


def compile_package() -> None:
    """Bytecode for the explain package, as ``pip install`` writes it."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("explain")
    for folder in spec.submodule_search_locations or []:
        compileall.compile_dir(folder, quiet=1)


def time_to_exit(argv: list[str]) -> float:
    term = Terminal(argv, env={EXIT_ENV: "1"})
    seconds = term.wait_exit()
    if term.proc.returncode != 0 or not term.frames:
        raise SystemExit(f"{argv} failed (exit {term.proc.returncode}, {len(term.frames)} frames)")
    return seconds


def main(runs: int = 15, quick: bool = False) -> None:
    explain_cmd = [PYTHON, "-m", "explain"]
    minimal_cmd = [PYTHON, "-c", MINIMAL_APP]
    if not quick:
        compile_package()
        for cmd in (explain_cmd, minimal_cmd):  # warm the file cache
            time_to_exit(cmd)
    ours, minimal = [], []
    for _ in range(runs):
        ours.append(time_to_exit(explain_cmd))
        minimal.append(time_to_exit(minimal_cmd))
    a, b = statistics.median(ours), statistics.median(minimal)
    print(f"launch → first frame → exit, median of {runs} runs each, 120×40 pty")
    print(f"  explain (default walkthrough): {a * 1000:7.1f} ms  (min {min(ours) * 1000:.1f})")
    print(f"  minimal Textual app:           {b * 1000:7.1f} ms  (min {min(minimal) * 1000:.1f})")
    print(f"  ratio: {a / b:.2f}×  (target ≤ 1.5×)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--quick"]:
        main(1, quick=True)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
