"""``--save FILE.npz`` written while the run records (:class:`explain.io.save.NpzStream`): the file holds exactly
what :func:`explain.io.save.tensors` gives for the finished trace (same keys in the same order, the same bytes,
read back by ``np.load``, the independent reader), for a forward run, a generation, a backward pass with an
AdamW step and a llama; a run that fails, a writer that fails and a block left without finishing leave the
old file as it was and no temporary file."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import explain
from explain.io.atomic import PREFIX, WriteError
from explain.io.save import save_stream, tensors

RUNS = {
    "forward": (explain.run, dict(model="gpt", d_model=16, d_vocab=300, tokens="1,2,3,4,5")),
    "generate": (explain.generate, dict(model="gpt", text="the cat", max_new_tokens=3, greedy=True)),
    "adamw": (explain.run, dict(model="gpt", d_model=16, d_vocab=300, tokens="1,2,3,4", backward=True, lr=0.1,
                                optimizer="adamw")),
    "llama": (explain.run, dict(model="llama", tokens="1,2,3")),
}


def _leftovers(folder) -> list[str]:
    return [n for n in os.listdir(folder) if n.startswith(PREFIX)]


@pytest.mark.parametrize("case", list(RUNS))
def test_the_streamed_file_is_every_tensor_of_the_trace(case: str, tmp_path) -> None:
    fn, kwargs = RUNS[case]
    path = tmp_path / "t.npz"
    with save_stream(str(path), force=False) as stream:
        trace = fn(**kwargs, on_tensor=stream.add)
        written, n, size = stream.finish(trace)
    want = tensors(trace)
    assert written == path and n == len(want) and size == sum(a.nbytes for a in want.values())
    with np.load(path) as z:
        assert z.files == list(want)  # the steps in order, then the parameters: save_trace's order
        for name, value in want.items():
            got = z[name]
            assert got.dtype == value.dtype and got.shape == value.shape
            assert got.tobytes() == np.ascontiguousarray(value).tobytes(), name  # exact, NaN and -inf included
    assert _leftovers(tmp_path) == []


@pytest.fixture
def old(tmp_path):
    path = tmp_path / "t.npz"
    path.write_bytes(b"the user's previous file")
    return path


def test_a_run_that_fails_leaves_the_old_file(old) -> None:
    with pytest.raises(KeyError), save_stream(str(old), force=True) as stream:
        explain.run("gpt", d_model=16, d_vocab=300, tokens="1,2,3", on_tensor=stream.add)
        raise KeyError("the run's output failed after the run")
    assert old.read_bytes() == b"the user's previous file" and _leftovers(old.parent) == []


def test_a_writer_that_fails_ends_the_run_with_its_error(old, monkeypatch) -> None:
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("explain.io.save._write_member", full)
    with pytest.raises(WriteError, match=r"cannot write .*t\.npz.*No space left"), \
            save_stream(str(old), force=True) as stream:
        trace = explain.run("gpt", d_model=16, d_vocab=300, tokens="1,2,3", on_tensor=stream.add)
        stream.finish(trace)  # the error is raised at the latest here
    assert old.read_bytes() == b"the user's previous file" and _leftovers(old.parent) == []


def test_a_block_left_without_finishing_keeps_nothing(tmp_path) -> None:
    path = tmp_path / "t.npz"
    with pytest.raises(AssertionError, match="without finishing"), save_stream(str(path), force=False) as stream:
        explain.run("gpt", d_model=16, d_vocab=300, tokens="1,2,3", on_tensor=stream.add)
    assert not path.exists() and _leftovers(tmp_path) == []


def test_safetensors_and_no_save_are_written_after_the_run(tmp_path) -> None:
    with save_stream(str(tmp_path / "t.safetensors"), force=False) as stream:
        assert stream is None
    with save_stream(None, force=False) as stream:
        assert stream is None
    assert os.listdir(tmp_path) == []
