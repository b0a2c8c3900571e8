"""Output paths, checked once for every writer: the CLI's ``-o``, the TUI's file-name dialogs and
:mod:`explain.io.atomic` all call :func:`check_output` (a folder target: :func:`check_output_folder`).

Every refusal is a :class:`~explain.core.errors.UsageError` with one line that names the problem and the fix, raised
before anything is opened: an empty name, a NUL character, ``~user`` for a user who does not exist, a name
longer than the file system allows, a folder, a FIFO (opening one would block forever), a device
(``/dev/full``), a socket, a dangling symbolic link without ``force``, a missing folder, a folder without
write permission, an existing file without ``force``. Nothing here imports numpy.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from explain.core.errors import UsageError

_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket"}


def _short(text: str, n: int = 80) -> str:
    """A long path cut in its middle: the file name at its end is what the user recognises."""
    return text if len(text) <= n else text[:n // 4] + "…" + text[-(n - n // 4 - 1):]


def expand(name: str | os.PathLike[str]) -> Path:
    """The path a typed name means, ``~`` and ``~user`` expanded; refuses a NUL, an empty name and an unknown
    user (``Path.expanduser`` would raise a RuntimeError)."""
    text = os.fspath(name)
    if not text.strip():
        raise UsageError("give a file name")
    if "\0" in text:
        raise UsageError("the name contains a NUL character, which no file name can hold; type it again")
    if text.startswith("~"):
        expanded = os.path.expanduser(text)
        if expanded.startswith("~"):
            user = text[1:].split("/", 1)[0]
            raise UsageError(f"there is no user '{_short(user)}' for '~{_short(user)}'; give a path without it")
        text = expanded
    return Path(text)


def _check_lengths(path: Path) -> None:
    limit = 255
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > limit:
            raise UsageError(f"the name '{_short(part, 40)}' is {size} bytes, longer than the {limit} a file "
                             "name may have; give a shorter name")
    if len(os.fsencode(str(path))) > 4095:
        raise UsageError("the path is longer than the 4,095 bytes the system allows; give a shorter one")


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def kind_of(path: str | os.PathLike[str]) -> str:
    """What is at ``path``, in words for a message: 'a file', 'a folder', 'a FIFO (named pipe)', …"""
    try:
        return _kind(os.stat(path).st_mode) or "a file"
    except OSError:
        return "not reachable"


def _resolve(path: Path, force: bool) -> tuple[Path, os.stat_result | None]:
    """The file to write (a symbolic link's target) and its stat (None if it does not exist yet)."""
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return path, None
    except NotADirectoryError:
        raise UsageError(f"'{_short(str(path.parent))}' is a file, not a folder; give a path in a folder") from None
    except OSError as exc:
        raise UsageError(f"cannot reach '{_short(str(path))}': {exc.strerror}") from None
    if not stat.S_ISLNK(lst.st_mode):
        return path, lst
    real = Path(os.path.realpath(path))
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        if not force:
            raise UsageError(f"'{_short(str(path))}' is a symbolic link to '{_short(os.readlink(path))}', which "
                             "does not exist; remove the link, or use --force to write the file it points "
                             "to") from None
        return real, None
    except OSError as exc:
        raise UsageError(f"cannot follow the link '{_short(str(path))}': {exc.strerror}") from None


def _check_folder(folder: Path) -> None:
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        raise UsageError(f"folder '{_short(str(folder))}' does not exist; create it first") from None
    except NotADirectoryError:
        raise UsageError(f"'{_short(str(folder))}' is not a folder; give a path in a folder") from None
    except OSError as exc:
        raise UsageError(f"cannot reach folder '{_short(str(folder))}': {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"'{_short(str(folder))}' is a file, not a folder; give a path in a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"no permission to write in folder '{_short(str(folder))}'; choose another folder")


def check_output(name: str | os.PathLike[str], force: bool = False, example: str = "out") -> Path:
    """The regular file to write for ``name``, or a one-line UsageError before anything is opened. ``force``
    allows replacing an existing regular file (or writing through a dangling link); ``example`` is the file
    name suggested inside a folder given by mistake."""
    path = expand(name)
    _check_lengths(path)
    target, st = _resolve(path, force)
    if st is not None:
        kind = _kind(st.st_mode)
        if kind == "a folder":
            raise UsageError(f"'{_short(str(path))}' is a folder; give a file name, e.g. "
                             f"'{_short(str(path / example))}'")
        if kind is not None:
            raise UsageError(f"'{_short(str(path))}' is {kind}, not a regular file; explain writes only regular "
                             "files: give another name")
        if not force:
            raise UsageError(f"'{_short(str(path))}' exists; use --force to overwrite it")
    _check_folder(target.parent)
    return target


def check_output_folder(name: str | os.PathLike[str], force: bool = False, parents: bool = False) -> Path:
    """The folder to write (a checkpoint) for ``name``: new, or an existing folder with ``force``. With
    ``parents`` its missing parent folders may be made later (``explain train -o a/b/c``): the nearest one that
    exists must be a folder this user can write in, and a symbolic link must lead somewhere."""
    path = expand(name)
    _check_lengths(path)
    if parents and os.path.islink(path) and not os.path.exists(path):
        raise UsageError(f"'{_short(str(path))}' is a symbolic link to '{_short(os.readlink(path))}', which does "
                         "not exist; remove the link, or give another folder name")
    target, st = _resolve(path, force)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"'{_short(str(path))}' is {_kind(st.st_mode) or 'a file'}, not a folder; give a new "
                             "folder name")
        if not force:
            raise UsageError(f"'{_short(str(path))}' exists; use --force to replace it")
    folder = target.parent
    while parents and not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    _check_folder(folder)
    return target


def os_message(exc: OSError) -> str:
    """An OSError's words without Python's repr (``[Errno 28] …``)."""
    return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
