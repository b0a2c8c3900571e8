"""Op.compute evaluates the op's own export source; the guard refuses any expression that is not plain numpy
arithmetic, so text that reached an attribute (from a file, say) can never run."""

from __future__ import annotations

import numpy as np
import pytest

from explain import ops
from explain.ops.base import _compiled


@pytest.mark.parametrize("expr", [
    "__import__('os').system('true')",
    "_0.__class__",
    "open('x')",
    "(lambda: 1)()",
    "layer_norm(_0, _1, _2, eps='1e-5')",
])
def test_expressions_that_are_not_numpy_arithmetic_are_refused(expr):
    with pytest.raises(AssertionError, match="not plain numpy arithmetic"):
        _compiled(expr)


def test_a_text_attribute_cannot_run_through_an_op():
    # pos_embed writes its attribute n into its source: a string there is refused before anything runs.
    with pytest.raises(AssertionError, match="not plain numpy arithmetic"):
        ops.get("pos_embed").compute(np.zeros((4, 2)), n="__import__('os').getcwd()")


def test_the_ops_own_expressions_pass():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ops.get("add").compute(x, x), 2 * x)
    np.testing.assert_array_equal(ops.get("matmul").compute(x, x, transpose_b=True), x @ x.T)
