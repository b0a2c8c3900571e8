"""Unit tests for the expression form of ``explain check`` (explain.check.expr, calls, hints)."""

from __future__ import annotations

import pytest

from explain.check import Bindings, CheckShapeError, check, check_expression, parse_options
from explain.core.errors import ShapeError, UsageError

ATTENTION = "softmax(Q @ K.T / sqrt(d_k)) @ V"


def attention_bindings() -> Bindings:
    return parse_options(["Q=seq,d_k", "K=seq,d_k", "V=seq,d_v"], ["seq=10", "d_k=64", "d_v=32"])


def shape_of(expr: str, **shapes: tuple[int, ...]) -> tuple[int, ...]:
    return check(expr, shapes).shape


def caret_under(err: CheckShapeError) -> str:
    """The source text the caret line underlines."""
    source, carets = err.display[0], err.display[1]
    start = carets.index("^")
    return source[start:start + carets.count("^")]


def test_attention_gives_seq_by_d_v() -> None:
    node = check_expression(ATTENTION, attention_bindings())
    assert node.shape == (10, 32)
    assert node.op == "matmul"
    scores = node.children[0].children[0]
    assert (scores.text, scores.shape, scores.op) == ("Q @ K.T / sqrt(d_k)", (10, 10), "div")
    qk = scores.children[0]
    assert [c.text for c in qk.children] == ["Q", "K.T"]
    assert qk.children[1].shape == (64, 10)
    assert scores.children[1].children[0].op == "scalar"  # d_k is a named scalar from --dim


def test_q_at_k_fails_with_transpose_suggestion() -> None:
    with pytest.raises(CheckShapeError) as info:
        check_expression("softmax(Q @ K / sqrt(d_k)) @ V", attention_bindings())
    err = info.value
    assert isinstance(err, ShapeError) and err.exit_code == 1
    msg = str(err)
    assert "matmul inner dimensions" in msg and "(10, 64) @ (10, 64)" in msg
    assert "Q @ K.T" in msg and "(10, 10)" in msg
    assert caret_under(err) == "@"
    assert err.display[1].index("^") == "softmax(Q @ K".index("@") + 2  # two spaces of indent
    assert any("left:" in line and "(10, 64)" in line for line in err.display)


def test_extra_transpose_suggests_dropping_it() -> None:
    with pytest.raises(CheckShapeError, match=r"did you mean a @ b\?"):
        check("a @ b.T", {"a": (3, 4), "b": (4, 5)})


def test_batched_matmul_suggests_swapaxes() -> None:
    with pytest.raises(CheckShapeError, match=r"b\.swapaxes\(-1, -2\)"):
        check("a @ b", {"a": (2, 3, 4), "b": (2, 3, 4)})


def test_broadcast_failure_names_axis_and_sizes() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("x + y", {"x": (4, 8), "y": (4,)})
    msg = str(info.value)
    assert "axis -1 has sizes 8 and 4" in msg
    assert "y[:, None]" in msg and info.value.fix == (4, 5, "y[:, None]")
    assert caret_under(info.value) == "+"


def test_reduction_without_keepdims_suggests_it() -> None:
    with pytest.raises(CheckShapeError, match="keepdims=True"):
        check("x - x.mean(axis=-1)", {"x": (4, 8)})
    assert shape_of("x - x.mean(axis=-1, keepdims=True)", x=(4, 8)) == (4, 8)


def test_star_for_matmul_suggests_at() -> None:
    with pytest.raises(CheckShapeError, match=r"x @ W \(matrix product\)"):
        check("x * W", {"x": (4, 8), "W": (8, 3)})


@pytest.mark.parametrize(("expr", "shape"), [
    ("x.reshape(2, -1)", (2, 12)),
    ("x.reshape((-1, 3))", (8, 3)),
    ("np.reshape(x, (4, 2, -1))", (4, 2, 3)),
    ("np.reshape(x, shape=-1)", (24,)),
    ("x.reshape(-1)", (24,)),
    ("x.sum(axis=0, keepdims=True)", (1, 6)),
    ("np.sum(x, axis=(0, 1), keepdims=True)", (1, 1)),
    ("x.max()", ()),
    ("mean(x, -1)", (4,)),
    ("x.T", (6, 4)),
    ("transpose(x)", (6, 4)),
    ("np.transpose(x, axes=(1, 0))", (6, 4)),
    ("x.transpose(1, 0)", (6, 4)),
    ("x.reshape(2, 2, 6).swapaxes(0, -1)", (6, 2, 2)),
    ("np.swapaxes(x, 0, 1)", (6, 4)),
    ("np.concatenate([x, x], axis=1)", (4, 12)),
    ("concatenate((x, x))", (8, 6)),
    ("np.concatenate([x, x], axis=None)", (48,)),
    ("np.stack([x, x, x])", (3, 4, 6)),
    ("stack([x, x], axis=-1)", (4, 6, 2)),
    ("softmax(x, axis=0)", (4, 6)),
    ("relu(x) + gelu(x) * exp(x) - log(x) / np.sqrt(x) ** 2", (4, 6)),
    ("-x + 1.5", (4, 6)),
])
def test_supported_forms(expr: str, shape: tuple[int, ...]) -> None:
    assert shape_of(expr, x=(4, 6)) == shape


