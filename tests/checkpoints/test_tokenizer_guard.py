"""explain.checkpoints.tokenizer_guard: a tokenizer whose regexes are all known runs in process; any other runs in a
subprocess with a CPU-time limit; a panic inside tokenizers (a BaseException) or running out of the limit is a
one-line InputError naming the file, never a Rust traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from badfixtures import hostile_tokenizer  # noqa: E402

from explain.checkpoints import tokenizer_guard as guard  # noqa: E402
from explain.core.errors import InputError  # noqa: E402

pytest.importorskip("tokenizers")
GPT2_TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny" / "tokenizer.json"


def _write(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / "tokenizer.json"
    p.write_text(json.dumps(data))
    return p


def test_known_pre_tokenizers_run_in_process() -> None:
    data = json.loads(GPT2_TINY.read_text())
    assert guard.regexes(data) == []  # ByteLevel carries GPT-2's regex inside, not in the file
    tok = guard.load(GPT2_TINY, data)
    assert isinstance(tok, guard.InProcess) and tok.encode("hello there")
    for known in (guard.GPT2, guard.LLAMA3, guard.QWEN2):
        assert isinstance(guard.load(GPT2_TINY, hostile_tokenizer(known)), guard.InProcess)


def test_an_unknown_regex_runs_in_a_subprocess_with_the_same_ids(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    data = hostile_tokenizer(r"\s+")  # harmless, but not a known one
    path = _write(tmp_path, data)
    tok = guard.load(path, data)
    assert isinstance(tok, guard.Sandboxed) and guard.unknown_regexes(data) == [r"\s+"]
    text = "abc dd ghh"
    assert tok.encode(text) == Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids


def test_a_panic_is_one_line_naming_the_file(tmp_path: Path, capfd) -> None:
    data = hostile_tokenizer()
    path = _write(tmp_path, data)
    with pytest.raises(InputError, match=r"tokenizer\.json.*--tokens") as err:
        guard.load(path, data).encode("a" * 3000)
    assert "\n" not in str(err.value)
    assert "panicked" not in capfd.readouterr().err  # the Rust message stayed in the subprocess


def test_running_out_of_the_cpu_limit_is_refused(tmp_path: Path, monkeypatch) -> None:
    """The limit itself, with a child that never ends (no regex found is slow enough to be a fixed test)."""
    data = hostile_tokenizer(r"\s+")
    monkeypatch.setattr(guard, "_CHILD", "while True: pass")
    # the CPU limit ends it after 1 s of CPU; on a machine so loaded that a minute passes first, the wall guard
    with pytest.raises(InputError, match=r"tokenizer\.json' (has a pre-tokenizer .* ran out of its 1 s|did not finish)"):
        guard.load(_write(tmp_path, data), data).encode("abc")


def test_a_normalizers_regex_is_called_a_normalizers(tmp_path: Path, monkeypatch) -> None:
    """Issue 36 item 7: an unknown regex in the normalizer was called a pre-tokenizer regex."""
    data = hostile_tokenizer(r"\s+")
    data["normalizer"] = {"type": "Replace", "pattern": {"Regex": "(a+)+$"}, "content": ""}
    data["pre_tokenizer"] = None
    monkeypatch.setattr(guard, "_CHILD", "while True: pass")
    tok = guard.load(_write(tmp_path, data), data)
    assert tok.part == "normalizer"
    with pytest.raises(InputError, match=r"has a normalizer regex explain does not know|did not finish"):
        tok.encode("abc")
    data["normalizer"] = None
    data["pre_tokenizer"] = hostile_tokenizer(r"\s+")["pre_tokenizer"]
    assert guard.load(_write(tmp_path, data), data).part == "pre-tokenizer"
