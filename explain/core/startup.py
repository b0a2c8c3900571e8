"""Start-up and Python's cyclic garbage collector: :func:`paused_collection`.

Starting the TUI builds a few hundred thousand objects that live as long as the process: modules, classes and
functions (numpy, rich, Textual, explain), the trace, the widgets. While they are built the collector runs over
and over (after every 700 new container objects, a full pass over all of them now and then) and finds nothing
to free: at start-up that was a quarter of explain's time to its first frame, against a few percent for a
minimal Textual app. So start-up pauses it and then freezes what it built (:func:`gc.freeze`, the practice the
gc module's documentation gives for long-lived start-up objects): later passes, while the student presses keys,
no longer walk through every module either. A trace holds no reference cycle (tests/core/test_startup.py), so
freezing one never keeps its arrays alive: reference counting frees them as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_collection() -> Iterator[None]:
    """The block runs with the cyclic collector paused; after it, every object alive is frozen (never scanned
    again) and the collector runs as before. Nested or with the collector already off, it changes nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
