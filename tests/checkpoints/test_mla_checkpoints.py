"""Hugging Face folders of ``model_type`` deepseek_v3 (latent attention, the grouped sigmoid router, a shared expert,
a dense first layer), in transformers 5's stacked layout and in DeepSeek's own (one tensor per expert, two shards
with an index): transformers' logits to 1e-10 and its greedy tokens; and DeepSeek-V3's config.json alone, counted
and planned by ``explain shapes``. The folders and the counts (transformers on the meta device) are written by
tests/data/make_mla_fixtures.py."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

# pytest runs with no package root on the path (the tests folder has no __init__)
from clitools import invoke, one_line_error  # noqa: E402

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import InputError, WeightsError
from explain.engine.api import plan
from explain.report.shape_report import select, shapes_doc, shapes_text

DATA = Path(__file__).resolve().parents[1] / "data" / "mla"
FOLDERS = ("hf_deepseek_v3", "hf_deepseek_v3_shards")
V3 = DATA / "configs" / "deepseek-v3"
COUNTS = json.loads((DATA / "configs" / "counts.json").read_text())["deepseek-v3"]


@pytest.mark.parametrize("name", FOLDERS)
def test_a_folder_gives_transformers_logits_and_tokens(name: str) -> None:
    folder = DATA / name
    with np.load(folder / "expected.npz") as e:
        ids, logits, generated = e["ids"].tolist(), e["logits"], e["generated"].tolist()
    trace = explain.run(checkpoint=str(folder), model="llama", tokens=",".join(map(str, ids)))
    np.testing.assert_allclose(trace["logits"].output[0][[0, 25, -1]], logits, rtol=1e-10, atol=1e-10)
    cfg = trace.config
    assert (cfg.attention, cfg.latent.kv_lora_rank, cfg.router, cfg.first_k_dense_replace) == ("mla", 8, "sigmoid", 1)
    assert "blocks.0.mlp.W_gate" in trace.params and "blocks.1.mlp.b_choice" in trace.params  # dense, then routed
    gen = explain.generate("llama", checkpoint=str(folder), tokens=",".join(map(str, ids)), greedy=True,
                           max_new_tokens=len(generated), ignore_eos=True)
    assert explain.generated_ids(gen) == [generated]


def test_both_layouts_read_the_same_weights() -> None:
    a, b = (open_checkpoint(DATA / n).params() for n in FOLDERS)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert a["blocks.0.attn.W_UK"].shape == (4, 8, 6) and a["blocks.0.attn.W_DKV"].shape == (1, 32, 8 + 4)


def test_deepseek_v3_is_counted_from_its_config_alone() -> None:
    start = time.perf_counter()
    trace = plan("llama", checkpoint=str(V3), tokens=[0, 1, 2])
    planned = time.perf_counter() - start
    doc = shapes_doc(select(trace))
    assert doc["n_params"] == COUNTS["total"] == 671_026_404_352  # transformers' count, without the MTP module
    assert doc["n_fixed"] == 58 * 256  # the choosing biases: buffers to transformers
    assert doc["n_active"] == COUNTS["active"] and round(doc["n_active"] / 1e9) == 38  # "37B active", rule below
    assert "routers and shared experts all counted" in doc["active_rule"]
    text = shapes_text(select(trace, steps=False))
    assert "total: 671,026,404,352 parameters, and 14,848 numbers no gradient reaches" in text
    assert "cache 576 numbers per token per layer, 40,960 without the latent" in text
    assert trace["blocks.60.attn.scores"].shape == (1, 128, 3, 3)
    assert trace["blocks.60.attn.ln_kv"].shape == (1, 1, 3, 512)
    assert planned < 20  # 2,400 steps of shapes: well under a minute even on a loaded machine


def test_explain_shapes_on_the_config_alone(tmp_path: Path) -> None:
    result = invoke("shapes", "--checkpoint", str(V3), "--no-steps")
    assert result.exit_code == 0, result.output
    assert "active: 37,552,282,624 parameters per token" in result.output


def test_a_run_on_the_config_alone_is_refused() -> None:
    with pytest.raises(InputError, match="neither model.safetensors nor model.safetensors.index.json"):
        open_checkpoint(V3).params()


def _changed(tmp_path: Path, change: dict) -> Path:
    folder = tmp_path / "ds"
    shutil.copytree(DATA / "hf_deepseek_v3", folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(change)
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


@pytest.mark.parametrize("change, needle", [
    ({"q_lora_rank": None}, "q_lora_rank null"),
    ({"attention_bias": True}, "sets attention_bias"),
    ({"scoring_func": "softmax"}, "scoring_func 'softmax'"),
    ({"kv_lora_rank": 0}, "kv_lora_rank must be a positive whole number"),
    ({"rope_scaling": {"type": "yarn", "factor": 40}}, "rope scaling 'yarn'"),  # with weights: the run would differ
    ({"kv_lora_rank": 16}, "has shape (12, 32) but config.json"),
])
def test_what_is_not_computed_is_refused_in_one_line(tmp_path: Path, change: dict, needle: str) -> None:
    with pytest.raises(WeightsError) as err:
        open_checkpoint(_changed(tmp_path, change))
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_cost_of_deepseek_v3s_cache() -> None:
    # by hand: 61 layers × (512 latent + 64 rotary key) numbers × 2 bytes (bfloat16, config.json's torch_dtype),
    # against plain attention's 61 × 128 heads × (128 + 64 key + 128 value) × 2
    result = invoke("shapes", "--checkpoint", str(V3), "--cost", "--seq", "32768", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output.splitlines()[-1])
    sections = {s["title"].split(" (")[0]: {f["name"]: f["value"] for f in s["figures"]} for s in doc["cost"]}
    cache = sections["key/value cache"]
    assert cache["per token per layer"] == 512 + 64 and cache["plain attention's, per token per layer"] == 40_960
    assert cache["per token"] == 61 * 576 * 2 == 70_272
    assert cache["plain attention's, per token"] == 61 * 128 * (128 + 64 + 128) * 2
    assert cache["at 32,768 tokens"] == 32_768 * 70_272
    assert sections["parameters"]["parameters"] == 671_026_404_352


def test_the_rotary_layout_is_the_files(tmp_path: Path) -> None:
    assert open_checkpoint(DATA / "hf_deepseek_v3").options["rope_layout"] == "interleaved"
    folder = _changed(tmp_path, {"rope_interleave": False})  # the rows are then rotate-half's, as transformers reads
    assert open_checkpoint(folder).options["rope_layout"] == "half"
    trace = explain.run("llama", checkpoint=str(folder), tokens="5,6,7")
    assert trace["blocks.0.attn.rot_q"].attrs["layout"] == "half"
    result = invoke("run", "--checkpoint", str(folder), "--tokens", "5,6,7", "--rope-layout", "interleaved", "--plain")
    one_line_error(result, 2, "--rope-layout interleaved conflicts with the checkpoint's rope_layout = half")
