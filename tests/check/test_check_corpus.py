"""The corpus of real shape bugs (tests/helpers/check_corpus.py): every correct line passes, every bug is caught
with a fix, and the fix, substituted into the bug's own text, passes with the same shape and axis names as the
bug's correct line. The substitution is done here, from the error's fix, so the corpus cannot agree with
itself by construction."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from check_corpus import BUGS, CORRECT, DIMS, FILE_BUGS, FILES, SHAPES

from explain.check import CheckShapeError, check
from explain.check.function import check_function
from explain.check.names import fmt_names
from explain.check.parse import parse_options

ARRAYS = {k: tuple(int(d) if d.isdigit() else d for d in v.split(",")) for k, v in SHAPES.items()}


def run(line: str):
    return check(line, ARRAYS, DIMS)


@pytest.mark.parametrize("cid", sorted(CORRECT))
def test_correct_lines_pass(cid: str) -> None:
    node = run(CORRECT[cid][2])
    assert node.shape is not None


@pytest.mark.parametrize("bid", sorted(BUGS))
def test_bug_is_caught_and_its_fix_gives_the_correct_lines_shape_and_names(bid: str) -> None:
    cid, _, line, fragment = BUGS[bid]
    with pytest.raises(CheckShapeError) as info:
        run(line)
    err = info.value
    assert err.fix is not None, f"{bid}: caught without a fix: {err}"
    start, end, text = err.fix
    assert text in str(err), f"{bid}: the fix is not named in the message: {err}"
    fixed = line[:start] + text + line[end:]
    assert fragment in fixed, f"{bid}: fixed to {fixed!r}"
    got, want = run(fixed), run(CORRECT[cid][2])
    assert (got.shape, fmt_names(got.names)) == (want.shape, fmt_names(want.names)), f"{bid}: {fixed!r}"


def test_corpus_covers_every_category_and_spelling() -> None:
    assert len(BUGS) >= 40 and len(CORRECT) >= 40
    for table, rows in (("bugs", [(CORRECT[b[0]][0], b[1]) for b in BUGS.values()]),
                        ("correct", [(c[0], c[1]) for c in CORRECT.values()])):
        spellings = Counter(s for _, s in rows)
        categories = Counter(c for c, _ in rows)
        assert min(spellings[s] for s in ("numpy", "torch", "einops")) >= 10, (table, spellings)
        assert len(categories) == 8 and min(categories.values()) >= 3, (table, categories)


# --- whole files (issue 45) ---------------------------------------------------------------------------------

CORPUS_DIR = Path(__file__).resolve().parents[1] / "data" / "check" / "corpus"


def check_file(path: Path, target: str, options: list[str]):
    shapes = [options[i + 1] for i in range(0, len(options), 2) if options[i] == "--shape"]
    dims = [options[i + 1] for i in range(0, len(options), 2) if options[i] == "--dim"]
    return check_function(f"{path}::{target}", parse_options(shapes, dims))


def apply_edits(path: Path, edits: list) -> None:
    lines = path.read_text().splitlines(keepends=True)
    for line, old, new in edits:
        assert old in lines[line - 1], (line, old, lines[line - 1])
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines))


@pytest.mark.parametrize("fid", sorted(FILES))
def test_correct_files_check_clean(fid: str) -> None:
    file, target, options, shape = FILES[fid]
    run = check_file(CORPUS_DIR / file, target, options)
    assert run.result is not None and run.result.shape == shape
    assert run.advice == [], [a.message for a in run.advice]


@pytest.mark.parametrize("bid", sorted(FILE_BUGS))
def test_planted_bug_is_reported_with_a_fix_that_checks_clean(bid: str, tmp_path: Path) -> None:
    fid, changes, kind, words = FILE_BUGS[bid]
    file, target, options, shape = FILES[fid]
    text = (CORPUS_DIR / file).read_text()
    for old, new in changes:
        assert text.count(old) == 1, (bid, old)
        text = text.replace(old, new)
    path = tmp_path / file
    path.write_text(text)
    if kind == "error":
        with pytest.raises(CheckShapeError) as info:
            check_file(path, target, options)
        message, edits = str(info.value), info.value.edits
    else:
        run = check_file(path, target, options)
        assert run.advice, f"{bid}: no warning"
        message = " | ".join(a.message for a in run.advice)
        edits = [e for a in run.advice for e in a.edits]
    for w in words:
        assert w in message, (bid, w, message)
    assert edits, f"{bid}: reported without a fix: {message}"
    apply_edits(path, edits)
    fixed = check_file(path, target, options)
    assert fixed.result is not None and fixed.result.shape == shape
    assert fixed.advice == [], (bid, [a.message for a in fixed.advice])


def test_file_corpus_covers_each_style_and_kind() -> None:
    styles = Counter(FILES[b[0]][0] for b in FILE_BUGS.values())
    assert set(styles) == {"nanogpt.py", "from_scratch.py", "einops_style.py", "hf_style.py"}
    assert min(styles.values()) >= 3
    kinds = Counter(b[2] for b in FILE_BUGS.values())
    assert kinds["error"] >= 5 and kinds["warning"] >= 5


def test_a_class_without_its_config_sizes_says_which_dims_to_give() -> None:
    """A new user's first try: nanoGPT's attention with only x's shape. Every line that needs config.n_embd is
    skipped saying so, and the report ends with the --dim options to add."""
    from explain.check.render import render_function

    run = check_file(CORPUS_DIR / "nanogpt.py", "Block.forward", ["--shape", "x=B,T,C", "--dim", "B=2", "--dim",
                                                                    "T=10", "--dim", "C=768"])
    assert run.result is None
    assert render_function(run)[-1] == "give: --dim n_embd=N  (config fields __init__ reads)"
    run = check_file(CORPUS_DIR / "nanogpt.py", "CausalSelfAttention.forward",
                     ["--shape", "x=B,T,C", "--dim", "B=2", "--dim", "T=10", "--dim", "C=768", "--dim", "n_embd=768"])
    assert any("self.n_head (line 40: self.n_head = config.n_head) is unknown: it needs --dim n_head=N" in r.note
               for r in run.rows)
