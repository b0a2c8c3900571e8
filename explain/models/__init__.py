"""The model zoo: each model is a function ``(recorder, config, inputs) -> None`` that records its steps
(:mod:`explain.models.zoo`), built from the layers of :mod:`explain.models.layers`, with the symbols and
narration of :mod:`explain.models.notation`."""

from __future__ import annotations

from collections.abc import Callable

from explain.models.zoo import attention, causal, encoder, gpt, multihead, simple, synthesizer, transformer

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
