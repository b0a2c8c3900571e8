"""The bars of :mod:`explain.core.progress` on a terminal: a rich Progress on stderr for each task (download, join,
check, dequantize), gone when it ends; the notices stay as lines. Off a terminal, or with ``--quiet``, the
command line installs :class:`explain.core.progress.Plain` instead."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)


class RichBars:
    """A reporter drawing each task as a transient rich bar on ``console`` (stderr)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        # one column short of the terminal: a bar line exactly as wide as the terminal leaves the cursor past the
        # edge, and each redraw then lands one line lower instead of over the last (seen in tmux at 80×24)
        self.bars = Console(stderr=True, width=max(self.console.width - 1, 20)) if console is None else console

    @contextlib.contextmanager
    def task(self, description: str, total: int | None, unit: str = "bytes") -> Iterator[Callable[[int], None]]:
        if unit == "bytes":
            columns = [TextColumn("{task.description}"), BarColumn(bar_width=None), DownloadColumn(),
                       TransferSpeedColumn(), TimeRemainingColumn()]
        else:
            columns = [TextColumn("{task.description}"), BarColumn(bar_width=None), MofNCompleteColumn(),
                       TimeRemainingColumn()]
        # the bar takes what the other columns leave: a line wider than the terminal would wrap
        with Progress(*columns, console=self.bars, transient=True, expand=True) as bars:
            task = bars.add_task(description, total=total)
            yield lambda n: bars.advance(task, n)

    def note(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)  # wrapped between words
