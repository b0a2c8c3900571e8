"""A patched run of the tiny GPT-2 with its logit lens and an attribution recorded after it: every interp op kind,
for the export and engine tests."""

from __future__ import annotations

from pathlib import Path

GPT2_TINY = Path(__file__).resolve().parents[1] / "data" / "gpt2_tiny"


def interp_run():
    """A patched gpt run with its logit lens and an attribution recorded after it: every interp op kind."""
    from explain.interp import patch
    from explain.interp.attribution import record_attribution
    from explain.interp.lens import record_lens

    trace = patch("gpt", "The cat is happy", "The dog is happy", "happy", "dog", "blocks.0.mlp_out", position=1).trace
    vocab = list(trace.labels["vocab"])
    return record_attribution(record_lens(trace), vocab.index("happy"), vocab.index("dog"))
