"""Every checkpoint reader gives :class:`explain.checkpoints.protocol.Checkpoint` (issue 38): GPT-2 and the trained
GPT, the Llama family (Qwen2 too), its mixtures of experts (Mixtral, Qwen2-MoE) and latent attention (DeepSeek-V3's
config), Gemma, BERT and GGUF files (Llama's, Gemma's). Each opened checkpoint is checked member by member (what
``explain tokenize`` walks through included: a GGUF's fields, a folder's tokenizer.json, the <bos> put first), and
its parameters are exactly the ones the registry's model plans under the registry's names, with the planned
shapes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import gemma_files
import gguf_files
import pytest

import explain.engine.api as api
from explain.checkpoints.open import open_checkpoint
from explain.checkpoints.protocol import Checkpoint
from explain.checkpoints.trained import SHIPPED
from explain.core.registry import MODELS

DATA = Path(__file__).resolve().parents[1] / "data"
FOLDERS = {
    "gpt2": DATA / "gpt2_tiny", "trained": SHIPPED, "llama": DATA / "llama" / "hf_llama",
    "qwen2": DATA / "llama" / "hf_qwen2", "mixtral": DATA / "moe" / "hf_mixtral",
    "qwen2_moe": DATA / "moe" / "hf_qwen2_moe", "gemma": DATA / "gemma" / "hf_gemma", "bert": DATA / "bert" / "hf_bert",
}
GGUF: dict[str, Callable[[Path], Path]] = {
    "gguf_llama": lambda d: gguf_files.write_gguf(d / "l.gguf", "Q8_0"),
    "gguf_gemma": lambda d: gemma_files.write_gguf(d / "g.gguf", "Q8_0"),
}


def _conforms(ck: object) -> None:
    assert isinstance(ck, Checkpoint)
    assert ck.model in MODELS and MODELS[ck.model].uses("checkpoint")
    assert isinstance(ck.name, str) and isinstance(ck.context_what, str) and ck.context_what
    assert Path(ck.path).exists()
    assert isinstance(ck.config, dict) and isinstance(ck.options, dict) and ck.options["d_model"] >= 1
    assert ck.tokenizer_path is None or Path(ck.tokenizer_path).is_file()
    assert list(ck.unknown) == []  # nothing encoded yet
    assert ck.weight_origin is None or callable(ck.weight_origin)
    assert isinstance(ck.pad_id(), int)
    assert ck.fixed is True and isinstance(ck.special_tokens, bool)
    bos = ck.bos()
    assert bos is None or 0 <= bos < ck.options["d_vocab"]
    fields = ck.tokenizer_fields()  # a GGUF's tokenizer is in its fields, a folder's in its tokenizer.json
    assert (fields is not None) == str(ck.path).endswith(".gguf")
    assert fields is None or (len(fields) == 4 and fields[0] in ("gpt2", "llama") and fields[2])
    assert fields is None or ck.tokenizer_json() is None
    assert fields is None or (ck.sentencepiece_json("ab") is None) == (fields[0] == "gpt2")
    assert fields is not None or ck.sentencepiece_json("ab") is None
    assert ck.word_vocab() is None or "<unk>" in ck.word_vocab()  # the trained GPT's word-level vocabulary


def _params_are_the_plans(ck: Checkpoint) -> None:
    planned = api.plan(ck.model, checkpoint=ck, tokens="1,2").specs
    params = ck.params()
    assert set(params) == set(planned)
    assert {k: tuple(v.shape) for k, v in params.items()} == {k: tuple(s.shape) for k, s in planned.items()}


@pytest.mark.parametrize("kind", sorted(FOLDERS))
def test_every_folder_reader_gives_the_protocol(kind: str) -> None:
    ck = open_checkpoint(FOLDERS[kind])
    _conforms(ck)
    assert ck.weight_origin is None  # a folder's floats are stored as read
    _params_are_the_plans(ck)
    ids = ck.encode("the cat")
    assert ids and len(ck.labels("the cat", ids)) == len(ids) and len(ck.vocab_labels()) == ck.options["d_vocab"]


@pytest.mark.parametrize("kind", sorted(GGUF))
def test_every_gguf_reader_gives_the_protocol_and_says_where_a_weight_came_from(kind: str, tmp_path: Path) -> None:
    ck = open_checkpoint(GGUF[kind](tmp_path))
    _conforms(ck)
    _params_are_the_plans(ck)
    assert ck.weight_origin is not None
    origin = ck.weight_origin("W_E", (1, 0))
    assert origin.lines  # the block, its scale, the stored integer


def test_a_latent_attention_config_alone_gives_the_protocol() -> None:
    ck = open_checkpoint(DATA / "mla" / "configs" / "deepseek-v3")
    _conforms(ck)
    assert ck.options["attention"] == "mla" and ck.options["n_experts"] >= 1
