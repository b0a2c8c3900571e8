"""write_export and export_source with bad input: every problem is one line, an ExplainError raised before
anything is written; an existing file (script or sidecar) is never overwritten without force, byte for byte."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import explain
import explain.export as export_mod
from explain.core.errors import ExplainError, StepNotFound, UsageError
from explain.engine.api import plan
from explain.export import default_filename, export_source, write_export


@pytest.fixture(scope="module")
def gpt():
    return explain.run("gpt")


def one_line(err: pytest.ExceptionInfo, *needles: str) -> None:
    msg = str(err.value)
    assert "\n" not in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_returns_the_path_and_writes_a_sidecar_only_when_needed(gpt, tmp_path: Path) -> None:
    small = write_export(gpt, tmp_path / "scores.py", steps=["blocks.0.attn.scores"])
    assert small == tmp_path / "scores.py" and small.exists() and not (tmp_path / "scores.npz").exists()
    whole = write_export(gpt, str(tmp_path / "gpt.py"))
    assert whole.exists() and (tmp_path / "gpt.npz").exists()


def test_export_source_returns_the_arrays_of_the_sidecar(gpt) -> None:
    text, arrays = export_source(gpt, sidecar_name="model.npz")
    assert "python model.py" in text and "model.npz" in text
    assert set(gpt.params) <= set(arrays)
    np.testing.assert_array_equal(arrays["blocks.0.attn.pattern"], gpt["blocks.0.attn.pattern"].output)
    assert "tokens" not in arrays and "targets" not in arrays  # token ids are always literals
    text, arrays = export_source(gpt, steps=["loss"])
    assert arrays == {} and "token_loss = np.array(" in text


def test_unknown_step_suggests_the_nearest(gpt, tmp_path: Path) -> None:
    with pytest.raises(StepNotFound) as err:
        write_export(gpt, tmp_path / "x.py", steps=["blocks.0.attn.score"])
    one_line(err, "blocks.0.attn.score", "did you mean", "'blocks.0.attn.scores'")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existing", ["x.py", "x.npz"])
def test_existing_files_are_kept_without_force(gpt, tmp_path: Path, existing: str) -> None:
    target = tmp_path / existing
    target.write_bytes(b"precious\x00bytes")
    with pytest.raises(UsageError) as err:
        write_export(gpt, tmp_path / "x.py")  # the whole run: needs x.npz too
    one_line(err, existing, "--force")
    assert target.read_bytes() == b"precious\x00bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == [existing]  # and the other file was not written
    write_export(gpt, tmp_path / "x.py", force=True)
    assert target.read_bytes() != b"precious\x00bytes"


def test_an_unneeded_sidecar_name_is_left_alone(gpt, tmp_path: Path) -> None:
    (tmp_path / "s.npz").write_bytes(b"old")
    write_export(gpt, tmp_path / "s.py", steps=["blocks.0.attn.scores"])
    assert (tmp_path / "s.npz").read_bytes() == b"old"


def test_bad_paths_and_formats(gpt, tmp_path: Path) -> None:
    cases = [
        (dict(path=tmp_path / "x.txt"), ("x.txt", "*.py")),
        (dict(path=tmp_path / "x.py", fmt="ipynb"), ("*.ipynb", "x.ipynb")),
        (dict(path=tmp_path / "x.py", fmt="pdf"), ("pdf", "py, ipynb")),
        (dict(path=tmp_path / "missing" / "x.py"), ("does not exist",)),
        (dict(path=tmp_path), ("is a folder",)),  # what the path is comes first (explain.io.paths)
    ]
    (tmp_path / "dir.py").mkdir()
    cases.append((dict(path=tmp_path / "dir.py"), ("is a folder",)))
    (tmp_path / "file").write_text("")
    cases.append((dict(path=tmp_path / "file" / "x.py"), ("is a file, not a folder",)))
    for kwargs, needles in cases:
        path = kwargs.pop("path")
        with pytest.raises(UsageError) as err:
            write_export(gpt, path, steps=["loss"], **kwargs)
        one_line(err, *needles)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.py", "file"]


def unwritable_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if Path("/sys/kernel").is_dir():  # root may write anywhere on disk, but not to sysfs
        return Path("/sys/kernel")
    pytest.skip("no unwritable folder for root on this system")


def test_unwritable_path_is_one_line(gpt, tmp_path: Path) -> None:
    folder = unwritable_folder(tmp_path)
    with pytest.raises(ExplainError) as err:  # refused by the check, or by the open as root where it cannot know
        write_export(gpt, folder / "explain_export_test.py", steps=["loss"])
    one_line(err, "explain_export_test.py")
    assert not (folder / "explain_export_test.py").exists()


def test_a_failed_script_write_removes_the_sidecar_it_created(gpt, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The script and its sidecar are written together (explain.io.atomic.write_together): a failure while
    writing the sidecar leaves neither, nor a temporary file."""

    def failing(*args, **kwargs) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export_mod.np, "savez", failing)
    with pytest.raises(OSError):
        write_export(gpt, tmp_path / "x.py")
    assert list(tmp_path.iterdir()) == []


def test_shape_only_and_empty_selections_are_refused(gpt, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        export_source(plan("gpt"))
    one_line(err, "shape-only")
    with pytest.raises(UsageError) as err:
        export_source(gpt, steps=[])
    one_line(err, "no steps")


def test_steps_are_exported_in_trace_order(gpt) -> None:
    a, _ = export_source(gpt, steps=["blocks.0.attn.pattern", "blocks.0.attn.scores", "blocks.0.attn.scores"])
    b, _ = export_source(gpt, steps=["blocks.0.attn.scores", "blocks.0.attn.pattern"])
    assert a == b and a.index("blocks_0_attn_scores =") < a.index("blocks_0_attn_pattern =")


def test_default_filenames(gpt) -> None:
    assert default_filename(gpt, None) == "gpt.py"
    assert default_filename(gpt, ["blocks.0.attn.scores"]) == "gpt_blocks_0_attn_scores.py"
    names = gpt.names()
    rng = names[names.index("blocks.0.attn.q"): names.index("blocks.0.attn_out") + 1]
    assert default_filename(gpt, rng, ".ipynb") == "gpt_blocks_0_attn_q_to_blocks_0_attn_out.ipynb"


def test_missing_nbformat_is_reported_before_anything(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gpt) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "nbformat", None)
    with pytest.raises(ExplainError) as err:
        write_export(gpt, tmp_path / "n.ipynb", fmt="ipynb")
    one_line(err, "pip install '.[notebook]'")
