"""``--rope-layout interleaved|half`` on every model with rotary embeddings: the rotation pairs (2i, 2i + 1) or
(i, i + d/2); a checkpoint (read in Hugging Face's rotate-half layout) has its q/k columns reordered so that it is
the same model in either layout (logits to 1e-12); with a GGUF the interleaved columns are the file's stored rows,
and a weight's origin still names the right stored row."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from gguf_files import HF, write_gguf

import explain
from explain.checkpoints.layout import interleaved_order, to_layout
from explain.core.errors import ConfigError

TEXT = "The capital of France is Paris."


def test_the_order_pairs_i_with_i_plus_half() -> None:
    assert interleaved_order(8) == [0, 4, 1, 5, 2, 6, 3, 7]
    w = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    out = to_layout({"blocks.0.attn.W_Q": w, "blocks.0.attn.W_V": w}, "interleaved")
    np.testing.assert_array_equal(out["blocks.0.attn.W_Q"][..., 1], w[..., 2])  # column 1 is old column d/2
    assert out["blocks.0.attn.W_V"] is w  # values are not rotated
    assert to_layout({"x": w}, "half")["x"] is w


@pytest.mark.parametrize("model", ["llama", "gemma"])
def test_a_layout_is_a_different_model_on_the_same_random_weights(model: str) -> None:
    half = explain.run(model, seed=1)
    inter = explain.run(model, seed=1, rope_layout="interleaved")
    assert inter["blocks.0.attn.rot_q"].attrs["layout"] == "interleaved"
    assert "interleaved: dimension 2k pairs with 2k + 1" in "\n".join(
        inter.explain("blocks.0.attn.rot_q", (0, 0, 2, 3)).lines)
    np.testing.assert_array_equal(half["blocks.0.attn.q"].output, inter["blocks.0.attn.q"].output)
    assert not np.allclose(half["blocks.0.attn.rot_q"].output, inter["blocks.0.attn.rot_q"].output)


def test_a_checkpoint_is_the_same_model_in_either_layout() -> None:
    half = explain.run("llama", checkpoint=str(HF), text=TEXT)
    inter = explain.run("llama", checkpoint=str(HF), text=TEXT, rope_layout="interleaved")
    np.testing.assert_allclose(inter["logits"].output, half["logits"].output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(inter["blocks.1.attn.scores"].output, half["blocks.1.attn.scores"].output,
                               rtol=1e-12, atol=1e-12)  # Q·Kᵀ: the same sum in another order


def test_a_ggufs_stored_rows_are_the_interleaved_layout() -> None:
    from gguf import GGUFReader
    from gguf.quants import dequantize

    path = write_gguf(Path(tempfile.mkdtemp()) / "m.gguf", "Q8_0")
    trace = explain.run("llama", checkpoint=str(path), text=TEXT, rope_layout="interleaved")
    stored = next(t for t in GGUFReader(path).tensors if t.name == "blk.0.attn_q.weight")
    rows = dequantize(stored.data, stored.tensor_type).reshape(tuple(reversed(stored.shape.tolist())))
    W_Q = trace.params["blocks.0.attn.W_Q"]  # (heads, d, m): column j of head s is stored row s·m + j
    h, d, m = W_Q.shape
    np.testing.assert_array_equal(W_Q.transpose(0, 2, 1).reshape(h * m, d), rows)
    step = trace["blocks.0.attn.q"]
    ex = trace.explain(step, (0, 1, 2, 5))
    assert ex.origin is not None and f"row {1 * m + 5} of blk.0.attn_q.weight" in "\n".join(ex.origin.lines)
    plain = explain.run("llama", checkpoint=str(path), text=TEXT)
    np.testing.assert_allclose(trace["logits"].output, plain["logits"].output, rtol=1e-10, atol=1e-10)


def test_a_bad_layout_is_refused() -> None:
    from explain.core.config import make_config

    with pytest.raises(ConfigError, match="rope_layout must be one of half, interleaved"):
        make_config("llama", rope_layout="sideways")
    with pytest.raises(ConfigError, match="--rope-layout interleaved applies to the"):
        make_config("gpt", rope_layout="interleaved")
