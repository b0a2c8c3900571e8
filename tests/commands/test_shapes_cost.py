"""``explain shapes --cost`` (issue 45): what a model costs, each figure with its formula. The targets are counted
by hand here, never taken from explain: GPT-2 small's parameter bytes, its forward FLOPs per token at 1,024
tokens matmul by matmul, and Llama-3-8B's key/value cache from its config.json alone."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from clitools import invoke

import explain.checkpoints.open
import explain.engine.ask  # noqa: F401 - holds open_checkpoint, wrapped below

LLAMA3 = Path(__file__).resolve().parents[1] / "data" / "cost" / "llama-3-8b"
GPT2_SMALL = ["gpt", "--d-model", "768", "--heads", "12", "--layers", "12", "--d-ff", "3072", "--vocab", "50257",
              "--context", "1024"]


def cost(*args: str) -> dict[str, dict]:
    result = invoke("shapes", *args, "--cost", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    return {s["title"].split(" (")[0].split(",")[0]: {f["name"]: f for f in s["figures"]} for s in doc["cost"]}


def test_gpt2_small_parameter_bytes() -> None:
    c = cost(*GPT2_SMALL, "--seq", "8")
    assert c["parameters"]["parameters"]["value"] == 124_439_808
    f32 = c["parameters"]["at float32"]
    assert f32["value"] == 497_759_232 and f32["formula"] == "N × 4 = 124,439,808 × 4"
    assert c["parameters"]["at bfloat16"]["value"] == 248_879_616


def test_gpt2_small_forward_flops_per_token_equal_a_hand_count() -> None:
    d, layers, vocab, t, ff, heads, dh = 768, 12, 50257, 1024, 3072, 12, 64
    qkv = 3 * 2 * d * heads * dh  # q, k, v: each token's d values times a d × (heads·dh) matrix
    scores = 2 * heads * t * dh  # one query against t keys, per head
    weighted = 2 * heads * t * dh  # t weights times t values of width dh, per head
    out = 2 * d * d
    mlp = 2 * d * ff + 2 * ff * d
    head = 2 * d * vocab  # the LM head (tied to W_E)
    hand = layers * (qkv + scores + weighted + out + mlp) + head
    assert hand == 284_812_800
    fwd = cost(*GPT2_SMALL, "--seq", "1024")["forward FLOPs per token"]
    assert fwd["total"]["value"] == hand
    assert fwd["LM head (logits)"]["value"] == head and fwd["LM head (logits)"]["formula"] == "2·768·50257"
    assert fwd["attention scores Q·Kᵀ"]["value"] == layers * scores
    assert fwd["attention scores Q·Kᵀ"]["formula"] == "12 layers × 2·12·1024·64"
    assert fwd["attention weighted sum A·V"]["value"] == layers * weighted
    assert sum(f["value"] for name, f in fwd.items() if name != "total") == fwd["total"]["value"]


def test_training_flops_are_6n_and_three_forwards() -> None:
    train = cost(*GPT2_SMALL, "--seq", "16")["training FLOPs per token"]
    assert train["6N rule"]["value"] == 6 * 124_439_808


def test_llama3_8b_key_value_cache_from_its_config_alone() -> None:
    result = invoke("shapes", "--checkpoint", str(LLAMA3), "--seq", "32768", "--cost")
    assert result.exit_code == 0, result.output
    assert "grouped-query attention: 8 key/value heads for 32 query heads), at bfloat16" in result.stdout
    assert "131,072 bytes (128 KiB)" in result.stdout and "2·32·8·128·2" in result.stdout
    assert "4,294,967,296 bytes (4 GiB)" in result.stdout
    assert "beyond the checkpoint's context of 8,192 positions" in result.stderr
    c = cost("--checkpoint", str(LLAMA3), "--seq", "32768")
    cache = next(v for k, v in c.items() if k.startswith("key/value cache"))
    assert cache["per token"]["value"] == 32 * 8 * 128 * 2 * 2 == 131_072
    assert cache["at 32,768 tokens"]["value"] == 4 * 2**30
    assert c["parameters"]["parameters"]["value"] == 8_030_261_248  # Meta's model card: 8.03B


def test_the_cost_past_a_rotary_context_leaves_the_checkpoint_as_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request carries the longer context (issue 38 item 4): the opened checkpoint's options were set to
    --seq (ck.options["n_ctx"] = 32768 on the old code), and a checkpoint is read-only data."""
    opened = []
    original = explain.checkpoints.open.open_checkpoint

    def keep(*args, **kwargs):
        opened.append(original(*args, **kwargs))
        return opened[-1]

    for module in [m for name, m in sys.modules.items() if name.startswith("explain")]:
        if getattr(module, "open_checkpoint", None) is original:
            monkeypatch.setattr(module, "open_checkpoint", keep)
    c = cost("--checkpoint", str(LLAMA3), "--seq", "32768")
    assert next(v for k, v in c.items() if k.startswith("key/value cache"))["at 32,768 tokens"]["value"] == 4 * 2**30
    assert len(opened) == 1 and opened[0].options["n_ctx"] == 8192  # config.json's max_position_embeddings


