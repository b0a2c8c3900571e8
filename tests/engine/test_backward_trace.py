"""The recorded backward pass: names, groups, accumulation steps, the objective of models without a loss, the
SGD step, the shape-only plan, memory refusal, and every gradient cell explained. (The numbers themselves are
checked against PyTorch in test_backward_torch.py and against finite differences in test_backward_ops.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain.core.errors import InputError, ResourceError, UsageError
from explain.engine.api import plan

MODELS = ["simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt"]


def _cells(shape):
    if not shape:
        return [()]
    return list({tuple(0 for _ in shape), tuple(s // 2 for s in shape), tuple(s - 1 for s in shape)})


@pytest.mark.parametrize("model", MODELS)
def test_every_gradient_cell_is_explained(model: str) -> None:
    t = explain.run(model, backward=True)
    backward = [s for s in t if s.group[:1] == ("backward",)]
    assert backward and all(s.name.endswith(".grad") or ".grad.from." in s.name for s in backward)
    for step in backward:
        for cell in _cells(step.shape):
            ex = t.explain(step, cell)
            assert ex.value == float(step.output[cell]), (step.name, cell)
            assert ex.title and ex.lines, step.name


@pytest.mark.parametrize("model", MODELS)
def test_shape_only_plan_has_the_same_backward_steps(model: str) -> None:
    numeric, shapes = explain.run(model, backward=True, random_weights=True), plan(model, backward=True)
    assert [(s.name, s.op, s.shape, s.group) for s in numeric] == [(s.name, s.op, s.shape, s.group) for s in shapes]


def test_gradients_are_named_and_filed_beside_their_forward_step() -> None:
    t = explain.run("gpt", random_weights=True, backward=True)
    grad = t["blocks.0.attn.pattern.grad"]
    assert grad.op == "weighted_sum.grad" and grad.syms.out == "∂L/∂A"
    assert grad.group == ("backward", "blocks.0", "attn")
    assert grad.formula == "∂L/∂A = ∂L/∂Z·Vᵀ"
    assert t["blocks.0.attn.masked.grad"].formula == "∂L/∂Sₘ = A ⊙ (∂L/∂A − rowsum(∂L/∂A ⊙ A))"
    assert t["loss.grad"].formula == "∂L/∂L = 1" and float(t["loss.grad"].output) == 1.0
    # backward runs in reverse: the loss's gradient first, W_E's last
    names = t.names()
    assert names.index("loss.grad") < names.index("ln_final.grad") < names.index("blocks.0.ln1.grad") \
        < names.index("W_E.grad")
    # every parameter has a gradient
    assert {n for n in t.params} == {s.name[:-5] for s in t if s.name.endswith(".grad") and s.name[:-5] in t.params}


def test_a_value_feeding_several_steps_accumulates_named_contributions() -> None:
    t = explain.run("gpt", random_weights=True, backward=True)
    acc = t["blocks.0.ln1.grad"]
    assert acc.op == "accumulate"
    assert set(acc.attrs["sources"]) == {"blocks.0.attn.q", "blocks.0.attn.k", "blocks.0.attn.v"}
    parts = [t[n].output for n in acc.inputs]
    np.testing.assert_allclose(sum(parts), acc.output, rtol=1e-15, atol=1e-15)
    ex = t.explain(acc, (0, 1, 2))
    assert [r[0] for r in ex.rows] == list(acc.attrs["sources"])
    # the tied embedding: W_E gets one gradient through the lookup and one through the logits
    assert set(t["W_E.grad"].attrs["sources"]) == {"embed", "logits"}
    # X·Xᵀ uses X twice in one step: each use is its own contribution
    s = explain.run("simple", backward=True)
    assert {"embed.grad.from.attn.scores.arg0", "embed.grad.from.attn.scores.arg1",
            "embed.grad.from.attn.z"} <= set(s.names())


def test_mask_gives_zero_gradient_to_every_future_score() -> None:
    t = explain.run("causal", backward=True)
    g = t["attn.scaled.grad"].output
    future = np.triu(np.ones(g.shape, dtype=bool), k=1)
    assert np.all(g[future] == 0) and np.any(g[~future] != 0)
    assert "no gradient flows" in " ".join(t.explain("attn.scaled.grad", (0, 3)).lines)
    assert "passes through" in " ".join(t.explain("attn.scaled.grad", (3, 0)).lines)


def test_the_residual_stream_passes_gradients_through_unchanged() -> None:
    t = explain.run("gpt", random_weights=True, backward=True)
    out = t["blocks.1.resid_post.grad"].output
    np.testing.assert_array_equal(t["blocks.1.mlp_out.grad"].output, out)
    np.testing.assert_array_equal(t["blocks.1.resid_mid.grad.from.blocks.1.resid_post"].output, out)


def test_models_without_a_loss_take_an_objective() -> None:
    t = explain.run("attention", backward=True)
    assert t["loss"].op == "mse" and t["output_target"].op == "input"
    assert "seed" in t["output_target"].note
    target = np.ones((2, 4))
    t2 = explain.run("attention", backward=True, output_target=target)
    z = t2["attn.z"].output
    np.testing.assert_allclose(t2["attn.z.grad"].output, 2 * (z - target) / z.size, rtol=1e-14)
    g = np.arange(8.0).reshape(2, 4)
    t3 = explain.run("attention", backward=True, grad_output=g)
    assert "loss" not in t3 and t3["attn.z.grad"].op == "input"
    np.testing.assert_array_equal(t3["attn.z.grad"].output, g)


def test_bad_objectives_are_refused_with_the_fix() -> None:
    with pytest.raises(UsageError, match="has a loss"):
        explain.run("gpt", random_weights=True, backward=True, grad_output=np.zeros((1, 4, 45)))
    with pytest.raises(UsageError, match="one objective"):
        explain.run("attention", backward=True, grad_output=np.zeros((2, 4)), output_target=np.zeros((2, 4)))
    with pytest.raises(UsageError, match="add --backward"):
        explain.run("attention", output_target=np.zeros((2, 4)))
    with pytest.raises(InputError, match=r"shape \[3, 4\].*\[2, 4\]"):
        explain.run("attention", backward=True, grad_output=np.zeros((3, 4)))
    with pytest.raises(UsageError, match="--lr must be a positive"):
        explain.run("gpt", random_weights=True, lr=0.0)
    with pytest.raises(UsageError, match="--output-target"):
        explain.run("attention", lr=0.1, backward=True, grad_output=np.zeros((2, 4)))


def test_sgd_step_records_updates_and_the_loss_after() -> None:
    t = explain.run("gpt", random_weights=True, lr=0.1)
    upd = t["blocks.0.attn.W_Q.updated"]
    np.testing.assert_allclose(upd.output, t.params["blocks.0.attn.W_Q"] - 0.1 * t["blocks.0.attn.W_Q.grad"].output,
                               rtol=1e-15)
    after = t["loss_after"]
    assert float(after.output) < float(t["loss"].output)
    assert "went from" in after.note and after.group == ("update",)
    again = explain.run("gpt", weights={n: t[f"{n}.updated"].output for n in t.params})
    assert float(again["loss"].output) == pytest.approx(float(after.output), rel=1e-13)
    # the drill-down says where L′ came from (a second forward pass), not "given as input"; a scalar's cell is
    # written L′, not L′[] (tutorial 21's last stop at 80×24 showed "L′[] is given as input")
    ex = t.explain("loss_after", ())
    assert ex.title.startswith("L′: the loss of the model run again with the updated parameters"), ex.title
    assert ex.lines == [f"L′ = {float(again['loss'].output):.4f}"]
    assert t.explain("loss", ()).title.startswith("L = mean of the ")


def test_memory_refusal_counts_the_gradients(monkeypatch) -> None:
    fwd = plan("gpt", d_model=64, n_heads=4)
    bwd = plan("gpt", d_model=64, n_heads=4, backward=True)
    assert bwd.nbytes > 2 * fwd.nbytes - 1
    limit = int((fwd.nbytes + fwd.n_params * 8) / 0.8) + 1024  # the forward fits, the backward does not
    monkeypatch.setenv("EXPLAIN_MAX_BYTES", str(limit))
    explain.run("gpt", d_model=64, n_heads=4)
    with pytest.raises(ResourceError, match="with its gradients"):
        explain.run("gpt", d_model=64, n_heads=4, backward=True)


def test_json_and_plain_output_carry_the_gradient_steps() -> None:
    import io
    import json

    from rich.console import Console

    from explain.render.plain import print_trace, trace_json

    t = explain.run("causal", backward=True)
    doc = json.loads(trace_json(t))
    step = next(s for s in doc["steps"] if s["name"] == "attn.pattern.grad")
    assert step["op"] == "weighted_sum.grad" and step["group"][0] == "backward"
    buf = io.StringIO()
    print_trace(Console(file=buf, width=100, color_system=None), t)
    assert "attn.scaled.grad" in buf.getvalue()
    assert "∂L/∂S = ∂L/∂S' / √d_k" in buf.getvalue()


def test_the_closed_form_estimate_counts_the_gradients() -> None:
    """estimate() (plans of one and two layers, extrapolated) equals the full plan with the backward pass and
    an SGD step, so a run with gradients is refused before every layer is planned."""
    from explain.engine.api import estimate
    from explain.engine.ask import training_of
    from explain.engine.request import prepare_run

    for options in ({"backward": True}, {"lr": 0.1}):
        opts = dict(options, n_layers=5)
        training = training_of(dict(opts))
        cfg, inp = prepare_run("gpt", n_layers=5)
        full = plan("gpt", **opts)
        assert estimate(cfg, inp, training) == (full.n_params, full.nbytes)
        assert full.nbytes > estimate(cfg, inp)[1]  # the gradients are counted


def test_a_huge_backward_run_is_refused_in_closed_form(monkeypatch) -> None:
    import time

    monkeypatch.setenv("EXPLAIN_MAX_BYTES", str(2**20))
    start = time.perf_counter()
    with pytest.raises(ResourceError, match="with its gradients"):
        explain.run("gpt", n_layers=1000, d_model=64, n_heads=4, backward=True)  # the cap on layers
    assert time.perf_counter() - start < 5  # generous on a loaded machine: the estimate plans two layers
