"""``--checkpoint FILE.gguf``: small GGUFs written with the ``gguf`` package's writer from the weights of the
torch fixture (tests/data/llama/hf_llama), q/k permuted as llama.cpp's converter does (tests/helpers/gguf_files.py).

- F32: the logits of transformers' LlamaForCausalLM to 1e-5 (the file holds float32 weights);
- Q8_0 and Q4_1: to 1e-10 against a run on the dequantized weights put back by this test's own inverse of the
  converter's permutation (so the reader's dequantizing, un-permuting and renaming are what is checked);
- a reader that left the rows permuted is caught (the logits move by more than 0.1);
- the tokenizer rebuilt from the vocabulary and merges, for each pre-tokenizer name, gives the ids of a
  tokenizer.json with the same vocabulary, merges and that model's published pre-tokenizer
  (tests/data/llama/pre_tokenizers/), on text with digits, spaces and non-ASCII; other names are refused;
- a quantized weight's cell says where its float came from;
- bad files: one line each.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from gguf_files import HF, hf_tensors, permute, write_gguf

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import ExplainError

DATA = Path(__file__).resolve().parents[1] / "data" / "llama"
E = np.load(HF / "expected.npz")
TEXT = str(E["text"])
ROWS = [0, 25, -1]
TOKENIZER_TEXT = "The capital of France is Paris. In 2024, 1234 cafés — ça coûte 12€!  Don't\n\n  x 007 ünïcödé 🙂"


def test_f32_gguf_matches_transformers(tmp_path: Path) -> None:
    trace = explain.run("llama", checkpoint=str(write_gguf(tmp_path / "m.gguf", "F32")), text=TEXT)
    assert trace["tokens"].output[0].tolist() == E["ids"].tolist()
    np.testing.assert_allclose(trace["logits"].output[0][ROWS], E["logits"], rtol=1e-5, atol=1e-5)


def dequantized_params(path: Path) -> dict[str, np.ndarray]:
    """The engine's parameters from a GGUF, done here: gguf's dequantize, this test's own inverse of the
    converter's permutation (an index permutation, not the reader's reshape), and the names."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    cfg = json.loads((HF / "config.json").read_text())
    h, kv, d, L = (cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"],
                   cfg["num_hidden_layers"])
    m = d // h
    r = GGUFReader(path)
    t = {x.name: dequantize(x.data, x.tensor_type).astype(np.float64).reshape(tuple(reversed(x.shape.tolist())))
         for x in r.tensors}

    def unpermuted(w, n_kv):
        order = permute(np.arange(w.shape[0])[:, None], h, n_kv).ravel()  # stored row r holds row order[r]
        out = np.empty_like(w)
        out[order] = w
        return out

    p = {"W_E": t["token_embd.weight"], "ln_final.w": t["output_norm.weight"], "unembed.W_U": t["output.weight"].T}
    for i in range(L):
        b, o = f"blk.{i}.", f"blocks.{i}."
        q, k = unpermuted(t[b + "attn_q.weight"], h), unpermuted(t[b + "attn_k.weight"], kv)
        p.update({o + "ln1.w": t[b + "attn_norm.weight"], o + "ln2.w": t[b + "ffn_norm.weight"],
                  o + "attn.W_Q": q.reshape(h, m, d).transpose(0, 2, 1),
                  o + "attn.W_K": k.reshape(kv, m, d).transpose(0, 2, 1),
                  o + "attn.W_V": t[b + "attn_v.weight"].reshape(kv, m, d).transpose(0, 2, 1),
                  o + "attn.W_O": t[b + "attn_output.weight"].T, o + "mlp.W_gate": t[b + "ffn_gate.weight"].T,
                  o + "mlp.W_in": t[b + "ffn_up.weight"].T, o + "mlp.W_out": t[b + "ffn_down.weight"].T})
    return p


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_1"])
def test_quantized_gguf_matches_its_dequantized_weights(tmp_path: Path, qtype: str) -> None:
    path = write_gguf(tmp_path / "m.gguf", qtype)
    ours = explain.run("llama", checkpoint=str(path), text=TEXT)
    options = {k: ours.config.to_dict()[k] for k in ("d_model", "n_heads", "n_kv_heads", "n_layers", "d_ff",
                                                        "d_vocab", "n_ctx", "rope_theta", "ln_eps")}
    ref = explain.run("llama", weights=dequantized_params(path), tokens=E["ids"].tolist(), tie_embeddings=False,
                      **options)
    np.testing.assert_allclose(ours["logits"].output, ref["logits"].output, rtol=1e-10, atol=1e-10)
    # quantization moved the logits, as it should (the comparison above is not of two float32 runs)
    assert np.abs(ours["logits"].output[0][ROWS] - E["logits"]).max() > 1e-4


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_0", "Q4_1"])
def test_a_quantized_weight_says_where_its_float_came_from(tmp_path: Path, qtype: str) -> None:
    ck = open_checkpoint(str(write_gguf(tmp_path / "m.gguf", qtype)))
    params = ck.params()
    rng = np.random.default_rng(0)
    for name in ("W_E", "unembed.W_U", "blocks.1.attn.W_Q", "blocks.0.attn.W_K", "blocks.0.attn.W_V",
                 "blocks.1.attn.W_O", "blocks.0.mlp.W_gate", "blocks.1.mlp.W_in", "blocks.0.mlp.W_out"):
        for _ in range(3):
            index = tuple(int(rng.integers(n)) for n in params[name].shape)
            ex = ck.weight_origin(name, index)
            assert ex.value == params[name][index], (name, index)  # bit for bit: the same float32 arithmetic
            text = "\n".join(ex.lines)
            assert "scale d" in text and "stored integer q" in text and (qtype != "Q4_1" or "minimum m" in text)
            assert ("permuted" in text) == (name.endswith(("W_Q", "W_K")))
    for name in ("ln_final.w", "blocks.1.ln2.w"):  # the norms stay float32 in the file: read as is
        ex = ck.weight_origin(name, (3,))
        assert ex.value == params[name][3] and "stored as F32" in "\n".join(ex.lines)
    with pytest.raises(ExplainError, match="not a weight"):
        ck.weight_origin("blocks.0.attn.scores", (0, 0))


