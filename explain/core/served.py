"""Whether output goes to a screen: a terminal, or a browser through ``explain serve``.

A served app (textual-serve, which ``explain serve`` subclasses) writes to a pipe, not a terminal, and Textual draws
it with its web driver, named in ``TEXTUAL_DRIVER``; such an app opens the TUI as on a terminal. A real pipe (no web
driver named) still gets the plain listing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def served() -> bool:
    """Whether this process is a visitor's app under ``explain serve`` (Textual's web driver draws it)."""
    return os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER


def interactive(stream: Any = None) -> bool:
    """Whether to open the TUI: ``stream`` (stdout) is a terminal, or the app is served to a browser."""
    stream = sys.stdout if stream is None else stream
    if served():
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
