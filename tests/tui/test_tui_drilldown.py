"""Pilot tests of the drill-down: the cell under the cursor explained by the op itself, with the Illustrated
Transformer's numbers (q₁·k₁ = 112, 112 / 8 = 14, softmax 0.88 / 0.12) built into the weights; the causal
mask's −inf cells; NO_COLOR."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import drive, text_of

import explain
from explain.tui.app import ExplainApp
from explain.tui.widgets.cell_panel import CellPanel
from explain.tui.widgets.tensor_view import TensorView


@pytest.fixture(scope="module")
def thinking_machines():
    """Q = K = X (identity projections); x₁ = seven 4s, x₂ = six 4s: q₁·k₁ = 112, q₁·k₂ = 96, d_k = 64."""
    base = explain.run("attention", d_model=64, text="Thinking Machines")
    params = {k: v.copy() for k, v in base.params.items()}
    ids = base["tokens"].output
    params["W_E"][ids[0]] = [4.0] * 7 + [0.0] * 57
    params["W_E"][ids[1]] = [4.0] * 6 + [0.0] * 58
    for name in ("attn.W_Q", "attn.W_K"):
        params[name] = np.eye(64)
    for name in ("attn.b_Q", "attn.b_K"):
        params[name] = np.zeros(64)
    return explain.run("attention", d_model=64, text="Thinking Machines", weights=params)


def panel(app) -> str:
    return app.screen.query_one(CellPanel).plain()


def test_matmul_scale_softmax_cells(thinking_machines):
    app = ExplainApp(thinking_machines)

    async def script(pilot):
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"attn.scores", "enter")
        await pilot.pause()
        text = panel(app)
        assert "S[0, 0] = Q[0] · K[0]" in text
        assert "4×4" in text and "sum of 64 products = 112" in text
        await pilot.press("l")
        assert "sum of 64 products = 96" in panel(app)
        await pilot.press("n", "h")  # scaled: 112 / 8 = 14
        text = panel(app)
        assert "√d_k = 8" in text and "112 / 8 = 14" in text
        await pilot.press("n")  # the softmax of (14, 12)
        text = panel(app)
        assert "Σ exp" in text and "= 0.8808" in text  # e^14 / (e^14 + e^12)
        assert "[0, 1]" in text_of(app.screen.query_one(TensorView))  # probabilities: scale [0, 1]
        await pilot.press("n", "l")  # the weighted sum: one a·v term per position
        text = panel(app)
        assert "Σⱼ A[0, j]·V[j, 1]" in text and "a·v" in text

    drive(app, script)


def test_mask_cells_say_why():
    trace = explain.run("causal")
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"attn.masked", "enter", "l", "l")
        await pilot.pause()
        assert app.screen.view.index_of_cell == (0, 2)
        text = panel(app)
        assert "key position 2 'starts' com" in text and "query position 0 'Your'" in text and "−inf" in text
        assert "−inf" in text_of(app.screen.query_one(TensorView))  # the masked cells are spelled out
        await pilot.press("j", "j")  # (2, 2): allowed
        assert "allowed" in panel(app)
        await pilot.press("v")  # colours only: −inf still written, as −∞
        assert "−∞" in text_of(app.screen.query_one(TensorView))
        await pilot.press("n", "g", *"attn.pattern", "enter", "k", "k")
        await pilot.pause()
        assert "this position was masked" in panel(app)

    drive(app, script)


def test_layer_norm_and_residual_cells(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"blocks.0.ln1", "enter")
        await pilot.pause()
        text = panel(app)
        assert "mean = " in text and "variance" in text
        await pilot.press("g")
        await pilot.pause()
        await pilot.press(*"blocks.0.resid_mid", "enter")
        await pilot.pause()
        text = panel(app)
        x, a = gpt_trace["blocks.0.resid_pre"].output[0, 0, 0], gpt_trace["blocks.0.attn_out"].output[0, 0, 0]
        assert "x′[0, 0, 0] = x[0, 0, 0] + O[0, 0, 0]" in text and f"{x + a:.4f}" in text

    drive(app, script)


def test_no_color_shows_values(monkeypatch, attention_trace):
    monkeypatch.setenv("NO_COLOR", "1")
    app = ExplainApp(attention_trace)
    assert app.no_color

    async def script(pilot):
        s = app.screen
        await pilot.press("end")
        assert s.view.no_color and s.view.values and not s.view.heat
        rendered = s.query_one(TensorView).render()
        assert f"{float(s.view.step.output[0, 0]):.4f}" in rendered.plain
        assert "NO_COLOR" in rendered.plain
        assert not any(" on rgb" in str(span.style) for span in rendered.spans)  # no heat backgrounds
        await pilot.press("v")  # nothing to toggle: values stay
        assert s.view.values

    drive(app, script)


def test_precision_applies_to_drill_down_grid_and_loss(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        s = app.screen
        s.view = s.view.go(gpt_trace["blocks.0.attn.scores"].index)
        await pilot.pause()
        value = float(gpt_trace["blocks.0.attn.scores"].output[0, 0, 0, 0])
        assert panel(app).rstrip().endswith(f"{value:.4f}")
        await pilot.press("plus", "plus")  # 6 decimals everywhere
        await pilot.pause()
        assert panel(app).rstrip().endswith(f"{value:.6f}")
        assert f"{value:.6f}" in text_of(s.query_one(TensorView))
        s.view = s.view.go(gpt_trace["loss"].index)
        await pilot.pause()
        shown = text_of(s.query_one(TensorView))
        loss = float(gpt_trace["loss"].output)
        assert f"L = {loss:.6f}" in shown and "colours" not in shown  # a number, no 1×1 heatmap

    drive(app, script)
