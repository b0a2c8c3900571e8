"""BERT folders (model_type bert): tests/data/bert/hf_bert, laid out as all-MiniLM-L6-v2 is (float32
model.safetensors, a WordPiece tokenizer.json that adds [CLS] … [SEP] and pads and truncates to 24), against
tokenizers' ids with padding and truncation off and BertModel's sentence head in float64 on the same float32
weights (tests/data/make_bert_fixtures.py; 1e-10). A config.json alone is counted as transformers counts it
(BERT-base 109,482,240, all-MiniLM-L6 22,713,216, the pooler included). Broken folders give one line each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import InputError, WeightsError
from explain.engine.api import plan

DATA = Path(__file__).resolve().parents[1] / "data" / "bert"
FOLDER = DATA / "hf_bert"
TOL = dict(rtol=1e-10, atol=1e-10)


def expected() -> dict:
    with np.load(DATA / "hf_bert_expected.npz") as e:
        return {k: e[k] for k in e.files}


def test_the_folder_runs_as_bertmodel_with_mean_pooling() -> None:
    want = expected()
    texts = [str(t) for t in want["texts"]]
    trace = explain.run("bert", checkpoint=str(FOLDER), text=texts)
    n = want["lengths"]
    assert trace["tokens"].output.tolist() == want["ids"].tolist()  # tokenizers' ids, [CLS] … [SEP], no padding
    assert trace.labels["text0"][0] == "[CLS]" and trace.labels["text0"][-1] == "[SEP]"
    assert [len(trace.labels[f"text{b}"]) for b in range(3)] == n.tolist()
    for name in ("sentence.pooled", "sentence.norm", "sentence.cos"):
        np.testing.assert_allclose(trace[name].output, want[name], err_msg=name, **TOL)
    for b, k in enumerate(n):
        np.testing.assert_allclose(trace["embed_ln"].output[b, :k], want["embed_ln"][b, :k], **TOL)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert abs(trace[f"pairs.{a}_{b}.parts"].output.sum() - want["sentence.cos"][a, b]) < 1e-12


def test_the_model_name_may_be_left_out_and_one_text_is_not_padded() -> None:
    ck = open_checkpoint(str(FOLDER))
    assert ck.model == "bert" and ck.options["n_ctx"] == 24 and ck.options["ln_eps"] == 1e-12
    assert ck.encode("A man is eating food.") == expected()["ids"][0][:8].tolist()  # padding to 24 is off


def test_a_text_longer_than_the_positions_is_refused_in_one_line() -> None:
    with pytest.raises(InputError) as err:
        explain.run("bert", checkpoint=str(FOLDER), text="a man is eating food " * 6)
    msg = str(err.value)
    assert "\n" not in msg and "the input has 32 tokens but the checkpoint's context is 24" in msg, msg


@pytest.mark.parametrize(("folder", "count"), [("bert-base-uncased", 109_482_240), ("all-MiniLM-L6-v2", 22_713_216)])
def test_a_config_alone_is_counted_as_bertmodel_counts(folder: str, count: int) -> None:
    trace = plan("bert", checkpoint=str(DATA / "configs" / folder), tokens="101,102")
    assert trace.n_params == count
    with pytest.raises(InputError, match="has no model.safetensors"):
        explain.run("bert", checkpoint=str(DATA / "configs" / folder), tokens="101,102")


RAW = load_file(str(FOLDER / "model.safetensors"))


def _copy(tmp_path: Path, config: dict | None = None, tensors: dict | None = None, drop: str = "",
          prefix: str = "") -> Path:
    """The folder copied with config.json keys changed (None deletes) and its tensors replaced, dropped or renamed."""
    out = tmp_path / "ck"
    shutil.copytree(FOLDER, out)
    if config:
        cfg = json.loads((out / "config.json").read_text())
        for k, v in config.items():
            cfg.pop(k) if v is None else cfg.__setitem__(k, v)
        (out / "config.json").write_text(json.dumps(cfg))
    if tensors is not None or drop or prefix:
        t = {prefix + k: v for k, v in {**RAW, **(tensors or {})}.items() if k != drop}
        save_file(t, str(out / "model.safetensors"))
    return out


def _one_line(cls: type, path: Path, *needles: str) -> None:
    with pytest.raises(cls) as err:
        explain.run("bert", checkpoint=str(path), text="a man is eating")
    msg = str(err.value)
    assert "\n" not in msg, msg
    for n in needles:
        assert n in msg, (n, msg)


@pytest.mark.parametrize(("change", "needles"), [
    ({"hidden_act": "gelu_new"}, ("hidden_act 'gelu_new'", "erf")),
    ({"position_embedding_type": "relative_key"}, ("position_embedding_type",)),
    ({"type_vocab_size": 1}, ("type_vocab_size 1",)),
    ({"is_decoder": True}, ("decoder",)),
    ({"hidden_size": 15}, ("not divisible",)),
    ({"num_hidden_layers": "2"}, ("num_hidden_layers must be a positive whole number",)),
    ({"layer_norm_eps": -1}, ("layer_norm_eps",)),
    ({"num_hidden_layers": 3}, ("has no tensor", "encoder.layer.2")),
    ({"vocab_size": 121}, ("shape", "word_embeddings")),
])
def test_a_config_that_does_not_fit_is_one_line(tmp_path: Path, change: dict, needles: tuple) -> None:
    _one_line(WeightsError, _copy(tmp_path, config=change), *needles)


def test_broken_weights_are_one_line(tmp_path: Path) -> None:
    _one_line(WeightsError, _copy(tmp_path, drop="encoder.layer.1.output.dense.bias"), "has no tensor",
              "encoder.layer.1.output.dense.bias")
    extra = {"encoder.layer.0.attention.self.rotary": np.zeros(2, np.float32)}
    _one_line(WeightsError, _copy(tmp_path / "b", tensors=extra), "does not use")
    bad = {"embeddings.word_embeddings.weight": np.full((120, 16), np.nan, np.float32)}
    _one_line(WeightsError, _copy(tmp_path / "c", tensors=bad), "NaN")
    cut = _copy(tmp_path / "d")
    data = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(data[: len(data) // 2])
    _one_line(WeightsError, cut, "cut short")


def test_a_folder_with_the_pretraining_heads_and_old_names_opens(tmp_path: Path) -> None:
    """BertForPreTraining as the hub stores bert-base-uncased: a ``bert.`` prefix, LayerNorm gamma/beta, cls.*
    heads (left out) and no pooler here (zeros: the sentence head does not read it)."""
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
               for k, v in RAW.items() if not k.startswith("pooler.")}
    renamed["cls.predictions.bias"] = np.zeros(120, np.float32)
    out = _copy(tmp_path, tensors={})
    save_file({"bert." + k if not k.startswith("cls.") else k: v for k, v in renamed.items()},
              str(out / "model.safetensors"))
    texts = [str(t) for t in expected()["texts"]]
    trace = explain.run("bert", checkpoint=str(out), text=texts)
    np.testing.assert_allclose(trace["sentence.cos"].output, expected()["sentence.cos"], **TOL)
    assert not trace.params["pooler.W"].any()


def test_a_tokenizer_of_another_vocabulary_is_one_line(tmp_path: Path) -> None:
    out = _copy(tmp_path, config={"vocab_size": 100}, tensors={
        "embeddings.word_embeddings.weight": RAW["embeddings.word_embeddings.weight"][:100]})
    _one_line(InputError, out, "has 120 tokens but config.json has vocab_size 100")
    (out / "tokenizer.json").write_text("{not json")
    _one_line(WeightsError, out, "tokenizer.json")


def test_the_plain_reference_is_bertmodel() -> None:
    """tests/helpers/reference_bert.py (the MiniLM tests' independent pass) on this folder equals transformers."""
    import reference_bert

    want = expected()
    batch = reference_bert.encode(FOLDER, [str(t) for t in want["texts"]])
    assert [len(b) for b in batch] == want["lengths"].tolist()
    np.testing.assert_allclose(reference_bert.sentence_embeddings(FOLDER, batch), want["sentence.pooled"], **TOL)


def test_the_tokenizer_walkthrough_adds_the_template_as_tokenizers_does() -> None:
    """--tokenizer-steps and explain tokenize on a BERT folder: [CLS] … [SEP] from the post-processor, as pieces of
    their own, and the ids tokenizers' own encode gives (with special tokens, no padding)."""
    from tokenizers import Tokenizer

    from explain.tokenize.family import tokenizer_for

    tok = Tokenizer.from_file(str(FOLDER / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    walker = tokenizer_for(open_checkpoint(str(FOLDER)))
    for text in ["A man is eating food.", "[CLS] twice [SEP]", "", "Unplayable!! The cat, the dog.", "ça 東京"]:
        w = walker.walk(text)
        assert w.ids == tok.encode(text).ids, text
        assert w.pieces[0].text == "[CLS]" and w.pieces[-1].text == "[SEP]"
    trace = explain.run("bert", checkpoint=str(FOLDER), text=["A man is eating food.", "A baby."],
                        tokenizer_steps=True)
    assert trace["tokenizer.ids"].output.tolist() == trace["tokens"].output[0, :8].tolist()
