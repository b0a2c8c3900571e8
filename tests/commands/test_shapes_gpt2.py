"""``explain shapes`` at GPT-2-small size counts GPT-2's 124,439,808 parameters, with no numbers computed.

124,439,808 is the published size of Hugging Face's ``gpt2`` (``sum(p.numel() for p in model.parameters())``,
tied unembedding counted once). The arithmetic below rebuilds it by hand from the dimensions, independently of
the model code; the CLI must print the same total and the same per-layer counts.
"""

from __future__ import annotations

import json
from math import prod

import pytest
from click.testing import CliRunner

from explain.cli import main

GPT2_SMALL = ["--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab", "50257",
              "--context", "1024"]

# Per block 7,087,872 = ln 2·1536 + attn 768·2304+2304 + 768·768+768 + mlp 768·3072+3072 + 3072·768+768
#   ln1, ln2: γ and β of 768 each       2 · 1,536                  =     3,072
#   attn: W_Q, W_K, W_V (768 → 3·768)   768·2304 + 2304            = 1,771,776
#         W_O                           768·768 + 768              =   590,592
#   mlp:  W_in                          768·3072 + 3072            = 2,362,368
#         W_out                         3072·768 + 768             = 2,360,064
# embeddings 50257·768 (W_E, also the unembedding) + 1024·768 (W_pos) = 39,383,808; ln_final 1,536
LN = 2 * 1536
ATTN = 768 * 2304 + 2304 + 768 * 768 + 768
MLP = 768 * 3072 + 3072 + 3072 * 768 + 768
BLOCK = LN + ATTN + MLP
TOTAL = 50257 * 768 + 1024 * 768 + 12 * BLOCK + 1536


def test_hand_arithmetic_is_gpt2s_published_count() -> None:
    assert BLOCK == 7_087_872
    assert TOTAL == 124_439_808


def test_table_total_and_layers() -> None:
    result = CliRunner().invoke(main, ["shapes", "gpt", *GPT2_SMALL])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "total: 124,439,808 parameters\n" in out
    assert "  = embed 38,597,376 + pos_embed 786,432 + blocks.0–11 12 × 7,087,872 + ln_final 1,536" in out
    layer_rows = {line.split()[0]: line.split()[-1] for line in out.splitlines()
                  if line.startswith("  blocks.11.") and len(line.split()) == 2}
    assert layer_rows == {"blocks.11.ln1": "1,536", "blocks.11.attn": f"{ATTN:,}", "blocks.11.ln2": "1,536",
                          "blocks.11.mlp": f"{MLP:,}"}
    assert max(len(line) for line in out.splitlines()) <= 120  # legible in a 120-column terminal


def test_json_total() -> None:
    result = CliRunner().invoke(main, ["shapes", "gpt", *GPT2_SMALL, "--json", "--no-steps"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["n_params"] == TOTAL == sum(p["size"] for p in doc["params"])
    assert doc["steps"] == []
    assert {p["name"]: p["shape"] for p in doc["params"]}["blocks.0.attn.W_Q"] == [12, 768, 64]


def test_checkpoint_total_is_the_number_of_values_in_the_file(data_dir) -> None:
    """The tiny GPT-2 fixture was written by transformers: its safetensors file is an independent count
    (``lm_head.weight`` is tied to ``wte`` and not stored, as explain counts W_E once)."""
    safetensors = pytest.importorskip("safetensors")
    pytest.importorskip("explain.checkpoints.gpt2")
    folder = data_dir / "gpt2_tiny"
    with safetensors.safe_open(str(folder / "model.safetensors"), framework="numpy") as f:
        sizes = {k: prod(f.get_slice(k).get_shape()) for k in f.keys()}
    stored = sum(v for k, v in sizes.items() if not k.endswith(".attn.bias"))  # old files kept the mask buffer
    result = CliRunner().invoke(main, ["shapes", "gpt", "--checkpoint", str(folder), "--json", "--no-steps"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # 300·16 (wte) + 32·16 (wpe) + 2 blocks × 3,280 + 32 (ln_f) = 11,904, where a block of d 16 is
    # ln 2·32 + attn 16·48+48 + 16·16+16 + mlp 16·64+64 + 64·16+16 = 3,280
    assert doc["n_params"] == stored == 300 * 16 + 32 * 16 + 2 * 3280 + 32 == 11_904
    assert (doc["config"]["d_model"], doc["config"]["n_layers"], doc["config"]["d_vocab"]) == (16, 2, 300)
