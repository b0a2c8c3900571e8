"""The reporter that shows the progress of long work (:mod:`explain.core.progress`) on a terminal: rich's bars on
stderr, rich imported only when the first bar or notice shows. :mod:`explain.cli` installs it only when stderr is a
terminal (piped, progress's own plain one-line notices need no reporter), so ``explain check`` loads none of this."""

from __future__ import annotations


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

