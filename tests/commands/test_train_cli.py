"""``explain train``: a short run saves a folder that ``--checkpoint`` reopens; Ctrl-C (SIGINT) stops at the end
of a step and leaves a whole checkpoint; bad input is one line."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from dataclasses import replace

import pytest
from clitools import invoke, one_line_error

import explain
from explain.train import Settings, train_model

SMALL = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32", "--context", "16"]


def test_short_run_saves_a_folder_that_reopens(tmp_path):
    out = tmp_path / "m"
    r = invoke("train", "gpt", "--steps", "4", "--batch-size", "2", *SMALL, "-o", str(out))
    assert r.exit_code == 0, r.output
    assert "4 steps" in r.output and f"explain run gpt --checkpoint {out}" in r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("step 4/4  loss") and lines[0].endswith("left  saved"), lines  # one log line
    assert lines[1].startswith("4 steps in") and len(lines[1]) <= 80, lines  # a terminal wrapped it mid-number
    assert lines[2] == f"saved '{out}'; open it with: explain run gpt --checkpoint {out}"
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "explain_train.json", "model.safetensors",
                                                     "tokenizer.json"]
    tr = explain.run("gpt", checkpoint=str(out), text="the cat sat on the mat")
    assert tr.config.d_model == 16 and tr.config.n_ctx == 16
    r = invoke("train", "gpt", "--steps", "2", "--batch-size", "2", *SMALL, "-o", str(out), "--force")  # its own
    assert r.exit_code == 0 and json.loads((out / "explain_train.json").read_text())["step"] == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_stop_request_ends_at_a_step_with_a_whole_checkpoint(tmp_path):
    asked = []
    cfg, res = train_model("gpt", output=tmp_path / "m", settings=Settings(steps=50, batch_size=2),
                           should_stop=lambda: len(asked) >= 3, on_progress=asked.append, d_model=16, n_heads=2,
                           n_layers=1, d_ff=32, n_ctx=16)
    # asked while step 4 runs (after 3 reports): step 4 ends, is saved, and nothing more runs
    assert res.stopped and len(res.losses) == 4
    assert json.loads((tmp_path / "m" / "explain_train.json").read_text())["step"] == 4
    explain.run("gpt", checkpoint=str(tmp_path / "m"), text="the cat")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_keeps_a_whole_checkpoint(tmp_path):
    out = tmp_path / "m"
    cmd = [sys.executable, "-m", "explain", "train", "gpt", "--steps", "100000", "--batch-size", "2", *SMALL,
           "-o", str(out)]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stderr.readline()  # the first progress line (step 25, off a terminal): training is under way
    assert line.startswith("step 25/"), line
    p.send_signal(signal.SIGINT)
    stdout, _ = p.communicate(timeout=120)
    assert p.returncode == 0, stdout
    assert "stopped at step" in stdout and "(Ctrl-C)" in stdout
    step = json.loads((out / "explain_train.json").read_text())["step"]
    assert 25 <= step < 100000
    explain.run("gpt", checkpoint=str(out), text="the cat")


def test_a_second_ctrl_c_stops_at_once_and_names_the_checkpoint_kept(tmp_path, monkeypatch):
    """Session 9: Ctrl-C during a big model's 16-s step could not stop it (every Ctrl-C only asked for the end of
    the step). The first asks, the second raises; the command says which checkpoint the folder holds."""
    import explain.train
    from explain.commands.train import StopOnCtrlC

    stop = StopOnCtrlC()
    stop(signal.SIGINT, None)
    assert stop.asked
    with pytest.raises(KeyboardInterrupt):
        stop(signal.SIGINT, None)

    def interrupted(model, corpus, out, settings, on_progress, should_stop, force, **sizes):
        train_model(model, corpus, out, replace(settings, steps=2), **sizes)  # a whole checkpoint of step 2
        raise KeyboardInterrupt  # the second Ctrl-C, in the steps after it

    monkeypatch.setattr(explain.train, "train_model", interrupted)
    r = invoke("train", "gpt", "--batch-size", "2", *SMALL, "-o", str(tmp_path / "m"))
    one_line_error(r, 1, "stopped at once by a second Ctrl-C during step 1",
                   f"'{tmp_path / 'm'}' holds the checkpoint of step 2")
    explain.run("gpt", checkpoint=str(tmp_path / "m"), text="the cat")
    monkeypatch.setattr(explain.train, "train_model", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    one_line_error(invoke("train", "gpt", "-o", str(tmp_path / "none")), 1, "nothing was saved")
    # over an earlier run's checkpoint (--force) a run that saved nothing does not call it its own (issue 36 item 7)
    one_line_error(invoke("train", "gpt", "-o", str(tmp_path / "m"), "--force"), 1,
                   f"this run saved nothing; '{tmp_path / 'm'}' still holds the earlier run's checkpoint of step 2")
    assert not (tmp_path / "none").exists()


def test_bad_input_is_one_line(tmp_path):
    one_line_error(invoke("train", "simple"), 2, "use 'gpt'")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    one_line_error(invoke("train", "gpt", "--steps", "1", "-o", str(mine)), 1, "did not write", "new folder")
    assert (mine / "notes.txt").read_text() == "keep"
    one_line_error(invoke("train", "gpt", "--corpus", str(tmp_path / "none.txt"), "-o", str(tmp_path / "x")), 1,
                   "corpus")
    (tmp_path / "one.txt").write_text("only one line\n")
    one_line_error(invoke("train", "gpt", "--corpus", str(tmp_path / "one.txt"), "-o", str(tmp_path / "x")), 1,
                   "has 1 usable line;", "at least 2 lines")
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00 not text")
    one_line_error(invoke("train", "gpt", "--corpus", str(tmp_path / "bin.txt"), "-o", str(tmp_path / "x")), 1,
                   "UTF-8")
    assert not (tmp_path / "x").exists()


def test_what_training_cannot_use_is_refused_with_trains_own_fix(tmp_path):
    """Session 9: `train llama` was a traceback (KeyError 'W_pos'); `--context 1` trained on no targets and saved
    NaN weights; `--heads 3` suggested --d-head, which train has not."""
    one_line_error(invoke("train", "llama", "-o", str(tmp_path / "x")), 2, "use 'gpt', not 'llama'")
    one_line_error(invoke("train", "gpt", "-o", ""), 2, "-o is empty", "-o my-gpt")  # was "give a file name"
    one_line_error(invoke("train", "gpt", "--context", "1", "-o", str(tmp_path / "x")), 2, "--context 2 or more")
    r = invoke("train", "gpt", "--heads", "3", "-o", str(tmp_path / "x"))
    one_line_error(r, 2, "not divisible by 3 heads", "--heads a divisor of 64")
    assert "--d-head" not in r.output
    assert not (tmp_path / "x").exists()


def test_a_corpus_too_short_to_hold_lines_out_has_no_held_out_loss(tmp_path):
    """Session 9: with fewer than 10 lines nothing is held out, yet a 'held-out' loss was drawn and reported: the
    training lines' loss under that name."""
    (tmp_path / "c.txt").write_text("red fish blue fish\none fish two fish\nold fish new fish\n")
    out = tmp_path / "m"
    r = invoke("train", "gpt", "--steps", "3", "--batch-size", "2", *SMALL, "--corpus", str(tmp_path / "c.txt"),
               "-o", str(out))
    assert r.exit_code == 0, r.output
    assert not re.search(r"held-out \d", r.output) and "(nothing held out: fewer than 10 lines)" in r.output
    assert json.loads((out / "explain_train.json").read_text())["val_losses"] == []


