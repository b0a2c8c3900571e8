"""A folder explain train writes: transformers (float64, tests/data/train/tiny_expected.npz, made by
tests/data/make_train_fixtures.py) and explain reopening the same folder agree to 1e-10; both agree with the
in-memory model before saving to 1e-5 (the folder stores float32); the tokenizer.json splits as explain's word
tokenizer (checked with the tokenizers package over the built-in corpus); without safetensors and tokenizers
(the core install) the folder still opens, to the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.checkpoints.wordlevel import tokenizer_json
from explain.core.words import Tokenizer
from explain.train import Settings, train_model
from explain.train.corpus import builtin_corpus

DATA = Path(__file__).resolve().parents[1] / "data" / "train"
TINY = DATA / "tiny"
SMALL = dict(d_model=16, n_heads=2, n_layers=2, d_ff=32, n_ctx=16)


def expected() -> list[dict]:
    with np.load(DATA / "tiny_expected.npz") as z:
        return [{k: z[f"{k}_{i}"] for k in ("text", "tokens", "logits", "loss")} for i in range(int(z["n_texts"]))]


def test_explain_on_the_saved_folder_equals_transformers():
    for case in expected():
        tr = explain.run("gpt", checkpoint=str(TINY), text=str(case["text"]))
        assert list(np.asarray(tr["tokens"].output)[0]) == list(case["tokens"])  # same ids as HF's tokenizer
        np.testing.assert_allclose(tr["logits"].output[0], case["logits"], rtol=1e-10, atol=1e-10)
        # transformers' ForCausalLMLoss casts the logits to float32 first: its loss is good to about 1e-7
        np.testing.assert_allclose(float(tr["loss"].output), float(case["loss"]), rtol=1e-6)


def test_the_saved_folder_equals_the_model_in_memory(tmp_path):
    cfg, res = train_model("gpt", output=tmp_path / "m", settings=Settings(steps=3, batch_size=2), **SMALL)
    for text in ("the cat sat on the mat", "your journey starts with one step"):  # built-in words: the same ids
        mem = explain.run("gpt", weights=res.params, text=text, d_vocab=cfg.d_vocab, **SMALL)
        disk = explain.run("gpt", checkpoint=str(tmp_path / "m"), text=text)
        np.testing.assert_allclose(disk["logits"].output, mem["logits"].output, atol=1e-5)
    info = json.loads((tmp_path / "m" / "explain_train.json").read_text())
    assert info["step"] == 3 and len(info["losses"]) == 3


def test_tokenizer_json_splits_as_explain_does():
    from tokenizers import Tokenizer as HF

    c = builtin_corpus(3000)
    ours = Tokenizer(c.train + c.held_out)
    hf = HF.from_str(json.dumps(tokenizer_json(ours.words)))
    extra = ["The Cat, sat!  on\tthe mat.", "don't stop", "unknown zebra words", "É café ü"]
    for line in c.train + c.held_out + extra:
        assert hf.encode(line, add_special_tokens=False).ids == ours.encode(line), line


def test_core_install_opens_the_folder_without_the_extras():
    code = ("import sys; sys.modules['safetensors'] = None; sys.modules['tokenizers'] = None\n"
            "import explain, json\n"
            f"t = explain.run('gpt', checkpoint={str(TINY)!r}, text='the cat sat on the mat .')\n"
            "print(json.dumps(t['logits'].output.tolist()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    np.testing.assert_allclose(np.array(json.loads(out))[0], expected()[0]["logits"], rtol=1e-10, atol=1e-10)


def test_unknown_words_become_unk():
    from explain.checkpoints.open import open_checkpoint

    ck = open_checkpoint(TINY)
    ids = ck.encode("the zebra is happy")
    assert ids[1] == 2 and ck.unknown == ["zebra"]  # <unk> is id 2


@pytest.mark.parametrize("bad", ["file", "foreign"])
def test_output_that_is_not_a_checkpoint_of_ours_is_refused(tmp_path, bad):
    from explain.core.errors import ExplainError

    target = tmp_path / "out"
    if bad == "file":
        target.write_text("mine")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine")
    with pytest.raises(ExplainError, match="new folder name"):  # a file: a usage error, as every writer's path
        train_model("gpt", output=target, settings=Settings(steps=1, batch_size=1), **SMALL)
    assert (target.read_text() if bad == "file" else (target / "notes.txt").read_text()) == "mine"
