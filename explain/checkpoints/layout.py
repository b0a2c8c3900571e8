"""A checkpoint's query and key weights in the rotary layout a run asks for (``--rope-layout``).

A reader gives every weight in Hugging Face's layout, where a rotation pairs dimension i of a head with i + d/2
(rotate-half). The interleaved layout pairs 2i with 2i + 1 (Meta's original Llama code, GPT-J, and the q/k rows a
GGUF file stores: llama.cpp's converter permutes them so). The same model in the interleaved layout has each
head's columns reordered: new column 2i is old column i, new column 2i + 1 is old column i + d/2 (of W_Q, W_K,
their biases, and Gemma's per-dimension q/k norm gains, which a permutation of the dimensions commutes with).
Then Q·Kᵀ is the same sum in another order: the logits agree to rounding. Reading a file's rows in the wrong
layout does not fail; it quietly gives a worse model (tutorial "The Gemma block").
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from explain.trace.origin import WeightOrigins, WeightSource

ROTATED = ("attn.W_Q", "attn.W_K", "attn.b_Q", "attn.b_K", "attn.q_norm.w", "attn.k_norm.w")


def interleaved_order(m: int) -> list[int]:
    """For each column of an interleaved head of width ``m``, the rotate-half column it comes from:
    0, m/2, 1, m/2 + 1, …"""
    half = m // 2
    return [i // 2 if i % 2 == 0 else half + i // 2 for i in range(m)]


def to_layout(params: dict[str, Any], layout: str | None) -> dict[str, Any]:
    """``params`` (Hugging Face's rotate-half layout) with the rotated weights' columns reordered for ``layout``;
    the same dict when it is ``half`` or not given."""
    if layout != "interleaved":
        return params
    out = dict(params)
    for name, arr in params.items():
        if name.endswith(ROTATED):
            out[name] = arr[..., interleaved_order(arr.shape[-1])]
    return out


def origins_in_layout(origins: WeightOrigins | None, layout: str | None, m: int) -> WeightOrigins | None:
    """A checkpoint's :class:`~explain.trace.origin.WeightOrigins` for a run in ``layout`` (heads of width ``m``): a
    reordered weight's source says where the reader's layout keeps each column of the run's."""
    if layout != "interleaved" or origins is None:
        return origins
    order = tuple(interleaved_order(m))
    sources = {name: replace(source, order=order) if name.endswith(ROTATED) and isinstance(source, WeightSource)
               else source for name, source in origins.sources.items()}
    return replace(origins, sources=MappingProxyType(sources))
