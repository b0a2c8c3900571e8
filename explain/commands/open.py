"""``explain`` with no command: the TUI on the default walkthrough, the first shipped tutorial.

Until the tutorials package is there, it opens a plain ``gpt`` run instead. When stdout is not a terminal
(a pipe), it prints the run as ``explain run --plain`` does.
"""

from __future__ import annotations

import sys


def open_default() -> None:
    """Run the first tutorial and open it in the TUI, in tutorial mode."""
    try:
        from explain.tutorial import list_tutorials, run_tutorial
    except ImportError:
        tutorial = None
    else:
        shipped = list_tutorials()
        tutorial = shipped[0] if shipped else None
    if tutorial is not None:
        trace = run_tutorial(tutorial)
    else:
        from explain.api import run

        trace = run("gpt")
    if not sys.stdout.isatty():
        from rich.console import Console

        from explain.render.plain import print_trace

        print_trace(Console(), trace)
        return
    from explain.tui import open_trace

    open_trace(trace, tutorial)
