"""explain.io.atomic: files and folders written whole or not at all; temporary siblings removed on errors, on
SIGTERM, and (after SIGKILL) by the next write to the folder; FIFOs, devices and folders refused before
anything is opened."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from explain.core.errors import UsageError
from explain.io.atomic import PREFIX, atomic_folder, atomic_write, sweep, write_bytes, write_together


def leftovers(d: Path) -> list[str]:
    return sorted(n for n in os.listdir(d) if n.startswith(PREFIX))


def test_new_file_then_refused_then_replaced_keeping_its_mode(tmp_path: Path) -> None:
    p = tmp_path / "a.bin"
    assert write_bytes(p, b"one") == p
    with pytest.raises(UsageError, match="exists; use --force"):
        write_bytes(p, b"two")
    assert p.read_bytes() == b"one"
    p.chmod(0o600)
    write_bytes(p, b"two", force=True)
    assert p.read_bytes() == b"two" and (p.stat().st_mode & 0o777) == 0o600
    assert leftovers(tmp_path) == []


def test_an_exception_mid_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    p = tmp_path / "a.bin"
    p.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_write(p, force=True) as fh:
        fh.write(b"half of the new")
        assert len(leftovers(tmp_path)) == 1  # the new content goes to a sibling, not to the file
        raise RuntimeError("boom")
    assert p.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_a_file_that_appears_during_the_write_is_not_replaced_without_force(tmp_path: Path) -> None:
    p = tmp_path / "a.bin"
    with pytest.raises(UsageError, match="exists"), atomic_write(p) as fh:
        fh.write(b"mine")
        p.write_bytes(b"someone else's")
    assert p.read_bytes() == b"someone else's" and leftovers(tmp_path) == []


@pytest.mark.parametrize("make, words", [
    (lambda p: os.mkfifo(p), "FIFO"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.symlink_to("/dev/null"), "character device"),
])
def test_only_regular_files_are_written_even_with_force(tmp_path: Path, make, words: str) -> None:
    p = tmp_path / "target"
    make(p)
    for force in (False, True):
        with pytest.raises(UsageError, match=words):  # a FIFO would block the open forever: never opened
            write_bytes(p, b"x", force=force)
    assert leftovers(tmp_path) == []


def test_a_symbolic_link_is_written_through_and_kept(tmp_path: Path) -> None:
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_bytes(b"old")
    link.symlink_to(real.name)
    write_bytes(link, b"new", force=True)
    assert link.is_symlink() and real.read_bytes() == b"new"


def test_files_written_together_are_all_there_or_none(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "a.npz"
    with pytest.raises(ValueError), write_together([a, b]) as (fa, fb):
        fa.write(b"script")
        raise ValueError("the sidecar failed")
    assert not a.exists() and not b.exists() and leftovers(tmp_path) == []
    with pytest.raises(UsageError), write_together([a, b]) as (fa, fb):
        fa.write(b"script")
        fb.write(b"arrays")
        b.write_bytes(b"appeared again")  # the second rename fails: the first file, new, is removed again
    assert not a.exists() and b.read_bytes() == b"appeared again"


def test_sweep_removes_a_dead_process_leftover_and_keeps_a_live_one(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    (tmp_path / f"{PREFIX}{pid}-0123abcd-x.npz").write_bytes(b"half")
    (tmp_path / f"{PREFIX}{pid}-89abcdef-ckpt").mkdir()
    live = tmp_path / f"{PREFIX}{os.getppid()}-0123abcd-y.npz"
    live.write_bytes(b"being written")
    other = tmp_path / ".explain-tmp-notes.txt"  # not the pattern: a user's file is never touched
    other.write_bytes(b"mine")
    write_bytes(tmp_path / "z.bin", b"z")  # every write sweeps its folder
    assert leftovers(tmp_path) == sorted([live.name, other.name])
    assert sweep(tmp_path) == 0


def test_sigterm_during_a_write_removes_the_temporary_and_ends_the_process(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import os, signal
        from explain.io.atomic import atomic_write
        with atomic_write({str(tmp_path / 'a.bin')!r}, force=True) as fh:
            fh.write(b"partial")
            os.kill(os.getpid(), signal.SIGTERM)
            fh.write(b"never")
        """)
    (tmp_path / "a.bin").write_bytes(b"old")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGTERM, proc.stderr  # still ends as killed by the signal
    assert (tmp_path / "a.bin").read_bytes() == b"old" and leftovers(tmp_path) == []


def test_a_folder_is_swapped_in_whole(tmp_path: Path) -> None:
    out = tmp_path / "ckpt"
    with atomic_folder(out) as tmp:
        assert not out.exists()  # nothing visible at the target while it is filled
        (tmp / "a.txt").write_text("1")
    assert (out / "a.txt").read_text() == "1"
    with pytest.raises(UsageError, match="use --force"), atomic_folder(out):
        pass
    with pytest.raises(RuntimeError), atomic_folder(out, force=True) as tmp:
        (tmp / "a.txt").write_text("2")
        raise RuntimeError("training stopped")
    assert sorted(os.listdir(out)) == ["a.txt"] and (out / "a.txt").read_text() == "1"
    with atomic_folder(out, force=True) as tmp:
        (tmp / "b.txt").write_text("2")
    assert sorted(os.listdir(out)) == ["b.txt"] and leftovers(tmp_path) == []
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a folder"), atomic_folder(tmp_path / "file", force=True):
        pass
