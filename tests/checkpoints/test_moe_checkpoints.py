"""Hugging Face folders of model_type mixtral and qwen2_moe (tests/data/moe/hf_*, written by
tests/data/make_moe_fixtures.py): transformers 4's one-tensor-per-expert layout and transformers 5's stacked one
open with --checkpoint and give transformers' logits (float64 from the float32 file, 1e-10) and greedy tokens;
a config.json alone is counted and planned by `explain shapes` (Mixtral-8x7B: 46,702,792,704 parameters, as
transformers counts them on the meta device) with the active parameters and their rule; a run on it is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import ExplainError, InputError, WeightsError
from explain.engine.api import plan
from explain.report.shape_report import select, shapes_doc, shapes_text

DATA = Path(__file__).resolve().parents[1] / "data" / "moe"
FOLDERS = ("hf_mixtral", "hf_mixtral_stacked", "hf_qwen2_moe")
COUNTS = json.loads((DATA / "configs" / "counts.json").read_text())


@pytest.mark.parametrize("name", FOLDERS)
def test_a_folder_gives_transformers_logits_and_tokens(name: str) -> None:
    folder = DATA / name
    with np.load(folder / "expected.npz") as e:
        ids, logits, generated = e["ids"].tolist(), e["logits"], e["generated"].tolist()
    trace = explain.run("llama", checkpoint=str(folder), tokens=",".join(map(str, ids)))
    np.testing.assert_allclose(trace["logits"].output[0][[0, 25, -1]], logits, rtol=1e-10, atol=1e-10)
    assert trace.config.n_experts == 4 and any(s.op == "route" for s in trace)
    gen = explain.generate("llama", checkpoint=str(folder), tokens=",".join(map(str, ids)), greedy=True,
                           max_new_tokens=len(generated), ignore_eos=True)
    assert explain.generated_ids(gen) == [generated]


def test_both_expert_layouts_read_the_same_weights() -> None:
    a, b = (open_checkpoint(DATA / n).params() for n in ("hf_mixtral", "hf_mixtral_stacked"))
    assert a.keys() == b.keys() and "blocks.0.mlp.experts.W_gate" in a
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    assert a["blocks.1.mlp.experts.W_out"].shape == (4, 24, 32)  # (E, f, d): x·W, stacked


def test_qwen2_moe_options_come_from_its_config() -> None:
    o = open_checkpoint(DATA / "hf_qwen2_moe").options
    assert (o["n_experts"], o["experts_per_token"], o["moe_d_ff"], o["n_shared_experts"], o["shared_d_ff"],
            o["shared_expert_gate"], o["norm_topk_prob"], o["qkv_bias"]) == (4, 2, 8, 1, 20, True, False, True)


@pytest.mark.parametrize("name", ["mixtral-8x7b", "qwen1.5-moe-a2.7b"])
def test_a_config_alone_is_counted_total_and_active(name: str) -> None:
    trace = plan("llama", checkpoint=str(DATA / "configs" / name), tokens=[0, 1, 2])
    doc = shapes_doc(select(trace))
    assert doc["n_params"] == COUNTS[name]["total"]  # transformers' count on the meta device
    assert doc["n_active"] == COUNTS[name]["active"]  # total − the routed experts' (E − k)/E, by transformers' names
    assert "routers and shared experts all counted" in doc["active_rule"]
    text = shapes_text(select(trace, steps=False))
    assert f"total: {COUNTS[name]['total']:,} parameters" in text
    assert f"active: {COUNTS[name]['active']:,} parameters per token" in text


def test_mixtral_8x7b_figures() -> None:
    assert COUNTS["mixtral-8x7b"]["total"] == 46_702_792_704
    assert round(COUNTS["mixtral-8x7b"]["active"] / 1e9, 1) == 12.9
    trace = plan("llama", checkpoint=str(DATA / "configs" / "mixtral-8x7b"), tokens=[0, 1, 2])
    assert trace["blocks.31.mlp.experts.out"].shape == (1, 8, 3, 4096)


def test_a_run_on_a_config_alone_is_refused() -> None:
    with pytest.raises(InputError, match="neither model.safetensors nor model.safetensors.index.json"):
        open_checkpoint(DATA / "configs" / "mixtral-8x7b").params()


@pytest.mark.parametrize("change, needle", [
    ({"decoder_sparse_step": 2}, "decoder_sparse_step 2"),
    ({"mlp_only_layers": [1]}, "mlp_only_layers [1]"),
    ({"num_experts_per_tok": 0}, "num_experts_per_tok must be a whole number of at least 1"),
])
def test_a_qwen2_moe_config_explain_cannot_compute_is_refused(tmp_path: Path, change: dict, needle: str) -> None:
    folder = tmp_path / "q"
    shutil.copytree(DATA / "hf_qwen2_moe", folder)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(dict(cfg, **change)))
    with pytest.raises(WeightsError) as err:
        open_checkpoint(folder)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_weights_of_another_layout_size_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    shutil.copytree(DATA / "hf_mixtral", folder)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(dict(cfg, num_local_experts=8)))
    with pytest.raises(ExplainError, match="experts.4"):
        open_checkpoint(folder)
