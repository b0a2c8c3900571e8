"""Temporary siblings: the one name pattern every writer uses, the ones this process is writing (so that a signal
handler on the main thread can remove them while another thread writes), and the sweep of those that ended
processes left behind.

:mod:`explain.io.atomic` removes its temporary sibling itself on SIGTERM and SIGHUP, but only a write on the
main thread can catch a signal: the TUI writes from worker threads (``X``, the screenshot and export dialogs),
so a TUI killed during such a write left ``.explain-tmp-*`` siblings behind. The app's own handler calls
:func:`discard_all`. SIGKILL cannot be caught: the next write to the folder sweeps the siblings of ended
processes (:func:`explain.io.atomic.sweep`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import threading
from pathlib import Path

PREFIX = ".explain-tmp-"
_LEFTOVER = re.compile(r"^\.explain-tmp-(\d+)-[0-9a-f]{8}")

_OPEN: set[Path] = set()
_LOCK = threading.Lock()


def track(path: Path) -> None:
    """``path`` (a temporary file or folder) exists until :func:`untrack`."""
    with _LOCK:
        _OPEN.add(path)


def untrack(path: Path) -> None:
    with _LOCK:
        _OPEN.discard(path)


def discard_all() -> int:
    """Remove every temporary file and folder still open in this process; returns how many were removed. A
    writer whose file is removed under it fails at its rename, so nothing half-written takes a target's place."""
    with _LOCK:
        paths = list(_OPEN)
        _OPEN.clear()
    removed = 0
    for p in paths:
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                os.unlink(p)
            removed += 1
    return removed


def temp_name(name: str) -> str:  # the target's name kept (60 bytes): a leftover says what it was
    short = name.encode()[:60].decode(errors="ignore")
    return f"{PREFIX}{os.getpid()}-{os.urandom(4).hex()}-{short}"  # secrets.token_hex's bytes, without its import (hmac, hashlib)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


def sweep(folder: str | Path) -> int:
    """Remove the temporary siblings that ended processes left in ``folder`` (SIGKILL); returns how many."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    for name in names:
        m = _LEFTOVER.match(name)
        if m is None or int(m[1]) == os.getpid() or _alive(int(m[1])):
            continue
        path = Path(folder) / name
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed += 1
    return removed
