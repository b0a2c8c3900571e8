"""The recorded AdamW step on screen: a bias's update explains g, m, v, the bias corrections and the update in
the drill-down, and a weight matrix's its decay, at 80×24 and 200×50, as the compositor draws them."""

from __future__ import annotations

import pytest
from conftest import drive, goto

import explain
from explain.tui.app import ExplainApp

SIZES = [(80, 24), (200, 50)]  # the narrowest and the widest (seen in tmux at 120×40 too)


@pytest.fixture(scope="module")
def trace():
    return explain.run("gpt", trained=True, text="the cat sat on the mat", optimizer="adamw", lr=0.001)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_drill_down_explains_one_adamw_update(trace, size):
    seen: dict[str, str] = {}

    async def script(pilot):
        await goto(pilot, "blocks.1.mlp.b_out.updated", *"lllll")
        await pilot.pause()
        seen["bias"] = "\n".join("".join(s.text for s in strip) for strip in pilot.app.screen._compositor.render_strips())
        await goto(pilot, "W_E.updated")
        await pilot.pause()
        seen["matrix"] = "\n".join("".join(s.text for s in strip)
                                   for strip in pilot.app.screen._compositor.render_strips())

    drive(ExplainApp(trace), script, size=size)
    bias = seen["bias"].replace("−", "-")  # a formula beside a negative number writes its minus '-' (one_minus)
    for text in ("b_out′[5]: one AdamW step", "g = ∂L/∂b_out[5] = -0.03191", "m = β₁·0 + (1 - β₁)·g",
                 "= -0.003191", "v = β₂·0 + (1 - β₂)·g²", "bias corrections: m̂ = m/(1 - β₁ᵗ)",
                 "no weight decay", "update = lr·m̂/(√v̂ + ε)", "[adamw]"):
        assert text in bias, (size, text, bias)
    assert "weight decay λ = 0.1:" in seen["matrix"], (size, seen["matrix"])
