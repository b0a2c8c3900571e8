"""The bad-input suite: every command, option and file format given something wrong, each case a subprocess
(``python -m explain …``) in a folder of generated fixtures (:mod:`badfixtures`).

Every case must end the way the house style says bad input ends: exit 1 (domain) or 2 (usage), exactly one
line on stderr starting ``Error:``, nothing on stdout, no traceback, no control character from a file on
either stream, nothing in the folder created or changed, and no more than 2 s of CPU and 1 GiB of memory
(measured by ``wait4``: CPU time rather than wall time, so a loaded machine does not fail the suite; a hang
is caught by a 60 s wall-clock timeout).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import unicodedata
from pathlib import Path

import pytest
from badfixtures import ESC, GIANT, make

CPU_LIMIT = 2.0  # seconds of user + system time
RSS_LIMIT = 2**30  # bytes


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make(tmp_path_factory.mktemp("bad"))


def _snapshot(d: Path) -> dict[str, tuple]:
    """Every entry under ``d``: kind, size and modification time (links not followed)."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[os.path.relpath(p, d)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def run_explain(args: list[str], cwd: Path, stdout: int | None = subprocess.PIPE) -> tuple[int, str, str, float, int]:
    """``python -m explain ARGS`` in ``cwd``: (exit code, stdout, stderr, CPU seconds, peak RSS in bytes), the
    last two from ``wait4`` on the child itself."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "explain", *args], cwd=cwd, stdout=stdout,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    streams: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda k=k, f=f: streams.__setitem__(k, f.read()))
               for k, f in (("out", proc.stdout), ("err", proc.stderr)) if f is not None]
    for t in readers:
        t.start()
    killer = threading.Timer(60, proc.kill)  # a hang fails the case instead of the suite
    killer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    for t in readers:
        t.join()
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()
    assert proc.returncode != -9, f"explain {' '.join(args)[:200]} did not finish in 60 s"
    return (proc.returncode, streams.get("out", b"").decode("utf-8", "replace"),
            streams["err"].decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)


def controls(text: str) -> list[str]:
    """Control characters in ``text`` other than newline (escape, CSI, bell, …)."""
    return sorted({repr(c) for c in text if c != "\n" and (unicodedata.category(c) == "Cc" or c in "\u202e")})


def assert_refused(fx: Path, args: list[str], codes: tuple[int, ...] = (1, 2), needles: tuple[str, ...] = (),
                   stdout: int | None = subprocess.PIPE) -> str:
    """Run a bad case and check every promise of the suite; returns the error line."""
    before = _snapshot(fx)
    code, out, err, cpu, rss = run_explain(args, fx, stdout)
    shown = f"explain {' '.join(args)[:200]}\nstdout: {out[:500]!r}\nstderr: {err[:2000]!r}"
    assert code in codes, shown
    assert "Traceback" not in err + out, shown
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), shown
    assert out == "", shown
    assert not controls(out + err), (controls(out + err), shown)
    assert _snapshot(fx) == before, f"the folder changed\n{shown}"
    assert cpu < CPU_LIMIT, f"{cpu:.2f} s of CPU\n{shown}"
    assert rss < RSS_LIMIT, f"{rss / 2**20:.0f} MiB\n{shown}"
    for n in needles:
        assert n in lines[0], (n, shown)
    return lines[0]


# (id, arguments, words the error must contain)
CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    # -- terminal control sequences from files: shown escaped, never sent
    ("toml-key-escape", ["tutorial", "check", "tut_key.toml"], ("\\x1b",)),
    ("toml-step-escape", ["tutorial", "tut_step.toml", "--plain"], ("\\x1b",)),
    ("toml-answer-escape", ["tutorial", "check", "tut_question.toml"], ()),
    ("safetensors-name-escape", ["run", "gpt", "--checkpoint", "ck_esc", "--tokens", "1,2", "--plain"], ("\\x1b",)),
    ("npz-member-escape", ["run", "attention", "--d-model", "4", "--weights", "w_esc.npz", "--plain"], ()),
    ("csv-cell-escape", ["run", "simple", "--embeddings", "emb_bad.csv", "--plain"], ("emb_bad.csv:2",)),
    ("json-string-escape", ["run", "simple", "--embeddings", "emb_string.json", "--plain"], ("string",)),
    ("text-escape", ["run", "gpt", "--text", ESC, "--tokens", "1", "--plain"], ()),
    # -- declared sizes refused before allocating
    ("npy-huge-header", ["run", "simple", "--embeddings", "emb_huge.npy", "--plain"], ("1000000",)),
    ("npy-truncated", ["run", "simple", "--embeddings", "emb_truncated.npy", "--plain"], ("truncated",)),
    ("npy-bad-header", ["run", "simple", "--embeddings", "emb_badheader.npy", "--plain"], ()),
    ("npz-huge-header", ["run", "simple", "--embeddings", "emb_huge.npz", "--plain"], ("1000000",)),
    ("npz-zip-bomb-embeddings", ["run", "simple", "--embeddings", "bomb.npz", "--plain"], ("GiB",)),
    ("npz-zip-bomb-weights", ["run", "attention", "--d-model", "4", "--weights", "bomb.npz", "--plain"], ()),
    ("npz-weights-huge-member", ["run", "attention", "--d-model", "4", "--weights", "w_huge.npz", "--plain"],
     ("100000",)),
    ("toml-shape-table", ["tutorial", "check", "tut_shape.toml"], ("100000",)),
    ("toml-weights-bomb", ["tutorial", "check", "tut_bomb.toml"], ()),
    ("shapes-huge-context-seq", ["shapes", "gpt", "--context", "1" + "0" * 15, "--seq", "1" + "0" * 15],
     ("maximum",)),
    ("shapes-huge-vocab", ["shapes", "gpt", "--vocab", "100000000"], ("maximum",)),
    ("run-huge-vocab", ["run", "gpt", "--vocab", "9000000", "--d-model", "1024", "--plain"], ("GiB",)),
    ("huge-token-id", ["shapes", "gpt", "--tokens", "1,99999999"], ("vocabulary of",)),
    ("huge-token-id-run", ["run", "gpt", "--tokens", "1,99999999", "--plain"], ("vocabulary of",)),
    ("checkpoint-token-id", ["shapes", "gpt", "--checkpoint", "ck_ok", "--tokens", "1,8"], ("vocabulary of 8",)),
    ("run-wide", ["run", "gpt", "--d-model", "100000", "--heads", "1", "--plain"], ("GiB",)),
    ("run-wide-deep", ["run", "gpt", "--layers", "1000", "--d-model", "100000", "--heads", "1", "--plain"],
     ("TiB",)),
    ("export-wide", ["export", "gpt", "--d-model", "100000", "--heads", "1", "-o", "x.py"], ("GiB",)),
    ("params-wide", ["params", "gpt", "--d-model", "100000", "--heads", "1", "-o", "x.npz"], ("GiB",)),
    # -- huge layer counts: run, shapes, export, params, tutorial, checkpoint
    *[(f"{cmd}-layers-1e{k}", [cmd, "gpt", "--layers", str(10**k), *extra], ("maximum",))
      for k in (4, 6, 8) for cmd, extra in (("run", ["--plain"]), ("shapes", []), ("export", ["-o", "x.py"]),
                                             ("params", ["-o", "x.npz"]))],
    ("tutorial-layers-1e7", ["tutorial", "check", "tut_layers.toml"], ("maximum",)),
    ("tutorial-layers-1e6", ["tutorial", "tut_layers6.toml", "--plain"], ("maximum",)),
    ("checkpoint-layers-1e7", ["run", "gpt", "--checkpoint", "ck_layers", "--tokens", "1", "--plain"], ("maximum",)),
    ("checkpoint-layers-1e4-shapes", ["shapes", "gpt", "--checkpoint", "ck_layers4", "--tokens", "1"],
     ("maximum",)),
    # -- readers without bounds
    ("json-deep-embeddings", ["run", "simple", "--embeddings", "emb_deep.json", "--plain"], ("nested",)),
    ("json-deep-config", ["shapes", "gpt", "--checkpoint", "ck_deep"], ("nested",)),
    ("json-deep-tokenizer", ["shapes", "gpt", "--checkpoint", "ck_tokdeep", "--text", "hi"], ("nested",)),
    ("tokenizer-hostile-regex", ["run", "gpt", "--checkpoint", "ck_tokhostile", "--text", "a" * 3000, "--plain"],
     ("ck_tokhostile/tokenizer.json", "--tokens")),
    ("json-tokenizer-wrong-type", ["shapes", "gpt", "--checkpoint", "ck_toktype", "--text", "hi"], ()),
    ("json-config-list", ["shapes", "gpt", "--checkpoint", "ck_list"], ("JSON object",)),
    ("json-config-bool", ["shapes", "gpt", "--checkpoint", "ck_bool"], ("n_layer",)),
    ("toml-deep-array", ["tutorial", "check", "tut_deep.toml"], ("nested",)),
    ("toml-deep-table", ["tutorial", "check", "tut_deep_table.toml"], ("nested",)),
    ("toml-not-utf8", ["tutorial", "check", "tut_binary.toml"], ("UTF-8",)),
    ("csv-long-field", ["run", "simple", "--embeddings", "emb_long.csv", "--plain"], ("emb_long.csv:1",)),
    ("json-giant-int-embeddings", ["run", "simple", "--embeddings", "emb_giant.json", "--plain"], ("digits",)),
    ("json-giant-int-config", ["shapes", "gpt", "--checkpoint", "ck_giant"], ("digits",)),
    ("giant-int-option", ["shapes", "gpt", "--layers", GIANT], ("digits",)),
    ("giant-int-seed", ["run", "gpt", "--seed", GIANT, "--plain"], ("digits",)),
    ("giant-int-dim", ["check", "a @ b", "--shape", "a=n,m", "--shape", "b=m,k", "--dim", f"n={GIANT}",
                       "--dim", "m=2", "--dim", "k=2"], ()),
    ("giant-int-seq", ["shapes", "gpt", "--seq", GIANT], ("digits",)),
    ("giant-int-tokens", ["run", "gpt", "--tokens", GIANT, "--plain"], ()),
    ("giant-int-cell", ["run", "gpt", "--plain", "--match", "logits", "--cell", f"{GIANT},0"], ("digits",)),
    ("superscript-cell", ["run", "gpt", "--plain", "--match", "logits", "--cell", "²,0"], ("whole number",)),
    ("giant-int-slice", ["run", "gpt", "--plain", "--match", "logits", "--slice", f"pos={GIANT}"], ("digits",)),
    ("giant-int-tutorial", ["tutorial", "check", "tut_giant.toml"], ("maximum",)),
    ("corrupt-npz", ["run", "simple", "--embeddings", "emb_corrupt.npz", "--plain"], ("npz",)),
    ("corrupt-npz-weights", ["run", "attention", "--weights", "emb_corrupt.npz", "--plain"], ("npz",)),
    ("json-object-embeddings", ["run", "simple", "--embeddings", "emb_object.json", "--plain"], ("object",)),
    ("json-bool-embeddings", ["run", "simple", "--embeddings", "emb_bool.json", "--plain"], ("boolean",)),
    ("json-ragged-embeddings", ["run", "simple", "--embeddings", "emb_ragged.json", "--plain"], ("rectangular",)),
    ("json-syntax", ["run", "simple", "--embeddings", "emb_syntax.json", "--plain"], ("emb_syntax.json:2",)),
    ("tokens-superscript", ["run", "gpt", "--tokens", "1,²", "--plain"], ("²",)),
    ("tokens-negative", ["run", "gpt", "--tokens", "1,-2", "--plain"], ()),
    ("tutorial-weights-npy", ["tutorial", "check", "tut_weights_npy.toml"], ("npz",)),
    ("tutorial-weights-text", ["tutorial", "check", "tut_weights_text.toml"], ("npz",)),
    # -- odd numbers for generation: subnormal, NaN, negative, too many digits, too many new tokens
    ("temperature-subnormal", ["generate", "gpt", "--temperature", "1e-320"], ("too small to divide by",)),
    ("temperature-nan", ["generate", "gpt", "--temperature", "nan"], ("NaN",)),
    ("temperature-negative", ["generate", "gpt", "--temperature", "-1"], ("0 or more",)),
    ("lr-subnormal", ["run", "gpt", "--lr", "1e-320", "--plain"], ("1e-320", "smallest normal")),
    ("lr-nan", ["run", "gpt", "--lr", "nan", "--plain"], ("--lr",)),
    ("train-lr-nan", ["train", "gpt", "--lr", "nan", "-o", "never"], ("--lr", "nan")),
    ("train-lr-subnormal", ["train", "gpt", "--lr", "1e-320", "-o", "never"], ("smallest normal",)),
    ("max-new-tokens-negative", ["generate", "gpt", "--max-new-tokens", "-3"], ()),
    ("max-new-tokens-digits", ["generate", "gpt", "--max-new-tokens", GIANT], ("digits",)),
    ("max-new-tokens-million", ["generate", "gpt", "--max-new-tokens", "999000", "--context", "1000000"],
     ("TiB", "--max-new-tokens")),
    # -- small defects of the reliability review (issue 29, item 8)
    ("check-dim-4000-digits", ["check", "a.reshape(-1)", "--shape", "a=n,n", "--dim", "n=" + "9" * 4000],
     ("4,000 digits",)),
    ("check-flat-sum-999", ["check", "+".join(["a"] * 999), "--shape", "a=2,3"], ("chains 999 terms",)),
    ("checkpoint-tokenizer-folder", ["run", "gpt", "--checkpoint", "ck_tokdir", "--text", "a", "--plain"],
     ("tokenizer.json' is a folder",)),
    ("checkpoint-tokenizer-fifo", ["run", "gpt", "--checkpoint", "ck_tokfifo", "--text", "a", "--plain"],
     ("tokenizer.json' is a FIFO",)),
    ("checkpoint-weights-fifo", ["run", "gpt", "--checkpoint", "ck_wfifo", "--tokens", "1", "--plain"],
     ("model.safetensors' is a FIFO",)),
    ("output-target-folder", ["run", "attention", "--backward", "--output-target", "folder.npy", "--plain"],
     ("--output-target file", "is a folder")),
    ("output-target-txt", ["run", "attention", "--backward", "--output-target", "emb.txt", "--plain"],
     ("cannot read --output-target",)),
    # -- checkpoint folders whose files disagree (issue 29): refused on opening, even by shapes
    ("folder-vocab-vs-rows", ["shapes", "gpt", "--checkpoint", "ck_vocab", "--tokens", "1"],
     ("transformer.wte.weight", "shape (8, 4)", "vocab_size 16", "needs (16, 4)")),
    ("folder-config-deeper", ["run", "gpt", "--checkpoint", "ck_deeper", "--tokens", "1", "--plain"],
     ("no tensor 'transformer.h.1.ln_1.weight'", "n_layer 2")),
    ("folder-config-shallower", ["shapes", "gpt", "--checkpoint", "ck_shallower", "--tokens", "1"],
     ("'transformer.h.1.", "n_layer 1", "does not use")),
    ("folder-missing-tensor", ["run", "gpt", "--checkpoint", "ck_notensor", "--tokens", "1", "--plain"],
     ("no tensor 'transformer.h.0.mlp.c_fc.bias' of shape (16,)",)),
    ("folder-integer-tensor", ["shapes", "gpt", "--checkpoint", "ck_int", "--tokens", "1"], ("is I32",)),
    ("folder-tokenizer-vs-rows", ["run", "gpt", "--checkpoint", "ck_tokvocab", "--tokens", "1", "--plain"],
     ("has 20 tokens", "vocab_size 8")),
    ("folder-truncated-weights", ["shapes", "gpt", "--checkpoint", "ck_cut", "--tokens", "1"], ("cut short",)),
    ("folder-offsets-vs-shape", ["shapes", "gpt", "--checkpoint", "ck_offsets", "--tokens", "1"],
     ("shape (5,)", "needs 20 bytes")),
    ("folder-index-shard-gone", ["run", "llama", "--checkpoint", "ck_shard_gone", "--tokens", "1", "--plain"],
     ("lists the shard 'model-2.safetensors'",)),
    ("folder-index-wrong-shard", ["shapes", "llama", "--checkpoint", "ck_shard_wrong", "--tokens", "1"],
     ("in 'model-1.safetensors', which has no such tensor",)),
    ("folder-index-unlisted", ["run", "llama", "--checkpoint", "ck_shard_unlisted", "--tokens", "1", "--plain"],
     ("does not list",)),
    ("folder-llama-size", ["shapes", "llama", "--checkpoint", "ck_llama_size", "--tokens", "1"],
     ("mlp.gate_proj.weight", "intermediate_size 16", "needs (16, 4)")),
    ("gguf-truncated", ["run", "llama", "--checkpoint", "cut.gguf", "--tokens", "1", "--plain"], ("cut.gguf",)),
    ("gguf-absurd-counts", ["shapes", "llama", "--checkpoint", "counts.gguf", "--tokens", "1"], ("counts.gguf",)),
    ("corpus-not-utf8", ["train", "gpt", "--corpus", "corpus_bin.txt", "-o", "never"], ("UTF-8",)),
    ("corpus-empty", ["train", "gpt", "--corpus", "corpus_empty.txt", "-o", "never"], ("0 usable lines",)),
    ("corpus-fifo", ["train", "gpt", "--corpus", "fifo.npy", "-o", "never"], ("FIFO",)),
    # -- writes
    ("params-dangling-symlink", ["params", "attention", "-o", "dangling.npz"], ("symbolic link",)),
    ("params-folder", ["params", "attention", "-o", "folder.npy"], ()),
    ("params-missing-folder", ["params", "attention", "-o", "nowhere/x.npz"], ("does not exist",)),
    ("export-dangling-symlink", ["export", "gpt", "--step", "embed", "-o", "dangling.npy"], ()),
    # -- messages that mislead
    ("embeddings-folder", ["run", "simple", "--embeddings", "folder.npy", "--plain"], ("folder",)),
    ("embeddings-fifo", ["run", "simple", "--embeddings", "fifo.npy", "--plain"], ("FIFO",)),
    ("embeddings-device", ["run", "simple", "--embeddings", "/dev/zero", "--plain"], ("device",)),
    ("embeddings-loop", ["run", "simple", "--embeddings", "loop.npy", "--plain"], ("loop",)),
    ("embeddings-dangling", ["run", "simple", "--embeddings", "dangling.npy", "--plain"], ("symbolic link",)),
    ("weights-folder", ["run", "attention", "--weights", "folder.npy", "--plain"], ("folder",)),
    ("weights-text", ["run", "attention", "--weights", "notes.npz", "--plain"], ("not an .npz",)),
    ("tutorial-folder", ["tutorial", "check", "folder.npy"], ("folder",)),
    ("tutorial-fifo", ["tutorial", "fifo.npy", "--plain"], ()),
    ("embeddings-pickle", ["run", "simple", "--embeddings", "emb_pickle.npy", "--plain"], ("pickled",)),
    ("embeddings-text-as-npy", ["run", "simple", "--embeddings", "emb_text.npy", "--plain"], ("not a numpy",)),
    ("embeddings-member", ["run", "simple", "--embeddings", "emb_member.npz", "--plain"], ("not an .npy",)),
    ("embeddings-4d", ["run", "simple", "--embeddings", "emb_4d.npy", "--plain"], ("2-D", "3-D batch")),
    ("embeddings-txt", ["run", "simple", "--embeddings", "emb.txt", "--plain"], (".txt",)),
    ("embeddings-1e308", ["run", "simple", "--embeddings", "emb_1e308.npy", "--plain"], ("overflow",)),
    ("tokens-empty", ["run", "gpt", "--tokens", "", "--plain"], ("empty",)),
    ("embeddings-and-tokens", ["run", "attention", "--embeddings", "emb.npy", "--tokens", "1,2", "--plain"],
     ("not both",)),
    ("tutorial-tol-nan", ["tutorial", "check", "tut_tol.toml"], ("nan",)),
    ("tutorial-tol-inf", ["tutorial", "check", "tut_toptol.toml"], ("finite",)),
    ("checkpoint-is-file", ["shapes", "gpt", "--checkpoint", "emb.npy"], ("is a file",)),
    ("checkpoint-is-fifo", ["shapes", "gpt", "--checkpoint", "fifo.npy"], ("is a FIFO",)),
    ("checkpoint-is-device", ["run", "gpt", "--checkpoint", "/dev/zero", "--plain"], ("is a character device",)),
    ("no-such-tutorial", ["tutorial", "no-such-thing"], ("no tutorial",)),
    ("unknown-model", ["run", "gtp"], ("did you mean",)),
    ("seq-and-tokens", ["shapes", "gpt", "--seq", "4", "--tokens", "1,2"], ("not both",)),
    ("check-unparsable", ["check", "Q @@ K", "--shape", "Q=2,3", "--shape", "K=3,2"], ()),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_in_one_line(fx: Path, case: tuple[str, list[str], tuple[str, ...]]) -> None:
    _, args, needles = case
    assert_refused(fx, args, needles=needles)


def test_a_sharded_folder_whose_files_agree_runs(fx: Path) -> None:
    """The sharded folder the index cases break, whole: it opens and runs (the checks refuse only disagreement)."""
    code, out, err, _, _ = run_explain(["run", "llama", "--checkpoint", "ck_shard_ok", "--tokens", "1,2", "--plain"],
                                       fx)
    assert code == 0 and err == "", err
    assert "logits" in out


@pytest.mark.parametrize("args", [["shapes", "gpt"], ["run", "gpt", "--json"], ["run", "gpt", "--plain"],
                                  ["tutorial", "list"], ["check", "a @ b", "--shape", "a=2,3", "--shape", "b=3,4"],
                                  ["export", "gpt", "--random-weights", "--step", "embed", "-o", "-"]],
                         ids=["shapes", "run-json", "run-plain", "tutorial-list", "check", "export-stdout"])
def test_full_disk_on_stdout_is_one_line(fx: Path, args: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        line = assert_refused(fx, args, codes=(1,), stdout=full.fileno())
    assert "No space left" in line


def test_control_sequences_in_a_tutorial_are_shown_not_sent(fx: Path) -> None:
    """A tutorial whose title, narration, question and answer carry escape sequences walks through as text
    (exit 0): every sequence printed as its escape, none reaching the terminal."""
    code, out, err, _, _ = run_explain(["tutorial", "tut_display.toml", "--plain", "--answers"], fx)
    assert code == 0, err
    assert not controls(out + err), controls(out + err)
    assert out.count("\\x1b]2;pwned") >= 4, out  # title, narration, question, answer: each shown


def test_a_file_that_appears_during_the_run_is_not_overwritten(fx: Path, tmp_path: Path) -> None:
    """params opens its file for exclusive creation after the run: a file created meanwhile is kept."""
    from explain.core.errors import UsageError
    from explain.engine.weights import save_params

    target = tmp_path / "late.npz"
    target.write_text("mine")
    with pytest.raises(UsageError, match="exists; use --force"):
        save_params({"a": __import__("numpy").ones(2)}, target)
    assert target.read_text() == "mine"