def test_help_speaks_of_what_train_trains():
    """Session 9: train's --qkv-bias help spoke of Qwen2 and Llama blocks (run's), and not of its default."""
    r = invoke("train", "--help")
    assert r.exit_code == 0 and "Llama" not in r.output and "Qwen2" not in r.output
    assert "(default on, as GPT-2 and the shipped model" in " ".join(r.output.split())


def test_a_corpus_file_trains(tmp_path):
    (tmp_path / "c.txt").write_text("\n".join(["red fish blue fish", "one fish two fish"] * 10))
    out = tmp_path / "m"
    r = invoke("train", "gpt", "--steps", "3", "--batch-size", "2", *SMALL, "--corpus", str(tmp_path / "c.txt"),
               "-o", str(out))
    assert r.exit_code == 0, r.output
    vocab = json.loads((out / "tokenizer.json").read_text())["model"]["vocab"]
    assert {"red", "fish", "blue", "two"} <= set(vocab)
    # session 9: a UTF-8 byte-order mark (as Notepad writes) became the invisible word '\ufeff'
    (tmp_path / "bom.txt").write_bytes("\ufeffred fish\r\nblue fish\r\none fish\r\n".encode())
    r = invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "--corpus", str(tmp_path / "bom.txt"),
               "-o", str(tmp_path / "b"))
    assert r.exit_code == 0, r.output
    vocab = json.loads((tmp_path / "b" / "tokenizer.json").read_text())["model"]["vocab"]
    assert "red" in vocab and all(w.isascii() for w in vocab)


