"""The check that a run stayed finite: finite inputs that end in NaN or +inf (weights of 1e300 whose products
overflow, a norm's epsilon of −1 under a square root) are named in one line, with the first step that went
non-finite, instead of an all-NaN trace and exit 0 (issue 36).

−inf is not checked: the masks write it on purpose, and a softmax turns it into 0. NaN and +inf have no such
use, so the first step holding one is where the arithmetic broke.
"""

from __future__ import annotations

from typing import Any

from explain.core.errors import ExplainError


class NonFiniteError(ExplainError):
    """A run whose finite inputs gave NaN or +inf."""


def _broken(arr: Any) -> str | None:
    """'NaN' or 'inf' when a float array holds one (one pass, no temporary the size of the array), else None."""
    import numpy as np  # lazy: numpy off the shape path

    if not isinstance(arr, np.ndarray) or arr.dtype.kind != "f" or arr.size == 0:
        return None
    top = arr.max()
    if np.isnan(top):
        return "NaN"
    return "inf" if np.isposinf(top) else None


def _computed(trace: Any, step: Any) -> Any:
    """The values ``step`` computed: an expert's step (``routed``) only at the rows its experts took, as the rest
    are 0 by construction, and reading them would cost the fresh pages they never needed (bench_moe)."""
    import numpy as np  # lazy: numpy off the shape path

    from explain.ops import get  # lazy: as numpy

    if step.output is None or not get(step.op).routed:
        return step.output
    taken = np.moveaxis(trace[step.inputs[-1]].output, -1, -2) > 0  # (…, E, T): the router's choice
    return step.output[taken]  # (rows taken, features)


def check_finite(trace: Any, params: dict[str, Any], eps: float | None = None) -> None:
    """Raise :class:`NonFiniteError` naming the first step of ``trace`` whose output holds NaN or +inf, the
    largest weight, and what to check."""
    import numpy as np  # lazy: numpy off the shape path

    for step in trace.steps:
        what = _broken(_computed(trace, step))
        if what is None:
            continue
        largest = max((float(np.abs(a).max()) for a in params.values()
                       if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size), default=0.0)
        cause = (f"the norm's epsilon is {eps:g}, which must be above 0" if eps is not None and not eps > 0 else
                 f"the largest weight is {largest:.3g}")
        raise NonFiniteError(f"the run's values went {what} at step '{step.name}' although its inputs are finite "
                             f"({cause}); check the weights and the norm's epsilon of the file given")
