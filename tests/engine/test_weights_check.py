"""check_params finds a NaN or infinity anywhere with one summing pass, and still accepts finite values
whose sum overflows."""

from __future__ import annotations

import numpy as np
import pytest

from explain.core.errors import WeightsError
from explain.engine.weights import check_params
from explain.trace import ParamSpec


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


# --- arrays explain made or read are checked once ---------------------------------------------------------

def test_initial_weights_are_read_only_and_skipped_by_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from explain.engine import weights
    from explain.engine.weights import init_params

    params = init_params(_specs(8), seed=0)
    assert not params["w"].flags.writeable  # nobody can make a known-finite array non-finite in place
    scanned: list[int] = []
    monkeypatch.setattr(weights, "_row_sums", lambda a: scanned.append(a.size) or a.reshape(-1))
    out = check_params(params, _specs(8))
    assert out["w"] is params["w"] and scanned == []


def test_an_initial_array_made_writable_again_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from explain.engine.weights import init_params

    params = init_params(_specs(8), seed=0)
    params["w"].flags.writeable = True
    params["w"][3] = np.nan
    with pytest.raises(WeightsError, match="NaN or infinite"):
        check_params(params, _specs(8))


def test_the_callers_own_float64_arrays_stay_writable_and_are_checked_every_time() -> None:
    w = np.ones(8)
    assert check_params({"w": w}, _specs(8))["w"] is w
    assert w.flags.writeable
    w[0] = np.inf  # the caller changes it between runs: the next run must see it
    with pytest.raises(WeightsError, match="NaN or infinite"):
        check_params({"w": w}, _specs(8))


def test_a_converted_copy_is_known_finite_the_callers_array_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    from explain.engine import weights

    w32 = np.ones(8, dtype=np.float32)
    out = check_params({"w": w32}, _specs(8))["w"]
    assert out.dtype == np.float64 and not out.flags.writeable and w32.flags.writeable
    scanned: list[int] = []
    monkeypatch.setattr(weights, "_row_sums", lambda a: scanned.append(a.size) or a.reshape(-1))
    check_params({"w": out}, _specs(8))
    assert scanned == []


def test_a_weights_file_is_read_once_checked_and_its_arrays_read_only(tmp_path) -> None:
    from explain.engine.weights import load_params

    path = tmp_path / "w.npz"
    np.savez(path, w=np.arange(8.0))
    out = load_params(path, _specs(8))
    np.testing.assert_array_equal(out["w"], np.arange(8.0))
    assert not out["w"].flags.writeable


def test_a_run_on_initial_weights_twice_gives_the_same_trace() -> None:
    import explain
    from explain.engine.api import plan
    from explain.engine.weights import init_params

    opts = dict(text="the cat sat", d_model=8, n_heads=2, n_layers=1)
    params = init_params(plan("gpt", **opts).specs, seed=0)
    a, b = explain.run("gpt", weights=params, **opts), explain.run("gpt", weights=params, **opts)
    np.testing.assert_array_equal(a["loss"].output, b["loss"].output)
    np.testing.assert_array_equal(a["loss"].output, explain.run("gpt", **opts)["loss"].output)
