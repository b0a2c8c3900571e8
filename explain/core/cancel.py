"""Cancelling long work from another thread: a :class:`CancelToken` the worker's thread installs with
:func:`cancellable`, and :func:`check_cancelled`, which long loops call between units of work.

The recorder calls :func:`check_cancelled` before every op, so a run, a generation, a backward pass or a
training step stops within one op of :meth:`CancelToken.cancel`, raising :class:`Cancelled` in its own thread;
nothing half-done is kept (the trace is only returned by a run that finished). The TUI's background work
(:mod:`explain.tui.background`) cancels its token when the app quits or a newer job replaces it. Outside a
:func:`cancellable` block :func:`check_cancelled` costs one thread-local lookup and never raises. Nothing here
imports numpy or textual.

    token = CancelToken()
    with cancellable(token):        # in the worker thread
        trace = explain.run("gpt")  # token.cancel() from any thread stops it at the next op
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_local = threading.local()


class Cancelled(Exception):
    """The work was cancelled (the app quit, or a newer request replaced it); nobody waits for a result."""


class CancelToken:
    """A flag one thread sets and another reads; setting it twice is harmless."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@contextlib.contextmanager
def cancellable(token: CancelToken) -> Iterator[CancelToken]:
    """Make ``token`` the current thread's: :func:`check_cancelled` in this thread raises once it is cancelled."""
    previous = getattr(_local, "token", None)
    _local.token = token
    try:
        yield token
    finally:
        _local.token = previous


def check_cancelled() -> None:
    """Raise :class:`Cancelled` if the current thread's token (if any) has been cancelled."""
    token = getattr(_local, "token", None)
    if token is not None and token.cancelled:
        raise Cancelled("cancelled")