def test_progress_reports_each_step():
    seen = []
    train_model("gpt", settings=replace(Settings(), steps=3, batch_size=2, eval_every=2), on_progress=seen.append,
                d_model=16, n_heads=2, n_layers=1, d_ff=32, n_ctx=16)
    assert [p.step for p in seen] == [1, 2, 3]
    assert [p.val_loss is not None for p in seen] == [False, True, True]
    assert all(p.tokens_per_s > 0 for p in seen)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_progress_view_fits_the_terminal(size):
    """What tmux showed: the progress line, the bar, the whole curve with its top and bottom labels, the
    legend and the Ctrl-C hint, within the terminal's height (the last line free for the cursor)."""
    import io

    from rich.console import Console

    from explain.commands.train import _View
    from explain.train.loop import Progress

    view = _View(200)
    view.console = Console(file=io.StringIO(), width=size[0], height=size[1], color_system=None)
    for i in range(1, 91):  # what update() keeps, without its line-per-evaluation output off a terminal
        view.last = Progress(i, 200, 4.3 - 0.01 * i, 4.0 - 0.01 * i if i % 25 == 0 else None, 1e-3, 3000.0, 0.2 * i)
        view.losses.append(view.last.loss)
        if view.last.val_loss is not None:
            view.held.append((i, view.last.val_loss))
    view.console.print(view._render())
    lines = view.console.file.getvalue().splitlines()
    assert len(lines) <= size[1] - 1
    assert lines[0].startswith("step 90/200  loss 3.4000  lr 1.00e-03")
    assert re.match(r"  4\.2\d\d┤·", lines[2]), lines[2]  # the top row (its first steps' mean), labelled
    assert any(ln.lstrip().startswith("3.") and "┤" in ln for ln in lines[3:])
    assert lines[-1].startswith("Ctrl-C stops after this step")
    assert "● held-out loss" in lines[-2]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_the_progress_line_keeps_the_time_left_and_saved_and_the_end_drops_the_hint(size):
    """Session 9, tmux at 80x24: the line was cut at the width ("… tok/s  4 s, ~4 s": "left" and "saved" gone),
    and the finished run's picture still said "Ctrl-C stops after this step"."""
    import io

    from rich.console import Console

    from explain.commands.train import _View
    from explain.train.loop import Progress

    view = _View(2000)
    view.console = Console(file=io.StringIO(), width=size[0], height=size[1], color_system=None)
    view.last = Progress(1250, 2000, 1.2345, 1.3456, 1.23e-3, 17366.0, 60.0, saved=True)
    view.losses, view.held = [1.2345] * 1250, [(1250, 1.3456)]
    line = view._line(view.last, size[0])
    assert len(line) <= size[0] and line.startswith("step 1250/2000  loss 1.2345  held-out 1.3456")
    assert line.endswith("60 s, ~36 s left  saved"), line
    assert ("tok/s" in line) == (size[0] >= 120)  # the speed gives way first
    view.console.print(view._render(running=False))
    lines = view.console.file.getvalue().splitlines()
    assert "Ctrl-C" not in lines[-1] and "● held-out loss" in lines[-1]


def test_on_a_terminal_the_view_starts_at_once_and_a_refusal_leaves_its_error_alone():
    """Session 9, tmux at 80x24: a big model's first step (16 s) showed a blank screen; a refused corpus left a
    'starting…' line above its one 'Error:' line."""
    import io

    from rich.console import Console

    from explain.commands.train import _View

    def on_terminal(steps: int) -> _View:
        view = _View(steps)
        view.console = Console(file=io.StringIO(), width=80, height=24, force_terminal=True, color_system=None)
        return view

    view = on_terminal(100)
    with pytest.raises(ValueError), view:
        assert "step 1/100 under way" in view.console.file.getvalue()  # drawn before the first step ends
        raise ValueError("a refusal")
    end = view.console.file.getvalue().rsplit("\x1b[2K", 1)[-1]  # what the terminal keeps after the last erase
    assert "under way" not in end and "starting" not in end


