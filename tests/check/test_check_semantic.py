"""Issue 45: shapes that fit, names that say the code is wrong. Each rule warns with the axis and the fix (the fix,
substituted into the line, warns no more); the correct line gives no warning; an axis with no known role is never
warned about."""

from __future__ import annotations

import pytest

from explain.check import CheckShapeError, check

DIMS = {"B": 2, "H": 12, "T": 10, "Dh": 64, "C": 768, "V": 50, "KV": 4, "E": 8, "N": 7, "M": 9}


def advice(line: str, shapes: dict[str, str]) -> list:
    arrays = {k: tuple(v.split(",")) for k, v in shapes.items()}
    return check(line, arrays, DIMS).info["advice"]


def fixed(line: str, a) -> str:
    start, end, text = a.fix
    return line[:start] + text + line[end:]


QK = {"q": "B,H,T,Dh", "k": "B,H,T,Dh"}

# (line, shapes, words the warning must hold, what the fix must contain)
WARNED = {
    # the three commands
    "softmax over heads": ("F.softmax(q @ k.transpose(-2, -1), dim=1)", QK, ["softmax over H", "the heads", "dim=-1"],
                           "-1"),
    "normalised over T": ("(x - x.mean(axis=0)) / x.std(axis=0)", {"x": "T,C"}, ["over T (the sequence)", "C"],
                          "axis=-1, keepdims=True"),
    "h and d swapped": ('rearrange(x, "b t (h d) -> b h t d", h=Dh)', {"x": "B,T,C"},
                        ["h=Dh", "the heads", "d gets 12, the size of H", "write h=H"], "H"),
    # the other rules
    "softmax over queries": ("F.softmax(q @ k.transpose(-2, -1), dim=-2)", QK, ["the queries"], "-1"),
    "softmax over batch np": ("softmax(q @ k.swapaxes(-1, -2), axis=0)", QK, ["softmax over B", "the batch"], "-1"),
    "rmsnorm over T": ("x * torch.rsqrt(x.pow(2).mean(1, keepdim=True) + 1e-6)", {"x": "B,T,C"},
                       ["takes the mean of x [B, T, C] over T"], "mean(-1, keepdim=True)"),
    "view Dh before H": ("x.view(B, T, Dh, H).transpose(1, 2)", {"x": "B,T,C"}, ["splits C into (Dh, H)"],
                         "x.view(B, T, H, Dh)"),
    "merge Dh before H": ("y.permute(0, 2, 3, 1).reshape(B, T, C)", {"y": "B,H,T,Dh"}, ["merges Dh before H"],
                          ".transpose(2, 3)"),
    "mask after softmax": ('F.softmax(att, dim=-1).masked_fill(m == 0, float("-inf"))', {"att": "B,H,T,T", "m": "T,T"},
                           ["after the softmax"], 'F.softmax(att.masked_fill(m == 0, float("-inf")), dim=-1)'),
    "scale by sqrt C": ("q @ k.swapaxes(-2, -1) / math.sqrt(C)", QK, ["over Dh (64)", "√C"], "math.sqrt(Dh)"),
    "scale by size(1)": ("q @ k.transpose(-2, -1) * k.size(1) ** -0.5", QK, ["√H (the heads)"], "q.size(-1) ** -0.5"),
}

CLEAN = {
    "softmax keys": ("F.softmax(q @ k.transpose(-2, -1), dim=-1)", QK),
    "softmax keys np": ("softmax(q @ k.swapaxes(-1, -2) / np.sqrt(Dh), axis=-1)", QK),
    "layernorm": ("(x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)", {"x": "T,C"}),
    "pooling is no normalisation": ("x.mean(1)", {"x": "B,T,C"}),
    "rearrange": ('rearrange(x, "b t (h d) -> b h t d", h=H)', {"x": "B,T,C"}),
    "view": ("x.view(B, T, H, Dh).transpose(1, 2)", {"x": "B,T,C"}),
    "merge": ("y.transpose(1, 2).contiguous().view(B, T, C)", {"y": "B,H,T,Dh"}),
    "mask then softmax": ('F.softmax(att.masked_fill(m == 0, float("-inf")), dim=-1)', {"att": "B,H,T,T", "m": "T,T"}),
    "scale": ("q @ k.transpose(-2, -1) * k.size(-1) ** -0.5", QK),
    "scale 1/sqrt": ("q @ k.transpose(-2, -1) * (1.0 / math.sqrt(k.size(-1)))", QK),
    "router over experts": ("F.softmax(x @ W, dim=-1)", {"x": "B,T,C", "W": "C,E"}),
    # unknown roles are never warned about: N and M mean nothing to the table
    "unknown roles": ("F.softmax(a, dim=1)", {"a": "N,M,T"}),
    "unknown normalised": ("a - a.mean(axis=0)", {"a": "M,C"}),
}


@pytest.mark.parametrize("case", list(WARNED), ids=list(WARNED))
def test_each_rule_warns_with_the_axis_and_a_fix_that_silences_it(case: str) -> None:
    line, shapes, words, fragment = WARNED[case]
    found = advice(line, shapes)
    assert found, f"{case}: no warning"
    for w in words:
        assert any(w in a.message for a in found), (w, [a.message for a in found])
    for a in found:
        assert a.display and "^" in a.display[1]
    assert all(a.fix is not None for a in found), [a.message for a in found]
    # every fix applied (from the right, so the spans stay put) leaves nothing to warn about
    text = line
    for a in sorted(found, key=lambda a: -a.fix[0]):
        text = fixed(text, a)
    assert fragment in text, text
    assert advice(text, shapes) == [], (text, [a.message for a in advice(text, shapes)])


@pytest.mark.parametrize("case", list(CLEAN), ids=list(CLEAN))
def test_correct_lines_and_unknown_roles_give_no_warning(case: str) -> None:
    line, shapes = CLEAN[case]
    assert advice(line, shapes) == []


def test_view_of_a_transposed_tensor_is_an_error_with_contiguous() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("y.transpose(1, 2).view(B, T, C)", {"y": ("B", "H", "T", "Dh")}, DIMS)
    err = info.value
    assert "laid out in memory as [B, H, T, Dh]" in str(err) and "contiguous()" in str(err)
    assert err.fix == (0, 31, "y.transpose(1, 2).contiguous().view(B, T, C)")
    # a view that only splits the last axis of a transposed tensor is fine in PyTorch, and here
    assert check("y.transpose(1, 2).view(B, T, H, 8, 8)", {"y": ("B", "H", "T", "Dh")}, DIMS).shape == (2, 10, 12, 8, 8)


def test_forgotten_transpose_names_the_axes_and_the_transpose() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("q @ k.transpose(-2, -1)", {"q": ("B", "H", "T", "Dh"), "k": ("B", "T", "H", "Dh")}, DIMS, torch=True)
    err = info.value
    assert "k is [B, T, H, Dh] where [B, H, T, Dh] lines up with q [B, H, T, Dh]" in str(err)
    assert err.fix == (4, 5, "k.transpose(1, 2)")
