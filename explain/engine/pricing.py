"""Closed-form memory prices: what a run with many layers and many new tokens costs, from plans of a few.

A run's cost is linear in its layer count (one stem, ``n_layers`` equal blocks, one head) and, for a generation,
quadratic in ``--max-new-tokens``: the key/value cache holds ``T + N − 1`` rows and token ``n`` attends over
``T + n`` of them, so the sum over tokens grows as N². Plans (shape-only, nothing allocated) of one and two
layers with two, three and four new tokens give that polynomial exactly (Newton's forward differences), so
``--max-new-tokens 10**6`` is priced in six small plans, not a million. Nothing here imports numpy.
"""

from __future__ import annotations

from collections.abc import Callable

Cost = tuple[int, int]  # (parameter count, trace bytes)


def _linear_in_layers(cost: Callable[[int], Cost], n_layers: int) -> Cost:
    """cost(n_layers) from cost(1) and cost(2)."""
    if n_layers <= 2:
        return cost(n_layers)
    one, two = cost(1), cost(2)
    k = n_layers - 1
    return one[0] + k * (two[0] - one[0]), one[1] + k * (two[1] - one[1])


def _quadratic_in_tokens(cost: Callable[[int], Cost], n_new: int) -> Cost:
    """cost(n_new) from cost(2), cost(3), cost(4); one new token (no step on the cache) is planned as it is."""
    if n_new <= 4:
        return cost(n_new)
    f2, f3, f4 = cost(2), cost(3), cost(4)
    m = n_new - 2
    d1, d2 = f3[1] - f2[1], f4[1] - 2 * f3[1] + f2[1]
    return f2[0], f2[1] + m * d1 + m * (m - 1) // 2 * d2


def price(plan: Callable[[int, int | None], Cost], n_layers: int, n_new: int | None) -> Cost:
    """(parameter count, trace bytes) of a run of ``n_layers`` layers generating ``n_new`` tokens (None: no
    generation), where ``plan(layers, new)`` plans a small run shape-only."""
    if n_new is None:
        return _linear_in_layers(lambda layers: plan(layers, None), n_layers)
    return _quadratic_in_tokens(lambda new: _linear_in_layers(lambda layers: plan(layers, new), n_layers), n_new)
