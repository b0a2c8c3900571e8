"""A GGUF file's metadata and tensor table, read with ``struct`` and numpy over the memory-mapped bytes.

Why not the ``gguf`` package's ``GGUFReader``: it builds a numpy view for every part of every metadata value, so a
vocabulary of 262,144 tokens (Gemma 3's) costs it about 9 s on a 2-core machine (16 s under load), before a single
weight is read. Here a string array is walked with ``int.from_bytes`` and sliced once per string, and numeric
arrays (scores, token types) are one ``np.frombuffer`` each: the same metadata in well under a second. The
tensors are what GGUFReader gives (name, shape innermost first, type, and ``data``: a read-only view of the
mapped bytes, floats for F32/F16/BF16-free float types, one row of bytes per stored row for the quantized ones),
so ``gguf.quants.dequantize`` reads them as it reads GGUFReader's.

The format (ggml's docs/gguf.md): ``GGUF``, version (2 or 3), tensor count, metadata count; each metadata entry
a key string, a value type and the value (strings are a u64 length then bytes; arrays an element type, a u64
count and the elements); then each tensor's name, dimensions, type and offset; the data at the next multiple of
``general.alignment`` (32). Every length and count is checked against the bytes that are left, so a truncated or
hostile file gives one line, never a huge allocation.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explain.core.errors import WeightsError

_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8",
          12: "<f8"}
_STRING, _ARRAY = 8, 9
_FLOATS = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I8": np.int8, "I16": np.int16,
           "I32": np.int32, "I64": np.int64}  # the tensor types stored as plain numbers


class Truncated(Exception):
    """The file ends (or a count or length points) past its last byte."""


@dataclass
class Tensor:
    """One tensor of the table, as GGUFReader gives it."""

    name: str
    shape: np.ndarray  # the dimensions innermost first (ggml's order)
    tensor_type: Any  # gguf.GGMLQuantizationType
    data: np.ndarray  # a read-only view of its bytes (see the module's docstring)


class GGUFFile:
    """A GGUF file's metadata (``fields``: key → value: int, float, bool, str, a list of str, or a numpy array for
    a numeric array) and ``tensors``."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as fh:
            try:
                self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                raise WeightsError(f"'{path}' is empty; a GGUF file starts with the bytes GGUF") from None
        self._buf = memoryview(self._map)
        self.fields: dict[str, Any] = {}
        self.tensors: list[Tensor] = []
        try:
            self._read()
        except Truncated as exc:
            raise WeightsError(f"cannot read GGUF file '{path}': {exc}; the file is truncated or not a GGUF") from None
        except (UnicodeDecodeError, struct.error, ValueError, KeyError) as exc:
            msg = (str(exc).splitlines() or [type(exc).__name__])[0][:120]
            raise WeightsError(f"cannot read GGUF file '{path}': {msg}; the file is damaged or not a GGUF") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)

    # -- the format ---------------------------------------------------------------------------------------------
    def _need(self, pos: int, n: int, what: str) -> None:
        if n < 0 or pos + n > len(self._buf):
            raise Truncated(f"{what} needs {n:,} bytes at offset {pos:,}, past the end ({len(self._buf):,} bytes)")

    def _unpack(self, fmt: str, pos: int, what: str) -> tuple[Any, ...]:
        self._need(pos, struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self._buf, pos)

    def _string(self, pos: int, what: str) -> tuple[str, int]:
        (n,) = self._unpack("<Q", pos, what)
        self._need(pos + 8, n, what)
        return bytes(self._buf[pos + 8:pos + 8 + n]).decode("utf-8"), pos + 8 + n

    def _strings(self, pos: int, count: int, key: str) -> tuple[list[str], int]:
        """``count`` strings from ``pos``: one slice each (the reason this module exists)."""
        self._need(pos, 8 * count, f"the {count:,} strings of {key}")
        buf, end, out = self._buf, len(self._buf), []
        append = out.append
        for _ in range(count):
            n = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
            if pos + n > end:
                raise Truncated(f"a string of {key} runs past the end of the file")
            append(bytes(buf[pos:pos + n]).decode("utf-8", errors="replace"))
            pos += n
        return out, pos

    def _value(self, kind: int, pos: int, key: str) -> tuple[Any, int]:
        if kind in _SCALAR:
            (v,) = self._unpack(_SCALAR[kind], pos, key)
            return v, pos + struct.calcsize(_SCALAR[kind])
        if kind == _STRING:
            return self._string(pos, key)
        if kind != _ARRAY:
            raise ValueError(f"{key} has a value of unknown type {kind}")
        item, count = self._unpack("<IQ", pos, key)
        pos += 12
        if item == _STRING:
            return self._strings(pos, count, key)
        if item not in _NUMPY:
            raise ValueError(f"{key} is an array of type {item}, which explain does not read")
        size = np.dtype(_NUMPY[item]).itemsize
        self._need(pos, count * size, key)
        return np.frombuffer(self._map, dtype=_NUMPY[item], count=count, offset=pos), pos + count * size

    def _read(self) -> None:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # lazy: the gguf package (no reader)

        if bytes(self._buf[:4]) != b"GGUF":
            raise ValueError("it does not start with the bytes GGUF")
        version, n_tensors, n_fields = self._unpack("<IQQ", 4, "the header")
        if version not in (2, 3):
            raise ValueError(f"GGUF version {version}; explain reads versions 2 and 3")
        pos = 24
        self._need(pos, 12 * n_fields + 24 * n_tensors, f"{n_fields:,} metadata entries and {n_tensors:,} tensors")
        for _ in range(n_fields):
            key, pos = self._string(pos, "a metadata key")
            (kind,) = self._unpack("<I", pos, key)
            self.fields[key], pos = self._value(kind, pos + 4, key)
        table = []
        for _ in range(n_tensors):
            name, pos = self._string(pos, "a tensor name")
            (n_dims,) = self._unpack("<I", pos, name)
            if n_dims > 8:
                raise ValueError(f"tensor {name} has {n_dims} dimensions")
            dims = self._unpack(f"<{n_dims}Q", pos + 4, name)
            kind, offset = self._unpack("<IQ", pos + 4 + 8 * n_dims, name)
            pos += 16 + 8 * n_dims
            table.append((name, dims, GGMLQuantizationType(kind), offset))
        align = self.fields.get("general.alignment", 32)
        if not isinstance(align, int) or isinstance(align, bool) or not 1 <= align <= 1 << 20:
            raise ValueError(f"general.alignment is {align!r}")
        start = -(-pos // align) * align
        for name, dims, kind, offset in table:
            count = int(np.prod(dims, dtype=object))
            block, size = GGML_QUANT_SIZES[kind]
            if count % block or (dims and dims[0] % block):
                raise ValueError(f"tensor {name}'s {dims[0] if dims else 0} values per row are not whole {kind.name} "
                                 f"blocks of {block}")
            n_bytes = count // block * size
            self._need(start + offset, n_bytes, f"tensor {name}")
            outer = tuple(int(d) for d in reversed(dims[1:]))
            if kind.name in _FLOATS:
                data = np.frombuffer(self._map, dtype=_FLOATS[kind.name], count=count, offset=start + offset)
                data = data.reshape(outer + (int(dims[0]),) if dims else ())
            else:
                data = np.frombuffer(self._map, dtype=np.uint8, count=n_bytes, offset=start + offset)
                data = data.reshape(outer + (int(dims[0]) // block * size,))
            self.tensors.append(Tensor(name, np.array(dims, dtype=np.uint64), kind, data))


def to_float64(t: Any, transposed: bool = False) -> Any:
    """A tensor's values as float64, in its stored shape (innermost last); ``transposed``: a matrix laid out in
    memory as its transpose (Fortran order), so that the engine's x·W, which reads it transposed, takes it without
    a copy (the transposing is done here, in the one pass that converts the type).

    Q8_0 (the embedding of most small GGUFs: 167 million values in Gemma 3 270M) is computed here, d·q in float64:
    d is a float16 (11 significant bits) and q an int8 (8), so their product is exact in float32 as ggml computes
    it and in float64 alike, and no float32 copy of the whole matrix is made (gguf's dequantize took 6 s for it,
    this 1 s: the int8 columns are converted in one cast, then scaled in place). Every other type goes through
    ``gguf.quants.dequantize`` (float32)."""
    from gguf.quants import dequantize  # lazy: optional dependency (the gguf extra)

    want = tuple(int(n) for n in reversed(t.shape.tolist()))  # the reader lists the innermost first
    if t.tensor_type.name == "Q8_0":
        blocks = t.data.reshape(-1, 34)
        out = blocks[:, 2:].view(np.int8).astype(np.float64)  # (blocks, 32): the stored integers
        out *= blocks[:, :2].copy().view(np.float16).astype(np.float64)  # × each block's scale d
        arr = out.reshape(want)
    else:
        arr = np.asarray(dequantize(t.data, t.tensor_type)).reshape(want)
    if transposed and arr.ndim == 2:
        return arr.T.astype(np.float64, order="C").T
    return arr.astype(np.float64, copy=False)


__all__ = ["GGUFFile", "Tensor", "to_float64"]