@pytest.mark.parametrize(("kv", "kind"), [("4", "multi-head attention"), ("2", "grouped-query attention: 2"),
                                          ("1", "multi-query attention")])
def test_cache_kind_follows_the_key_value_heads(kv: str, kind: str) -> None:
    args = ["llama", "--heads", "4", "--d-model", "32", "--kv-heads", kv, "--seq", "8"]
    c = cost(*args)
    title, cache = next((k, v) for k, v in c.items() if k.startswith("key/value cache"))
    assert kind in invoke("shapes", *args, "--cost").stdout
    assert cache["per token"]["value"] == 2 * 2 * int(kv) * 8 * 4  # K and V, 2 layers, kv heads, d_head 8, float32


def test_learned_positions_refuse_a_sequence_past_the_context() -> None:
    result = invoke("shapes", *GPT2_SMALL, "--seq", "2048", "--cost")
    assert result.exit_code != 0 and "longer than the context of 1024 positions" in result.output


def test_dtype_and_batch_size() -> None:
    c = cost(*GPT2_SMALL, "--seq", "8", "--dtype", "float16", "--batch-size", "4")
    assert c["parameters"]["at float16"]["value"] == 2 * 124_439_808
    cache = next(v for k, v in c.items() if k.startswith("key/value cache"))
    assert cache["at 8 tokens, batch 4"]["value"] == 2 * 12 * 12 * 64 * 2 * 8 * 4
    one = cost(*GPT2_SMALL, "--seq", "8", "--dtype", "float16")
    act = next(v for k, v in c.items() if k.startswith("activation memory"))["every forward step's output"]
    act1 = next(v for k, v in one.items() if k.startswith("activation memory"))["every forward step's output"]
    assert act["value"] == 4 * act1["value"]


def test_mixture_of_experts_counts_k_experts_and_active_parameters() -> None:
    c = cost("llama", "--experts", "8", "--experts-per-token", "2", "--seq", "8")
    assert "active per token" in c["parameters"]
    fwd = c["forward FLOPs per token"]
    assert "mixture of experts (k experts per token)" in fwd and "MLP" not in fwd


@pytest.mark.parametrize(("args", "code", "words"), [
    (["gpt", "--batch-size", "2"], 2, "--batch-size sizes the figures of --cost; add --cost"),
    (["gpt", "--dtype", "float16"], 2, "--dtype sizes the figures of --cost; add --cost"),
])
def test_cost_options_need_cost(args: list[str], code: int, words: str) -> None:
    result = invoke("shapes", *args)
    assert result.exit_code == code and words in result.output


def test_sliding_window_cache_and_attention_count_the_window() -> None:
    """Gemma 3 270M's sizes (18 layers, five sliding of a 512-token window to one full, 1 key/value head of 256):
    the full layers keep every token, the sliding ones the last 512; a sliding layer's query reads 512 keys."""
    args = ["gemma", "--d-model", "640", "--heads", "4", "--kv-heads", "1", "--d-head", "256", "--layers", "18",
            "--d-ff", "2048", "--vocab", "262144", "--window", "512", "--context", "32768", "--seq", "32768",
            "--dtype", "bfloat16"]
    c = cost(*args)
    assert c["parameters"]["parameters"]["value"] == 268_098_176  # transformers' count (families.md)
    cache = next(v for k, v in c.items() if k.startswith("key/value cache"))
    layer = 2 * 1 * 256 * 2
    assert cache["per token per layer"]["value"] == layer
    assert cache["at 32,768 tokens"]["value"] == (3 * 32768 + 15 * 512) * layer == 108_527_616
    assert cache["at 32,768 tokens, every layer full"]["value"] == 18 * 32768 * layer
    scores = c["forward FLOPs per token"]["attention scores Q·Kᵀ"]
    assert scores["value"] == 15 * 2 * 4 * 512 * 256 + 3 * 2 * 4 * 32768 * 256
    assert scores["formula"] == "15 layers × 2·4·512·256 + 3 layers × 2·4·32768·256"
