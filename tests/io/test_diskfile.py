""":class:`explain.io.diskfile.DiskFile` (the page-cache-free writer under ``--save``) writes the same bytes as a
plain file given the same writes and seeks: appends of every size around the buffer's and the block's
boundaries, and headers filled in afterwards (still in the buffer, on the disk, or across both), with
``O_DIRECT`` and without it (the fallback: written plainly, synced and dropped). The reference is the same
sequence of writes applied to a bytearray."""

from __future__ import annotations

import io

import numpy as np
import pytest

from explain.io import diskfile
from explain.io.diskfile import DiskFile

SMALL_CHUNK = 2 * 4096  # the buffer's size in these tests: many boundaries in a few kB


def _script(seed: int) -> list[tuple[str, int, int]]:
    """("append", n, _) and ("patch", back, n): what zipfile does (members, then a header filled in)."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, 7, 4095, 4096, 4097, SMALL_CHUNK - 1, SMALL_CHUNK, SMALL_CHUNK + 1, 3 * SMALL_CHUNK + 5]
    out = []
    for _ in range(60):
        out.append(("append", int(rng.choice(sizes)) if rng.random() < 0.5 else int(rng.integers(0, 20000)), 0))
        if rng.random() < 0.4:
            out.append(("patch", int(rng.integers(1, 30000)), int(rng.integers(1, 60))))
    return out


def _play(script, fh, rng_seed: int) -> None:
    rng = np.random.default_rng(rng_seed)
    end = fh.tell()
    for kind, a, b in script:
        if kind == "append":
            fh.write(rng.integers(0, 256, a, dtype=np.uint8).tobytes() if a % 2 else
                     memoryview(rng.integers(0, 256, a, dtype=np.uint8)))
            end += a
        else:
            at = max(0, end - a)
            n = min(b, end - at)
            fh.seek(at)
            fh.write(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
            fh.seek(end)


@pytest.mark.parametrize("direct", [True, False], ids=["O_DIRECT", "plain"])
@pytest.mark.parametrize("seed", range(4))
def test_the_bytes_are_a_plain_file_s(tmp_path, monkeypatch, direct: bool, seed: int) -> None:
    monkeypatch.setattr(diskfile, "CHUNK", SMALL_CHUNK)
    if not direct:
        monkeypatch.setattr(diskfile, "_DIRECT", 0)
    script = _script(seed)
    ref = io.BytesIO()
    _play(script, ref, seed)
    path = tmp_path / "f.bin"
    with open(path, "wb") as fh:
        out = DiskFile(fh)
        _play(script, out, seed)
        out.close()
    got = path.read_bytes()
    assert len(got) == len(ref.getvalue()) and got == ref.getvalue()


def test_writes_after_release_are_ignored(tmp_path) -> None:
    """An abandoned write (the run failed): zipfile's clean-up may still write; nothing reaches the file."""
    with open(tmp_path / "f.bin", "wb") as fh:
        out = DiskFile(fh)
        out.write(b"abc")
        out.release()
        assert out.write(b"more") == 4
    assert (tmp_path / "f.bin").read_bytes() == b""