def test_dims_work_as_numbers_and_in_reshape() -> None:
    bindings = parse_options(["x=batch,seq,d_model"], ["batch=2", "seq=5", "d_model=8", "heads=2"])
    node = check_expression("x.reshape(batch, seq, heads, d_model // heads).transpose(0, 2, 1, 3)", bindings)
    assert node.shape == (2, 2, 5, 4)
    assert check_expression("x * sqrt(d_model) + heads", bindings).shape == (2, 5, 8)


@pytest.mark.parametrize(("expr", "under"), [
    ("x.reshape(5, -1)", "reshape"),
    ("np.concatenate([x, y], axis=0)", "concatenate"),
    ("np.stack([x, y])", "stack"),
    ("x.sum(axis=2)", "sum"),
    ("softmax(x, axis=3)", "softmax"),
    ("transpose(x, (0, 0))", "transpose"),
])
def test_call_failures_put_the_caret_under_the_function(expr: str, under: str) -> None:
    with pytest.raises(CheckShapeError) as info:
        check(expr, {"x": (4, 6), "y": (4, 5)})
    assert caret_under(info.value) == under


def test_caret_counts_characters_not_bytes() -> None:
    with pytest.raises(CheckShapeError) as info:
        check("α + β @ γ", {"α": (2, 2), "β": (2, 3), "γ": (2, 3)})
    assert caret_under(info.value) == "@"


@pytest.mark.parametrize(("expr", "fragment"), [
    ("foo(x)", "not supported: function foo()"),
    ("np.linalg.norm(x)", "function np.linalg.norm()"),
    ("x[x > 0]", "boolean"),
    ("x if x else x", "not supported: if-else"),
    ("x // 2", "not supported: the // operator"),
    ("x.shape", "not supported: the attribute .shape"),
    ("x.dot(x)", "not supported: the method .dot()"),
    ("'hi'", "not supported: the constant"),
    ("sofmax(x)", "did you mean softmax?"),
    ("y @ x", "unknown name 'y'"),
    ("xx @ x", "did you mean x?"),
    ("softmax", "is a function"),
    ("x.reshape(x)", "reshape sizes must be a whole number"),
    ("x.sum(keepdims=1)", "keepdims must be True or False"),
    ("np.sum(x, 0, 1)", "at most 2 positional"),
    ("exp(x, axis=0)", "has no argument 'axis'"),
    ("concatenate(x)", "takes a list of arrays"),
    ("exp(*x)", "*args"),
    ("(x", "was never closed"),
    ("x +", "cannot parse"),
    ("   ", "is empty"),
])
def test_bad_input_is_a_one_line_usage_error(expr: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        check(expr, {"x": (4, 6)})
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.exit_code == 2


def test_unsupported_lists_what_is_supported() -> None:
    with pytest.raises(UsageError, match="supported: .*softmax.*concatenate"):
        check("x and 1", {"x": (2,)})


def test_unknown_name_suggests_shape_option() -> None:
    with pytest.raises(UsageError, match=r"--shape Kt=DIMS.*--dim Kt=N"):
        check("Kt", {})


def test_long_and_deep_inputs_are_refused_before_work() -> None:
    with pytest.raises(UsageError, match="10000 characters; the limit is 2000"):
        check("x" * 10_000, {"x": (1,)})
    with pytest.raises(UsageError, match="nests"):
        check("-" * 300 + "x", {"x": (1,)})
    with pytest.raises(UsageError, match="cannot parse|nests"):
        check("(" * 400 + "x" + ")" * 400, {"x": (1,)})


def test_newlines_and_surrounding_space_are_accepted() -> None:
    assert shape_of("  (x\n  @ x.T)\t", x=(2, 3)) == (2, 2)


def test_reshape_rejects_negatives_other_than_minus_one() -> None:
    # numpy quietly treats any negative size as -1; the checker teaches the documented spelling instead.
    with pytest.raises(CheckShapeError, match="sizes must be positive or -1"):
        check("x.reshape(-2)", {"x": (2,)})


def test_zero_d_reductions_follow_numpy() -> None:
    assert check("s.sum(axis=0)", {"s": ()}).shape == ()
    assert check("np.max(s, axis=-1, keepdims=True)", {"s": ()}).shape == ()
    with pytest.raises(CheckShapeError):
        check("s.sum(axis=(0,))", {"s": ()})
    with pytest.raises(CheckShapeError):
        check("s.mean(axis=0)", {"s": ()})
