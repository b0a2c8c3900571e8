"""One reader per file format, each with its limits, each failing with the project's one-line error.

Every file explain reads goes through here: :func:`regular_file` (a folder, FIFO, device, dangling link or
symlink loop is named as what it is, not "does not exist"), :func:`read_json` (size, nesting depth, digits of
a number, the line of a syntax error), :func:`read_csv` (size, field length, the line of a bad number) and
:func:`nested_numbers` (a rectangular list of numbers, booleans refused); the numpy formats, and embeddings in
any format, are read by :mod:`explain.io.array_files` with the same limits.

Callers pass the error class to raise (:class:`~explain.core.errors.InputError` for embeddings,
:class:`~explain.core.errors.WeightsError` for weights, …). numpy is imported only by the numpy readers.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path
from typing import Any

from explain.core.errors import ExplainError, InputError
from explain.core.limits import MAX_CSV_FIELD, MAX_DIGITS, MAX_JSON_BYTES, MAX_TEXT_BYTES

ErrorType = type[ExplainError]
PICKLED = "holds pickled objects, which explain never loads"


def regular_file(path: str | Path, what: str, fix: str, error: ErrorType = InputError,
                 limit: int | None = None) -> Path:
    """``path`` as a Path if it is a readable regular file (following links) of at most ``limit`` bytes;
    otherwise an error that says what it is instead: ``{what} '{path}' is a folder; {fix}``."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{what} '{path}' is a symbolic link that points back to itself (a loop); {fix}") from None
        if exc.errno == errno.ENOENT and os.path.islink(p):
            raise error(f"{what} '{path}' is a symbolic link to '{os.readlink(p)}', which does not exist; "
                        f"{fix}") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise error(f"{what} '{path}' does not exist; {fix}") from None
        raise error(f"cannot read {what} '{path}': {exc.strerror or exc}; {fix}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{what} '{path}' is a folder, not a file; {fix}")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise error(f"{what} '{path}' is {kind}, not a file explain can read; {fix}")
    if not os.access(p, os.R_OK):
        raise error(f"cannot read {what} '{path}': permission denied; {fix}")
    if limit is not None and st.st_size > limit:
        raise error(f"{what} '{path}' is {st.st_size / 2**20:,.0f} MiB, more than the {limit / 2**20:,.0f} MiB "
                    f"explain reads; {fix}")
    return p


def size_text(n: int) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n:,} bytes"


# --- text formats -------------------------------------------------------------------------------------------

def read_text(path: str | Path, what: str, fix: str, error: ErrorType = InputError,
              limit: int = MAX_TEXT_BYTES) -> str:
    """A UTF-8 text file of at most ``limit`` bytes."""
    p = regular_file(path, what, fix, error, limit)
    try:
        return p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} '{path}' is not UTF-8 text (byte {exc.start}); {fix}") from None
    except OSError as exc:
        raise error(f"cannot read {what} '{path}': {exc.strerror or exc}; {fix}") from None


def _whole(s: str) -> int:
    if len(s.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"a whole number with {len(s.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(s)


def parse_json(text: str, where: str, fix: str, error: ErrorType = InputError) -> Any:
    """A JSON document from text; errors name ``where`` and the line. Numbers with more than MAX_DIGITS digits
    and nesting deeper than the interpreter's recursion limit are refused, not crashed on."""
    import json  # lazy: json only for a JSON file (not on the start-up path)

    try:
        return json.loads(text, parse_int=_whole)
    except json.JSONDecodeError as exc:
        raise error(f"{where}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno}); {fix}") from None
    except RecursionError:
        raise error(f"{where}: the JSON is nested too deeply to read; {fix}") from None
    except ValueError as exc:  # from _whole
        raise error(f"{where}: {exc}; {fix}") from None


def read_json(path: str | Path, what: str, fix: str, error: ErrorType = InputError,
              limit: int = MAX_JSON_BYTES) -> Any:
    """A JSON file, with :func:`parse_json`'s limits and at most ``limit`` bytes."""
    return parse_json(read_text(path, what, fix, error, limit), str(path), fix, error)


def read_csv(path: str | Path, what: str, fix: str, error: ErrorType = InputError) -> list[list[float]]:
    """Rows of numbers from a CSV file (empty lines skipped); a bad cell is named with its line."""
    import csv  # lazy: csv only for a CSV file (not on the start-up path)

    text = read_text(path, what, fix, error)
    rows: list[list[float]] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        for row in reader:
            if not row:
                continue
            out = []
            for cell in row:
                c = cell.strip()
                if len(c) > MAX_CSV_FIELD:
                    raise error(f"{path}:{reader.line_num}: a field of {len(c):,} characters is not a number; {fix}")
                try:
                    out.append(float(c))
                except ValueError:
                    raise error(f"{path}:{reader.line_num}: '{c[:40]}' is not a number; {fix}") from None
            rows.append(out)
    except csv.Error as exc:
        raise error(f"{path}:{reader.line_num}: not valid CSV: {exc}; {fix}") from None
    return rows


def nested_numbers(value: Any, where: str, fix: str, error: ErrorType = InputError,
                   max_items: int = 10**8) -> tuple[int, ...]:
    """The shape of ``value`` if it is a rectangular nest of lists of numbers (booleans, strings, objects and
    nulls refused; at most ``max_items`` numbers). Iterative, so any depth is safe."""
    level: list[Any] = [value]
    shape: list[int] = []
    while True:
        lists = [isinstance(x, list) for x in level]
        if all(lists):
            n = len(level[0])
            if any(len(x) != n for x in level):
                raise error(f"{where} is not rectangular: rows of {len(level[0])} and "
                            f"{next(len(x) for x in level if len(x) != n)} entries; {fix}")
            shape.append(n)
            if n == 0 or len(level) * n > max_items:
                if n and len(level) * n > max_items:
                    raise error(f"{where} has more than {max_items:,} numbers; {fix}")
                return tuple(shape)
            level = [y for x in level for y in x]
            continue
        if any(lists):
            raise error(f"{where} mixes lists and numbers at depth {len(shape) + 1}; {fix}")
        for x in level:
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                kind = {bool: "a boolean", str: "a string", dict: "an object", type(None): "null"}.get(type(x),
                                                                                                     type(x).__name__)
                import json  # lazy: json only for a JSON file (not on the start-up path)

                raise error(f"{where} holds {kind} ({json.dumps(x)[:30]}) where a number belongs; {fix}")
        return tuple(shape)

