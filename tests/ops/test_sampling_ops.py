"""The sampling ops against independent references: transformers' own logits warpers (fixture written once by
tests/data/make_generate_expected.py), hand-computed cases, and 10,000-draw chi-squared tests of the draw over
fixed softmaxes (plain, top-k, top-p), with a seeded generator so the test is deterministic."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from explain import ops
from explain.ops import kernels
from explain.ops.base import Syms

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "generate" / "expected.npz"


@pytest.fixture(scope="module")
def ref() -> dict:
    with np.load(EXPECTED, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def same_filter(got: np.ndarray, want: np.ndarray) -> None:
    """The same tokens cut (−inf) and the kept logits equal to 1e-12."""
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    keep = np.isfinite(want)
    np.testing.assert_allclose(got[keep], want[keep], rtol=1e-12, atol=0)


def test_filters_match_transformers_warpers(ref) -> None:
    z = ref["filter_logits"]
    same_filter(ops.get("temperature").compute(z, t=0.7), ref["temperature_0.7"])
    same_filter(kernels.top_k_filter(z, 5), ref["top_k_5"])
    same_filter(kernels.top_p_filter(z, 0.9), ref["top_p_0.9"])
    chained = kernels.top_p_filter(kernels.top_k_filter(z / 3.0, 6), 0.95)
    same_filter(chained, ref["t_3_top_k_6_top_p_0.95"])
    assert np.isfinite(chained).sum() == 5  # the chain keeps 5 of the 6: the fixture is not a trivial case


def test_top_k_by_hand_keeps_ties_with_the_kth() -> None:
    z = np.array([[1.0, 3.0, 2.0, 3.0, 0.5]])
    np.testing.assert_array_equal(kernels.top_k_filter(z, 2), [[-np.inf, 3.0, -np.inf, 3.0, -np.inf]])
    np.testing.assert_array_equal(kernels.top_k_filter(z, 3), [[-np.inf, 3.0, 2.0, 3.0, -np.inf]])
    np.testing.assert_array_equal(kernels.top_k_filter(np.array([[2.0, 2.0, 1.0]]), 1), [[2.0, 2.0, -np.inf]])
    np.testing.assert_array_equal(kernels.top_k_filter(z, 50), z)  # k beyond the vocabulary keeps all


def test_top_p_by_hand() -> None:
    # probabilities 0.5, 0.3, 0.15, 0.05: ranked-above mass 0, 0.5, 0.8, 0.95 → p = 0.9 keeps three
    z = np.log(np.array([[0.15, 0.5, 0.05, 0.3]]))
    np.testing.assert_array_equal(np.isneginf(kernels.top_p_filter(z, 0.9)), [[False, False, True, False]])
    np.testing.assert_array_equal(np.isneginf(kernels.top_p_filter(z, 0.5)), [[True, False, True, True]])
    np.testing.assert_array_equal(np.isneginf(kernels.top_p_filter(z, 0.01)), [[True, False, True, True]])
    assert not np.isneginf(kernels.top_p_filter(z, 1.0)).any()


def test_sample_by_hand_is_the_inverse_cdf() -> None:
    p = np.array([0.2, 0.5, 0.3])
    for u, want in ((0.0, 0), (0.1, 0), (0.2, 1), (0.69, 1), (0.7, 2), (0.999, 2)):
        assert kernels.sample(p, np.array(u)) == want, u
    # a zero-probability token is never drawn, even where the cumulative sum is flat
    assert kernels.sample(np.array([0.5, 0.0, 0.5]), np.array(0.5)) == 2
    assert kernels.sample(np.array([0.5, 0.5, 0.0]), np.array(0.9999999)) == 1


def chi2_sf(x: float, df: int) -> float:
    """P(χ²_df ≥ x) = 1 − P(df/2, x/2), the regularized lower incomplete gamma by its power series."""
    a, y = df / 2, x / 2
    term = total = 1.0 / a
    n = 1
    while term > 1e-17 * total:
        term *= y / (a + n)
        total += term
        n += 1
    return 1.0 - math.exp(-y + a * math.log(y) - math.lgamma(a)) * total


def test_chi2_sf_matches_the_table() -> None:
    # published critical values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.4): χ²(9) 0.001 → 27.877,
    # χ²(4) 0.05 → 9.488, χ²(1) 0.05 → 3.841
    assert chi2_sf(27.877, 9) == pytest.approx(0.001, rel=1e-3)
    assert chi2_sf(9.488, 4) == pytest.approx(0.05, rel=1e-3)
    assert chi2_sf(3.841, 1) == pytest.approx(0.05, rel=1e-3)


def draw(z: np.ndarray, *filters, n: int = 10_000, seed: int = 12345) -> tuple[np.ndarray, np.ndarray]:
    """n draws through the ops (filters, softmax, sample) from fixed logits; the counts and the expected
    probabilities computed independently (np.exp / sum over the kept tokens)."""
    for f in filters:
        z = f(z)
    probs = ops.get("softmax").compute(np.broadcast_to(z, (n, z.size)))
    u = np.random.default_rng(seed).random(n)
    ids = ops.get("sample").compute(probs, u)
    keep = np.isfinite(z)
    e = np.where(keep, np.exp(np.where(keep, z, 0.0)), 0.0)
    return np.bincount(ids, minlength=z.size), e / e.sum()


def chi2_p(counts: np.ndarray, expected: np.ndarray) -> float:
    assert counts[expected == 0].sum() == 0, "a cut token was drawn"
    live = expected > 0
    e = expected[live] * counts.sum()
    stat = float(((counts[live] - e) ** 2 / e).sum())
    return chi2_sf(stat, int(live.sum()) - 1)


Z = np.array([2.0, 1.5, 1.2, 1.0, 0.4, 0.0, -0.3, -1.0, -2.0, -3.5])


@pytest.mark.parametrize("name,filters,live", [
    ("plain", (), 10),
    ("top-k 4", (lambda z: kernels.top_k_filter(z, 4),), 4),
    ("top-p 0.8", (lambda z: kernels.top_p_filter(z, 0.8),), None),
    ("T 0.5, top-k 6, top-p 0.9", (lambda z: z / 0.5, lambda z: kernels.top_k_filter(z, 6),
                                  lambda z: kernels.top_p_filter(z, 0.9)), None),
])
def test_draws_follow_the_filtered_softmax(name, filters, live) -> None:
    counts, expected = draw(Z, *filters)
    assert counts.sum() == 10_000
    if live is not None:
        assert (expected > 0).sum() == live
    assert 1 < (expected > 0).sum() < 10 or not filters
    assert chi2_p(counts, expected) > 0.001, name


def test_chi2_has_the_power_to_see_a_wrong_distribution() -> None:
    counts, _ = draw(Z, lambda z: z / 0.8)  # drawn at temperature 0.8 ...
    _, expected = draw(Z)  # ... checked against temperature 1
    assert chi2_p(counts, expected) < 1e-6


def test_uniform_is_reproducible_and_differs_per_token() -> None:
    u = ops.get("uniform")
    a, b = u.compute(shape=(2, 1), seed=7, n=3), u.compute(shape=(2, 1), seed=7, n=3)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, u.compute(shape=(2, 1), seed=7, n=4))
    assert not np.array_equal(a, u.compute(shape=(2, 1), seed=8, n=3))
    assert ((0 <= a) & (a < 1)).all()
    assert u.source("u", [], shape=(2, 1), seed=7, n=3) == "np.random.default_rng([7, 3]).random((2, 1))"
    np.testing.assert_array_equal(eval(u.source("u", [], shape=(2, 1), seed=7, n=3), {"np": np}), a)  # noqa: S307


def explain_cell(kind: str, index, inputs, **attrs):
    op = ops.get(kind)
    out = op.compute(*inputs, **attrs)
    return op.explain(index, inputs, out, Syms("y", tuple(f"x{i}" for i in range(len(inputs)))), **attrs), out


def test_top_k_explains_why_a_token_was_cut() -> None:
    z = np.array([[[9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0]]])
    ex, out = explain_cell("top_k", (0, 0, 6), [z], k=5)
    assert "rank 7 > k = 5" in ex.lines and ex.value == -np.inf and out[0, 0, 6] == -np.inf
    ex, _ = explain_cell("top_k", (0, 0, 1), [z], k=5)
    assert "rank 2 ≤ k = 5" in ex.lines and ex.value == 8.0


def test_top_k_at_least_the_vocabulary_says_it_keeps_every_token() -> None:
    z = np.array([[[3.0, 1.0, 2.0]]])
    ex, out = explain_cell("top_k", (0, 0, 1), [z], k=10)
    assert "k = 10 is at least the vocabulary's 3 tokens: every token is kept" in ex.lines
    assert np.array_equal(out, z)  # nothing cut


def test_top_p_explains_the_cumulative_before_the_token() -> None:
    z = np.log(np.array([[[0.6, 0.33, 0.05, 0.02]]]))
    ex, _ = explain_cell("top_p", (0, 0, 2), [z], p=0.9)
    assert "cumulative 0.9300 ≥ p = 0.9000 before it" in ex.lines and ex.value == -np.inf
    ex, _ = explain_cell("top_p", (0, 0, 1), [z], p=0.9)
    assert "cumulative 0.6000 < p = 0.9000 before it" in ex.lines


def test_sample_explains_where_u_falls() -> None:
    probs, u = np.array([[0.2, 0.5, 0.3]]), np.array([0.6])
    ex, out = explain_cell("sample", (0,), [probs, u])
    assert out[0] == 1 and ex.value == 1.0
    assert "cumulative before id 1 = 0.2000 ≤ u = 0.6000 < 0.7000 = cumulative through it" in ex.lines


def test_kv_append_fills_one_buffer_and_never_changes_an_earlier_view() -> None:
    op = ops.get("kv_append")
    k0 = np.arange(6.0).reshape(1, 3, 2)
    c1 = op.compute(k0, np.full((1, 1, 2), 10.0), capacity=5)
    c2 = op.compute(c1, np.full((1, 1, 2), 20.0), capacity=5)
    np.testing.assert_array_equal(c2, np.concatenate([k0, np.full((1, 1, 2), 10.0), np.full((1, 1, 2), 20.0)], 1))
    assert c2.base is c1.base and c1.shape == (1, 4, 2)  # one buffer, no copy
    np.testing.assert_array_equal(c1[:, 3], [[10.0, 10.0]])
    branch = op.compute(c1, np.full((1, 1, 2), 99.0), capacity=5)  # a second append at the same length copies
    assert branch.base is not c1.base
    np.testing.assert_array_equal(c2[:, 4], [[20.0, 20.0]])
    assert op.stored_values((1, 4, 2), [], capacity=5, first=True) == 10
    assert op.stored_values((1, 5, 2), [], capacity=5, first=False) == 0


def test_a_draw_refuses_probabilities_that_are_not_finite() -> None:
    """No NaN reaches a draw: argmax and the cumulative walk would both quietly give token 0."""
    import numpy as np

    from explain import ops
    from explain.core.errors import InputError
    from explain.models.generate import check_probabilities

    probs = np.array([[[0.2, 0.8]], [[np.nan, np.nan]]])
    with pytest.raises(InputError, match=r"at \[1, 0\] hold NaN"):
        check_probabilities(probs)
    check_probabilities(probs[:1])  # finite: no error
    assert ops.get("argmax").compute(probs[:1]).tolist() == [[1]]


@pytest.mark.parametrize("t", [1e-320, 5e-324, [1.0, 1e-310]])
def test_a_temperature_too_small_to_divide_by_is_refused(t) -> None:
    from explain.core.errors import UsageError
    from explain.core.sampling import make_sampling

    with pytest.raises(UsageError, match="too small to divide by.*--temperature 0 for greedy"):
        make_sampling(3, temperature=t)
    assert make_sampling(3, temperature=1e-300).temperature == 1e-300  # 1 / 1e-300 is finite: allowed


def test_the_temperature_drill_down_gives_the_cells_p_at_three_temperatures_by_hand() -> None:
    # logits ln 1, ln 2, ln 5: at T = 1 the p are 1/8, 2/8, 5/8; at T = 0.5 they go as 1, 4, 25 (sum 30); at
    # T = 2 as 1, √2, √5. The line is short enough for 80 columns with its two spaces of padding.
    z = np.log(np.array([[[1.0, 2.0, 5.0]]]))
    op = ops.get("temperature")
    out = op.compute(z, t=1.0)
    got = op.explain((0, 0, 1), [z], out, Syms("z/T", ("z",)), t=1.0).lines[-1]
    half, one, two = 4 / 30, 2 / 8, math.sqrt(2) / (1 + math.sqrt(2) + math.sqrt(5))
    assert got == f"its p after softmax: T = 0.5 → {half:.4f} · T = 1 → {one:.4f} · T = 2 → {two:.4f}"
    assert len(got) <= 76
