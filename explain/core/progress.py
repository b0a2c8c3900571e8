"""Progress of long work done below the interface (a fetch's download, join and check; a GGUF's dequantization),
reported without importing rich: the code doing the work opens a :func:`task` and advances it, and says one-line
notices with :func:`note`; the command line installs a reporter (:func:`reporting`: a rich Progress on stderr,
:mod:`explain.render.progress`). Without one, tasks show nothing and notices go to stderr as one line each.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Protocol


class Reporter(Protocol):
    def task(self, description: str, total: int | None,
             unit: str = "bytes") -> contextlib.AbstractContextManager[Callable[[int], None]]:
        """A bar of ``total`` units (``unit``: "bytes", or what is counted, "tensors"; None: unknown); the context
        gives the function that advances it."""
        ...

    def note(self, text: str) -> None:
        """One line for the user (what is being fetched, a damaged file found)."""
        ...


class Plain:
    """No bars; notices as lines on stderr (``quiet``: none)."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet

    @contextlib.contextmanager
    def task(self, description: str, total: int | None, unit: str = "bytes") -> Iterator[Callable[[int], None]]:
        yield lambda n: None

    def note(self, text: str) -> None:
        if not self.quiet:
            try:
                print(text, file=sys.stderr, flush=True)
            except (OSError, ValueError):
                pass


_current: list[Reporter] = [Plain()]


def task(description: str, total: int | None,
         unit: str = "bytes") -> contextlib.AbstractContextManager[Callable[[int], None]]:
    return _current[-1].task(description, total, unit)


def note(text: str) -> None:
    _current[-1].note(text)


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[Reporter]:
    """Report through ``reporter`` inside the block (the command line's rich bars, a quiet run's silence)."""
    _current.append(reporter)
    try:
        yield reporter
    finally:
        _current.remove(reporter)
