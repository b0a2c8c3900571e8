"""Adding a model is its forward, one registry line and its notation rows (explain/registry.py says how): a toy
model defined in this file alone runs through ``run --json``, ``shapes``, export and the TUI, with nothing else
of the program told about it."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from explain.cli import main
from explain.core.config import Config
from explain.core.inputs import Inputs
from explain.core.registry import MODELS, Model
from explain.models import notation
from explain.models.layers import embed, linear_params
from explain.trace.recorder import Recorder


# 1. its forward
def toy(rec: Recorder, cfg: Config, inp: Inputs) -> None:
    """One linear layer and a GELU over the token embeddings: the smallest model the registry can hold."""
    x = embed(rec, cfg, inp, batched=inp.batched)  # (T, d_model)
    with rec.scope("mlp"):
        h = rec.op("linear", "pre", x, *linear_params(rec, cfg.d_model, cfg.ff_dim, "W_in", "b_in",
                                                      ("d_model", "d_ff"), True))  # (T, d_ff)
        rec.op("gelu", "post", h)  # (T, d_ff)


# 2. one registry line
TOY = Model("toy", "one linear layer and a GELU", dict(d_model=4, n_heads=1, n_layers=1), "a toy model runs",
            "weights embeddings", forward=f"{__name__}:toy")

# 3. its notation rows
ROWS = [("mlp.pre", "*", "H", "The toy's one layer: X·W_in + b_in, {d_model} features to {d_ff}."),
        ("mlp.post", "*", "G", "The toy's GELU, feature by feature.")]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MODELS, "toy", TOY)
    monkeypatch.setitem(notation.OWN, "toy", ROWS)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_json(registered: None) -> None:
    r = invoke("run", "toy", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    steps = {s["name"]: s for s in doc["steps"]}
    assert list(steps) == ["tokens", "embed", "mlp.pre", "mlp.post"]
    assert steps["mlp.pre"]["note"] == "The toy's one layer: X·W_in + b_in, 4 features to 16."
    assert steps["mlp.post"]["formula"].startswith("G = ") and steps["mlp.post"]["shape"] == [4, 16]
    # the values are the forward's, checked against numpy by hand: GELU (tanh form, as GPT-2) of X·W + b
    x, pre, post = (np.array(steps[n]["values"]) for n in ("embed", "mlp.pre", "mlp.post"))
    gelu = 0.5 * pre * (1 + np.tanh(np.sqrt(2 / np.pi) * (pre + 0.044715 * pre ** 3)))
    np.testing.assert_allclose(post, gelu, rtol=1e-12, atol=1e-12)  # --json keeps full precision
    assert x.shape == (4, 4) and pre.shape == (4, 16)


def test_shapes(registered: None) -> None:
    r = invoke("shapes", "toy", "--seq", "3")
    assert r.exit_code == 0, r.output
    assert "mlp.pre" in r.output and "(3, 16)" in r.output


def test_export_reproduces_the_run(registered: None, tmp_path: Path) -> None:
    out = tmp_path / "toy.py"
    r = invoke("export", "toy", "-o", str(out))
    assert r.exit_code == 0, r.output
    done = subprocess.run([sys.executable, "-I", str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr  # the script asserts its values against the traced ones


def test_tui_steps_through_it(registered: None) -> None:
    from rich.console import Console

    import explain
    from explain.tui.app import ExplainApp
    from explain.tui.widgets.step_info import StepInfo

    app = ExplainApp(explain.run("toy"))

    async def script() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            for _ in range(3):
                await pilot.press("n")
                await pilot.pause()
            assert app.screen.view.step.name == "mlp.post"
            console = Console(file=io.StringIO(), width=200, color_system=None)
            console.print(app.screen.query_one(StepInfo).render())
            assert "The toy's GELU" in console.file.getvalue()

    asyncio.run(script())
