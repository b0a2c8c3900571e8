"""One reader per file format, each with its limits, each failing with the project's one-line error.

Every file explain reads goes through here: :func:`regular_file` (a folder, FIFO, device, dangling link or
symlink loop is named as what it is, not "does not exist"), :func:`read_json` (size, nesting depth, digits of
a number, the line of a syntax error), :func:`read_csv` (size, field length, the line of a bad number),
:func:`npy_header` / :func:`read_npy` and :func:`npz_headers` / :func:`read_npz` (the declared shape and dtype
are read and checked *before* any data is allocated, so a header claiming (10⁶, 10⁶) or a zip bomb is refused
in microseconds), and :func:`nested_numbers` (a rectangular list of numbers, booleans refused).

Callers pass the error class to raise (:class:`~explain.errors.InputError` for embeddings,
:class:`~explain.errors.WeightsError` for weights, …). numpy is imported only by the numpy readers.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explain.errors import ExplainError, InputError
from explain.limits import MAX_CSV_FIELD, MAX_DIGITS, MAX_JSON_BYTES, MAX_TEXT_BYTES

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


def _size(n: int) -> str:
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
    import csv
    import io

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
                raise error(f"{where} holds {kind} ({json.dumps(x)[:30]}) where a number belongs; {fix}")
        return tuple(shape)


# --- numpy formats ------------------------------------------------------------------------------------------

def _header(fp: Any, where: str, fix: str, error: ErrorType) -> tuple[tuple[int, ...], Any, bool]:
    """(shape, dtype, fortran_order) from an open .npy stream positioned at its start; refuses pickles."""
    import numpy as np

    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fp)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except Exception as exc:  # numpy's header parser lets tokenize/ast errors of a hostile header through
        msg = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise error(f"{where} is not a readable .npy array ({msg}); {fix}") from None
    if dtype.hasobject:
        raise error(f"{where} {PICKLED}; {fix}")
    return tuple(int(n) for n in shape), dtype, bool(fortran)


def _nbytes(shape: tuple[int, ...], dtype: Any) -> int:
    n = dtype.itemsize
    for d in shape:
        n *= d
    return n


def _check_declared(where: str, shape: tuple[int, ...], dtype: Any, room: int, limit: int, fix: str,
                    error: ErrorType) -> None:
    need = _nbytes(shape, dtype)
    if need > limit:
        raise error(f"{where} declares an array of shape {list(shape)} ({dtype}, {_size(need)}), more than the "
                    f"{_size(limit)} explain reads; {fix}")
    if need > room:
        raise error(f"{where} declares shape {list(shape)} ({_size(need)}) but holds only {_size(room)} of data: "
                    f"the file is truncated or corrupt; {fix}")


def npy_header(path: str | Path, what: str, fix: str, error: ErrorType = InputError) -> tuple[tuple[int, ...], Any]:
    """(shape, dtype) of an .npy file, from its header alone."""
    p = regular_file(path, what, fix, error)
    with p.open("rb") as f:
        shape, dtype, _ = _header(f, f"{what} '{path}'", fix, error)
    return shape, dtype


def read_npy(path: str | Path, what: str, fix: str, error: ErrorType = InputError, *, limit: int,
             check: Callable[[tuple[int, ...], Any], None] | None = None) -> Any:
    """An .npy array, its header checked first: at most ``limit`` bytes declared, no more than the file holds,
    and ``check(shape, dtype)`` (which raises) before any data is read."""
    import numpy as np

    p = regular_file(path, what, fix, error)
    where = f"{what} '{path}'"
    with p.open("rb") as f:
        shape, dtype, fortran = _header(f, where, fix, error)
        room = os.fstat(f.fileno()).st_size - f.tell()
        _check_declared(where, shape, dtype, room, limit, fix, error)
        if check is not None:
            check(shape, dtype)
        f.seek(0)
        try:
            return np.lib.format.read_array(f, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise error(f"cannot read {where}: {(str(exc).splitlines() or ['corrupt'])[0][:120]}; {fix}") from None


def npz_headers(path: str | Path, what: str, fix: str, error: ErrorType = InputError, *,
                limit: int) -> dict[str, tuple[tuple[int, ...], Any]]:
    """name -> (shape, dtype) of every array in an .npz, from the zip directory and each member's .npy header
    (a few hundred bytes each): nothing is decompressed beyond the headers. Members that are not .npy arrays,
    arrays declared larger than ``limit`` bytes or larger than their member, and corrupt archives are refused."""
    import zipfile

    p = regular_file(path, what, fix, error)
    where = f"{what} '{path}'"
    out: dict[str, tuple[tuple[int, ...], Any]] = {}
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                if not info.filename.endswith(".npy"):
                    raise error(f"{where} holds '{info.filename}', which is not an .npy array (an .npz written "
                                f"by np.savez holds only NAME.npy members); {fix}")
                name = info.filename[: -len(".npy")]
                with zf.open(info) as member:
                    shape, dtype, _ = _header(member, f"{where} member '{info.filename}'", fix, error)
                    room = info.file_size - member.tell()
                _check_declared(f"{where} member '{info.filename}'", shape, dtype, room, limit, fix, error)
                out[name] = (shape, dtype)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
        msg = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise error(f"{where} is not a readable .npz archive ({msg}); {fix}") from None
    return out


def read_npz(path: str | Path, what: str, fix: str, error: ErrorType = InputError, *, limit: int,
             names: list[str] | None = None) -> dict[str, Any]:
    """The arrays of an .npz (only ``names`` if given), each read only after :func:`npz_headers` accepted
    every header; call that first to check shapes against what you need."""
    import zipfile

    import numpy as np

    npz_headers(path, what, fix, error, limit=limit)
    where = f"{what} '{path}'"
    out: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                name = info.filename[: -len(".npy")]
                if info.is_dir() or (names is not None and name not in names):
                    continue
                with zf.open(info) as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, RuntimeError) as exc:
        msg = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
        raise error(f"cannot read {where} ({msg}); {fix}") from None
    return out


def file_kind(path: Path) -> str:
    """'npy', 'npz', 'pickle' or 'other', from the file's first bytes."""
    with path.open("rb") as f:
        head = f.read(6)
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith(b"PK"):
        return "npz"
    if head[:1] == b"\x80":
        return "pickle"
    return "other"


