"""The Textual TUI: :func:`open_trace` opens a trace (optionally in tutorial mode) and returns when the user quits.

Importing this package imports no Textual; :mod:`explain.tui.app` does, when a trace is opened.

It may import ``core``, ``ops``, ``trace``, ``io``, ``checkpoints``, ``models``, ``tokenize``, ``report``, ``engine``, ``interp``,
``train``, ``export``, ``tutorial``, ``render`` and ``serve``.
"""

from __future__ import annotations

from typing import Any

from explain.core.startup import paused_collection


def open_trace(trace: Any, tutorial: Any = None, options: dict[str, Any] | None = None,
               start: str | None = None, pick: bool = False, cell: tuple[int, ...] | None = None,
               then: str | None = None, stop: int | None = None) -> None:
    """Step through ``trace`` in the terminal; with a tutorial, stop by stop with its narration; ``start`` names
    the step to open on (the first by default), ``cell`` the cell of it; ``pick`` opens the tutorial picker over
    it first; ``then`` names a key's action to run as it opens (``lens``: the logit lens screen); ``stop`` the
    tutorial's stop to open on (0-based)."""
    with paused_collection():  # Textual's modules and ours: long-lived objects the collector need not scan
        from explain.tui.app import ExplainApp  # lazy: screen loaded on first use

        app = ExplainApp(trace, tutorial=tutorial, options=options, start=start, pick=pick, cell=cell, then=then,
                         stop=stop)
    app.run()


__all__ = ["open_trace"]
