"""Arrays from files: :func:`npy_header` / :func:`read_npy` and :func:`npz_headers` / :func:`read_npz` (the
declared shape and dtype are read and checked *before* any data is allocated, so a header claiming (10⁶, 10⁶) or
a zip bomb is refused in microseconds; an array of pickled objects is never loaded), :func:`file_kind`, and
:func:`read_embeddings` in any of .npy, .npz, .json and .csv. Each fails with the project's one-line error of the
class the caller passes (:mod:`explain.io.readers` reads the text formats)."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from explain.core.errors import InputError
from explain.core.limits import MAX_INPUT_BYTES, MAX_TEXT_BYTES
from explain.io.readers import PICKLED, ErrorType, nested_numbers, read_csv, read_json, regular_file, size_text


def _header(fp: Any, where: str, fix: str, error: ErrorType) -> tuple[tuple[int, ...], Any, bool]:
    """(shape, dtype, fortran_order) from an open .npy stream positioned at its start; refuses pickles."""
    import numpy as np  # lazy: numpy off the shape path

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
        raise error(f"{where} declares an array of shape {list(shape)} ({dtype}, {size_text(need)}), more than the "
                    f"{size_text(limit)} explain reads; {fix}")
    if need > room:
        raise error(f"{where} declares shape {list(shape)} ({size_text(need)}) but holds only {size_text(room)} of data: "
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
    import numpy as np  # lazy: numpy off the shape path

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
    import numpy as np  # lazy: numpy off the shape path

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


def read_embeddings(path: str, name: str = "embeddings") -> Any:
    """The raw (T, d) or (batch, T, d) array of an embeddings file (.npy, .npz with one array or one named 'embeddings', .json,
    .csv), checked for shape and size before it is read; :func:`explain.engine.prepare.check_embeddings` does the rest."""
    import numpy as np  # lazy: numpy off the shape path

    what = f"{name} file"  # --output-target's and --grad-output's files are read here too: named as theirs
    fix = EMBED_FIX if name == "embeddings" else "give an array of the output's shape as .npy, .npz, .json or .csv"
    p = regular_file(path, what, fix)
    suffix = p.suffix.lower()
    where = f"the {name} in '{path}'"

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
        return read_npy(p, what, fix, limit=MAX_INPUT_BYTES, check=two_d)
    if suffix == ".npz":
        heads = npz_headers(p, what, fix, limit=MAX_INPUT_BYTES)
        keys = list(heads)
        key = "embeddings" if "embeddings" in keys else (keys[0] if len(keys) == 1 else None)
        if key is None:
            raise InputError(f"'{path}' holds arrays {keys[:8]}; name the one to use 'embeddings'")
        two_d(*heads[key])
        return read_npz(p, what, fix, limit=MAX_INPUT_BYTES, names=[key])[key]
    if suffix == ".json":
        data = read_json(p, what, fix, limit=MAX_TEXT_BYTES)
        nested_numbers(data, where, fix)
        return np.asarray(data, dtype=np.float64)
    if suffix == ".csv":
        rows = read_csv(p, what, fix)
        nested_numbers(rows, where, fix)
        return np.asarray(rows, dtype=np.float64)
    kind = f"'{p.suffix}' files" if p.suffix else f"'{path}', which has no file extension"
    raise InputError(f"cannot read {name} from {kind}; use a .npy, .npz, .json or .csv file")
