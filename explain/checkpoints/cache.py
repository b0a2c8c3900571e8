"""Where the catalogue's models are kept on this machine, and whether what is there can be trusted.

The cache folder is ``$EXPLAIN_CACHE``, else ``$XDG_CACHE_HOME/explain``, else ``~/.cache/explain``. A model
``NAME`` lives in its own folder ``CACHE/NAME/`` holding its file (``smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``)
or its folder (``minilm/all-MiniLM-L6-v2/``). That folder appears whole, in one rename, at the end of a fetch
(:func:`explain.io.atomic.atomic_folder`); a fetch that was interrupted leaves only a temporary sibling
(``.explain-tmp-PID-…``), which nothing reads and the next fetch removes. Every use checks the SHA-256 of what
is there against the catalogue's (:func:`damaged`: 0.1 s for SmolLM2), so a file changed since is never used.
Fetches of one model take turns through a lock file (``CACHE/.NAME.lock``). Nothing here imports numpy.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from explain.checkpoints.catalogue import Entry
from explain.checkpoints.trained import SHIPPED
from explain.core import progress
from explain.core.errors import ResourceError, UsageError
from explain.io.atomic import PREFIX, sweep

try:
    import fcntl
except ImportError:  # pragma: no cover - POSIX only
    fcntl = None

CHUNK = 1 << 20


def cache_root() -> Path:
    """$EXPLAIN_CACHE, else $XDG_CACHE_HOME/explain, else ~/.cache/explain (not created here)."""
    if os.environ.get("EXPLAIN_CACHE"):
        return Path(os.path.abspath(os.path.expanduser(os.environ["EXPLAIN_CACHE"])))
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.path.abspath(os.path.expanduser(os.environ["XDG_CACHE_HOME"]))) / "explain"
    return Path.home() / ".cache" / "explain"


def shipped(entry: Entry) -> Path:
    return SHIPPED


def home(entry: Entry) -> Path:
    """The folder a fetched model lives in: CACHE/NAME."""
    return cache_root() / entry.name


def where(entry: Entry) -> Path:
    """The file or folder ``--checkpoint NAME`` opens (whether or not it is there yet)."""
    return shipped(entry) if entry.in_box else home(entry) / entry.file


def sha256_file(path: Path, h: hashlib._Hash | None = None, advance=None) -> str:
    h = h or hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            if advance:
                advance(len(chunk))
    return h.hexdigest()


def pinned(entry: Entry) -> dict[Path, str]:
    """Every file of the model with its pinned SHA-256."""
    path = where(entry)
    if entry.files:
        return {path / rel: sha for rel, sha in entry.files.items()}
    return {path: entry.sha256}


def present(entry: Entry) -> bool:
    """Something stands where the model lives (checked or not)."""
    return entry.in_box or os.path.lexists(where(entry))


def size_on_disk(entry: Entry) -> int:
    path = home(entry)
    if not path.is_dir():
        return 0
    return sum((Path(r) / f).stat().st_size for r, _, fs in os.walk(path) for f in fs if not (Path(r) / f).is_symlink())


def damaged(entry: Entry, *, show: bool = True) -> str | None:
    """None if every file of the model is there with its pinned SHA-256, else what is wrong (one phrase)."""
    files = pinned(entry)
    total = sum(p.stat().st_size for p in files if p.is_file() and not p.is_symlink())
    with progress.task(f"check {entry.name}", total if show else None) as advance:
        for path, sha in files.items():
            rel = path.relative_to(home(entry))
            if path.is_symlink() or not path.is_file():
                return f"{rel} is missing"
            try:
                got = sha256_file(path, advance=advance)
            except OSError as exc:
                return f"{rel} cannot be read ({exc.strerror or exc})"
            if got != sha:
                return f"{rel} has SHA-256 {got[:12]}…, not the catalogue's {sha[:12]}…"
    return None


@contextlib.contextmanager
def locked(entry: Entry) -> Iterator[Path]:
    """The cache folder (made if missing), with this model's lock held: one fetch or removal at a time."""
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / f".{entry.name}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise ResourceError(f"cannot use the cache folder '{root}' ({exc.strerror or exc}); set EXPLAIN_CACHE to a "
                            "folder you can write in") from None
    try:
        if fcntl is None:  # pragma: no cover - Windows: no lock, the atomic rename still guards the file
            yield root
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress.note(f"waiting for another explain that is fetching {entry.name} …")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield root
    finally:
        os.close(fd)


def remove(entry: Entry) -> int:
    """Free the model's space: its folder is renamed aside in one step (never seen half-removed), then deleted.
    Returns the bytes freed; 0 when it was not there."""
    if entry.in_box:
        raise UsageError(f"{entry.name} ships inside explain; there is nothing to remove")
    with locked(entry) as root:
        sweep(root)
        path = home(entry)
        if not os.path.lexists(path):
            return 0
        size = size_on_disk(entry)
        aside = root / f"{PREFIX}{os.getpid()}-00000000-removed-{entry.name}"
        os.rename(path, aside)
        shutil.rmtree(aside, ignore_errors=True)
        return size
