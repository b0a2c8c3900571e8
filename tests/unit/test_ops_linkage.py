"""Linkage: each op's :meth:`~explain.ops.base.Op.feeds` names exactly the input cells an output cell depends
on. Checked against the op's own compute by perturbation, for every op kind with inputs in every model: changing
any cell outside the marked ones leaves the output cell as it was (to 1e-12); changing the marked ones changes
it. The explanations read their operands through ``feeds``, so the drill-down and the marks agree."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain import ops
from explain.models import MODELS

TRACES = {m: explain.run(m, **({"normalize": "sum"} if m == "simple" else {})) for m in MODELS}
ONE_PER_KIND = {}
for model, trace in TRACES.items():
    for step in trace:
        if step.inputs and step.output is not None and step.op not in ONE_PER_KIND:
            ONE_PER_KIND[step.op] = (model, step.name)


def mask_of(shape, index) -> np.ndarray:
    m = np.zeros(shape, dtype=bool)
    m[index] = True
    return m


@pytest.mark.parametrize("kind", sorted(ONE_PER_KIND))
def test_marked_cells_are_exactly_the_cells_that_feed(kind):
    model, name = ONE_PER_KIND[kind]
    trace = TRACES[model]
    step = trace[name]
    op = ops.get(step.op)
    inputs = trace.inputs_of(step)
    rng = np.random.default_rng(0)
    cells = {tuple(0 for _ in step.shape), tuple(n - 1 for n in step.shape)}
    for index in cells:
        feeds = op.feeds(index, inputs, **step.attrs)
        assert len(feeds) == len(inputs)
        for k, (arr, feed) in enumerate(zip(inputs, feeds)):
            if arr.dtype.kind in "iub":  # token ids and targets: what they select is checked through the others
                continue
            marked = mask_of(arr.shape, feed)
            assert marked.any(), (kind, k)
            # outside the marks: any change leaves the cell as it was
            other = [a.copy() for a in inputs]
            noise = rng.normal(size=arr.shape) * 3
            other[k] = np.where(marked, arr, arr + noise)
            out = op.compute(*other, **step.attrs)
            np.testing.assert_allclose(out[index], step.output[index], rtol=0, atol=1e-12, err_msg=f"{kind} in {k}")
            # the marks themselves: a change there changes the cell (unless every marked entry is masked)
            if np.isfinite(arr[marked]).any() and np.isfinite(step.output[index]):
                other[k] = np.where(marked & np.isfinite(arr), arr + 1.7 + noise, arr)
                out = op.compute(*other, **step.attrs)
                assert out[index] != step.output[index], (kind, k, index)


def test_explanations_read_the_fed_cells():
    """The matmul drill-down's terms are the marked row of Q and column of Kᵀ."""
    t = TRACES["gpt"]
    step = t["blocks.0.attn.scores"]
    ex = t.explain(step, (0, 1, 2, 3))
    q, k = t.inputs_of(step)
    fq, fk = ops.get("matmul").feeds((0, 1, 2, 3), [q, k], **step.attrs)
    assert [r[1] for r in ex.rows] == list(q[fq]) and [r[2] for r in ex.rows] == list(k[fk])
    assert fq == (0, 1, 2, slice(None)) and fk == (0, 1, 3, slice(None))
