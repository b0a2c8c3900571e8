"""``--checkpoint`` with a Llama-family Hugging Face folder: the logits and greedy generation of transformers'
LlamaForCausalLM (4 query heads sharing 2 key heads, untied) and Qwen2ForCausalLM (q/k/v biases, tied) in
float64 to 1e-10 (tests/data/llama/hf_*, written by tests/data/make_llama_fixtures.py); both spellings of
rope_theta; a tied output when lm_head is absent; shards; hub ids from the local cache with no network; and the
refusals, each one line naming what is not supported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.core.errors import ExplainError

DATA = Path(__file__).resolve().parents[1] / "data" / "llama"
TOL = dict(rtol=1e-10, atol=1e-10)
ROWS = [0, 25, -1]  # the positions whose logits the fixture keeps


def expected(name: str) -> dict:
    with np.load(DATA / name / "expected.npz") as z:
        return {k: z[k] for k in z.files}


def logits(checkpoint, text: str) -> np.ndarray:
    return explain.run("llama", checkpoint=str(checkpoint), text=text)["logits"].output[0][ROWS]


@pytest.mark.parametrize("name", ["hf_llama", "hf_qwen2"])
def test_folder_matches_transformers(name: str) -> None:
    e = expected(name)
    trace = explain.run("llama", checkpoint=str(DATA / name), text=str(e["text"]))
    assert trace["tokens"].output[0].tolist() == e["ids"].tolist()  # tokenizer.json through tokenizers
    np.testing.assert_allclose(trace["logits"].output[0][ROWS], e["logits"], **TOL)
    gen = explain.generate("llama", checkpoint=str(DATA / name), text=str(e["text"]), greedy=True,
                           max_new_tokens=len(e["generated"]), ignore_eos=True)
    assert explain.generated_ids(gen) == [e["generated"].tolist()]


def copy(name: str, tmp_path: Path) -> Path:
    out = tmp_path / name
    shutil.copytree(DATA / name, out)
    return out


def edit_config(folder: Path, **changes) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    for k, v in changes.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    (folder / "config.json").write_text(json.dumps(cfg))


def test_rope_theta_in_transformers_4_spelling(tmp_path: Path) -> None:
    e, folder = expected("hf_qwen2"), copy("hf_qwen2", tmp_path)
    edit_config(folder, rope_parameters=None, rope_theta=1000000.0)
    np.testing.assert_allclose(logits(folder, str(e["text"])), e["logits"], **TOL)
    edit_config(folder, rope_theta=10000.0)  # and it is read: another θ gives other logits
    assert np.abs(logits(folder, str(e["text"])) - e["logits"]).max() > 1e-3


def test_output_is_tied_when_lm_head_is_absent(tmp_path: Path) -> None:
    e, folder = expected("hf_qwen2"), copy("hf_qwen2", tmp_path)
    edit_config(folder, tie_word_embeddings=False)  # the file has no lm_head.weight: the output is W_Eᵀ
    trace = explain.run("llama", checkpoint=str(folder), text=str(e["text"]))
    assert "unembed.W_U" not in trace.params
    np.testing.assert_allclose(trace["logits"].output[0][ROWS], e["logits"], **TOL)


def test_shards_listed_in_an_index(tmp_path: Path) -> None:
    from safetensors.numpy import load_file, save_file

    e, folder = expected("hf_llama"), copy("hf_llama", tmp_path)
    tensors = load_file(str(folder / "model.safetensors"))
    names = sorted(tensors)
    half = {n: tensors[n] for n in names[: len(names) // 2]}, {n: tensors[n] for n in names[len(names) // 2:]}
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    for part, shard in zip(half, shards):
        save_file(part, str(folder / shard))
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {n: shards[i] for i, part in enumerate(half) for n in part}}))
    np.testing.assert_allclose(logits(folder, str(e["text"])), e["logits"], **TOL)


def test_hub_id_from_the_local_cache_with_no_network(tmp_path: Path, monkeypatch) -> None:
    e = expected("hf_llama")
    repo = tmp_path / "hub" / "models--TestOrg--tiny-llama"
    commit = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(DATA / "hf_llama", repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    np.testing.assert_allclose(logits("TestOrg/tiny-llama", str(e["text"])), e["logits"], **TOL)
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # $HF_HOME/hub
    np.testing.assert_allclose(logits("TestOrg/tiny-llama", str(e["text"])), e["logits"], **TOL)
    with pytest.raises(ExplainError, match=r"not a folder here, nor in the Hugging Face cache .*hf download "
                                           r"TestOrg/absent"):
        explain.run("llama", checkpoint="TestOrg/absent")


@pytest.mark.parametrize("change, needle", [
    (dict(model_type="roberta"), "model_type 'roberta'"),
    (dict(rope_parameters={"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0}), "rope scaling 'linear'"),
    (dict(rope_parameters=None, rope_scaling={"type": "dynamic", "factor": 2.0}), "rope scaling 'dynamic'"),
    (dict(hidden_act="gelu"), "hidden_act 'gelu'"),
    (dict(mlp_bias=True), "mlp_bias"),
    (dict(attention_bias=True), "attention_bias"),
    (dict(num_key_value_heads=3), "cannot share 3"),
    (dict(hidden_size=48), "has shape"),  # inconsistent with the file
])
def test_unsupported_configs_are_refused_in_one_line(tmp_path: Path, change: dict, needle: str) -> None:
    folder = copy("hf_llama", tmp_path)
    edit_config(folder, **change)
    with pytest.raises(ExplainError) as err:
        explain.run("llama", checkpoint=str(folder), text="Paris")
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_mistrals_sliding_window_is_the_window_mask(tmp_path: Path) -> None:
    # Mistral's sliding_window on the same weights: the window mask hides the keys 8 or more back, in every layer,
    # and the run equals the folder's weights run with --window 8; before the window binds, the logits are the same
    folder = copy("hf_llama", tmp_path)
    edit_config(folder, model_type="mistral", sliding_window=8)
    text = str(expected("hf_llama")["text"])
    windowed = explain.run("llama", checkpoint=str(folder), text=text)
    assert windowed.config.sliding_window == 8 and "blocks.1.attn.window_masked" in windowed
    plain = explain.run("llama", checkpoint=str(DATA / "hf_llama"), text=text)
    same = explain.run("llama", weights=dict(plain.params), tokens=plain["tokens"].output[0].tolist(),
                       **{k: v for k, v in windowed.config.to_dict().items() if k in ("d_model", "n_heads",
                          "n_kv_heads", "d_head", "n_layers", "d_ff", "d_vocab", "n_ctx", "rope_theta",
                          "tie_embeddings", "sliding_window")}, qkv_bias=False)
    np.testing.assert_allclose(windowed["logits"].output, same["logits"].output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(windowed["logits"].output[0, :8], plain["logits"].output[0, :8], rtol=1e-12,
                               atol=1e-12)
    assert not np.allclose(windowed["logits"].output[0, -1], plain["logits"].output[0, -1])


def test_a_truncated_file_is_refused(tmp_path: Path) -> None:
    folder = copy("hf_llama", tmp_path)
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ExplainError) as err:
        explain.run("llama", checkpoint=str(folder), text="Paris")
    assert "model.safetensors" in str(err.value) and "\n" not in str(err.value)


def test_run_without_a_model_name_picks_it_from_the_checkpoint() -> None:
    from click.testing import CliRunner

    from explain.cli import main

    r = CliRunner().invoke(main, ["run", "--checkpoint", str(DATA / "hf_llama"), "--text", "Paris", "--plain"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("explain run llama:")
    r = CliRunner().invoke(main, ["run", "--help"])
    assert "[MODEL]" in r.output.splitlines()[0]
    r = CliRunner().invoke(main, ["run", "gpt", "--checkpoint", str(DATA / "hf_llama")])
    assert r.exit_code == 2 and "holds a 'llama' model" in r.output
    # session 9: the fix said "run it with 'explain run llama'" on generate, shapes and lens too
    r = CliRunner().invoke(main, ["generate", "gpt", "--checkpoint", str(DATA / "hf_llama")])
    assert r.exit_code == 2 and "give the model name llama (or leave it out)" in r.output
    assert "explain run" not in r.output
