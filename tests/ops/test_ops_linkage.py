"""Linkage: each op's :meth:`~explain.ops.base.Op.feeds` names exactly the input cells an output cell depends
on. Checked against the op's own compute by perturbation, for every op kind with inputs in every model: changing
any cell outside the marked ones leaves the output cell as it was (to 1e-12); changing the marked ones changes
it. The explanations read their operands through ``feeds``, so the drill-down and the marks agree.

The backward pass is checked the same way: every gradient op kind (``<kind>.grad``, once for each input it
differentiates), ``accumulate``, ``mse`` and ``sgd``, from runs with ``--backward`` and ``--lr``. An operand a
gradient cell does not read (``add`` passes the gradient through) is marked None: changing all of it leaves
the cell as it was."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain import ops
from explain.core.registry import MODELS

TRACES = {m: explain.run(m, **({"normalize": "sum"} if m == "simple" else {})) for m in MODELS}
TRACES |= {f"{m}-backward": explain.run(m, backward=True) for m in MODELS}
TRACES["gpt-lr"] = explain.run("gpt", lr=0.1)
TRACES["gpt-batch-backward"] = explain.run("gpt", text=["the cat sat", "a dog ran"], backward=True)
# the mixture of experts' op kinds: DeepSeek's router (a choosing bias, groups) and a gated shared expert, backward
TRACES["llama-moe-backward"] = explain.run("llama", n_experts=6, router="sigmoid", n_group=3, topk_group=2,
                                           n_shared_experts=1, shared_expert_gate=True, backward=True)
ONE_PER_KIND = {}
for model, trace in TRACES.items():
    for step in trace:
        kind = f"{step.op}/{step.attrs['wrt']}" if "wrt" in step.attrs else step.op
        if step.inputs and step.output is not None and kind not in ONE_PER_KIND:
            ONE_PER_KIND[kind] = (model, step.name)


def mask_of(shape, index) -> np.ndarray:
    m = np.zeros(shape, dtype=bool)
    if index is not None:
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
    # and the largest cell (a gradient's first and last cells may be 0: no loss at the last position)
    cells.add(tuple(int(i) for i in np.unravel_index(np.argmax(np.abs(np.nan_to_num(step.output))), step.shape)))
    for index in cells:
        feeds = op.feeds(index, inputs, **step.attrs)
        assert len(feeds) == len(inputs)
        for k, (arr, feed) in enumerate(zip(inputs, feeds)):
            if arr.dtype.kind in "iub":  # token ids and targets: what they select is checked through the others
                continue
            marked = mask_of(arr.shape, feed)
            # a gradient may not read an operand at all, nor an expert a row it did not take (the op says so)
            skips = getattr(op, "fwd", op).skips
            assert marked.any() or ".grad" in kind or skips, (kind, k)
            # outside the marks: any change leaves the cell as it was
            other = [a.copy() for a in inputs]
            noise = rng.normal(size=arr.shape) * 3
            other[k] = np.where(marked, arr, arr + noise)
            out = op.compute(*other, **step.attrs)
            np.testing.assert_allclose(out[index], step.output[index], rtol=0, atol=1e-12, err_msg=f"{kind} in {k}")
            # the marks themselves: a change there changes the cell (unless every marked entry is masked)
            # (and unless it is a gradient's operand and the upstream gradient there is 0: 0 times anything)
            zero_upstream = ".grad" in kind and k > 0 and not np.any(inputs[0][mask_of(inputs[0].shape, feeds[0])])
            # (nor a router's choice: its scores move, and the same experts may stay the top k; nor a row an
            # expert did not take, 0 whatever its operands, as the op says)
            idle = skips and step.output[index] == 0
            if np.isfinite(arr[marked]).any() and np.isfinite(step.output[index]) and not zero_upstream \
                    and step.op != "route" and not idle:
                # two changes (a shift, and a sign flip for ReLU's gate): at least one moves the cell
                moved = []
                for changed in (arr + 1.7 + noise, -arr - 1.7):
                    other[k] = np.where(marked & np.isfinite(arr), changed, arr)
                    moved.append(op.compute(*other, **step.attrs)[index] != step.output[index])
                assert any(moved), (kind, k, index)


def test_explanations_read_the_fed_cells():
    """The matmul drill-down's terms are the marked row of Q and column of Kᵀ."""
    t = TRACES["gpt"]
    step = t["blocks.0.attn.scores"]
    ex = t.explain(step, (0, 1, 2, 3))
    q, k = t.inputs_of(step)
    fq, fk = ops.get("matmul").feeds((0, 1, 2, 3), [q, k], **step.attrs)
    assert [r[1] for r in ex.rows] == list(q[fq]) and [r[2] for r in ex.rows] == list(k[fk])
    assert fq == (0, 1, 2, slice(None)) and fk == (0, 1, 3, slice(None))
