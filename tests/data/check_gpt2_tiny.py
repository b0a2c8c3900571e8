"""Check the ``gpt2_tiny`` fixture with a plain numpy GPT-2 forward.

This is a script, not a test (pytest collects only ``test_*.py``). It needs
only numpy and safetensors::

    python tests/data/check_gpt2_tiny.py

It loads ``tests/data/gpt2_tiny/model.safetensors`` (float32, cast to
float64), runs a GPT-2 forward written out below on the tokens stored in
``expected.npz``, and asserts that the logits match the ones ``transformers``
computed in float64 to within ``|ours - theirs| <= 1e-9`` (absolute, every
element; the logits are of order 1-10), and the loss to 1e-9 as well. The
forward doubles as documentation of the Hugging Face GPT-2 key mapping:

- ``transformer.wte.weight`` (vocab, d) token embedding, also the unembedding
  (``lm_head.weight`` is tied to it and not stored);
  ``transformer.wpe.weight`` (n_positions, d) position embedding.
- per block ``transformer.h.{i}.``: ``ln_1``/``ln_2`` (weight, bias) pre-LN;
  ``attn.c_attn`` (d, 3d) + (3d,) -> q | k | v along the last axis;
  ``attn.c_proj`` (d, d); ``mlp.c_fc`` (d, 4d); ``mlp.c_proj`` (4d, d).
  These are Conv1D layers: ``y = x @ W + b`` (W is (in, out), not transposed).
- ``transformer.ln_f`` final LayerNorm.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

DIR = Path(__file__).resolve().parent / "gpt2_tiny"
TOL = 1e-9


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)  # biased variance, as torch
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu_new(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def gpt2_forward(p: dict[str, np.ndarray], cfg: dict, tokens: np.ndarray) -> np.ndarray:
    d, n_head, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    hd = d // n_head
    t = len(tokens)
    x = p["transformer.wte.weight"][tokens] + p["transformer.wpe.weight"][:t]
    causal = np.tril(np.ones((t, t), dtype=bool))
    for i in range(cfg["n_layer"]):
        pre = f"transformer.h.{i}."
        # attention
        h = layer_norm(x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"], eps)
        qkv = h @ p[pre + "attn.c_attn.weight"] + p[pre + "attn.c_attn.bias"]  # (t, 3d)
        q, k, v = np.split(qkv, 3, axis=-1)
        q, k, v = (a.reshape(t, n_head, hd).transpose(1, 0, 2) for a in (q, k, v))  # (h, t, hd)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd)  # scale_attn_weights=True
        scores = np.where(causal, scores, -np.inf)
        att = softmax(scores) @ v  # (h, t, hd)
        att = att.transpose(1, 0, 2).reshape(t, d)
        x = x + att @ p[pre + "attn.c_proj.weight"] + p[pre + "attn.c_proj.bias"]
        # MLP
        h = layer_norm(x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"], eps)
        h = gelu_new(h @ p[pre + "mlp.c_fc.weight"] + p[pre + "mlp.c_fc.bias"])
        x = x + h @ p[pre + "mlp.c_proj.weight"] + p[pre + "mlp.c_proj.bias"]
    x = layer_norm(x, p["transformer.ln_f.weight"], p["transformer.ln_f.bias"], eps)
    return x @ p["transformer.wte.weight"].T  # tied unembedding


def next_token_loss(logits: np.ndarray, tokens: np.ndarray) -> float:
    z = logits[:-1]
    m = z.max(-1, keepdims=True)
    logp = z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))
    return float(-logp[np.arange(len(tokens) - 1), tokens[1:]].mean())


def main() -> None:
    cfg = json.loads((DIR / "config.json").read_text())
    assert cfg["activation_function"] == "gelu_new" and cfg["tie_word_embeddings"]
    assert cfg["scale_attn_weights"] and not cfg["scale_attn_by_inverse_layer_idx"]
    raw = load_file(str(DIR / "model.safetensors"))
    assert all(a.dtype == np.float32 for a in raw.values())
    assert "lm_head.weight" not in raw
    params = {k: v.astype(np.float64) for k, v in raw.items()}
    for k in sorted(params):
        print(f"{k} {tuple(params[k].shape)}")

    exp = np.load(DIR / "expected.npz", allow_pickle=False)
    worst = 0.0
    for i in range(int(exp["n_inputs"])):
        tokens = exp[f"tokens_{i}"]
        want = exp[f"logits_{i}"]
        got = gpt2_forward(params, cfg, tokens)
        assert got.shape == want.shape == (len(tokens), cfg["vocab_size"])
        diff = float(np.abs(got - want).max())
        loss_diff = abs(next_token_loss(got, tokens) - float(exp[f"loss_{i}"]))
        print(
            f"input {i} {str(exp[f'text_{i}'])!r}: {len(tokens)} tokens, "
            f"max |logit diff| {diff:.3e}, |loss diff| {loss_diff:.3e}"
        )
        assert diff <= TOL, diff
        assert loss_diff <= TOL, loss_diff
        worst = max(worst, diff)
    print(f"OK: max abs logit difference {worst:.3e} <= {TOL:g}")


if __name__ == "__main__":
    main()
