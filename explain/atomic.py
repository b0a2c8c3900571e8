"""Writes that are whole or absent: a file written beside its target and renamed over it, a folder built
beside its target and swapped in.

A rename within one file system is atomic (POSIX ``rename``), so a reader (or a run that was killed, or a
Ctrl-C) sees the old file or folder, or the new one, never half of one. Nothing here imports numpy.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole: into a temporary file in the same folder, flushed to disk, renamed."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def swap_folder(tmp: Path, dest: Path) -> None:
    """Make the whole folder ``tmp`` be ``dest``: the old ``dest`` (if any) moves aside, ``tmp`` takes its name,
    then the old one is removed. Each move is one rename, so ``dest`` is never a half-written folder."""
    old = None
    if dest.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
        os.replace(dest, old / dest.name)
    os.replace(tmp, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextmanager
def new_folder(dest: str | Path) -> Iterator[Path]:
    """A temporary folder beside ``dest`` to write into; swapped in as ``dest`` when the block ends normally,
    removed if it raises (Ctrl-C included)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.new-", dir=dest.parent))
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp's folder is private (0700); the saved one is an ordinary folder
    try:
        yield tmp
        swap_folder(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
