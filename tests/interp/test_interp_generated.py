"""Attention to generated tokens (explain.interp.generated): row n is the recorded gen.n.blocks.L.attn.pattern,
whole and exactly; row 0 the prompt's last position; the matrix grows by one row and one column per token."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from explain.core.errors import UsageError
from explain.engine.api import generate, run
from explain.interp.generated import generated_attention

DATA = Path(__file__).resolve().parents[1] / "data"  # tests/data (tests/ is not a package)


@pytest.mark.parametrize("options", [dict(text="The cat is", seed=1, random_weights=True),
                                     dict(checkpoint=str(DATA / "gpt2_tiny"), text="The cat is")])
def test_row_n_is_the_recorded_pattern(options):
    t = generate("gpt", max_new_tokens=4, ignore_eos=True, **options)
    T = len(t.labels["pos"])
    for layer in (0, 1):
        for head in (0, 1):
            g = generated_attention(t, layer, head)
            assert g.weights.shape == (4, T + 3) and g.prompt_len == T
            np.testing.assert_array_equal(g.weights[0, :T], t[f"blocks.{layer}.attn.pattern"].output[0, head, T - 1])
            for n in range(1, 4):
                np.testing.assert_array_equal(g.weights[n, :T + n],
                                              t[f"gen.{n}.blocks.{layer}.attn.pattern"].output[0, head, 0])
                assert np.isnan(g.weights[n, T + n:]).all()
                assert g.steps[n] == f"gen.{n}.blocks.{layer}.attn.pattern"
            np.testing.assert_allclose(np.nansum(g.weights, axis=1), 1.0, atol=1e-12)


def test_the_keys_are_the_prompt_then_the_new_words():
    t = generate("gpt", random_weights=True, max_new_tokens=3, text="The cat is", seed=2, ignore_eos=True)
    g = generated_attention(t, -1, 1)
    vocab = t.labels["vocab"]
    new = [vocab[int(t[n].output[0, 0])] for n in t.generation.steps]
    assert g.keys == ["The", "cat", "is"] + new[:2] and g.queries == ["is"] + new[:2] and g.layer == 1


def test_a_run_that_generated_nothing_is_refused():
    with pytest.raises(UsageError, match="generated nothing"):
        generated_attention(run("gpt", random_weights=True))
    with pytest.raises(UsageError, match="--head 5 is not in this run, which has 2 heads: give 0–1"):
        generated_attention(generate("gpt", random_weights=True, max_new_tokens=2), 0, 5)
