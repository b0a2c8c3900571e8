"""Broken checkpoints (copies of the tiny GPT-2 with one thing wrong) give one-line errors naming the file
and the key, before any number is computed; the optional packages missing give the install line."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import explain
from explain.checkpoints.gpt2 import INSTALL, DependencyError
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import ConfigError, ExplainError, InputError, UsageError, WeightsError
from explain.engine.api import plan

TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
RAW = load_file(str(TINY / "model.safetensors"))


def _copy(tmp_path: Path, config: dict | None = None, tensors: dict | None = None, drop: str | None = None) -> Path:
    """A copy of the tiny checkpoint with config.json keys changed (None deletes) and tensors replaced."""
    out = tmp_path / "ck"
    shutil.copytree(TINY, out)
    if config:
        cfg = json.loads((out / "config.json").read_text())
        for k, v in config.items():
            cfg.pop(k) if v is None else cfg.__setitem__(k, v)
        (out / "config.json").write_text(json.dumps(cfg))
    if tensors is not None or drop:
        t = {**RAW, **(tensors or {})}
        t.pop(drop, None)
        save_file(t, str(out / "model.safetensors"))
    return out


def _error(cls: type, *needles: str, **kwargs) -> str:
    """Run with the options, expect ``cls``, check the message is one line holding every needle."""
    kwargs.setdefault("tokens", "1,2,3")
    with pytest.raises(cls) as err:
        explain.run("gpt", **kwargs)
    msg = str(err.value)
    assert "\n" not in msg, msg
    for n in needles:
        assert n in msg, (n, msg)
    return msg


def test_missing_folder_and_files(tmp_path: Path) -> None:
    _error(InputError, "does not exist", "config.json", checkpoint=tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    _error(InputError, "is a file", checkpoint=tmp_path / "file")
    # session 9: "checkpoint folder 'fake.gguf' is a file, not a GGUF file" (a folder that is a file)
    (tmp_path / "fake.gguf").write_text("not gguf")
    msg = _error(InputError, "'", "does not start with the bytes GGUF", "neither a GGUF file nor a folder",
                 checkpoint=tmp_path / "fake.gguf")
    assert "folder '" not in msg
    _error(InputError, "one file of a checkpoint folder", f"--checkpoint {TINY}", checkpoint=TINY / "config.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    _error(InputError, "has no config.json", checkpoint=empty)
    shutil.copy(TINY / "config.json", empty)
    _error(InputError, "has no model.safetensors", checkpoint=empty)
    (empty / "pytorch_model.bin").write_bytes(b"")
    _error(InputError, "it has pytorch_model.bin", "never pickles", checkpoint=empty)


def test_shapes_refuse_a_folder_without_weights_too(tmp_path: Path) -> None:
    shutil.copy(TINY / "config.json", tmp_path)
    with pytest.raises(InputError, match="has no model.safetensors"):
        plan("gpt", checkpoint=tmp_path, tokens="1")


@pytest.mark.parametrize("change, needles", [
    ({"model_type": "roberta"}, ["model_type 'roberta'", "gpt2"]),
    ({"model_type": None}, ["model_type None"]),
    ({"activation_function": "relu"}, ["activation_function 'relu'", "'gelu_new' or 'gelu_pytorch_tanh'"]),
    ({"activation_function": "gelu"}, ["activation_function 'gelu'", "tanh approximation"]),
    ({"scale_attn_by_inverse_layer_idx": True}, ["scale_attn_by_inverse_layer_idx"]),
    ({"scale_attn_weights": False}, ["scale_attn_weights"]),
    ({"tie_word_embeddings": False}, ["tie_word_embeddings", "tied embeddings"]),
    ({"add_cross_attention": True}, ["add_cross_attention"]),
    ({"n_head": 3}, ["n_embd 16 is not divisible by n_head 3"]),
    ({"n_layer": "two"}, ["n_layer must be a positive whole number, got 'two'"]),
    ({"n_embd": 0}, ["n_embd must be a positive whole number"]),
    ({"layer_norm_epsilon": -1}, ["layer_norm_epsilon"]),
])
def test_configs_the_engine_cannot_run(tmp_path: Path, change: dict, needles: list[str]) -> None:
    d = _copy(tmp_path, config=change)
    _error(WeightsError, str(d / "config.json"), *needles, checkpoint=d)
    with pytest.raises(WeightsError, match="config.json"):  # refused by shapes as well: no weights read
        plan("gpt", checkpoint=d, tokens="1")


def test_config_that_is_not_json(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    (d / "config.json").write_text("{'n_embd': 16}")
    _error(WeightsError, "config.json:1: not valid JSON", "column 2", checkpoint=d)
    (d / "config.json").write_text("[1, 2]")
    _error(WeightsError, "is not a JSON object", checkpoint=d)


def test_missing_config_keys_take_transformers_defaults(tmp_path: Path) -> None:
    """A key left out means GPT2Config's default (n_inner 4·d, gelu_new, eps 1e-5), as in transformers."""
    d = _copy(tmp_path, config={"n_inner": None, "activation_function": None, "layer_norm_epsilon": None})
    assert open_checkpoint(d).options["d_ff"] == 64
    d2 = _copy(tmp_path / "b", config={"n_embd": None})  # default 768 cannot match the 16-wide tensors
    _error(WeightsError, "'transformer.wte.weight'", "(300, 16)", "needs (300, 768)", checkpoint=d2)


