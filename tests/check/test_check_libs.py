"""Property tests: on random small shapes, ``explain check``'s numpy indexing, einsum call form and einops
patterns agree with numpy and einops themselves (verdict and result shape). numpy and einops are imported here
only; the checker imports neither."""

from __future__ import annotations

import warnings
from typing import Any

import einops
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explain.check import check
from explain.core.errors import ExplainError

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


def real(fn: Any) -> tuple[str, tuple[int, ...] | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", tuple(np.shape(fn()))
    except Exception:  # numpy's IndexError/ValueError, einops's EinopsError: "does not fit"
        return "error", None


def ours(expr: str, **arrays: tuple[int, ...]) -> tuple[str, tuple[int, ...] | None]:
    try:
        return "ok", check(expr, arrays).shape
    except ExplainError:
        return "error", None


index_item = st.one_of(
    st.integers(-5, 4).map(str),
    st.tuples(st.one_of(st.none(), st.integers(-5, 5)), st.one_of(st.none(), st.integers(-5, 5)),
              st.sampled_from([None, 1, 2, -1])).map(
        lambda t: ":".join("" if v is None else str(v) for v in t)),
    st.just("None"), st.just("..."), st.just("i"), st.just("j"),
)


@SETTINGS
@given(shapes, st.lists(index_item, min_size=1, max_size=4), shapes, shapes)
def test_indexing(a: tuple[int, ...], items: list[str], i: tuple[int, ...], j: tuple[int, ...]) -> None:
    expr = f"a[{', '.join(items)}]"
    arr, ii, jj = np.zeros(a), np.zeros(i, dtype=int), np.zeros(j, dtype=int)
    assert ours(expr, a=a, i=i, j=j) == real(lambda: eval(expr, {"a": arr, "i": ii, "j": jj}))  # noqa: S307


def sized(letters: list[str], size: dict[str, int], bump: int) -> tuple[int, ...]:
    """The shape the letters call for; ``bump`` > 0 changes one size (usually a mismatch) or drops an axis."""
    shape = [size[c] for c in letters]
    if bump and shape:
        if bump == 3:
            return tuple(shape[1:])
        shape[bump % len(shape)] += 1
    return tuple(shape)


letter_sizes = st.fixed_dictionaries({c: st.integers(1, 3) for c in "ijklbtds"})


@SETTINGS
@given(st.lists(st.sampled_from("ijkl"), min_size=1, max_size=3), st.lists(st.sampled_from("ijkl"), min_size=1,
       max_size=3), st.lists(st.sampled_from("ijkl"), max_size=3), st.booleans(), letter_sizes,
       st.integers(0, 3), st.integers(0, 3))
def test_einsum_letters(x: list[str], y: list[str], out: list[str], explicit: bool, size: dict[str, int],
                        bump_a: int, bump_b: int) -> None:
    a, b = sized(x, size, bump_a), sized(y, size, bump_b)
    spec = f"{''.join(x)},{''.join(y)}" + (f"->{''.join(dict.fromkeys(out))}" if explicit else "")
    expected = real(lambda: np.einsum(spec, np.zeros(a), np.zeros(b)))
    assert ours(f"np.einsum('{spec}', a, b)", a=a, b=b) == expected


@SETTINGS
@given(shapes, st.integers(-5, 4))
def test_expand_dims_and_squeeze(a: tuple[int, ...], axis: int) -> None:
    assert ours(f"np.expand_dims(a, {axis})", a=a) == real(lambda: np.expand_dims(np.zeros(a), axis))
    assert ours(f"np.squeeze(a, {axis})", a=a) == real(lambda: np.squeeze(np.zeros(a), axis))
    assert ours("np.squeeze(a)", a=a) == real(lambda: np.squeeze(np.zeros(a)))


NAMES = "bhtdkg"


@st.composite
def einops_case(draw: Any) -> tuple[str, str, tuple[int, ...], dict[str, int], tuple[Any, ...]]:
    """A random pattern: input axes grouped from named factors, the right side a regrouping of them."""
    kind = draw(st.sampled_from(["rearrange", "repeat", "reduce"]))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    size = {n: draw(st.integers(1, 3)) for n in names}
    left: list[list[str]] = []
    rest = list(names)
    while rest:
        k = draw(st.integers(1, min(2, len(rest))))
        left.append(rest[:k])
        rest = rest[k:]
    shape = [int(np.prod([size[n] for n in g])) for g in left]
    if draw(st.booleans()):
        i = draw(st.integers(0, len(shape) - 1))
        shape[i] += draw(st.integers(-1, 2))  # sometimes an axis that does not fit
        shape[i] = max(shape[i], 1)
    right = list(draw(st.permutations(names)))
    if kind == "reduce":
        right = right[: draw(st.integers(0, len(right)))]
    if kind == "repeat":
        right.insert(draw(st.integers(0, len(right))), "r")
        size["r"] = draw(st.integers(1, 3))
    groups: list[str] = []
    while right:
        k = draw(st.integers(1, min(2, len(right))))
        groups.append(right[0] if k == 1 else f"({' '.join(right[:k])})")
        right = right[k:]
    pattern = " ".join(n[0] if len(n) == 1 else f"({' '.join(n)})" for n in left) + " -> " + " ".join(groups)
    given_names = draw(st.lists(st.sampled_from(sorted(size)), unique=True))
    lengths = {n: size[n] for n in given_names}
    if kind == "repeat":
        lengths["r"] = size["r"]
    extra = ("mean",) if kind == "reduce" else ()
    return kind, pattern, tuple(shape), lengths, extra


@SETTINGS
@given(einops_case())
def test_einops_patterns(case: tuple[str, str, tuple[int, ...], dict[str, int], tuple[Any, ...]]) -> None:
    kind, pattern, shape, lengths, extra = case
    fn = getattr(einops, kind)
    expected = real(lambda: fn(np.zeros(shape), pattern, *extra, **lengths))
    kws = "".join(f", {k}={v}" for k, v in lengths.items())
    extra_text = "".join(f", {e!r}" for e in extra)
    assert ours(f"einops.{kind}(x, {pattern!r}{extra_text}{kws})", x=shape) == expected


@SETTINGS
@given(st.lists(st.sampled_from("btds"), min_size=1, max_size=3, unique=True),
       st.lists(st.sampled_from("btds"), min_size=1, max_size=3, unique=True), letter_sizes, st.integers(0, 3))
def test_einops_einsum(x: list[str], y: list[str], size: dict[str, int], bump: int) -> None:
    a, b = sized(x, size, bump), sized(y, size, 0)
    out = sorted(set(x) ^ set(y))
    pattern = f"{' '.join(x)}, {' '.join(y)} -> {' '.join(out)}"
    expected = real(lambda: einops.einsum(np.zeros(a), np.zeros(b), pattern))
    assert ours(f"einops.einsum(p, q, {pattern!r})", p=a, q=b) == expected
