"""A weights file sets the sizes its shapes fix (issue 42, item 11): what ``explain params`` writes loads back with
``--weights`` alone, for every model of the zoo and with the options that change its shapes; a size the user gives
that the file contradicts is refused in one line naming both.

On the code before explain/engine/weight_sizes.py every round trip whose sizes differ from the model's defaults
failed ("W_E has shape (70, 64) but the model needs (45, 8)"), and the conflict test got that load error (exit 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from clitools import invoke, one_line_error

import explain
from explain.core.options import OPTION
from explain.core.registry import MODELS
from explain.engine.ask import make_request
from explain.engine.weight_sizes import sizes_in
from explain.engine.weights import save_params

# Sizes unlike every model's default, each given only to the models whose steps it changes.
SIZED = dict(n_layers=3, d_model=12, n_heads=3, d_head=6, d_ff=20, n_ctx=16, n_kv_heads=1, d_out=6, d_vocab=60)
# Options that change shapes but that no shape states: given to both runs (the file cannot say them).
# (Latent attention's widths derive from d_head, which its shapes do not state alone.) The experts are stated.
UNSTATED = {"llama": dict(attention="mla", d_head=6)}


def sized(name: str) -> dict[str, int]:
    return {k: v for k, v in SIZED.items() if OPTION[k].changes(MODELS[name])}


CASES = [pytest.param(name, {}, {}, id=f"{name}-default") for name in MODELS]
CASES += [pytest.param(name, sized(name), {}, id=f"{name}-sized") for name in MODELS]
CASES += [pytest.param(name, {**sized(name), **extra, "n_kv_heads": None, "n_experts": 2}, extra, id=f"{name}-unstated")  # MLA: no
          for name, extra in UNSTATED.items()]  # kv heads


@pytest.mark.parametrize("name, options, unstated", CASES)
def test_params_round_trip(name: str, options: dict, unstated: dict, tmp_path) -> None:
    """Every step of the run on the file equals the run that wrote it (gpt's default: the trained model)."""
    first = explain.run(name, **options)
    path = tmp_path / "w.npz"
    save_params(first.params, path)
    again = explain.run(name, weights=str(path), **unstated)
    assert again.n_params == first.n_params
    assert [s.name for s in again] == [s.name for s in first]
    for a, b in zip(again, first):
        np.testing.assert_allclose(a.output, b.output, rtol=0, atol=1e-12, err_msg=a.name)


def test_cli_params_then_run(tmp_path, monkeypatch) -> None:
    """The issue's commands: the trained GPT's parameters, written and run again, predict what the trained GPT does."""
    monkeypatch.chdir(tmp_path)
    assert invoke("params", "gpt", "-o", "w.npz").exit_code == 0
    loaded, shipped = invoke("run", "gpt", "--weights", "w.npz", "--json"), invoke("run", "gpt", "--json")
    assert loaded.exit_code == 0, loaded.output
    a, b = json.loads(loaded.output), json.loads(shipped.output)
    assert a["config"] == b["config"] and a["config"]["d_model"] == 64
    # the same ids and numbers (the labels of words past the built-in vocabulary are '#61': the file holds no words)
    top = [[(t["id"], t["prob"]) for t in p["top"]] for p in a["predictions"]]
    assert top == [[(t["id"], t["prob"]) for t in p["top"]] for p in b["predictions"]]


def test_a_contradicted_size_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert invoke("params", "gpt", "-o", "w.npz").exit_code == 0
    one_line_error(invoke("run", "gpt", "--weights", "w.npz", "--d-model", "8", "--plain"), 2,
                   "--d-model 8", "w.npz has d_model 64", "drop --d-model")
    one_line_error(invoke("run", "gpt", "--weights", "w.npz", "--layers", "3", "--plain"), 2,
                   "--layers 3", "n_layers 2")


def test_a_size_the_file_agrees_with_is_kept(tmp_path) -> None:
    path = tmp_path / "w.npz"
    save_params(explain.run("gpt").params, path)
    assert explain.run("gpt", weights=str(path), d_model=64, n_layers=2).config.d_model == 64


def test_shapes_that_fix_nothing_leave_the_options(tmp_path) -> None:
    """A file with no parameter the rules read (a norm's weight) sets no size: the load's own check speaks."""
    assert sizes_in({"ln_final.w": (8,), "blocks": (3,)}) == {}
    req = make_request("gpt", weights={"ln_final.w": np.ones(8)}, d_model=16)
    assert dict(req.options) == {"d_model": 16}
    path = tmp_path / "w.npz"
    save_params(explain.run("attention").params, path)  # the defaults' own sizes: nothing changes, it runs
    assert explain.run("attention", weights=str(path)).n_params == explain.run("attention").n_params


def test_what_each_shape_says() -> None:
    shapes = {"W_E": (70, 64), "W_pos": (48, 64), "blocks.0.attn.W_Q": (4, 64, 16), "blocks.0.attn.W_K": (2, 64, 16),
              "blocks.1.mlp.W_in": (64, 256), "blocks.1.attn.W_O": (64, 64)}
    assert sizes_in(shapes) == dict(d_vocab=70, d_model=64, n_ctx=48, n_layers=2, n_heads=4, d_head=16,
                                    n_kv_heads=2, d_ff=256, d_out=64)
    assert sizes_in({"attn.W_V": (3, 8, 4), "attn.W_2": (4, 16)}) == dict(n_heads=3, d_head=4, n_ctx=16)


def test_beside_a_checkpoint_the_header_names_the_file(tmp_path) -> None:
    """--checkpoint DIR --weights FILE runs the file's parameters with the folder's tokenizer (words, not '#61'); the
    header said "trained: gpt-tiny" before (fails on the old checkpoints/trained weights_label)."""
    from explain.checkpoints.trained import SHIPPED

    shipped = explain.run("gpt")
    path = tmp_path / "w.npz"
    save_params(shipped.params, path)
    mine = explain.run("gpt", checkpoint=str(SHIPPED), weights=str(path))
    assert mine.weights == f"weights: {path}; tokenizer of trained gpt-tiny"
    np.testing.assert_allclose(mine["logits"].output, shipped["logits"].output, rtol=0, atol=0)


def test_trained_with_weights_reads_the_shipped_words(tmp_path) -> None:
    """'explain run gpt --trained --weights FILE': the shipped model's words and sizes, the file's parameters (the
    old code refused it: "drop --checkpoint/--weights, or drop --trained")."""
    shipped = explain.run("gpt")
    path = tmp_path / "w.npz"
    save_params(shipped.params, path)
    mine = explain.run("gpt", trained=True, weights=str(path))
    assert mine.weights == f"weights: {path}; tokenizer of trained gpt-tiny"
    assert mine.tokens_text() == shipped.tokens_text()  # the shipped words, not the word-level tokenizer's
    np.testing.assert_allclose(mine["logits"].output, shipped["logits"].output, rtol=0, atol=0)
