"""GPT-2's initialisation for gpt and transformer (weights and embeddings N(0, 0.02²), projections into the
residual stream ÷√(2·n_layers), biases 0), torch's layer defaults for the models before them; and the
teacher's first check: the loss at initialisation is within 10 % of ln(vocabulary), at the default size and at
GPT-2 width."""

from __future__ import annotations

import math

import numpy as np
import pytest

import explain


def test_gpt2_initialisation():
    tr = explain.run("gpt", d_model=32, n_heads=2, n_layers=4)
    P = tr.params
    assert np.std(P["W_E"]) == pytest.approx(0.02, rel=0.15)
    assert np.std(P["blocks.0.attn.W_Q"]) == pytest.approx(0.02, rel=0.15)
    assert np.std(P["blocks.0.mlp.W_out"]) == pytest.approx(0.02 / math.sqrt(8), rel=0.15)  # 1/√(2·4 layers)
    assert np.std(P["blocks.0.attn.W_O"]) == pytest.approx(0.02 / math.sqrt(8), rel=0.15)
    assert not P["blocks.0.mlp.b_in"].any() and not P["blocks.0.attn.b_Q"].any()  # biases 0
    assert (P["blocks.0.ln1.w"] == 1).all()
    # the models before the transformer keep torch's nn.Linear: uniform ±1/√fan_in, biases too
    W = explain.run("attention", d_model=16).params["attn.W_Q"]
    assert np.abs(W).max() <= 1 / 4 and np.std(W) > 0.1


@pytest.mark.parametrize("opts", [dict(random_weights=True), dict(d_model=768, n_heads=12, n_layers=12, d_ff=3072)],
                         ids=["default", "gpt2-width"])
def test_loss_at_initialisation_is_near_ln_vocab(opts):
    tr = explain.run("gpt", text="the quick brown fox jumps over the lazy dog", **opts)
    V = tr.config.d_vocab
    assert float(tr["loss"].output) == pytest.approx(math.log(V), rel=0.10)


def test_transformer_loss_at_initialisation_is_near_ln_vocab():
    tr = explain.run("transformer")
    assert float(tr["loss"].output) == pytest.approx(math.log(tr.config.d_vocab), rel=0.10)
