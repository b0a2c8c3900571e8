"""The recorded AdamW step (``explain run gpt --optimizer adamw --lr R``) against torch.optim.AdamW through
transformers on the shipped model (``tests/data/train/adamw_step.npz``, made by
``tests/data/make_adamw_step_fixture.py``): the loss before and after, the gradients and the updated values of
parameters of each kind, and the m, v, bias corrections and update a cell's drill-down explains. float64
throughout: tolerances 1e-10 (the loss after, the updates; the explained cell's m and v, printed to 12 digits)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import explain
from explain.cli import main
from explain.core.errors import UsageError
from explain.engine.backward import ADAMW
from explain.ops.base import precision
from explain.train.step import AdamW

DATA = Path(__file__).resolve().parents[1] / "data" / "train" / "adamw_step.npz"
H, D, M = 4, 64, 16  # the shipped model's heads, width, head width


@pytest.fixture(scope="module")
def torch_step():
    return dict(np.load(DATA))


@pytest.fixture(scope="module")
def trace(torch_step):
    return explain.run("gpt", trained=True, text=str(torch_step["text"]), optimizer="adamw",
                       lr=float(torch_step["lr"]))


def per_head(a: np.ndarray) -> np.ndarray:
    """GPT-2's fused c_attn columns (…, 3·d) as explain's per-head W_Q, W_K, W_V, each (h, …, d_head)."""
    lead = a.shape[:-1]
    return np.stack([np.moveaxis(part.reshape(*lead, H, M), -2, 0) for part in np.split(a, 3, axis=-1)])


def test_the_loss_before_and_after_match_torch(trace, torch_step) -> None:
    assert [int(i) for i in trace["tokens"].output[0]] == torch_step["ids"].tolist()
    np.testing.assert_allclose(float(trace["loss"].output), float(torch_step["loss"]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(float(trace["loss_after"].output), float(torch_step["loss_after"]), rtol=0, atol=1e-10)
    assert float(trace["loss_after"].output) < float(trace["loss"].output)


def test_each_kind_of_parameter_is_updated_as_torch_does(trace, torch_step) -> None:
    t = "transformer."
    pairs = {"W_E": (t + "wte.weight", lambda a: a),
             "blocks.1.ln2.w": (t + "h.1.ln_2.weight", lambda a: a),
             "blocks.1.mlp.b_out": (t + "h.1.mlp.c_proj.bias", lambda a: a)}
    for i, w in enumerate("QKV"):
        pairs[f"blocks.0.attn.W_{w}"] = (t + "h.0.attn.c_attn.weight", lambda a, i=i: per_head(a)[i])
        pairs[f"blocks.0.attn.b_{w}"] = (t + "h.0.attn.c_attn.bias", lambda a, i=i: per_head(a)[i])
    for name, (theirs, layout) in pairs.items():
        np.testing.assert_allclose(trace[f"{name}.grad"].output, layout(torch_step[f"grad:{theirs}"]), rtol=0,
                                   atol=1e-10, err_msg=name)
        np.testing.assert_allclose(trace[f"{name}.updated"].output, layout(torch_step[f"p1:{theirs}"]), rtol=0,
                                   atol=1e-10, err_msg=name)
        assert trace[f"{name}.updated"].op == "adamw"


def test_a_cell_explains_m_v_the_bias_corrections_and_the_update(trace, torch_step) -> None:
    name, theirs, cell = "blocks.1.mlp.b_out", "transformer.h.1.mlp.c_proj.bias", 5
    with precision(12):  # the drill-down's numbers to 12 significant digits (the TUI's + key)
        expl = trace.explain(f"{name}.updated", (cell,))
    text = "\n".join(expl.lines)
    numbers = {key: float(re.search(rf"^{key} = .*= (\S+)$", text, re.M).group(1)) for key in ("m", "v")}
    np.testing.assert_allclose(numbers["m"], torch_step[f"m:{theirs}"][cell], rtol=1e-10)
    np.testing.assert_allclose(numbers["v"], torch_step[f"v:{theirs}"][cell], rtol=1e-10)
    plain = text.replace("−", "-")  # a formula with a negative number writes its subtractions '-' too (one_minus)
    assert "bias corrections: m̂ = m/(1 - β₁ᵗ)" in plain and "v̂ = v/(1 - β₂ᵗ)" in plain
    assert "update = lr·m̂/(√v̂ + ε)" in text and "no weight decay" in text
    assert expl.value == pytest.approx(float(torch_step[f"p1:{theirs}"][cell]), rel=1e-12)
    matrix = "\n".join(trace.explain("W_E.updated", (3, 0)).lines)
    assert "weight decay λ = 0.1" in matrix


def test_the_drill_downs_result_is_the_update_itself(trace, torch_step) -> None:
    """The drill-down pins an explanation's last line as its result. For an update that line is the update's
    arithmetic, w − step = w′ (torch's w′), not a remark after it: at 80×24 the remark left the pinned result a bare
    ``= 0.0108``. The same for the recorded SGD step (w − lr×g = w′, checked by hand from the trace's w and g)."""
    from explain.render.step import explanation_result

    name, theirs, cell = "blocks.1.mlp.b_out", "transformer.h.1.mlp.c_proj.bias", 5
    with precision(12):
        result = explanation_result(trace.explain(f"{name}.updated", (cell,)), precision=12).plain
    w, w1 = re.fullmatch(r"(\S+) [−-] \(?(\S+?)\)? = (\S+)", result).group(1, 3)  # '-' beside a negative number
    assert float(w) == pytest.approx(float(trace.params[name][cell]), rel=1e-11)
    assert float(w1) == pytest.approx(float(torch_step[f"p1:{theirs}"][cell]), rel=1e-11)
    sgd = explain.run("gpt", lr=0.5)
    ex = sgd.explain("blocks.0.mlp.b_out.updated", (3,))
    w, g = float(sgd.params["blocks.0.mlp.b_out"][3]), float(sgd["blocks.0.mlp.b_out.grad"].output[3])
    assert explanation_result(ex).plain.endswith(f"= {w - 0.5 * g:.4f}")
    assert re.search(" [−-] 0.5000×", explanation_result(ex).plain)
    assert ex.lines[-2].startswith("the gradient is ")


def test_the_settings_are_explain_trains_and_the_cli_records_them() -> None:
    opt = AdamW()
    assert (opt.betas, opt.eps, opt.weight_decay) == (ADAMW["betas"], ADAMW["eps"], ADAMW["weight_decay"])
    r = CliRunner().invoke(main, ["run", "gpt", "--trained", "--text", "the cat sat on the mat", "--optimizer",
                                  "adamw", "--lr", "0.001", "--plain"], catch_exceptions=False)
    assert r.exit_code == 0 and "after one AdamW step (falls)" in r.output.splitlines()[-1], r.output[-300:]
    with pytest.raises(UsageError, match="add --lr"):
        explain.run("gpt", trained=True, optimizer="adamw")


def test_tutorial_21_quotes_torchs_numbers(torch_step) -> None:
    """Tutorial 21's expected values and the numbers its narration quotes are torch's (the fixture), not
    explain's: the tutorial runner then checks explain against them."""
    import tomllib

    doc = tomllib.loads((Path(__file__).resolve().parents[2] / "tutorials" / "21-one-training-step.toml").read_text())
    assert doc["options"] == {"trained": True, "text": str(torch_step["text"]), "lr": float(torch_step["lr"]),
                              "optimizer": "adamw"}
    stops = {s["step"]: s for s in doc["stops"]}
    t = "transformer."
    expected = {"loss": float(torch_step["loss"]), "loss_after": float(torch_step["loss_after"]),
                "W_E.grad": float(torch_step[f"grad:{t}wte.weight"][25, 0]),
                "blocks.1.mlp.b_out.updated": float(torch_step[f"p1:{t}h.1.mlp.c_proj.bias"][5]),
                "W_E.updated": float(torch_step[f"p1:{t}wte.weight"][25, 0])}
    for step, value in expected.items():
        assert stops[step]["expect"]["values"] == value, step
    story = " ".join(" ".join(s["narration"].split()) for s in doc["stops"])
    p0, p1 = torch_step["p_next"], torch_step["p_next_after"]
    for quoted in (f"L = {float(torch_step['loss']):.4f}", f"L′ = {float(torch_step['loss_after']):.4f}",
                   f"p(*cat* after *the*) = {p0[0]:.3f}", f"p(*sat* after *cat*) = {p0[1]:.3f}",
                   f"goes from {p0[0]:.3f} to {p1[0]:.3f}", f"from {p0[1]:.3f} to {p1[1]:.3f}",
                   f"g = ∂L/∂b_out[5] = {float(torch_step[f'grad:{t}h.1.mlp.c_proj.bias'][5]):.4f}".replace("-", "−"),
                   f"m = 0.9·0 + 0.1·g = {float(torch_step[f'm:{t}h.1.mlp.c_proj.bias'][5]):.5f}".replace("-", "−")):
        assert quoted in story, quoted
    assert min(p0[2:]) >= 0.94  # "on, the and mat it predicts with p ≥ 0.94"


def test_which_parameters_each_adamw_decays(trace) -> None:
    """Two rules, each stated once (issue 24): the recorded step decays the W matrices (nanoGPT's groups, as the
    torch fixture above applies them); explain train decays every parameter of two axes or more in explain's
    layout, so the per-head biases b_Q, b_K, b_V as well (the rule the shipped model was trained with)."""
    from explain.train.step import decayed

    names = set(trace.params)
    matrices = {n for n in names if n.rsplit(".", 1)[-1] in ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_in",
                                                              "W_out")}
    head_biases = {f"blocks.{i}.attn.b_{x}" for i in range(2) for x in "QKV"}
    recorded = {n for n in names if trace[f"{n}.updated"].attrs["weight_decay"] == ADAMW["weight_decay"]}
    assert all(trace[f"{n}.updated"].attrs["weight_decay"] == 0.0 for n in names - recorded)
    assert recorded == matrices and len(matrices) == 2 + 2 * 6
    assert {n for n in names if decayed(trace.params[n])} == matrices | head_biases