def test_rows_left_permuted_would_be_caught(tmp_path: Path) -> None:
    """A file whose q/k rows were never permuted, read by the reader (which un-permutes), is what a reader that
    skipped the un-permuting would make of a real file: its logits are far from the reference."""
    wrong = explain.run("llama", checkpoint=str(write_gguf(tmp_path / "m.gguf", "F32", permute_qk=False)),
                        text=TEXT)
    assert np.abs(wrong["logits"].output[0][ROWS] - E["logits"]).max() > 0.1


def test_unpermute_inverts_the_converter() -> None:
    from explain.checkpoints.gguf import unpermute

    w = np.random.default_rng(0).standard_normal((2 * 8, 5))
    np.testing.assert_array_equal(unpermute(permute(w, 4, 2), 2), w)  # k: 2 key heads of width 8
    w = np.random.default_rng(1).standard_normal((4 * 8, 5))
    np.testing.assert_array_equal(unpermute(permute(w, 4, 4), 4), w)
    assert not np.array_equal(permute(w, 4, 4), w)


@pytest.mark.parametrize("pre", ["smollm", "gpt-2", "llama-bpe", "qwen2"])
def test_tokenizer_matches_a_tokenizer_json(tmp_path: Path, pre: str) -> None:
    from tokenizers import Tokenizer

    ck = open_checkpoint(str(write_gguf(tmp_path / "m.gguf", "F32", pre=pre)))
    want = Tokenizer.from_file(str(DATA / "pre_tokenizers" / f"{pre}.json")).encode(TOKENIZER_TEXT).ids
    assert ck.encode(TOKENIZER_TEXT) == want


def test_pre_tokenizers_differ_on_numbers() -> None:
    """The reference tokenizers are not one and the same: the test above tells the names apart."""
    from tokenizers import Tokenizer

    ids = {p: tuple(Tokenizer.from_file(str(DATA / "pre_tokenizers" / f"{p}.json")).encode(TOKENIZER_TEXT).ids)
           for p in ("smollm", "gpt-2", "llama-bpe")}
    assert len(set(ids.values())) == 3


def test_unknown_pre_tokenizer_is_refused(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", "F32", pre="deepseek-llm")
    with pytest.raises(ExplainError, match=r"pre-tokenizer 'deepseek-llm'.*give --tokens") as err:
        explain.run("llama", checkpoint=str(path), text="Paris")
    assert "\n" not in str(err.value)
    explain.run("llama", checkpoint=str(path), tokens=[1, 2, 3])  # ids still work


def test_bad_files_are_refused_in_one_line(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", "Q8_0")
    data = path.read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[: len(data) - 1000])
    other = write_gguf(tmp_path / "other.gguf", "F32", arch="gpt2")
    for bad, needle in ((cut, "cut.gguf"), (other, "architecture 'gpt2'")):
        with pytest.raises(ExplainError) as err:
            explain.run("llama", checkpoint=str(bad), text="Paris")
        assert needle in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_signalling_nan_is_refused_without_a_numpy_warning(tmp_path: Path) -> None:
    """Random bytes in an F32 tensor can hold a signalling NaN (0x7f800001), whose cast to float64 made numpy
    print 'RuntimeWarning: invalid value encountered in cast' (with its file path) above the one-line error."""
    import warnings

    from gguf import GGUFReader

    path = write_gguf(tmp_path / "m.gguf", "F32")
    t = next(t for t in GGUFReader(path).tensors if t.name == "token_embd.weight")
    with open(path, "r+b") as fh:
        fh.seek(t.data_offset)
        fh.write(np.array([0x7F800001], dtype="<u4").tobytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ExplainError, match="token_embd.weight.*NaN or infinite"):
            explain.run("llama", checkpoint=str(path), text="Paris")


def test_gguf_without_a_model_name_runs_llama(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from explain.cli import main

    r = CliRunner().invoke(main, ["run", "--checkpoint", str(write_gguf(tmp_path / "m.gguf", "Q4_1")), "--text",
                                  "Paris", "--plain"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("explain run llama:")


def test_hf_tensors_are_the_fixture() -> None:
    assert "lm_head.weight" in hf_tensors()  # the folder is untied: the GGUF has its own output
