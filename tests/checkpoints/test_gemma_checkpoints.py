"""Gemma 3 checkpoints: a Hugging Face folder (tests/data/gemma/hf_gemma, made by make_gemma_fixtures.py) in both
config spellings, and gemma3 GGUFs written from it by the ``gguf`` writer as llama.cpp's converter writes them
(tests/helpers/gemma_files.py: norms stored as 1 + w).

- the folder: transformers' logits to 1e-10 (its float32 weights read as float64) and its greedy tokens; the same
  with transformers 4's spelling (rope_theta, rope_local_base_freq, sliding_window_pattern);
- F32 GGUF: the logits to 1e-5 (float32 weights); Q8_0: to 1e-10 against a run on the dequantized weights, less
  the stored 1, done here; a GGUF whose norms are w (the 1 not added) is a different model (what adding the 1
  twice looks like);
- the SentencePiece vocabulary rebuilt from the GGUF gives transformers' ids on texts with spaces, digits,
  newlines, tabs, HTML and non-ASCII (<bos> first, as the file says);
- what a GGUF does not store (the layer pattern, the local θ, the scale) is said in the notes, read when stored,
  and may be given as an option; bad, truncated and unsupported files: one line each.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from gemma_files import HF, hf_tensors, write_gguf

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import ExplainError

E = np.load(HF / "expected.npz")
TEXT = str(E["text"])
ROWS = [0, 5, -1]


def logits(checkpoint: str | Path, **options) -> np.ndarray:
    return explain.run("gemma", checkpoint=str(checkpoint), text=TEXT, **options)["logits"].output[0][ROWS]


def folder_copy(tmp_path: Path, **change) -> Path:
    out = tmp_path / "hf_gemma"
    shutil.copytree(HF, out)
    cfg = json.loads((out / "config.json").read_text())
    for k, v in change.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    (out / "config.json").write_text(json.dumps(cfg))
    return out


def test_the_folder_matches_transformers() -> None:
    ck = open_checkpoint(str(HF))
    assert ck.model == "gemma" and ck.encode(TEXT) == E["ids"].tolist()  # <bos> first
    np.testing.assert_allclose(logits(HF), E["logits"], rtol=1e-10, atol=1e-10)
    trace = explain.generate("gemma", checkpoint=str(HF), text=TEXT, greedy=True, max_new_tokens=4, ignore_eos=True)
    assert explain.generated_ids(trace) == [E["generated"].tolist()]


def test_transformers_4s_spelling_is_the_same_model(tmp_path: Path) -> None:
    old = folder_copy(tmp_path, layer_types=None, rope_parameters=None, _sliding_window_pattern=None,
                      sliding_window_pattern=6, rope_theta=1000000.0, rope_local_base_freq=10000.0)
    ck = open_checkpoint(str(old))
    assert ck.options["layer_types"] == "sliding,sliding,sliding,sliding,sliding,full"
    assert (ck.options["rope_theta"], ck.options["rope_local_base_freq"]) == (1000000.0, 10000.0)
    np.testing.assert_allclose(logits(old), E["logits"], rtol=1e-10, atol=1e-10)


def test_a_config_alone_is_counted_but_not_run(tmp_path: Path) -> None:
    only = tmp_path / "config_only"
    only.mkdir()
    shutil.copy(HF / "config.json", only / "config.json")
    from click.testing import CliRunner

    from explain.cli import main

    r = CliRunner().invoke(main, ["shapes", "--checkpoint", str(only), "--json"])
    assert r.exit_code == 0, r.output
    n = sum(int(np.prod(a.shape)) for a in hf_tensors().values())
    assert json.loads(r.stdout)["n_params"] == n == 60_512
    with pytest.raises(ExplainError, match="reads its config.json alone"):
        explain.run("gemma", checkpoint=str(only), tokens=[2, 5])


@pytest.mark.parametrize("change, needle", [
    (dict(final_logit_softcapping=30.0), "final_logit_softcapping 30.0 (Gemma 2's soft-capping"),
    (dict(attn_logit_softcapping=50.0), "attn_logit_softcapping"),
    (dict(rope_parameters={"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                           "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}),
     "rope scaling 'linear' (rope_parameters.full_attention)"),
    (dict(model_type="gemma3"), "Gemma 3's multimodal model"),
    (dict(hidden_activation="gelu"), "hidden_activation 'gelu'"),
    (dict(attention_bias=True), "attention_bias"),
    (dict(use_bidirectional_attention=True), "use_bidirectional_attention"),
    (dict(layer_types=["sliding_attention"] * 5), "layer_types lists 5 layers, num_hidden_layers is 6"),
    (dict(layer_types=["local"] * 6), "layer_types must list 'sliding_attention' or 'full_attention'"),
    (dict(query_pre_attn_scalar=2.5), "query_pre_attn_scalar must be a positive whole number"),
    (dict(head_dim=8), "has shape"),  # the file's tensors disagree
])
def test_unsupported_configs_are_refused_in_one_line(tmp_path: Path, change: dict, needle: str) -> None:
    with pytest.raises(ExplainError) as err:
        explain.run("gemma", checkpoint=str(folder_copy(tmp_path, **change)), text="cat")
    assert needle in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_an_f32_gguf_matches_transformers(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", "F32")
    np.testing.assert_allclose(logits(path), E["logits"], rtol=1e-5, atol=1e-5)


def test_the_rebuilt_sentencepiece_vocabulary_gives_transformers_ids(tmp_path: Path) -> None:
    ck = open_checkpoint(str(write_gguf(tmp_path / "m.gguf", "F32")))
    assert ck.encode(TEXT) == E["ids"].tolist()
    for i, text in enumerate(E["tokenizer_texts"]):
        assert ck.encode(str(text)) == [2] + E[f"ids_{i}"].tolist(), repr(str(text))
    assert ck.label(7) == "␣␣" and ck.label(5) == "⏎"  # a run of spaces, a newline: visible


def dequantized_params(path: Path) -> dict[str, np.ndarray]:
    """The engine's parameters from a gemma3 GGUF, done here: gguf's dequantize, less the stored 1 of each norm,
    the names and layouts of explain's gemma (not the reader's code)."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    cfg = json.loads((HF / "config.json").read_text())
    h, kv, d, m = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["hidden_size"], cfg["head_dim"]
    t = {x.name: dequantize(x.data, x.tensor_type).astype(np.float64).reshape(tuple(reversed(x.shape.tolist())))
         for x in GGUFReader(path).tensors}
    p = {"W_E": t["token_embd.weight"], "ln_final.w": t["output_norm.weight"] - 1}
    for i in range(cfg["num_hidden_layers"]):
        b, o = f"blk.{i}.", f"blocks.{i}."
        for ours, theirs in (("ln1", "attn_norm"), ("ln1_post", "post_attention_norm"), ("ln2", "ffn_norm"),
                             ("ln2_post", "post_ffw_norm"), ("attn.q_norm", "attn_q_norm"),
                             ("attn.k_norm", "attn_k_norm")):
            p[o + ours + ".w"] = t[b + theirs + ".weight"] - 1
        for s, n in (("q", h), ("k", kv), ("v", kv)):
            p[o + f"attn.W_{s.upper()}"] = t[b + f"attn_{s}.weight"].reshape(n, m, d).transpose(0, 2, 1)
        p[o + "attn.W_O"] = t[b + "attn_output.weight"].T
        for ours, theirs in (("W_gate", "ffn_gate"), ("W_in", "ffn_up"), ("W_out", "ffn_down")):
            p[o + "mlp." + ours] = t[b + theirs + ".weight"].T
    return p


