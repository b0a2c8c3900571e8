"""Atomic writes: every file and checkpoint folder explain writes goes through this module.

A file is written to a temporary sibling named ``.explain-tmp-PID-XXXXXXXX-NAME`` (the one pattern every writer
uses), flushed, fsynced and renamed over its target in one step. Whatever happens (an exception, Ctrl-C,
SIGTERM, SIGKILL, a full disk) the target is the old file or the new one, whole, never a part of either:

* on an exception, SIGINT, SIGTERM or SIGHUP the temporary file is removed (the two signals are turned into an
  exception while a write is open, then delivered again, so the process still ends as the signal says);
* after SIGKILL (which nothing can catch) the temporary sibling is left behind; the next write to that folder
  removes every such leftover whose process has ended.

A folder, FIFO, device or socket at the path is refused before anything is opened (:mod:`explain.io.paths`).

| function | use |
| --- | --- |
| :func:`atomic_write` | ``with atomic_write(path, force=f) as fh: fh.write(...)`` (a binary file) |
| :func:`write_bytes` | one call for data already in memory |
| :func:`write_together` | several files that belong together (a script and its ``.npz``): all or none |
| :func:`atomic_folder` | a checkpoint folder: fill a temporary folder, swapped in whole |
| :func:`sweep` | remove dead processes' leftovers from a folder (every write calls it) |
| :func:`new_folder` | ``explain train -o DIR``'s: :func:`atomic_folder` replacing DIR, its parents made |

Without ``force`` nothing existing is replaced, even a file that appeared after the checks (an exclusive link).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from explain.core.errors import ExplainError, UsageError
from explain.io import pending
from explain.io.paths import check_output, check_output_folder
from explain.io.pending import PREFIX, sweep  # noqa: F401 - part of this module's interface
from explain.io.pending import temp_name as _temp_name

_CAUGHT = (signal.SIGTERM, signal.SIGHUP)


class WriteError(ExplainError):
    """The write itself failed (a full disk, an I/O error, a signal); the target is as it was."""


class _Signalled(BaseException):
    """SIGTERM or SIGHUP during a write, raised so the temporary file is removed like on Ctrl-C."""
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While a temporary file exists, SIGTERM and SIGHUP raise (the temporary file is removed), then are
    delivered again to the program's own handler. Only the main thread can handle signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise _Signalled(signum)

    previous = {sig: signal.signal(sig, handler) for sig in _CAUGHT}
    try:
        yield
    except _Signalled as exc:
        for sig, old in previous.items():
            signal.signal(sig, old)
        previous = {}
        old = signal.getsignal(exc.signum)
        if callable(old):
            old(exc.signum, None)
        else:
            os.kill(os.getpid(), exc.signum)  # the default action: the process ends as killed by the signal
        raise WriteError(f"interrupted by {signal.Signals(exc.signum).name}; nothing was written") from None
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _fsync(path: Path) -> None:
    """To the disk: a file before it is renamed into place, a folder to make the rename itself durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # best effort: not every file system lets a folder be fsynced
        _fsync(folder)


class _Pending:
    """One file being written: its temporary sibling, open for writing, until committed or discarded."""

    def __init__(self, target: Path) -> None:
        self.target = target
        sweep(target.parent)
        self.tmp = target.parent / _temp_name(target.name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.tmp, flags, 0o666)
        except OSError as exc:
            raise WriteError(f"cannot write '{target}': {exc.strerror or exc}") from None
        self.file: BinaryIO = os.fdopen(fd, "wb")
        pending.track(self.tmp)

    def finish(self) -> None:
        """Everything written reaches the disk before the rename makes it visible."""
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
        except OSError as exc:
            raise WriteError(f"cannot write '{self.target}': {exc.strerror or exc}; it was left as it was") from None

    def commit(self, force: bool) -> None:
        target = self.target
        try:
            if force:
                with contextlib.suppress(OSError):
                    os.chmod(self.tmp, stat.S_IMODE(os.stat(target).st_mode))
                os.replace(self.tmp, target)
            else:
                try:
                    os.link(self.tmp, target, follow_symlinks=False)  # fails if anything appeared at target
                except FileExistsError:
                    raise UsageError(f"'{target}' exists; use --force to overwrite it") from None
                except OSError:  # a file system without hard links: check, then rename
                    if os.path.lexists(target):
                        raise UsageError(f"'{target}' exists; use --force to overwrite it") from None
                    os.replace(self.tmp, target)
                else:
                    os.unlink(self.tmp)
        except OSError as exc:
            raise WriteError(f"cannot write '{target}': {exc.strerror or exc}") from None
        finally:
            pending.untrack(self.tmp)
        _fsync_folder(target.parent)

    def discard(self) -> None:
        pending.untrack(self.tmp)
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)


