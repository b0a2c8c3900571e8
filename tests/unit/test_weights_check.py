"""check_params finds a NaN or infinity anywhere with one summing pass, and still accepts finite values
whose sum overflows."""

from __future__ import annotations

import numpy as np
import pytest

from explain.errors import WeightsError
from explain.trace import ParamSpec
from explain.weights import check_params


def _specs(n: int) -> dict[str, ParamSpec]:
    return {"w": ParamSpec("w", (n,), ("x",), "normal")}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_anywhere_is_refused(bad: float) -> None:
    w = np.ones(1000)
    w[637] = bad
    with pytest.raises(WeightsError, match="'w' in the weights contains NaN or infinite values"):
        check_params({"w": w}, _specs(1000))


def test_finite_values_whose_sum_overflows_are_accepted() -> None:
    w = np.full(4, 1e308)  # the sum is inf; every value is finite
    with np.errstate(all="raise"):
        out = check_params({"w": w}, _specs(4))
    assert out["w"] is w  # float64 already: no copy


def test_opposite_infinities_do_not_cancel() -> None:
    w = np.array([np.inf, -np.inf, 1.0])  # the sum is nan
    with pytest.raises(WeightsError):
        check_params({"w": w}, _specs(3))