def test_a_q8_gguf_is_its_dequantized_weights(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "q8.gguf", "Q8_0")
    ours = explain.run("gemma", checkpoint=str(path), text=TEXT)
    ck = open_checkpoint(str(path))
    options = {k: v for k, v in ck.options.items() if k not in ("ln_eps", "assumed")}
    mine = explain.run("gemma", weights=dequantized_params(path), tokens=E["ids"].tolist(), **options)
    np.testing.assert_allclose(ours["logits"].output, mine["logits"].output, rtol=1e-10, atol=1e-10)


def test_a_norm_stored_without_its_one_is_another_model(tmp_path: Path) -> None:
    # a converter that wrote w instead of 1 + w: the reader takes 1 off, the gains are w − 1 + 1 = w ≈ 0.2
    bad = logits(write_gguf(tmp_path / "bad.gguf", "F32", plus_one=False))
    assert np.abs(bad - E["logits"]).max() > 0.5
    ex = explain.run("gemma", checkpoint=str(write_gguf(tmp_path / "m.gguf", "F32")), text=TEXT).explain(
        "blocks.0.ln1", (0, 1, 3))
    assert ex.origin is not None and "the file stores 1 + w" in "\n".join(ex.origin.lines)


def test_what_a_gguf_does_not_store_is_said_and_may_be_given(tmp_path: Path) -> None:
    trace = explain.run("gemma", checkpoint=str(write_gguf(tmp_path / "m.gguf", "F32")), text="cat")
    assert "The file stores no local θ: 10000 is llama.cpp's" in trace["blocks.0.attn.rot_q"].note
    assert "The file stores no attention scale" in trace["blocks.0.attn.scaled"].note
    assert "The file stores no layer pattern" in trace["blocks.0.attn.window_masked"].note
    given = explain.run("gemma", checkpoint=str(tmp_path / "m.gguf"), text="cat", rope_local_base_freq=500.0)
    assert given["blocks.0.attn.rot_q"].attrs["theta"] == 500.0
    assert "stores no local θ" not in given["blocks.0.attn.rot_q"].note
    stored = open_checkpoint(str(write_gguf(tmp_path / "p.gguf", "F32", pattern=2, scale=8 ** -0.5)))
    assert stored.options["layer_types"] == "sliding,full,sliding,full,sliding,full"
    assert stored.options["query_pre_attn_scalar"] == 8 and stored.options["assumed"] == "rope_local_base_freq"
    flags = open_checkpoint(str(write_gguf(tmp_path / "f.gguf", "F32", pattern=[True, False] * 3)))
    assert flags.options["layer_types"] == "sliding,full,sliding,full,sliding,full"
    with pytest.raises(ExplainError, match="conflicts with the checkpoint's rope_local_base_freq"):
        explain.run("gemma", checkpoint=str(HF), text="cat", rope_local_base_freq=500.0)  # a folder says it


