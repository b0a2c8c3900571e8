"""Finding and reading tutorials: the shipped ones (inside the wheel as ``explain/_tutorials``, or the repo's
``tutorials/`` in a source checkout) and any ``.toml`` a teacher writes.

A shipped tutorial is named by its file name without ``.toml`` (``01-attention-without-weights``), by that
name without the number (``attention-without-weights``), or by its number (``1``).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import explain
from explain.core.limits import MAX_TEXT_BYTES
from explain.core.text import visible_tree
from explain.io.readers import regular_file
from explain.tutorial.errors import Source, TutorialError, TutorialNotFound
from explain.tutorial.parser import parse
from explain.tutorial.schema import Tutorial

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_NUMBERED = re.compile(r"^(\d+)-(.+)$")


def tutorial_dirs() -> list[Traversable]:
    """Where shipped tutorials may be, in order: the wheel's ``explain/_tutorials``, the repo's ``tutorials/``.
    An installed package is a folder, read as one; only a package inside an archive needs importlib.resources
    (which imports zipfile, tempfile and shutil: start-up time for nothing otherwise)."""
    package = Path(explain.__file__).parent
    if package.is_dir():
        out: list[Traversable] = [package / "_tutorials"]
    else:
        import importlib.resources  # lazy: only for a package inside an archive

        out = [importlib.resources.files("explain") / "_tutorials"]

    out.append(Path(explain.__file__).resolve().parent.parent / "tutorials")
    return out


def shipped_files() -> list[Traversable]:
    """The shipped tutorial files, sorted by name, from the first place that has any."""
    for d in tutorial_dirs():
        try:
            files = sorted((f for f in d.iterdir() if f.name.endswith(".toml") and f.is_file()), key=lambda f: f.name)
        except (FileNotFoundError, NotADirectoryError, OSError):
            continue
        if files:
            return files
    return []


def _stem(f: Traversable) -> str:
    return f.name[: -len(".toml")]


def parse_text(text: str, name: str, path: Path | None, display: str) -> Tutorial:
    """A Tutorial from TOML text; errors name ``display`` (the file as the user knows it)."""
    src = Source(display, text)
    try:
        # Every string the file holds (titles, narration, questions, keys) is made visible here, once: a
        # control sequence in a shared tutorial is shown as \x1b[2J, never sent to the terminal.
        data = visible_tree(tomllib.loads(text))
    except RecursionError:
        raise TutorialError(f"{display}: the TOML is nested too deeply to read; flatten its arrays and tables") \
            from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        what = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        where = f"{display}:{m.group(1)}" if m else display
        col = f" at column {m.group(2)}" if m else ""
        what = what[:1].lower() + what[1:]
        raise TutorialError(f"{where}: not valid TOML: {what}{col}; fix the syntax there (text needs quotes, "
                            "tables [name], stops [[stops]], arrays [1, 2])") from None
    try:
        return parse(data, name, path, src)
    except RecursionError:
        raise TutorialError(f"{display}: an array is nested too deeply; arrays have at most a few levels") \
            from None


def _read(path: Path | Traversable, display: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise TutorialError(f"{display}: not valid TOML: the file is not UTF-8 text; give a .toml text file") from None
    except OSError as exc:
        raise TutorialError(f"{display}: cannot read the tutorial: {exc.strerror or exc}; check the path and its "
                            "permissions") from None


def load_file(path: str | Path) -> Tutorial:
    """A tutorial from a ``.toml`` path."""
    p = regular_file(path, "tutorial file", "give a .toml file, or a shipped name from 'explain tutorial list'",
                     TutorialNotFound, limit=MAX_TEXT_BYTES)
    return parse_text(_read(p, str(path)), p.stem, p, str(path))


def _shipped_by_name() -> dict[str, Traversable]:
    return {_stem(f): f for f in shipped_files()}


def find_shipped(name: str) -> Traversable | None:
    """The shipped file for a name, a name without its number, or a number; None if there is none."""
    files = _shipped_by_name()
    if name in files:
        return files[name]
    for stem, f in files.items():
        m = _NUMBERED.match(stem)
        if m and (m.group(2) == name or (name.isdigit() and int(name) == int(m.group(1)))):
            return f
    return None


def load_tutorial(name_or_path: str | Path) -> Tutorial:
    """A shipped tutorial by name, or a tutorial from a path to a ``.toml`` file."""
    s = str(name_or_path)
    if isinstance(name_or_path, Path) or s.endswith(".toml") or "/" in s or "\\" in s:
        return load_file(s)
    f = find_shipped(s)
    if f is None:
        if Path(s).is_file():
            return load_file(s)
        names = list(_shipped_by_name())
        near = difflib.get_close_matches(s, names + [_NUMBERED.sub(r"\2", n) for n in names], n=1, cutoff=0.5)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise TutorialNotFound(f"no tutorial named '{s}'; {hint}list them with 'explain tutorial list', or give a "
                               "path to a .toml file")
    path = Path(str(f)) if Path(str(f)).is_file() else None
    return parse_text(_read(f, _display(f)), _stem(f), path, _display(f))


def _display(f: Traversable) -> str:
    """A shipped file as errors name it: ``tutorials/NAME.toml``."""
    return f"tutorials/{f.name}"


def list_tutorials() -> list[Tutorial]:
    """Every shipped tutorial, in order (the number at the front of the file name)."""
    out = []
    for f in shipped_files():
        path = Path(str(f)) if Path(str(f)).is_file() else None
        out.append(parse_text(_read(f, _display(f)), _stem(f), path, _display(f)))
    return out
