"""Output paths (issue 29): every writer (``params -o``, ``export -o``, a notebook, ``run --save``) given a path it must not
write refuses it in one line, exit 2, before the run, nothing in the folder changed, and never hangs (a FIFO
is never opened). The same check (:func:`explain.io.paths.check_output`) serves the TUI's dialogs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_bad_inputs import assert_refused

from explain.core.errors import UsageError
from explain.io.paths import check_output

LONG = "n" * 300

WRITERS = {"params": ["params", "attention", "--d-model", "4"],
           "export": ["export", "attention", "--d-model", "4", "--step", "embed"],
           "notebook": ["export", "attention", "--d-model", "4", "--format", "ipynb"],
           "save": ["run", "attention", "--d-model", "4", "--save"]}

# (id, -o value by writer suffix, extra args, words the error must contain)
PATHS = [
    ("existing-file", "exists{}", [], ("exists", "--force")),
    ("dangling-symlink", "dangling{}", [], ("symbolic link",)),
    ("folder", "folder.npy", ["--force"], ("is a folder",)),
    ("dot", ".", ["--force"], ("is a folder",)),
    ("fifo", "fifo.npy", ["--force"], ("FIFO",)),
    ("device-null", "/dev/null", ["--force"], ("character device",)),
    ("device-full", "/dev/full", ["--force"], ("character device",)),
    ("missing-folder", "nowhere/x{}", [], ("does not exist",)),
    ("file-as-folder", "exists{}/x{}", [], ("not a folder",)),
    ("300-byte-name", LONG + "{}", [], ("bytes, longer than the 255",)),
    ("no-such-user", "~nosuchuser_explain/x{}", [], ("no user 'nosuchuser_explain'",)),
]
SUFFIX = {"params": ".npz", "export": ".py", "notebook": ".ipynb", "save": ".npz"}


@pytest.fixture(scope="module")
def out_fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("outputs")
    for suffix in set(SUFFIX.values()):
        (d / f"exists{suffix}").write_text("the user's file")
        (d / f"dangling{suffix}").symlink_to(f"nowhere/target{suffix}")
    (d / "folder.npy").mkdir()
    os.mkfifo(d / "fifo.npy")
    return d


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize("case", PATHS, ids=[c[0] for c in PATHS])
def test_a_path_explain_must_not_write_is_refused(out_fx: Path, writer: str, case) -> None:
    _, pattern, extra, needles = case
    target = pattern.replace("{}", SUFFIX[writer])
    flag = [] if writer == "save" else ["-o"]  # run --save FILE
    assert_refused(out_fx, [*WRITERS[writer], *flag, target, *extra], codes=(2,), needles=needles)


def test_a_folder_without_write_permission_is_refused(out_fx: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:  # root ignores permission bits; a read-only part of /proc still refuses it
        locked = Path("/proc/sys")
        if os.access(locked, os.W_OK):
            pytest.skip("no folder this user cannot write in")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
    assert_refused(out_fx, [*WRITERS["params"], "-o", str(locked / "x.npz")], codes=(2,),
                   needles=("no permission",))


@pytest.mark.parametrize("name, words", [("a\0b.npz", "NUL"), ("", "give a file name"), ("   ", "give a file name")])
def test_names_no_command_line_can_carry_are_refused_by_the_check(name: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):  # a NUL cannot reach argv, but a TUI dialog can receive one
        check_output(name)


TRAIN_PATHS = [("dangling-symlink", "dangling.npz", ("symbolic link", "does not exist")),
               ("fifo", "fifo.npy", ("FIFO",)), ("device", "/dev/full", ("character device",)),
               ("file", "exists.npz", ("is a file",)), ("file-as-folder", "exists.npz/ck", ("is a file",)),
               ("300-byte-name", LONG, ("bytes, longer than the 255",)),
               ("no-such-user", "~nosuchuser_explain/ck", ("no user 'nosuchuser_explain'",)),
               ("the-working-folder", ".", ("is the working folder",))]


@pytest.mark.parametrize("case", TRAIN_PATHS, ids=[c[0] for c in TRAIN_PATHS])
def test_train_refuses_its_output_folder_before_training(out_fx: Path, case) -> None:
    """``explain train -o DIR`` (2,000 steps by default) checks DIR before the first step, as every writer
    checks its file: the suite's CPU limit would catch a refusal that came only at the first save, after
    training (a 300-byte name and ``emb.npy/ck`` ended there in tracebacks, ``~nosuchuser/ck`` made a folder
    named '~nosuchuser')."""
    _, target, needles = case
    assert_refused(out_fx, ["train", "gpt", "-o", target], needles=needles)