@contextlib.contextmanager
def atomic_write(path: str | Path, *, force: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new content into; on a clean exit it replaces ``path`` in one rename.
    The path is checked first (:func:`explain.io.paths.check_output`: a usage error for a folder, FIFO, device,
    missing folder, an existing file without ``force``, …); on any exception or SIGINT/SIGTERM/SIGHUP the
    temporary file is removed and ``path`` is untouched."""
    with write_together([path], force=force) as (fh,):
        yield fh


def write_bytes(path: str | Path, data: bytes, *, force: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically; returns the file written (a symbolic link's target)."""
    target = check_output(path, force)
    with write_together([target], force=force) as (fh,):
        fh.write(data)
    return target


@contextlib.contextmanager
def write_together(paths: list[str | Path], *, force: bool = False) -> Iterator[tuple[BinaryIO, ...]]:
    """One binary file per path, all renamed into place only when the block ends cleanly (a script and its
    sidecar ``.npz``: an export is whole or not there). Every path is checked before any file is opened. If a
    rename fails part-way, the files this call created are removed again (files it replaced cannot be
    restored; the renames follow each other within microseconds)."""
    targets = [check_output(p, force) for p in paths]
    with _signals_raise():
        pending: list[_Pending] = []
        try:
            for target in targets:
                pending.append(_Pending(target))
            yield tuple(p.file for p in pending)
            for p in pending:
                p.finish()
        except BaseException:
            for p in pending:
                p.discard()
            raise
        existed = [os.path.lexists(p.target) for p in pending]
        done: list[_Pending] = []
        try:
            for p in pending:
                p.commit(force)
                done.append(p)
        except BaseException:
            for p in pending:
                p.discard()
            for p, was in zip(done, existed):
                if not was:
                    with contextlib.suppress(OSError):
                        os.unlink(p.target)
            raise


_RENAME_EXCHANGE, _RENAME_NOREPLACE, _AT_FDCWD = 2, 1, -100


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """Linux's renameat2 (glibc ≥ 2.28), for a swap or an exclusive rename of folders in one step; False where
    the C library or the file system has none (the caller falls back to two renames)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
        return False
    raise OSError(err, os.strerror(err), str(dst))


@contextlib.contextmanager
def atomic_folder(path: str | Path, *, force: bool = False) -> Iterator[Path]:
    """A new, empty temporary folder beside ``path`` to fill (``explain train -o DIR`` writes its checkpoint
    there with ordinary ``open``); on a clean exit every file in it is fsynced and it takes ``path``'s place in
    one step, so a reader sees the old checkpoint or the new one, never a mix. An existing ``path`` is replaced
    only with ``force`` (and must be a folder); on an exception or a caught signal the temporary folder is
    removed and ``path`` is untouched; after SIGKILL the next write to the parent folder removes it.

        with atomic_folder(out, force=force) as tmp:
            save_params(params, tmp / "model.npz")   # plain writes: tmp is not visible as `out` yet
            (tmp / "config.json").write_text(text)
    """
    target = check_output_folder(path, force)
    with _signals_raise():
        sweep(target.parent)
        tmp = target.parent / _temp_name(target.name)
        try:
            tmp.mkdir()
        except OSError as exc:
            raise WriteError(f"cannot write in folder '{target.parent}': {exc.strerror or exc}") from None
        pending.track(tmp)
        try:
            yield tmp
            for root, _, files in os.walk(tmp):
                for name in files:
                    _fsync(Path(root) / name)
            _swap_in(tmp, target, force)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            pending.untrack(tmp)
    _fsync_folder(target.parent)


@contextlib.contextmanager
def new_folder(dest: str | Path) -> Iterator[Path]:
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    with atomic_folder(dest, force=True) as tmp:
        yield tmp


def _swap_in(tmp: Path, target: Path, force: bool) -> None:
    """Put the folder ``tmp`` at ``target``: an exchange in one step where the system can (the old folder then
    sits at ``tmp`` and is removed), else the old folder is moved aside under the temporary pattern first."""
    try:
        if not os.path.lexists(target):
            if not _renameat2(tmp, target, _RENAME_NOREPLACE):
                os.rename(tmp, target)  # onto nothing (or an empty folder that appeared meanwhile)
            return
        if not force:
            raise UsageError(f"'{target}' exists; use --force to replace it")
        if _renameat2(tmp, target, _RENAME_EXCHANGE):
            shutil.rmtree(tmp, ignore_errors=True)
            return
        aside = target.parent / _temp_name(target.name)
        os.rename(target, aside)
        os.rename(tmp, target)
        shutil.rmtree(aside, ignore_errors=True)
    except FileExistsError:
        raise UsageError(f"'{target}' exists; use --force to replace it") from None
    except OSError as exc:
        raise WriteError(f"cannot write '{target}': {exc.strerror or exc}") from None
