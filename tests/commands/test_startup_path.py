"""What ``explain`` (no command: the TUI on the first tutorial) does before its first frame, in a fresh
interpreter each (issue 38: launch → first frame within 1.5× a minimal Textual app).

- It imports nothing that only a file or a checkpoint needs: no JSON or CSV reader, no zip archive, no hashing,
  no checkpoint reader, no importlib.resources (a folder is read as one). On the code before this test each of
  these was imported.
- The collector is paused while it starts and what it built is frozen before the app runs
  (:mod:`explain.core.startup`); on the code before, the app ran with nothing frozen.
"""

from __future__ import annotations

import subprocess
import sys

# The default walkthrough as ``explain`` runs it, up to the app's first event loop: ExplainApp.run is replaced
# by a function that reports the collector's state and the modules imported, then returns.
LAUNCH = """
import gc, sys
import explain.cli
import explain.tui.app as app

def run(self):
    print(gc.isenabled(), gc.get_freeze_count() > 0, type(self.trace).__name__)
    print(" ".join(sorted(sys.modules)))

app.ExplainApp.run = run
from explain.commands import open as opener
import explain.commands.run as run_command
run_command.interactive = lambda: True
opener.open_default()
"""

NOT_AT_START = {
    "json", "csv", "zipfile", "hashlib", "secrets",
    "importlib.resources", "explain.checkpoints.open", "explain.checkpoints.gpt2", "explain.checkpoints.cache",
    "explain.io.array_files",
}


def _launch() -> tuple[list[str], set[str]]:
    done = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    state, modules = done.stdout.splitlines()[-2:]
    return state.split(), set(modules.split())


def test_the_default_walkthrough_starts_frozen_and_light() -> None:
    state, modules = _launch()
    assert state == ["True", "True", "Trace"]  # the collector on, start-up's objects frozen, the run made
    assert "numpy" in modules and "textual.app" in modules  # the launch did get that far
    assert not NOT_AT_START & modules, sorted(NOT_AT_START & modules)
