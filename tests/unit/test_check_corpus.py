"""The corpus of real shape bugs (tests/unit/check_corpus.py): every correct line passes, every bug is caught
with a fix, and the fix, substituted into the bug's own text, passes with the same shape and axis names as the
bug's correct line. The substitution is done here, from the error's fix, so the corpus cannot agree with
itself by construction."""

from __future__ import annotations

from collections import Counter

import pytest
from check_corpus import BUGS, CORRECT, DIMS, SHAPES

from explain.check import CheckShapeError, check
from explain.check.names import fmt_names

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