def test_a_run_that_will_not_fit_is_refused_before_allocating(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLAIN_MAX_BYTES", str(10**6))  # 1 MB: the shipped sizes need more
    r = invoke("train", "gpt", "--steps", "1", "-o", str(tmp_path / "x"))
    one_line_error(r, 1, "needs about", "at most", "--batch-size")  # train's own options (no --vocab, no input)
    assert "--vocab" not in r.output and "input" not in r.output
    assert not (tmp_path / "x").exists()


def test_one_step_is_said_in_the_singular(tmp_path):
    """Issue 26, defect 9: '1 steps'."""
    r = invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "-o", str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    assert "1 step in" in r.output and "1 steps" not in r.output


def _checkpoint_folder(tmp_path):
    out = tmp_path / "m"
    assert invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "-o", str(out)).exit_code == 0
    return out


def test_a_user_file_beside_a_checkpoint_is_never_deleted(tmp_path):
    """Issue 36 item 2: a save replaces its folder whole, so a folder that holds anything else is refused before
    training (it once deleted a user's notes.txt kept beside the checkpoint, with no --force)."""
    out = _checkpoint_folder(tmp_path)
    (out / "notes.txt").write_text("mine")
    for extra in ([], ["--force"]):
        r = invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "-o", str(out), *extra)
        one_line_error(r, 1, "'notes.txt'", "new folder")
        assert (out / "notes.txt").read_text() == "mine"


def test_an_earlier_checkpoint_is_replaced_only_with_force(tmp_path):
    out = _checkpoint_folder(tmp_path)
    r = invoke("train", "gpt", "--steps", "2", "--batch-size", "2", *SMALL, "-o", str(out))
    one_line_error(r, 2, "holds an earlier checkpoint; add --force")
    assert json.loads((out / "explain_train.json").read_text())["step"] == 1  # untouched
    r = invoke("train", "gpt", "--steps", "2", "--batch-size", "2", *SMALL, "-o", str(out), "--force")
    assert r.exit_code == 0 and json.loads((out / "explain_train.json").read_text())["step"] == 2


def test_the_working_folder_its_ancestors_and_the_corpus_folder_are_refused_before_training(tmp_path, monkeypatch):
    work = tmp_path / "thesis"
    work.mkdir()
    (work / "thesis.tex").write_text("mine")
    corpus = work / "corpus.txt"
    corpus.write_text("the cat sat on the mat\n" * 20)
    monkeypatch.chdir(work)
    for out, said in ((".", "the working folder"), (str(work), "the working folder"),
                      (str(tmp_path), "holds the working folder")):
        r = invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "-o", out, "--force")
        one_line_error(r, 2, said)  # one line: refused before training, not after
    monkeypatch.chdir(tmp_path)
    r = invoke("train", "gpt", "--steps", "1", "--batch-size", "2", *SMALL, "--corpus", str(corpus), "-o",
               str(work), "--force")
    one_line_error(r, 2, "holds the corpus")
    assert sorted(p.name for p in work.iterdir()) == ["corpus.txt", "thesis.tex"]


def test_a_file_put_beside_the_checkpoint_during_training_is_kept(tmp_path):
    """The check is made again at every save: a file that appears meanwhile stops the save, not the user."""
    from explain.io.atomic import WriteError
    from explain.train.hf import save_folder

    out = _checkpoint_folder(tmp_path)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(WriteError, match="notes.txt"):
        save_folder(out, {}, None, [], {})
    assert (out / "notes.txt").read_text() == "mine"


def test_a_corpus_with_too_many_words_names_the_corpus_not_vocab(tmp_path, monkeypatch):
    """Issue 36 item 7: the refusal named --vocab, which explain train does not have (the corpus sets it)."""
    import explain.train

    monkeypatch.setattr(explain.train, "MAX_VOCAB", 50)
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"w{i} x{i} y{i}" for i in range(40)) + "\n")
    r = invoke("train", "gpt", "--steps", "1", "--corpus", str(corpus))
    one_line_error(r, 1, "the corpus has", "different words", "smaller corpus")
    assert "--vocab" not in r.output


def test_running_out_of_memory_in_train_names_trains_options(monkeypatch, capsys):
    """Issue 36 item 7: a MemoryError while training (a large corpus) advised "drop --backward", an option train
    does not have."""
    import explain.train
    from explain.cli import main

    monkeypatch.setattr(explain.train, "train_model", lambda *a, **k: (_ for _ in ()).throw(MemoryError))
    with pytest.raises(SystemExit) as code:
        main(["train", "gpt", "--steps", "1"])
    err = capsys.readouterr().err
    assert code.value.code == 1 and "--corpus" in err and "--backward" not in err, err