# --- what explain reads -------------------------------------------------------------------------------------

EMBED_FIX = "give a (tokens × d_model) or (batch × tokens × d_model) array as .npy, .npz, .json or .csv"


def read_embeddings(path: str) -> Any:
    """The raw (T, d) or (batch, T, d) array of an embeddings file (.npy, .npz with one array or one named 'embeddings', .json,
    .csv), checked for shape and size before it is read; :func:`explain.inputs.check_embeddings` does the rest."""
    import numpy as np

    from explain.limits import MAX_INPUT_BYTES

    what = "embeddings file"
    p = regular_file(path, what, EMBED_FIX)
    suffix = p.suffix.lower()
    where = f"the embeddings in '{path}'"

    def two_d(shape: tuple[int, ...], dtype: Any) -> None:
        if len(shape) not in (2, 3) or dtype.kind not in "fiu":
            raise InputError(f"{where} must be a 2-D numeric array (tokens × d_model) or a 3-D batch (batch × "
                             f"tokens × d_model), got shape {list(shape)} of {dtype}")

    if suffix in (".npy", ".npz"):
        kind = file_kind(p)
        if kind == "pickle":
            raise InputError(f"'{path}' {PICKLED}; save a plain numeric array (np.save with a float array)")
        if kind != suffix[1:]:
            raise InputError(f"'{path}' is not a numpy {suffix} file; write it with "
                             f"{'np.save' if suffix == '.npy' else 'np.savez'}")
    if suffix == ".npy":
        return read_npy(p, what, EMBED_FIX, limit=MAX_INPUT_BYTES, check=two_d)
    if suffix == ".npz":
        heads = npz_headers(p, what, EMBED_FIX, limit=MAX_INPUT_BYTES)
        keys = list(heads)
        key = "embeddings" if "embeddings" in keys else (keys[0] if len(keys) == 1 else None)
        if key is None:
            raise InputError(f"'{path}' holds arrays {keys[:8]}; name the one to use 'embeddings'")
        two_d(*heads[key])
        return read_npz(p, what, EMBED_FIX, limit=MAX_INPUT_BYTES, names=[key])[key]
    if suffix == ".json":
        data = read_json(p, what, EMBED_FIX, limit=MAX_TEXT_BYTES)
        nested_numbers(data, where, EMBED_FIX)
        return np.asarray(data, dtype=np.float64)
    if suffix == ".csv":
        rows = read_csv(p, what, EMBED_FIX)
        nested_numbers(rows, where, EMBED_FIX)
        return np.asarray(rows, dtype=np.float64)
    kind = f"'{p.suffix}' files" if p.suffix else f"'{path}', which has no file extension"
    raise InputError(f"cannot read embeddings from {kind}; use a .npy, .npz, .json or .csv file")