def test_missing_tensor(tmp_path: Path) -> None:
    d = _copy(tmp_path, drop="transformer.h.1.mlp.c_fc.bias")
    _error(WeightsError, str(d / "model.safetensors"), "no tensor 'transformer.h.1.mlp.c_fc.bias' of shape (64,)",
           checkpoint=d)


def test_misshaped_tensor(tmp_path: Path) -> None:
    d = _copy(tmp_path, tensors={"transformer.h.0.attn.c_attn.weight": np.zeros((16, 40), np.float32)})
    _error(WeightsError, "tensor 'transformer.h.0.attn.c_attn.weight'", str(d / "model.safetensors"),
           "shape (16, 40)", "needs (16, 48)", checkpoint=d)


def test_config_with_fewer_layers_than_the_file(tmp_path: Path) -> None:
    d = _copy(tmp_path, config={"n_layer": 1})
    _error(WeightsError, "tensor 'transformer.h.1.", "n_layer 1", checkpoint=d)


def test_tensor_of_another_model_head(tmp_path: Path) -> None:
    d = _copy(tmp_path, tensors={"score.weight": np.zeros((2, 16), np.float32)})
    _error(WeightsError, "'score.weight'", checkpoint=d)


def test_integer_and_non_finite_tensors(tmp_path: Path) -> None:
    d = _copy(tmp_path, tensors={"transformer.ln_f.bias": np.zeros(16, np.int32)})
    _error(WeightsError, "tensor 'transformer.ln_f.bias'", "is I32", checkpoint=d)
    bad = RAW["transformer.wpe.weight"].copy()
    bad[3, 4] = np.nan
    d = _copy(tmp_path / "b", tensors={"transformer.wpe.weight": bad})
    _error(WeightsError, "tensor 'transformer.wpe.weight'", "NaN", checkpoint=d)


def test_corrupt_safetensors(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    data = (d / "model.safetensors").read_bytes()
    (d / "model.safetensors").write_bytes(data[: len(data) // 2])
    _error(WeightsError, f"cannot read '{d / 'model.safetensors'}'", "safetensors file", checkpoint=d)
    (d / "model.safetensors").write_bytes(b"PK\x03\x04 not a safetensors file")
    _error(WeightsError, "cannot read", checkpoint=d)


def test_inputs_that_do_not_fit_the_checkpoint() -> None:
    _error(InputError, "token id 300", "vocabulary of 300", checkpoint=TINY, tokens="1,300")
    _error(InputError, "33 tokens", "context is 32", checkpoint=TINY, tokens=",".join(["5"] * 33))
    _error(ConfigError, "--d-model 8 conflicts with the checkpoint's d_model = 16", checkpoint=TINY, d_model=8)
    with pytest.raises(UsageError, match="use 'gpt' or 'llama' or 'gemma' or 'bert', not 'multihead'"):
        explain.run("multihead", checkpoint=TINY)
    with pytest.raises(UsageError, match="either --text or --tokens"):
        explain.run("gpt", checkpoint=TINY, text="The cat", tokens="1")


def test_without_safetensors(monkeypatch: pytest.MonkeyPatch) -> None:
    with_lib = explain.run("gpt", checkpoint=TINY, tokens="262,285")["logits"].output
    monkeypatch.setitem(sys.modules, "safetensors", None)  # import safetensors now raises ImportError
    # numpy reads the file (explain.io.tensorfile): the same tensors, the same numbers
    np.testing.assert_array_equal(explain.run("gpt", checkpoint=TINY, tokens="262,285")["logits"].output, with_lib)
    plan("gpt", checkpoint=TINY, tokens="1,2")  # shapes need only config.json


def test_without_tokenizers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    _error(DependencyError, "'tokenizers' package", INSTALL, "or give --tokens", checkpoint=TINY, text="The cat",
           tokens=None)
    trace = explain.run("gpt", checkpoint=TINY, tokens="262,285")  # ids and their labels need no tokenizers
    assert trace.labels["pos"] == ["The", "␣cat"]


def test_every_error_is_an_explain_error() -> None:
    assert issubclass(DependencyError, ExplainError) and DependencyError.exit_code == 1
