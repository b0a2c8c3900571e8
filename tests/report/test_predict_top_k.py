"""The top-k next tokens are picked without sorting the whole vocabulary (explain.report.predict.top_k): the same
indices, in the same order, as numpy's full stable sort, the reference, including ties at the k-th place,
NaN, −∞ and k past the vocabulary."""

from __future__ import annotations

import numpy as np

from explain.report.predict import top_k


def test_top_k_is_the_full_stable_sort_cut_at_k() -> None:
    rng = np.random.default_rng(29)
    for trial in range(2000):
        n, k = int(rng.integers(1, 60)), int(rng.integers(1, 70))
        v = rng.integers(-3, 4, n).astype(float)  # few distinct values: ties everywhere, at the k-th place too
        if trial % 3 == 0:
            v[rng.integers(0, n, 3)] = np.nan
        if trial % 5 == 0:
            v[rng.integers(0, n, 2)] = -np.inf
        np.testing.assert_array_equal(top_k(v, k), np.argsort(-v, kind="stable")[:k], err_msg=f"{v} k={k}")


def test_a_gpt2_sized_row() -> None:
    lp = np.random.default_rng(0).standard_normal(50257)
    lp[[7, 70, 700]] = lp.max() + 1  # a three-way tie for first place, in index order
    np.testing.assert_array_equal(top_k(lp, 5), np.argsort(-lp, kind="stable")[:5])
    assert list(top_k(lp, 3)) == [7, 70, 700]
