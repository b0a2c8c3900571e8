"""The checkpoint's tokenizer: readable token labels (checked against the `tokenizers` package's own decoding),
a checkpoint without tokenizer.json (ids only), and a tokenizer of another vocabulary."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

import explain
from explain.checkpoints.open import open_checkpoint
from explain.core.errors import ExplainError, InputError

TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"
EXPECTED = np.load(TINY / "expected.npz", allow_pickle=False)


def _visible(text: str) -> str:
    """The label the brief asks for, written independently: spaces '␣', newline '⏎', tab '⇥', other control
    characters as \\xNN."""
    out = {" ": "␣", "\n": "⏎", "\t": "⇥"}
    return "".join(out.get(c) or (c if c.isprintable() else f"\\x{ord(c):02x}") for c in text)


def test_labels_are_the_decoded_tokens_with_visible_whitespace() -> None:
    ck = open_checkpoint(TINY)
    tok = Tokenizer.from_file(str(TINY / "tokenizer.json"))
    partial = 0
    for i in range(tok.get_vocab_size()):
        label, text = ck.label(i), tok.decode([i], skip_special_tokens=False)
        if "\ufffd" in text:  # bytes of a longer UTF-8 character: shown as \xNN, N ≥ 80
            partial += 1
            assert re.fullmatch(r"(␣?)(\\x[89a-f][0-9a-f])+", label), (i, label)
        else:
            assert label == _visible(text), (i, label, text)
    assert partial == 128  # the 128 bytes 0x80–0xff of the byte alphabet; no merge of them in this small vocab
    assert ck.label(0) == "<|endoftext|>" and ck.label(189) == "\\x00" and ck.label(221) == "␣"
    assert len(ck.vocab_labels()) == 300 and ck.label(300) == "#300"


def test_position_labels_of_a_run() -> None:
    trace = explain.run("gpt", checkpoint=TINY, text="The cat is happy")
    assert trace.labels["pos"] == ["The", "␣cat", "␣is", "␣happy"]
    trace = explain.run("gpt", checkpoint=TINY, text=str(EXPECTED["text_2"]))
    assert trace.labels["pos"][13:15] == ["\\xc3", "\\xa9"]  # é is two byte-level tokens


def test_encode_adds_no_special_tokens() -> None:
    ids = open_checkpoint(TINY).encode("The cat is happy")
    assert ids == [int(x) for x in EXPECTED["tokens_0"]]


def _without_tokenizer(tmp_path: Path) -> Path:
    out = tmp_path / "ck"
    shutil.copytree(TINY, out, ignore=shutil.ignore_patterns("tokenizer*.json"))
    return out


def test_no_tokenizer_text_is_refused_and_tokens_work(tmp_path: Path) -> None:
    d = _without_tokenizer(tmp_path)
    with pytest.raises(InputError, match=r"has no tokenizer.json; give --tokens") as err:
        explain.run("gpt", checkpoint=d, text="The cat")
    assert str(d) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError, match="has no tokenizer.json"):
        explain.run("gpt", checkpoint=d)  # the default text needs a tokenizer too
    trace = explain.run("gpt", checkpoint=d, tokens=[int(x) for x in EXPECTED["tokens_1"]])
    np.testing.assert_allclose(trace["logits"].output[0], EXPECTED["logits_1"], rtol=0, atol=1e-9)
    assert trace.labels["pos"][:2] == ["#57", "#297"]
    assert trace.labels["vocab"][299] == "#299"


def _with_tokenizer(tmp_path: Path, edit) -> Path:
    d = _without_tokenizer(tmp_path)
    data = json.loads((TINY / "tokenizer.json").read_text(encoding="utf-8"))
    edit(data)
    (d / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    return d


def test_a_tokenizer_larger_than_the_vocabulary_is_refused(tmp_path: Path) -> None:
    def grow(data: dict) -> None:
        data["added_tokens"].append({"id": 300, "content": "<|pad|>", "single_word": False, "lstrip": False,
                                     "rstrip": False, "normalized": False, "special": True})

    d = _with_tokenizer(tmp_path, grow)
    for kwargs in ({"text": "The cat"}, {"tokens": "1,2"}):  # wrong labels would mislead with ids too
        with pytest.raises(InputError, match=r"has 301 tokens but config.json has vocab_size 300") as err:
            explain.run("gpt", checkpoint=d, **kwargs)
        assert "tokenizer.json" in str(err.value)


def test_a_smaller_tokenizer_labels_the_padding_rows(tmp_path: Path) -> None:
    """Some checkpoints pad the embedding beyond the tokenizer (nanoGPT's 50304): the extra rows are '#id'."""
    def shrink(data: dict) -> None:
        data["model"]["vocab"] = {t: i for t, i in data["model"]["vocab"].items() if i < 290}
        data["model"]["merges"] = []

    d = _with_tokenizer(tmp_path, shrink)
    ck = open_checkpoint(d)
    assert ck.vocab_labels()[289] != "#289" and ck.vocab_labels()[290:] == [f"#{i}" for i in range(290, 300)]


def test_an_unreadable_tokenizer_names_the_file(tmp_path: Path) -> None:
    d = _without_tokenizer(tmp_path)
    (d / "tokenizer.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(ExplainError, match=r"tokenizer.json:1: not valid JSON"):
        explain.run("gpt", checkpoint=d, text="The cat")
    (d / "tokenizer.json").write_text(json.dumps({"model": {"type": "BPE"}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"tokenizer.json' has no model.vocab"):
        explain.run("gpt", checkpoint=d, tokens="1")
    (d / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"a": "one"}}}), encoding="utf-8")
    with pytest.raises(InputError, match=r"tokenizer.json' has a malformed vocabulary \(ValueError"):
        explain.run("gpt", checkpoint=d, tokens="1")
