"""explain.io.atomic: a file or folder is replaced whole or not at all; an interrupted write leaves the old one
and no temporary file behind."""

from __future__ import annotations

import pytest

from explain.io.atomic import new_folder, write_bytes


def test_write_bytes_replaces_whole(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"old")
    write_bytes(p, b"new contents", force=True)  # replacing a file is asked for (explain.io.atomic)
    assert p.read_bytes() == b"new contents"
    assert [x.name for x in tmp_path.iterdir()] == ["f.bin"]


def test_an_interrupted_folder_keeps_the_old_one(tmp_path):
    dest = tmp_path / "ck"
    with new_folder(dest) as d:
        (d / "a.txt").write_text("first")
    with pytest.raises(KeyboardInterrupt):
        with new_folder(dest) as d:
            (d / "a.txt").write_text("half")
            raise KeyboardInterrupt  # Ctrl-C in the middle of a save
    assert (dest / "a.txt").read_text() == "first"
    assert [x.name for x in tmp_path.iterdir()] == ["ck"]  # no temporary folder left
    with new_folder(dest) as d:
        (d / "b.txt").write_text("second")
    assert sorted(x.name for x in dest.iterdir()) == ["b.txt"]
    assert oct(dest.stat().st_mode & 0o777) != oct(0o700)  # an ordinary folder, not mkdtemp's private one
