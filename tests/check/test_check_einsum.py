"""Unit tests for the einsum form of ``explain check`` and for --shape/--dim parsing."""

from __future__ import annotations

import pytest

from explain.check import CheckShapeError, EinsumResult, check_einsum, is_einsum, parse_options
from explain.core.errors import UsageError

SPEC = "batch seq d_model, d_model d_head -> batch seq d_head"


def run(spec: str, shapes: list[str] = (), dims: list[str] = ()) -> EinsumResult:
    return check_einsum(spec, parse_options(shapes, dims))


def caret_under(err: CheckShapeError) -> tuple[str, int]:
    source, carets = err.display[0], err.display[1]
    start = carets.index("^")
    return source[start:start + carets.count("^")], start - 2  # minus the two-space indent


def test_projection_binds_every_name() -> None:
    result = run(SPEC, dims=["batch=2", "seq=5", "d_model=8", "d_head=4"])
    assert result.shape == (2, 5, 4)
    assert result.bindings == {"batch": 2, "seq": 5, "d_model": 8, "d_head": 4}
    assert result.contracted == ["d_model"]
    assert result.sources["seq"] == "--dim seq=5"


def test_labelled_operands_take_sizes_from_shapes() -> None:
    result = run("x: b s d, W: d h -> b s h", ["x=2,5,8", "W=8,4"])
    assert result.shape == (2, 5, 4)
    assert result.sources["h"] == "W axis 1"
    assert run("x: i i -> i", ["x=3,3"]).shape == (3,)  # a diagonal
    assert run("a: i, b: i ->", ["a=3", "b=3"]).shape == ()  # a dot product


def test_contracted_dimension_that_differs_points_at_it() -> None:
    spec = "x: b s d, W: d h -> b s h"
    with pytest.raises(CheckShapeError) as info:
        run(spec, ["x=2,5,8", "W=6,4"])
    assert "contracted dimension 'd' differs: 8 (x axis 2) and 6 (W axis 0)" in str(info.value)
    assert caret_under(info.value) == ("d", spec.index("W: d") + 3)
    assert info.value.exit_code == 1


def test_name_bound_to_two_sizes_points_at_second_use() -> None:
    spec = "x: i j, y: j k -> i j k"
    with pytest.raises(CheckShapeError, match="'j' is bound to two sizes: 3 .x axis 1. and 4 .y axis 0.") as info:
        run(spec, ["x=2,3", "y=4,5"])
    assert caret_under(info.value) == ("j", spec.index("y: j") + 3)


def test_dim_option_and_shape_disagree() -> None:
    with pytest.raises(CheckShapeError, match=r"6 \(--dim d=6\) and 8 \(x axis 2\)"):
        run("x: b s d, d h -> b s h", ["x=2,5,8"], ["d=6", "h=4"])


def test_output_name_no_input_has_points_at_it() -> None:
    spec = "b s d, d h -> b s k"
    with pytest.raises(CheckShapeError, match="output dimension 'k' appears in no input") as info:
        run(spec, dims=["b=1", "s=2", "d=3", "h=4"])
    assert caret_under(info.value) == ("k", spec.rindex("k"))


def test_repeated_output_name() -> None:
    with pytest.raises(CheckShapeError, match="appears twice"):
        run("i j -> i i", dims=["i=2", "j=3"])


def test_operand_rank_must_match_its_names() -> None:
    with pytest.raises(CheckShapeError, match=r"names 2 dimensions but its shape \(2, 5, 8\) has 3") as info:
        run("a: b s, W: d h -> b h", ["a=2,5,8", "W=6,4"])
    assert caret_under(info.value) == ("b s", 3)


def test_numpy_letter_spelling_gets_a_hint() -> None:
    with pytest.raises(CheckShapeError, match="'i j, j k -> i k'"):
        run("ij,jk->ik")


@pytest.mark.parametrize(("spec", "shapes", "dims", "fragment"), [
    ("a b -> a", [], ["a=2"], "b has no size: add --dim b=N"),
    ("a b -> a -> b", [], [], "exactly one '->'"),
    ("a, , b -> a", [], [], "operand 2 has no dimension names"),
    ("a 2b -> a", [], [], "'2b'"),
    ("... i -> i", [], [], "ellipsis"),
    ("x: i -> i", [], [], "add --shape x=DIMS"),
    ("i -> i", ["x=3"], ["i=3"], "no einsum operand is labelled x"),
    ("x: y: i -> i", [], [], "'NAME: dims'"),
])
def test_einsum_usage_errors(spec: str, shapes: list[str], dims: list[str], fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        run(spec, shapes, dims)
    assert fragment in str(info.value)
    assert info.value.exit_code == 2


def test_is_einsum() -> None:
    assert is_einsum("a -> a") and not is_einsum("a @ b")


def test_parse_options_resolves_named_dims() -> None:
    b = parse_options(["Q=seq,d_k", "t=()", "v=(3,)", "W=(2, d_k)"], ["seq=10", "d_k=64"])
    assert b.arrays == {"Q": (10, 64), "t": (), "v": (3,), "W": (2, 64)}
    assert b.written["Q"] == ("seq", "d_k")


@pytest.mark.parametrize(("shapes", "dims", "fragment"), [
    (["Q"], [], "is not NAME=DIMS"),
    (["=3"], [], "is not NAME=DIMS"),
    (["1Q=3"], [], "not a usable name"),
    (["Q=3,,4"], [], "dimension 2 is empty"),
    (["Q=3,-4"], [], "positive whole numbers, got -4"),
    (["Q=3,0"], [], "positive whole numbers, got 0"),
    (["Q=3.5"], [], "neither a size nor a dimension name"),
    (["Q=3", "Q=4"], [], "--shape Q is given twice"),
    (["Q=seq,d"], [], "dimensions seq, d used in --shape have no size: add --dim seq=N --dim d=N"),
    ([], ["seq"], "is not NAME=SIZE"),
    ([], ["seq="], "has no size"),
    ([], ["seq=ten"], "not a whole number"),
    ([], ["seq=-1"], "positive"),
    ([], ["seq=1", "seq=2"], "--dim seq is given twice"),
])
def test_bad_options(shapes: list[str], dims: list[str], fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_options(shapes, dims)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)
