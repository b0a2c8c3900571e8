"""``--save FILE``: every tensor of a run (each step's output under its step name, and each parameter not already
a step) in a file other tools load in one call, written atomically (:mod:`explain.io.atomic`).

* ``FILE.npz``: numpy's uncompressed archive, keys = step names: ``np.load(FILE)["blocks.0.attn.pattern"]``
  (torch users: ``torch.from_numpy``), written as ``np.savez`` writes it (a zip of ``.npy`` members, stored,
  zip64) but with each member's bytes handed to ``zipfile`` straight from the array's memory: ``np.savez``
  copies every 16 MiB chunk (``tobytes``) before zipfile checksums and writes it, 8.7 s of a GPT-2-size save
  with 1,024 tokens (8.9 GB).
* While the run records, :class:`NpzStream` writes each parameter as the model declares it and each step's
  tensor as soon as the recorder computes it (a writer thread: zlib's CRC-32, numpy's copies and the file's
  writes release the GIL on large buffers, so they run on the other core while numpy computes the next op);
  when the run ends only the last steps are left. At GPT-2 size with 1,024 tokens that is 8.9 GB written during
  the forward pass instead of after it.
* Both formats go to the disk past the page cache (:class:`explain.io.diskfile.DiskFile`): written plainly, the
  8.9 GB took 2.3 s of the kernel's CPU per GB on a 2-core VM; through it, 0.1 s per GB.
* ``FILE.safetensors``: the safetensors layout (an 8-byte little-endian header length, a JSON header giving each
  tensor's dtype, shape and byte range, then the raw little-endian data), written here tensor by tensor
  because ``safetensors.numpy.save`` builds the whole file in memory (8 GB at GPT-2 size) and ``save_file``
  writes straight to the path, not atomically. ``safetensors.numpy.load_file`` reads it (a test checks).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from explain.core.errors import UsageError
from explain.io.atomic import WriteError, atomic_write
from explain.io.diskfile import CHUNK, DiskFile
from explain.io.paths import check_output
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
    out = DiskFile(fh)
    out.write(len(text).to_bytes(8, "little"))
    out.write(text)
    for arr in arrays.values():
        out.write(_raw(arr.astype(arr.dtype.newbyteorder("<"), copy=False)))
    out.close()


def _raw(arr: np.ndarray) -> memoryview:
    """The array's bytes in C order as a memoryview of its own memory (a copy only if it is not C-contiguous)."""
    return memoryview(np.require(arr, requirements="C").reshape(-1).view(np.uint8))


def _write_member(zf: zipfile.ZipFile, name: str, value: Any, stop: Callable[[], bool] = lambda: False) -> int:
    """One member NAME.npy as ``np.savez`` writes it, its data handed to zipfile from the array's own memory
    (zipfile checksums and writes a buffer without copying it); returns its data's bytes."""
    arr = np.asarray(value)
    if arr.dtype.hasobject:  # np.savez would pickle it, which np.load then refuses by default
        raise UsageError(f"step {name} holds Python objects, which an .npz cannot store without pickling")
    c = np.require(arr, requirements="C")  # the header says C order: a Fortran-order view is copied
    with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(c))
        raw = _raw(c)
        for start in range(0, len(raw), CHUNK):
            if stop():
                break
            member.write(raw[start:start + CHUNK])
    return c.nbytes


def _write_npz(arrays: dict[str, np.ndarray], fh: BinaryIO) -> None:
    """What ``np.savez`` writes (members NAME.npy, stored, zip64; ``np.load`` reads it)."""
    out = DiskFile(fh)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            _write_member(zf, name, arr)
    out.close()


