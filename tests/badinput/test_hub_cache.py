"""The local Hugging Face cache read with no trust (issue 36 item 4): a FIFO as ``refs/main`` once hung, a 3 GiB
one ended in a misleading out-of-memory line, and an id of 5,000 characters was a traceback. Each is one line
naming the file or the limit, and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clitools import invoke, one_line_error  # noqa: E402


@pytest.fixture
def hub(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    refs = tmp_path / "hub" / "models--org--name" / "refs"
    refs.mkdir(parents=True)
    return refs / "main"


def test_a_fifo_as_the_ref_is_refused_not_read(hub: Path) -> None:
    os.mkfifo(hub)
    one_line_error(invoke("run", "--checkpoint", "org/name", "--text", "hi", "--plain"), 1, "is a FIFO",
                   "hf download org/name")


def test_a_huge_ref_is_refused_before_it_is_read(hub: Path) -> None:
    with open(hub, "wb") as f:
        f.truncate(3 * 2**30)  # sparse: no disk used
    one_line_error(invoke("run", "--checkpoint", "org/name", "--text", "hi", "--plain"), 1, "3,072 MiB",
                   "hf download org/name")


@pytest.mark.parametrize("name, said", [("a" * 5000, "one of its names is 5,000 bytes"),
                                        ("a/" * 3000, "it is 6,000 characters")])
def test_an_id_past_the_file_systems_limits_is_one_line(hub: Path, name: str, said: str) -> None:
    one_line_error(invoke("run", "--checkpoint", name, "--text", "hi", "--plain"), 1, said, "too long")


@pytest.mark.parametrize("key, option", [("hidden_size", "d_model"), ("num_hidden_layers", "n_layers"),
                                         ("max_position_embeddings", "n_ctx")])
def test_a_config_size_past_the_maximum_names_the_key_and_the_file(tmp_path: Path, key: str, option: str) -> None:
    """Issue 36 item 7: a config.json's hidden_size of 10⁹ was refused as '--d-model 1,000,000,000 is above the
    maximum', a flag the user never typed."""
    import json
    import shutil

    from explain.core.options import OPTION

    folder = tmp_path / "ck"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "llama" / "hf_llama", folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg[key] = OPTION[option].max + 1
    (folder / "config.json").write_text(json.dumps(cfg))
    r = invoke("shapes", "--checkpoint", str(folder))
    one_line_error(r, 1, "config.json", f"{key} is {OPTION[option].max + 1:,}, above explain's maximum")
    assert "--" not in r.output.split("maximum")[0].split("Error:")[1].replace(str(tmp_path), "")


def test_the_default_text_with_no_tokens_is_called_the_default(tmp_path: Path) -> None:
    """Issue 36 item 7: 'explain shapes --checkpoint DIR' with no --text said "--text 'The cat is happy' has no
    tokens", a --text the user never gave: the model's default text found no token in the checkpoint's
    tokenizer (here one of 8 letters)."""
    import json

    from badfixtures import _checkpoint, _gpt2_config, hostile_tokenizer

    tok = hostile_tokenizer()
    tok["pre_tokenizer"] = None
    tok["model"]["vocab"] = {c: i for i, c in enumerate("qwxz0123")}  # no letter of the default text
    _checkpoint(tmp_path / "ck", _gpt2_config(), tokenizer=json.dumps(tok))
    r = invoke("shapes", "--checkpoint", str(tmp_path / "ck"))
    one_line_error(r, 1, "the default text 'The cat is happy' has no tokens", "give --text or --tokens")
    r = invoke("shapes", "--checkpoint", str(tmp_path / "ck"), "--text", "hello")
    one_line_error(r, 1, "--text 'hello' has no tokens", "give some text")
