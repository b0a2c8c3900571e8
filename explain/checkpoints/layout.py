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

from typing import Any

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


def origin_in_layout(weight_origin: Any, layout: str | None, m: int) -> Any:
    """A checkpoint's ``weight_origin(name, index)`` for a run in ``layout`` (heads of width ``m``): the cell of a
    reordered weight is looked up where the reader's layout keeps it."""
    if layout != "interleaved" or weight_origin is None:
        return weight_origin
    order = interleaved_order(m)

    def origin(name: str, index: tuple[int, ...]) -> Any:
        if name.endswith(ROTATED):
            index = (*index[:-1], order[index[-1]])
        return weight_origin(name, index)

    return origin
