"""`explain shapes llama` counts real models' parameters exactly, against the numbers their publishers give
(Hugging Face model cards and config.json, summed over the safetensors files): a shape-only plan, nothing run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from explain.cli import main

CASES = {  # name: (flags, published count)
    "Llama-3-8B": ("--d-model 4096 --heads 32 --kv-heads 8 --layers 32 --d-ff 14336 --vocab 128256 "
                   "--untie-embeddings --rope-theta 500000", 8_030_261_248),
    "Llama-2-7B": ("--d-model 4096 --heads 32 --kv-heads 32 --layers 32 --d-ff 11008 --vocab 32000 "
                   "--untie-embeddings", 6_738_415_616),
    "TinyLlama-1.1B": ("--d-model 2048 --heads 32 --kv-heads 4 --layers 22 --d-ff 5632 --vocab 32000 "
                       "--untie-embeddings", 1_100_048_384),
    "SmolLM2-135M": ("--d-model 576 --heads 9 --kv-heads 3 --layers 30 --d-ff 1536 --vocab 49152 "
                     "--rope-theta 100000", 134_515_008),
    "Qwen2.5-0.5B": ("--d-model 896 --heads 14 --kv-heads 2 --layers 24 --d-ff 4864 --vocab 151936 --qkv-bias "
                     "--rope-theta 1000000", 494_032_768),
}


@pytest.mark.parametrize("name", list(CASES))
def test_real_models_are_counted_exactly(name: str) -> None:
    flags, published = CASES[name]
    r = CliRunner().invoke(main, ["shapes", "llama", *flags.split(), "--seq", "1", "--no-steps", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["n_params"] == published
