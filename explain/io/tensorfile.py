"""A safetensors file read and written with numpy alone.

The core install has no ``safetensors`` package, yet the trained GPT in the wheel is a Hugging Face folder
(``explain train`` writes it; transformers loads it) that ``explain run gpt`` must open. The format is small
enough to read here (https://huggingface.co/docs/safetensors, "Format"): an 8-byte little-endian header length,
a JSON header mapping each tensor's name to its dtype, shape and byte offsets (after the header), then the raw
little-endian data. :class:`SafeFile` offers the part of ``safetensors.safe_open`` that
:mod:`explain.checkpoints.gpt2` uses, so the same checks run on either reader; bfloat16 is left to
``explain.checkpoints.gpt2``'s own reader. :func:`save_file` writes F32 or F64 tensors as ``save_file`` does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


class _Slice:
    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info

    def get_shape(self) -> list[int]:
        return list(self.info["shape"])

    def get_dtype(self) -> str:
        return str(self.info["dtype"])


class SafeFile:
    """A safetensors file opened for reading (``keys``, ``get_slice``, ``get_tensor``), as ``safe_open``."""

    def __init__(self, path: str | Path, framework: str = "numpy") -> None:
        self.path = Path(path)
        size = os.path.getsize(self.path)
        with open(self.path, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            if not 2 <= n <= size - 8:
                raise ValueError(f"header length {n} does not fit a file of {size} bytes")
            header = json.loads(fh.read(n))
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
        header.pop("__metadata__", None)
        self.start, self.size, self.header = 8 + n, size, header
        for k, info in header.items():
            begin, end = info["data_offsets"]
            if info.get("dtype") not in DTYPES and info.get("dtype") != "BF16":
                raise ValueError(f"tensor '{k}' has dtype {info.get('dtype')!r}")
            want = int(np.prod(info["shape"], dtype=np.int64)) * (2 if info["dtype"] == "BF16"
                                                                   else np.dtype(DTYPES[info["dtype"]]).itemsize)
            if not (0 <= begin <= end and end - begin == want and self.start + end <= size):
                raise ValueError(f"tensor '{k}' has offsets {begin}–{end} that do not fit its shape or the file")

    def __enter__(self) -> SafeFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def keys(self) -> list[str]:
        return list(self.header)

    def get_slice(self, key: str) -> _Slice:
        return _Slice(self.header[key])

    def get_tensor(self, key: str) -> np.ndarray:
        info = self.header[key]
        begin, end = info["data_offsets"]
        with open(self.path, "rb") as fh:
            fh.seek(self.start + begin)
            data = fh.read(end - begin)
        return np.frombuffer(data, dtype=DTYPES[info["dtype"]]).reshape(info["shape"]).copy()


def save_file(tensors: dict[str, np.ndarray], path: str | Path, metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (float32 or float64 arrays) to ``path`` in the safetensors format, in name order, the
    header padded with spaces to a multiple of 8 bytes (as the reference writer does)."""
    names = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64"}
    header: dict[str, Any] = {"__metadata__": metadata} if metadata else {}
    offset, blobs = 0, []
    for k in sorted(tensors):
        a = np.ascontiguousarray(tensors[k])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        header[k] = {"dtype": names[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        blobs.append(a.tobytes())
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as fh:
        fh.write(len(text).to_bytes(8, "little"))
        fh.write(text)
        for b in blobs:
            fh.write(b)
