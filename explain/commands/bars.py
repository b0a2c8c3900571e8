"""Which reporter shows the progress of long work (:mod:`explain.core.progress`): rich's bars on stderr when it is
a terminal, else plain one-line notices. rich is imported only when the first bar or notice shows, so a command
that shows none starts at click's speed (``explain check``)."""

from __future__ import annotations

import sys

from explain.core import progress


def _terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class LazyBars:
    """rich's bars on stderr (a fetch's download, join and check; dequantizing), made on first use."""

    def __init__(self) -> None:
        self._bars = None

    def _get(self):
        if self._bars is None:
            from explain.render.progress import RichBars  # lazy: rich only when a bar or a notice shows

            self._bars = RichBars()
        return self._bars

    def task(self, description: str, total: int | None, unit: str = "bytes"):
        return self._get().task(description, total, unit)

    def note(self, text: str) -> None:
        self._get().note(text)


def reporter() -> progress.Reporter:
    """The reporter for a command run from the shell: bars on a terminal's stderr, else plain lines."""
    return LazyBars() if _terminal(sys.stderr) else progress.Plain()
