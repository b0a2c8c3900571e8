"""``explain`` with no command: the TUI on the default walkthrough, the first shipped tutorial.

Until the tutorials package is there, it opens a plain run of the default model instead. When stdout is not a terminal
(a pipe), it prints the run as ``explain run --plain`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from explain.core.registry import DEFAULT_MODEL
from explain.core.startup import paused_collection


def first_tutorial() -> Any:
    """The first shipped tutorial (``list_tutorials()[0]``), or None when none is shipped.

    Only the first file is parsed when it can be found alone: parsing every shipped tutorial would add to the
    start-up time of ``explain`` for nothing."""
    from explain.tutorial import (  # lazy: engine not loaded for --help
        list_tutorials,
        load_tutorial,
        shipped_files,
    )

    files = shipped_files()
    if not files:
        return None
    path = Path(str(files[0]))
    return load_tutorial(path) if path.is_file() else list_tutorials()[0]


def open_default() -> None:
    """Run the first tutorial and open it in the TUI, in tutorial mode."""
    with paused_collection():  # numpy, the engine and a tiny run: start-up objects (explain.core.startup)
        tutorial = first_tutorial()
        if tutorial is not None:
            from explain.tutorial import run_tutorial  # lazy: engine not loaded for --help

            trace = run_tutorial(tutorial)
        else:
            from explain.engine.api import run  # lazy: engine not loaded for --help

            trace = run(DEFAULT_MODEL)
    from explain.commands.run import show  # lazy: as the engine above

    show(trace, {}, tutorial=tutorial)  # a pipe gets the --plain listing
