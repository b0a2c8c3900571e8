"""``--save FILE``: every tensor of a run (each step's output under its step name, and each parameter not already
a step) in a file other tools load in one call, written atomically (:mod:`explain.atomic`).

* ``FILE.npz``: numpy's uncompressed archive, keys = step names: ``np.load(FILE)["blocks.0.attn.pattern"]``
  (torch users: ``torch.from_numpy``), written as ``np.savez`` writes it (a zip of ``.npy`` members, stored,
  zip64) but with each member's bytes handed to ``zipfile`` straight from the array's memory: ``np.savez``
  copies every 16 MiB chunk (``tobytes``) before zipfile checksums and writes it, 8.7 s of a GPT-2-size save
  with 1,024 tokens (8.9 GB).
* ``FILE.safetensors``: the safetensors layout (an 8-byte little-endian header length, a JSON header giving each
  tensor's dtype, shape and byte range, then the raw little-endian data), written here tensor by tensor
  because ``safetensors.numpy.save`` builds the whole file in memory (8 GB at GPT-2 size) and ``save_file``
  writes straight to the path, not atomically. ``safetensors.numpy.load_file`` reads it (a test checks).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from explain.atomic import atomic_write
from explain.errors import UsageError
from explain.paths import check_output
from explain.trace import Trace

SUFFIXES = (".npz", ".safetensors")
_DTYPES = {"f8": "F64", "f4": "F32", "i8": "I64", "i4": "I32", "b1": "BOOL", "u1": "U8"}


def tensors(trace: Trace) -> dict[str, np.ndarray]:
    """Every step's output by step name, then the parameters that are not steps themselves."""
    out = {s.name: np.asarray(s.output) for s in trace if s.output is not None}
    for name, value in (trace.params or {}).items():
        out.setdefault(name, np.asarray(value))
    return out


def _write_safetensors(arrays: dict[str, np.ndarray], fh: BinaryIO) -> None:
    header: dict[str, Any] = {}
    offset = 0
    for name, arr in arrays.items():
        code = arr.dtype.str[1:]
        if code not in _DTYPES:
            raise UsageError(f"step {name} holds {arr.dtype} values, which safetensors cannot store; use .npz")
        header[name] = {"dtype": _DTYPES[code], "shape": list(arr.shape), "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the reference writer pads it
    fh.write(len(text).to_bytes(8, "little"))
    fh.write(text)
    for arr in arrays.values():
        fh.write(_raw(arr.astype(arr.dtype.newbyteorder("<"), copy=False)))


def _raw(arr: np.ndarray) -> memoryview:
    """The array's bytes in C order as a memoryview of its own memory (a copy only if it is not C-contiguous)."""
    return memoryview(np.require(arr, requirements="C").reshape(-1).view(np.uint8))


def _write_npz(arrays: dict[str, np.ndarray], fh: BinaryIO) -> None:
    """What ``np.savez`` writes (members NAME.npy, stored, zip64; ``np.load`` reads it), each member's data
    written from the array's memory: zipfile checksums and writes a buffer without copying it."""
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            if arr.dtype.hasobject:  # np.savez would pickle it, which np.load then refuses by default
                raise UsageError(f"step {name} holds Python objects, which an .npz cannot store without pickling")
            c = np.require(arr, requirements="C")  # the header says C order: a Fortran-order view is copied
            with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(c))
                member.write(_raw(c))


def check_save_path(path: str) -> None:
    """The suffix decides the format: .npz or .safetensors, nothing else (numpy would add .npz to a name)."""
    if Path(path).suffix not in SUFFIXES:
        raise UsageError(f"--save '{path}' must end in .npz or .safetensors (the format follows the name)")


def save_trace(trace: Trace, path: str, force: bool = False) -> tuple[Path, int, int]:
    """Write every tensor of ``trace`` to ``path`` (format from its suffix), atomically; returns (the file
    written, the number of tensors, their bytes)."""
    target = check_output(path, force, example="trace.npz")
    check_save_path(path)
    arrays = tensors(trace)
    with atomic_write(target, force=force) as fh:
        if target.suffix == ".npz":
            _write_npz(arrays, fh)
        else:
            _write_safetensors(arrays, fh)
    return target, len(arrays), sum(a.nbytes for a in arrays.values())
