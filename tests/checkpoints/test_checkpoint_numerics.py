"""A real GPT-2 checkpoint stepped through by the engine: the logits and loss of ``explain.run("gpt",
checkpoint=…)`` against the ones Hugging Face transformers computed in float64 (tests/data/gpt2_tiny/
expected.npz), with tokens from the checkpoint's own tokenizer and from explicit ids. No torch or transformers
at test time: the reference numbers are stored.

Tolerance: |engine − transformers| ≤ 1e-9 absolute on every logit (they are of order 1–10) and on the loss;
both computations are float64 from the same float32 weights, so they agree to ~1e-13.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import explain
from explain.checkpoints.open import open_checkpoint
from explain.engine.api import plan

TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
EXPECTED = np.load(TINY / "expected.npz", allow_pickle=False)
N = int(EXPECTED["n_inputs"])
ATOL = 1e-9


def _check(trace, i: int) -> None:
    np.testing.assert_array_equal(trace["tokens"].output[0], EXPECTED[f"tokens_{i}"])
    np.testing.assert_allclose(trace["logits"].output[0], EXPECTED[f"logits_{i}"], rtol=0, atol=ATOL)
    assert abs(float(trace["loss"].output) - float(EXPECTED[f"loss_{i}"])) <= ATOL


@pytest.mark.parametrize("i", range(N))
def test_text_through_the_checkpoint_tokenizer_matches_transformers(i: int) -> None:
    trace = explain.run("gpt", checkpoint=str(TINY), text=str(EXPECTED[f"text_{i}"]))
    _check(trace, i)


@pytest.mark.parametrize("i", range(N))
def test_token_ids_match_transformers(i: int) -> None:
    ids = [int(t) for t in EXPECTED[f"tokens_{i}"]]
    _check(explain.run("gpt", checkpoint=TINY, tokens=ids), i)
    _check(explain.run("gpt", checkpoint=TINY, tokens=",".join(map(str, ids))), i)


def test_config_sets_every_dimension() -> None:
    trace = explain.run("gpt", checkpoint=TINY, tokens=[1, 2, 3])
    cfg = trace.config
    assert (cfg.d_model, cfg.n_heads, cfg.head_dim, cfg.n_layers, cfg.ff_dim, cfg.d_vocab, cfg.n_ctx, cfg.ln_eps) == \
        (16, 2, 8, 2, 64, 300, 32, 1e-5)
    assert len(trace.labels["vocab"]) == 300 and trace.labels["vocab"][0] == "<|endoftext|>"


def test_a_batch_gives_each_row_its_own_logits() -> None:
    text = str(EXPECTED["text_0"])
    trace = explain.run("gpt", checkpoint=TINY, text=[text, text])
    for row in trace["logits"].output:
        np.testing.assert_allclose(row, EXPECTED["logits_0"], rtol=0, atol=ATOL)


def test_heads_take_consecutive_columns_of_c_attn() -> None:
    """q of head s at position t is ln1(x)_t · c_attn[:, s·m:(s+1)·m] + bias (and k, v a d further on): the
    layout transformers splits heads with, checked on a step the logits alone would not pin down."""
    raw = load_file(str(TINY / "model.safetensors"))
    W = raw["transformer.h.0.attn.c_attn.weight"].astype(np.float64)
    b = raw["transformer.h.0.attn.c_attn.bias"].astype(np.float64)
    trace = explain.run("gpt", checkpoint=TINY, text=str(EXPECTED["text_1"]))
    h = trace["blocks.0.ln1"].output[0]  # (T, d)
    d, m = 16, 8
    for j, name in enumerate("qkv"):
        got = trace[f"blocks.0.attn.{name}"].output[0]  # (heads, T, m)
        for s in range(2):
            cols = slice(j * d + s * m, j * d + (s + 1) * m)
            np.testing.assert_allclose(got[s], h @ W[:, cols] + b[cols], rtol=0, atol=1e-12)


def test_params_are_float64_under_engine_names_and_loaded_once() -> None:
    ck = open_checkpoint(TINY)
    p = ck.params()
    assert ck.params() is p
    planned = plan("gpt", checkpoint=ck, tokens=[1])
    assert set(p) == set(planned.specs)
    assert all(p[k].dtype == np.float64 and p[k].shape == planned.specs[k].shape for k in p)
    raw = load_file(str(TINY / "model.safetensors"))
    np.testing.assert_array_equal(p["W_E"], raw["transformer.wte.weight"].astype(np.float64))
    np.testing.assert_array_equal(p["blocks.1.mlp.W_out"], raw["transformer.h.1.mlp.c_proj.weight"])


def _copy(tmp_path: Path, tensors: dict[str, np.ndarray]) -> Path:
    out = tmp_path / "ck"
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TINY, out)
    save_file(tensors, str(out / "model.safetensors"))
    return out


def test_gpt2model_keys_buffers_and_a_stored_lm_head_give_the_same_logits(tmp_path: Path) -> None:
    """The hub's gpt2 stores keys without 'transformer.' plus the causal-mask buffers; a stored lm_head is
    ignored when the embeddings are tied, as transformers does."""
    raw = load_file(str(TINY / "model.safetensors"))
    t = {k.removeprefix("transformer."): v for k, v in raw.items()}
    for i in range(2):
        t[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, 32, 32), dtype=np.float32))
        t[f"h.{i}.attn.masked_bias"] = np.array(-1e4, dtype=np.float32)
    t["lm_head.weight"] = raw["transformer.wte.weight"]
    _check(explain.run("gpt", checkpoint=_copy(tmp_path, t), text=str(EXPECTED["text_2"])), 2)


def _write_bf16(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """A safetensors file of BF16 tensors written by hand (numpy has no bfloat16): the top 16 bits of each
    float32."""
    header, blobs, offset = {}, [], 0
    for k, v in tensors.items():
        blob = (v.view(np.uint32) >> 16).astype("<u2").tobytes()
        header[k] = {"dtype": "BF16", "shape": list(v.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    path.write_bytes(len(head).to_bytes(8, "little") + head + b"".join(blobs))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_float_dtypes_load_exactly(tmp_path: Path, dtype: str) -> None:
    """F16, BF16 and F64 files give the same parameters, and so the same logits, as a float32 file holding
    the same (rounded) values."""
    raw = load_file(str(TINY / "model.safetensors"))
    if dtype == "bfloat16":
        ck_dir = _copy(tmp_path / "a", raw)
        _write_bf16(ck_dir / "model.safetensors", raw)
        same = {k: ((v.view(np.uint32) >> 16) << 16).view(np.float32) for k, v in raw.items()}
    else:
        ck_dir = _copy(tmp_path / "a", {k: v.astype(dtype) for k, v in raw.items()})
        same = {k: v.astype(dtype).astype(np.float32) for k, v in raw.items()}
    ck, ref = open_checkpoint(ck_dir), open_checkpoint(_copy(tmp_path / "b", same))
    assert all(np.array_equal(ck.params()[k], ref.params()[k]) for k in ref.params())
    ids = [int(x) for x in EXPECTED["tokens_0"]]
    got = explain.run("gpt", checkpoint=ck, tokens=ids)["logits"].output
    np.testing.assert_array_equal(got, explain.run("gpt", checkpoint=ref, tokens=ids)["logits"].output)
    if dtype == "float64":  # float32 values widened: transformers' numbers exactly
        np.testing.assert_allclose(got[0], EXPECTED["logits_0"], rtol=0, atol=ATOL)


def test_shapes_with_a_checkpoint_need_only_json() -> None:
    """Opening a checkpoint and planning a run from token ids imports neither numpy nor the optional packages."""
    code = ("import sys; from explain.engine.api import plan; "
            f"t = plan('gpt', checkpoint={str(TINY)!r}, tokens='1,2,3'); "
            "print(t['logits'].shape, *sorted(m for m in ('numpy', 'safetensors', 'tokenizers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["(1,", "3,", "300)"]
