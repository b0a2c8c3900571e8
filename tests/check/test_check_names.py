"""Named axes in ``explain check``: reshape follows where each axis's data comes from, so a head split or
merge without its transpose is caught even though the sizes fit, with the two-step fix; names move through
transposes and show in the report; sizes that agree only by coincidence are flagged."""

from __future__ import annotations

import pytest

from explain.check import CheckShapeError, check
from explain.check.names import fmt_names

DIMS = {"B": 2, "T": 10, "C": 768, "H": 12, "Dh": 64}


def fixed(expr: str, err: CheckShapeError) -> str:
    assert err.fix is not None, f"no fix for {expr}: {err}"
    start, end, text = err.fix
    return expr[:start] + text + expr[end:]


@pytest.mark.parametrize(("expr", "shapes", "fix"), [
    ("(x @ W_q).reshape(B, H, T, Dh)", {"x": ("B", "T", "C"), "W_q": ("C", "C")},
     "(x @ W_q).reshape(B, T, H, Dh).transpose(0, 2, 1, 3)"),
    ("q.view(B, H, T, Dh)", {"q": ("B", "T", "C")}, "q.view(B, T, H, Dh).transpose(1, 2)"),
    ("z.reshape(B, T, C)", {"z": ("B", "H", "T", "Dh")}, "z.transpose(0, 2, 1, 3).reshape(B, T, C)"),
    ("y.view(B, T, C)", {"y": ("B", "H", "T", "Dh")}, "y.transpose(1, 2).contiguous().view(B, T, C)"),
])
def test_head_split_or_merge_without_transpose_is_flagged_with_the_fix(expr: str, shapes: dict, fix: str) -> None:
    with pytest.raises(CheckShapeError) as info:
        check(expr, shapes, DIMS)
    assert "fits by size" in str(info.value) and fix in str(info.value)
    repaired = fixed(expr, info.value)
    assert repaired == fix
    node = check(repaired, shapes, DIMS)
    split = len(node.shape) == 4
    assert fmt_names(node.names) == ("[B, H, T, Dh]" if split else "[B, T, C]")


def test_coincident_sizes_do_not_hide_the_reorder() -> None:
    # T == H == 12: the sizes split cleanly, but the names say T lands where C's data is.
    dims = dict(DIMS, T=12)
    with pytest.raises(CheckShapeError, match="named T but takes its data from C"):
        check("x.reshape(B, H, T, Dh)", {"x": ("B", "T", "C")}, dims)


def test_reshape_records_which_axes_each_output_takes() -> None:
    node = check("x.reshape(B, T, H, Dh)", {"x": ("B", "T", "C")}, DIMS)
    assert fmt_names(node.names) == "[B, T, H, Dh]"
    assert node.detail == "H←C, Dh←C"
    merged = check("x.reshape(B, T, H, Dh).reshape(B, T, -1)", {"x": ("B", "T", "C")}, DIMS)
    assert fmt_names(merged.names) == "[B, T, (H Dh)]"


def test_literal_reshape_of_unnamed_axes_is_not_flagged() -> None:
    assert check("x.reshape(4, 6)", {"x": (6, 4)}).shape == (4, 6)


def test_transpose_on_4d_suggests_swapaxes_not_T() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("q @ k.T", {"q": ("B", "H", "T", "Dh"), "k": ("B", "H", "T", "Dh")}, DIMS)
    assert "q @ k.swapaxes(-1, -2)" in str(info.value)
    node = check(fixed("q @ k.T", info.value), {"q": ("B", "H", "T", "Dh"), "k": ("B", "H", "T", "Dh")}, DIMS)
    assert fmt_names(node.names) == "[B, H, T, T]"


def test_torch_T_on_3d_is_refused_with_mT() -> None:
    with pytest.raises(CheckShapeError, match=r"\.mT"):
        check("torch.matmul(q, k.T)", {"q": ("B", "T", "Dh"), "k": ("B", "T", "Dh")}, DIMS)


def test_wrong_head_width_shows_the_arithmetic() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("x.reshape(B, T, H, Dh)", {"x": ("B", "T", "C")}, dict(DIMS, Dh=48))
    assert "H·Dh = 12·48 = 576 ≠ C = 768; Dh = C / H = 64" in str(info.value)


def test_sizes_that_fit_by_coincidence_in_matmul_are_flagged() -> None:
    # (T, Dh) @ (T, Dh) with T == Dh: numpy runs it; the names say K needed its transpose.
    with pytest.raises(CheckShapeError, match="coincidence") as info:
        check("q @ k", {"q": ("T", "Dh"), "k": ("T", "Dh")}, {"T": 8, "Dh": 8})
    assert "q @ k.T" in str(info.value)


def test_broadcast_names_must_agree() -> None:
    with pytest.raises(CheckShapeError, match="axis -2 is T against C"):
        check("x + p", {"x": ("T", "C"), "p": ("C", "T")}, {"T": 8, "C": 8})
    assert fmt_names(check("x + p", {"x": ("B", "T", "C"), "p": ("T", "C")}, DIMS).names) == "[B, T, C]"


def test_names_follow_transpose_swapaxes_reductions_and_matmul() -> None:
    shapes = {"q": ("B", "H", "T", "Dh"), "k": ("B", "H", "T", "Dh")}
    assert fmt_names(check("q.transpose(0, 2, 1, 3)", shapes, DIMS).names) == "[B, T, H, Dh]"
    assert fmt_names(check("q.transpose(1, 2)", shapes, DIMS, torch=True).names) == "[B, T, H, Dh]"
    assert fmt_names(check("q @ k.swapaxes(-1, -2)", shapes, DIMS).names) == "[B, H, T, T]"
    assert fmt_names(check("q.sum(axis=-1)", shapes, DIMS).names) == "[B, H, T]"
    assert fmt_names(check("q.mean(-1, keepdim=True)", shapes, DIMS).names) == "[B, H, T, ?]"
    assert fmt_names(check("q[:, :, :T]", shapes, DIMS).names) == "[B, H, T, Dh]"


def test_a_forgotten_transpose_is_not_called_grouped_query_attention() -> None:
    """Session 9: k left as (B, T, H, Dh) against q (B, H, T, Dh), with T = 24 a multiple of H = 12: the error
    advised repeating q's heads twice "(grouped-query attention)"; the names say T stands where H should."""
    shapes = {"q": ("B", "H", "T", "Dh"), "k": ("B", "T", "H", "Dh")}
    with pytest.raises(CheckShapeError) as info:
        check("q @ k.swapaxes(-2, -1)", shapes, {**DIMS, "T": 24})
    assert "batch axes do not broadcast" in str(info.value)
    # issue 45: the names say which transpose is missing, and the fix is that transpose
    assert "grouped-query" not in str(info.value)
    assert "its axes 1 and 2 (T, H) are swapped" in str(info.value)
    assert info.value.fix == (4, 5, "k.swapaxes(1, 2)")
    # the real grouped-query case keeps its fix: 4 key/value heads against 12 query heads
    with pytest.raises(CheckShapeError) as info:
        check("q @ k.swapaxes(-2, -1)", {"q": ("B", "H", "T", "Dh"), "k": ("B", "KV", "T", "Dh")}, {**DIMS, "KV": 4})
    assert "grouped-query attention" in str(info.value) and info.value.fix is not None
