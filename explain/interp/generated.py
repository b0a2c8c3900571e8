"""Attention to generated tokens (BertViz #131, TransformerLens #697): during a generation, each new token's
attention row over the prompt and the tokens generated so far, one row per token, a matrix that grows with the
text. Row 0 is the prompt's last position (the query that chose the first new token); row n ≥ 1 is the
recorded step ``gen.n.blocks.L.attn.pattern`` (the token drawn at n − 1, fed back), whole: nothing is recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from explain.core.errors import UsageError
from explain.interp.names import attn_pattern
from explain.trace import Trace


def pattern_name(n: int, layer: int) -> str:
    """The step that holds new token n's attention in ``layer`` (n = 0: the prompt's own forward)."""
    return attn_pattern(layer, n)


@dataclass
class GeneratedAttention:
    """Rows: the queries (the prompt's last token, then each generated token fed back); columns: every position
    of the text so far; ``weights[n, :T + n]`` is row n, NaN after it (the future of that query)."""

    layer: int
    head: int
    item: int
    steps: list[str]  # the pattern step of each row
    queries: list[str]  # each row's token
    keys: list[str]  # each column's token: the prompt's, then the generated ones
    prompt_len: int
    weights: Any

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "head": self.head, "steps": self.steps, "queries": self.queries,
                "keys": self.keys, "prompt_length": self.prompt_len,
                "rows": [list(map(float, r[:self.prompt_len + n])) for n, r in enumerate(self.weights)]}


def generated_attention(trace: Trace, layer: int = -1, head: int = 0, item: int = 0) -> GeneratedAttention:
    """The attention rows of a generation's new tokens in ``layer`` (negative: from the last), ``head``, batch
    item ``item``; refused in one line for a trace that generated nothing, or a layer or head it has not."""
    gen = trace.generation
    if gen is None:
        raise UsageError("this run generated nothing; the attention to generated tokens needs 'explain generate' "
                         "(or G in the TUI)")
    L = trace.config.n_layers
    H = trace[pattern_name(0, 0)].shape[-3]
    if not -L <= layer < L:
        raise UsageError(f"--layer {layer} is not in this run, which has {L} layers: give 0–{L - 1} (or −1, the last)")
    if not 0 <= head < H:
        raise UsageError(f"--head {head} is not in this run, which has {H} heads: give 0–{H - 1}")
    layer %= L
    vocab = trace.labels.get("vocab")
    prompt = trace.batch_labels.get("pos", [trace.labels.get("pos")])[item] if trace.batch_labels.get("pos") \
        else list(trace.labels.get("pos") or [])
    T = len(prompt)
    drawn = [int(trace[name].output[item, 0]) for name in gen.steps]
    words = [vocab[i] if vocab is not None else str(i) for i in drawn]
    rows = [n for n in range(len(drawn)) if pattern_name(n, layer) in trace]
    weights = np.full((len(rows), T + len(rows) - 1), np.nan)
    for n in rows:
        a = trace[pattern_name(n, layer)].output[item, head]  # (T or 1, keys)
        row = a[T - 1] if n == 0 else a[0]
        weights[n, :len(row)] = row[:T + n] if n == 0 else row
    return GeneratedAttention(layer, head, item, [pattern_name(n, layer) for n in rows],
                              [prompt[-1]] + words[:len(rows) - 1], prompt + words[:len(rows) - 1], T, weights)