def test_bad_gguf_files_are_one_line(tmp_path: Path) -> None:
    good = write_gguf(tmp_path / "m.gguf", "Q8_0").read_bytes()
    cases = {"half.gguf": good[: len(good) // 2], "head.gguf": good[:200], "magic.gguf": b"GGUF" + b"\0" * 3,
             "strings.gguf": good[:24] + struct.pack("<Q", 21) + b"general.architecture" + b"x" + b"\xff" * 12}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ExplainError) as err:
            explain.run("gemma", checkpoint=str(tmp_path / name), tokens=[2, 5])
        assert "\n" not in str(err.value) and name in str(err.value), (name, str(err.value))


def test_shapes_counts_gemma3_270m_from_its_config_alone(tmp_path: Path) -> None:
    # google/gemma-3-270m's config.json (its values; no weights): 268,098,176 parameters, 167,772,160 of them W_E
    from click.testing import CliRunner

    from explain.cli import main

    (tmp_path / "config.json").write_text((HF.parent / "gemma3_270m_config.json").read_text())
    r = CliRunner().invoke(main, ["shapes", "--checkpoint", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["n_params"] == 268_098_176
    assert next(p["size"] for p in doc["params"] if p["name"] == "W_E") == 167_772_160


def test_a_ggufs_words_label_the_predictions(tmp_path: Path) -> None:
    import numpy as np_  # the labels are asked for by numpy integers too

    path = write_gguf(tmp_path / "m.gguf", "F32")
    trace = explain.generate("gemma", checkpoint=str(path), text=TEXT, greedy=True, max_new_tokens=1)
    vocab = trace.labels["vocab"]
    assert vocab[np_.int64(7)] == "␣␣" == open_checkpoint(str(path)).vocab_labels()[7]
    assert not any(w.startswith("#") for w in vocab[:50])
