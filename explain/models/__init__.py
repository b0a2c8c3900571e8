"""The model zoo: each model is a function ``(recorder, config, inputs) -> None`` that records its steps.

| name | function |
| --- | --- |
| simple, attention, causal, multihead, synthesizer | :mod:`explain.models.attention` |
| encoder, transformer | :mod:`explain.models.blocks` |
| gpt | :mod:`explain.models.gpt` |
"""

from __future__ import annotations

from collections.abc import Callable

from explain.models.attention import attention, causal, multihead, simple, synthesizer
from explain.models.blocks import encoder, transformer
from explain.models.gpt import gpt

MODEL_FUNCS: dict[str, Callable] = {
    "simple": simple,
    "attention": attention,
    "causal": causal,
    "multihead": multihead,
    "synthesizer": synthesizer,
    "encoder": encoder,
    "transformer": transformer,
    "gpt": gpt,
}
