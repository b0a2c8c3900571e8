"""The memory refusal of a checkpoint run suggests only what such a run can change: its file sets every size, so
--layers, --vocab and --d-model (refused beside --checkpoint) are not offered; a shorter text and dropping
--backward are, and the advice works (the same run without --backward fits the same budget). A run with random
weights keeps its size options in the advice. The budget is set with EXPLAIN_MAX_BYTES on a small GGUF the
test writes (tests/helpers/gguf_files.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from gguf_files import write_gguf

import explain
from explain.cli import main
from explain.core.errors import ResourceError

TEXT = "The capital of France is"
BUDGET = "800000"  # bytes: the small model's forward fits in 80 % of it, its forward and backward do not
SIZE_OPTIONS = ("--layers", "--vocab", "--d-model")


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("memory") / "m.gguf", "Q4_1")


def _run(*args: str, budget: str = BUDGET):
    return CliRunner().invoke(main, list(args), env={"EXPLAIN_MAX_BYTES": budget}, catch_exceptions=False)


def _one_line(result) -> str:
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_checkpoint_backward_refusal_suggests_what_a_checkpoint_run_can_change(gguf: Path) -> None:
    line = _one_line(_run("run", "--checkpoint", str(gguf), "--text", TEXT, "--backward", "--plain"))
    assert "needs about" in line and "checkpoint's" in line
    assert "shorter --text" in line and "drop --backward" in line, line
    assert not any(opt in line for opt in SIZE_OPTIONS), line
    # the advice works: the same run without --backward fits the same budget
    fits = _run("run", "--checkpoint", str(gguf), "--text", TEXT, "--plain")
    assert fits.exit_code == 0, fits.output


def test_checkpoint_whose_weights_alone_do_not_fit(gguf: Path) -> None:
    line = _one_line(_run("run", "--checkpoint", str(gguf), "--text", "The", "--plain", budget="100000"))
    assert "weights alone do not fit" in line and "smaller checkpoint" in line, line
    assert not any(opt in line for opt in SIZE_OPTIONS + ("shorter",)), line


def test_random_weights_keep_their_size_options() -> None:
    line = _one_line(_run("run", "llama", "--backward", "--plain", budget="20000"))
    assert "--layers" in line and "--vocab" in line, line


def test_backward_added_later_to_a_checkpoint_run(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI's r key records the backward pass on a trace already run: its refusal speaks of the checkpoint
    too."""
    trace = explain.run("llama", checkpoint=str(gguf), text=TEXT)
    monkeypatch.setenv("EXPLAIN_MAX_BYTES", BUDGET)
    with pytest.raises(ResourceError) as err:
        explain.engine.api.with_backward(trace)
    assert "drop --backward" in str(err.value) and not any(opt in str(err.value) for opt in SIZE_OPTIONS)


def test_an_out_of_memory_it_could_not_estimate_still_suggests_what_works(gguf: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The last resort (a MemoryError no estimate foresaw) does not know whether the run had a checkpoint: it
    offers the size options only for a run without one."""
    def out_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(explain.engine.api, "run", out_of_memory)
    line = _one_line(_run("run", "--checkpoint", str(gguf), "--text", TEXT, "--plain"))
    assert "ran out of memory" in line and "shorter input" in line and "drop --backward" in line
    assert "without --checkpoint, fewer --layers" in line, line
