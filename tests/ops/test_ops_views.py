"""Each op owns its views: what runs is the expression it exports (no second numpy spelling of the same
computation), and it says itself whether its output is a probability distribution."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import explain
from explain import ops
from explain.ops.base import Op

MODELS = ["simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt"]


def test_only_ops_with_nothing_to_export_compute_on_their_own() -> None:
    own = sorted(kind for kind, op in ops.REGISTRY.items() if type(op).compute is not Op.compute)
    # an input's value is given (its export writes the value itself); kv_append writes the same values as its
    # source (np.concatenate) into one cache buffer instead of a copy per token (test_sampling_ops checks both); an
    # expert's linear and SwiGLU write into zeros whose untouched pages are never backed (issue 43, bench_moe), the
    # exported text's np.zeros giving the same values (test_an_expert_step_equals_its_exported_expression)
    assert own == ["expert_linear", "expert_swiglu", "input", "kv_append"]


@pytest.mark.parametrize("router", ["softmax", "sigmoid"])
def test_an_expert_step_equals_its_exported_expression(router: str) -> None:
    extra = dict(n_group=2, topk_group=1, n_shared_experts=1) if router == "sigmoid" else {}
    trace = explain.run("llama", n_experts=4, experts_per_token=2, router=router, **extra)
    kinds = set()
    for step in trace:
        if not step.op.startswith("expert_"):
            continue
        kinds.add(step.op)
        names = [f"v{i}" for i in range(len(step.inputs))]
        expr = ops.get(step.op).source("out", names, **step.attrs)
        scope = {"np": np, **{k: v for k, v in vars(explain.ops.kernels).items() if callable(v)}}
        np.testing.assert_array_equal(eval(expr, scope, dict(zip(names, trace.inputs_of(step)))), step.output,
                                      err_msg=step.name)
    assert {"expert_linear", "expert_swiglu"} <= kinds


@pytest.mark.parametrize("model", MODELS)
def test_every_step_equals_its_exported_expression(model: str) -> None:
    trace = explain.run(model)
    for step in trace:
        if step.op == "input":
            continue
        op = ops.get(step.op)
        names = [f"v{i}" for i in range(len(step.inputs))]
        expr = op.source("out", names, **step.attrs)
        scope = {"np": np, **{k: v for k, v in vars(explain.ops.kernels).items() if callable(v)}}
        again = eval(expr, scope, dict(zip(names, trace.inputs_of(step))))  # the text an export writes
        np.testing.assert_array_equal(again, step.output, err_msg=step.name)


def test_probability_is_a_property_of_the_op() -> None:
    assert {k for k, op in ops.REGISTRY.items() if op.probability} == {"softmax", "sum_normalize"}
    trace = explain.run("simple", normalize="sum")
    np.testing.assert_allclose(trace["attn.pattern"].output.sum(axis=-1), 1.0, atol=1e-12)
    render_step = inspect.getsource(__import__("explain.render.step", fromlist=["x"]))
    assert "PROBABILITY_OPS" not in render_step
