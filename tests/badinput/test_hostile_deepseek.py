"""A DeepSeek-V3 config.json with hostile values, given alone to ``explain shapes --checkpoint``: each is refused in
one line naming the key and the file (never a flag the user did not type), exit 1, before anything is allocated."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from explain.cli import main

V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "num_hidden_layers": 61,
      "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
      "rms_norm_eps": 1e-6, "rope_theta": 10000, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
      "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256, "n_group": 8, "topk_group": 4,
      "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "first_k_dense_replace": 3, "n_shared_experts": 1,
      "routed_scaling_factor": 2.5, "norm_topk_prob": True, "tie_word_embeddings": False}

CASES = [  # (the keys changed, the key the one line must name)
    ({"kv_lora_rank": 10**9}, "kv_lora_rank"), ({"q_lora_rank": 10**9}, "q_lora_rank"),
    ({"qk_rope_head_dim": 10**9}, "qk_rope_head_dim"), ({"v_head_dim": 10**9}, "v_head_dim"),
    ({"n_routed_experts": 10**9}, "n_routed_experts"), ({"n_group": 10**9}, "n_group"),
    ({"num_experts_per_tok": 10**9}, "num_experts_per_tok"), ({"moe_intermediate_size": 10**9}, "moe_intermediate_size"),
    ({"n_shared_experts": 10**9}, "n_shared_experts"), ({"qk_rope_head_dim": 63}, "qk_rope_head_dim"),
    ({"n_group": 7}, "n_group"), ({"topk_group": 9}, "topk_group"), ({"num_experts_per_tok": 300}, "num_experts_per_tok"),
    ({"routed_scaling_factor": float("inf")}, "routed_scaling_factor"),
    ({"model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok"),
]


@pytest.mark.parametrize("patch,key", CASES, ids=[f"{k}={list(p.values())[-1]}" for p, k in CASES])
def test_hostile_config_key_is_named_with_its_file(tmp_path: Path, patch: dict, key: str) -> None:
    (tmp_path / "config.json").write_text(json.dumps({**V3, **patch}))  # json writes inf as Infinity, as Python reads
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["shapes", "--checkpoint", str(tmp_path)], catch_exceptions=False)
    took = time.perf_counter() - start
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 1, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "config.json" in lines[0] and key in lines[0] and "--" not in lines[0], lines[0]
    assert took < 5, f"{took:.1f} s to refuse a config.json"