class NpzStream:
    """``--save FILE.npz`` written while the run records: give :meth:`add` to the run as its ``on_tensor``, then
    :meth:`finish` with the trace (the parameters and anything not yet sent are written, and the file is
    renamed into place). Until then the file is a temporary sibling (:mod:`explain.io.atomic`); :meth:`abort`
    (an error, Ctrl-C, SIGTERM) stops the writer and removes it. Steps are never changed once recorded, so
    the bytes written during the run are the trace's."""

    def __init__(self, path: str, force: bool) -> None:
        self.target = check_output(path, force, example="trace.npz")
        self.done = False
        self._stack = contextlib.ExitStack()
        fh = self._stack.enter_context(atomic_write(self.target, force=force))
        try:
            self._out = DiskFile(fh)
            self._zip = zipfile.ZipFile(self._out, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
            self._queue: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()
            self._sent: dict[str, Any] = {}
            self._bytes, self._stop, self._error = 0, False, None
            self._thread = threading.Thread(target=self._work, name="explain-save", daemon=True)
            self._thread.start()
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise

    def _work(self) -> None:
        while (item := self._queue.get()) is not None and not self._stop:
            try:
                self._bytes += _write_member(self._zip, *item, stop=lambda: self._stop)
            except OSError as exc:
                self._error = WriteError(f"cannot write '{self.target}': {exc.strerror or exc}")
            except Exception as exc:  # raised again in the run's thread, by add() or finish()
                self._error = exc
            if self._error is not None:
                return

    def add(self, name: str, value: Any) -> None:
        """The recorder's ``on_tensor``: queue a parameter (once) or a step's tensor for the writer; a writer's
        error is raised here, which ends the run."""
        if self._error is not None:
            raise self._error
        if self._sent.get(name) is value:  # a parameter declared again (each new token's steps declare them)
            return
        if name in self._sent:
            raise AssertionError(f"--save: two tensors named {name}")  # the recorder refuses a name twice
        self._sent[name] = value
        self._queue.put((name, value))

    def finish(self, trace: Trace) -> tuple[Path, int, int]:
        """Write what the run has not sent (a parameter never declared), close the archive with the steps
        listed first, then the parameters that are not steps (:func:`tensors`' order), and rename it into
        place; returns (the file, tensors, bytes)."""
        values = {**(trace.params or {}), **{s.name: s.output for s in trace if s.output is not None}}
        order = [*(s.name for s in trace if s.output is not None), *(trace.params or {})]
        if any(values.get(name) is not value for name, value in self._sent.items()):
            raise AssertionError("--save: a tensor sent during the run is not the trace's")  # never changed
        for name in order:
            if name not in self._sent:
                self.add(name, values[name])
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
        rank = {f"{name}.npy": i for i, name in enumerate(dict.fromkeys(order))}
        self._zip.filelist.sort(key=lambda info: rank[info.filename])  # the central directory: np.load's order
        self._zip.close()
        self._out.close()
        self.done = True
        self._stack.close()  # the rename: a file that appeared meanwhile is refused without --force
        return self.target, len(self._sent), self._bytes

    def abort(self, *exc_info: Any) -> None:
        """Stop the writer and remove the temporary file (``exc_info`` passed to :func:`atomic_write`: a
        signal is delivered again from there)."""
        if self.done:
            return
        self.done, self._stop = True, True
        self._queue.put(None)
        self._thread.join()
        self._out.release()  # the file is removed: its last buffer is not written, nor the archive's end
        with contextlib.suppress(Exception):
            self._zip.close()
        self._stack.__exit__(*exc_info)


@contextlib.contextmanager
def save_stream(path: str | None, force: bool) -> Iterator[NpzStream | None]:
    """An :class:`NpzStream` for ``path`` when it names an .npz (else None: .safetensors is written after the
    run, its header first); on any exception inside the block the file is removed and nothing replaced."""
    if path is None or Path(path).suffix != ".npz":
        yield None
        return
    stream = NpzStream(path, force)
    try:
        yield stream
    except BaseException:
        stream.abort(*sys.exc_info())
        raise
    if not stream.done:  # a bug: the block ended without finish(); the half-written file is not kept
        exc = AssertionError("--save: the run ended without finishing its file")
        stream.abort(type(exc), exc, None)
        raise exc


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
