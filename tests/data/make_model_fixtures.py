"""Generate the PyTorch reference fixtures of the models' book and paper options in ``tests/data/models/``.

This is a script, not a test (pytest collects only ``test_*.py``). It needs ``torch`` (and ``transformers`` for
the GPT-2 padding fixture), which the project does not depend on; run it once with the helper venv::

    /work/venv-hf/bin/python tests/data/make_model_fixtures.py

Every array is float64 (the engine's dtype) and every weight is already in explain's parameter names, so a
test (or a user) loads it with ``--weights FILE``/``weights=`` and no conversion. How torch's weights map to
explain's is spelled out in :func:`heads_from_linear`. Written with ``np.savez`` (no pickles).

Files (all under ``tests/data/models/``):

- ``book_3_6_weights.npz``, ``book_3_6_expected.npz``: "Build a Large Language Model (From Scratch)" §3.6.2,
  the efficient ``MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)``
  (``qkv_bias=False``, causal) built after ``torch.manual_seed(123)`` on the six "Your journey starts with one
  step" embeddings, batched twice (``torch.stack((inputs, inputs))``). The module below is written here from the
  book's description (not copied): three bias-free ``nn.Linear(d_in, d_out)`` (query, key, value, created in
  that order), then ``out_proj = nn.Linear(d_out, d_out)``; each head takes ``head_dim`` consecutive columns.
  The script checks its output against the book's printed 6×2 tensor before writing anything.
  Expected: ``embeddings`` (2, 6, 3), ``context_vecs`` (2, 6, 2), ``attn_weights`` (2, 2, 6, 6).
- ``causal_mha_weights.npz``, ``causal_mha_expected.npz``: a seeded 2-head, d_model 8 causal multi-head
  attention with biases on a (2, 5, 8) batch of embeddings, through ``F.scaled_dot_product_attention(…,
  is_causal=True)``. Expected: ``embeddings``, ``z`` (2, 2, 5, 4, per head), ``out`` (2, 5, 8).
- ``padded_mha_weights.npz``, ``padded_mha_expected.npz``: ``nn.MultiheadAttention(8, 2, batch_first=True)``
  over a batch of three texts of different lengths, right-padded with explain's ``<pad>``, with
  ``key_padding_mask``; token ids come from explain's own word-level tokenizer (imported from this checkout),
  embeddings from a seeded ``W_E``. Expected: ``texts``, ``ids`` (padded), ``key_padding_mask``,
  ``pattern`` (3, 2, T, T; ``average_attn_weights=False``), ``out`` (3, T, 8).
- ``padded_gpt2_expected.npz``: the ``tests/data/gpt2_tiny`` checkpoint (Hugging Face ``GPT2LMHeadModel`` in
  float64) on a batch of texts of different lengths, right-padded with ``<|endoftext|>`` (GPT-2 has no pad
  token; Hugging Face pads with eos), ``attention_mask`` 0 on the padding. Expected: ``texts``, ``ids``,
  ``attention_mask``, ``logits`` (B, T, vocab), ``loss``: ``F.cross_entropy(logits[:, :-1], labels[:, 1:],
  ignore_index=-100)`` where ``labels`` are the ids with padding set to −100.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HERE = Path(__file__).resolve().parent
OUT = HERE / "models"
sys.path.insert(0, str(HERE.parent.parent))  # explain's tokenizer and padding conventions (pure Python)

from explain.core.padding import key_padding_mask, pad_right  # noqa: E402
from explain.core.words import Tokenizer  # noqa: E402

JOURNEY = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
           [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]
# The book's printed output of §3.6.2 (each of the two identical batch rows).
BOOK_CONTEXT_VECS = [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]


def np64(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64).numpy().copy()


def heads_from_linear(lin: nn.Linear | None, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None,
                      n_heads: int = 1) -> tuple[np.ndarray, np.ndarray | None]:
    """torch's y = x·Wᵀ + b with W (h·m, d), split as torch's ``view(b, T, h, m)`` splits it (head s takes
    output columns s·m … s·m + m − 1), into explain's per-head W (h, d, m) and b (h, m)."""
    w = lin.weight if lin is not None else weight
    b = (lin.bias if lin is not None else bias)
    wt = np64(w).T  # (d, h·m)
    d, hm = wt.shape
    m = hm // n_heads
    W = wt.reshape(d, n_heads, m).transpose(1, 0, 2).copy()  # (h, d, m)
    B = None if b is None else np64(b).reshape(n_heads, m)
    return W, B


class BookMultiHeadAttention(nn.Module):
    """The causal multi-head attention of the book's §3.6.2, written from its description: one weight split
    into heads, scores Q·Kᵀ masked above the diagonal, softmax of scores / √head_dim, out_proj."""

    def __init__(self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int,
                 qkv_bias: bool = False) -> None:
        super().__init__()
        self.num_heads, self.head_dim, self.d_out = num_heads, d_out // num_heads, d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)  # creation order fixes the seeded values
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.future = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, _ = x.shape
        split = lambda y: y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))  # (b, h, t, m)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.future[:t, :t], -torch.inf)
        weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)
        z = (weights @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(z), weights


def book_3_6() -> None:
    inputs = torch.tensor(JOURNEY)  # float32, as in the book
    batch = torch.stack((inputs, inputs), dim=0)
    torch.manual_seed(123)
    mha = BookMultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)
    with torch.no_grad():
        printed, _ = mha(batch)
    np.testing.assert_allclose(printed.numpy(), np.array([BOOK_CONTEXT_VECS] * 2), atol=5e-5)
    mha = mha.double()
    with torch.no_grad():
        out, weights = mha(batch.double())
    params = {}
    for name, lin in (("Q", mha.W_query), ("K", mha.W_key), ("V", mha.W_value)):
        params[f"attn.W_{name}"], _ = heads_from_linear(lin, n_heads=2)
    params["attn.W_O"] = np64(mha.out_proj.weight).T  # (h·m, d_out)
    params["attn.b_O"] = np64(mha.out_proj.bias)
    np.savez(OUT / "book_3_6_weights.npz", **params)
    np.savez(OUT / "book_3_6_expected.npz", embeddings=np64(batch), context_vecs=np64(out),
             attn_weights=np64(weights))


def causal_mha() -> None:
    torch.manual_seed(0)
    d, h, m, B, T = 8, 2, 4, 2, 5
    lin = {n: nn.Linear(d, h * m).double() for n in "QKV"}
    out_proj = nn.Linear(h * m, d).double()
    x = torch.randn(B, T, d, dtype=torch.float64)
    split = lambda y: y.view(B, T, h, m).transpose(1, 2)  # noqa: E731
    with torch.no_grad():
        q, k, v = (split(lin[n](x)) for n in "QKV")
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, h, T, m)
        out = out_proj(z.transpose(1, 2).reshape(B, T, h * m))
    params = {}
    for n in "QKV":
        params[f"attn.W_{n}"], params[f"attn.b_{n}"] = heads_from_linear(lin[n], n_heads=h)
    params["attn.W_O"], params["attn.b_O"] = np64(out_proj.weight).T, np64(out_proj.bias)
    np.savez(OUT / "causal_mha_weights.npz", **params)
    np.savez(OUT / "causal_mha_expected.npz", embeddings=np64(x), z=np64(z), out=np64(out))


PADDED_TEXTS = ["The cat sat on the mat", "The dog is happy", "Thinking Machines"]


def padded_mha() -> None:
    d, h = 8, 2
    tok = Tokenizer(PADDED_TEXTS)
    batch = [tok.encode(t) for t in PADDED_TEXTS]
    lengths = [len(b) for b in batch]
    pad = tok.pad_id()
    ids = pad_right(batch, pad)
    T = len(ids[0])
    torch.manual_seed(1)
    W_E = torch.randn(len(tok), d, dtype=torch.float64)
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_bias.uniform_(-0.5, 0.5)  # torch starts these at zero: make a wrong mapping visible
        mha.out_proj.bias.uniform_(-0.5, 0.5)
        x = W_E[torch.tensor(ids)]
        kpm = torch.tensor(key_padding_mask(lengths, T))
        out, pattern = mha(x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
    params = {"W_E": np64(W_E)}
    for i, n in enumerate("QKV"):
        params[f"attn.W_{n}"], params[f"attn.b_{n}"] = heads_from_linear(
            None, mha.in_proj_weight[i * d:(i + 1) * d], mha.in_proj_bias[i * d:(i + 1) * d], n_heads=h)
    params["attn.W_O"], params["attn.b_O"] = np64(mha.out_proj.weight).T, np64(mha.out_proj.bias)
    np.savez(OUT / "padded_mha_weights.npz", **params)
    np.savez(OUT / "padded_mha_expected.npz", texts=np.array(PADDED_TEXTS), ids=np.array(ids, dtype=np.int64),
             key_padding_mask=kpm.numpy(), pattern=np64(pattern), out=np64(out))


GPT2_TEXTS = ["The cat sat on the mat.", "A dog ran.", "The cat is happy"]


def padded_gpt2() -> None:
    from transformers import GPT2LMHeadModel, PreTrainedTokenizerFast

    ck = HERE / "gpt2_tiny"
    tok = PreTrainedTokenizerFast(tokenizer_file=str(ck / "tokenizer.json"))
    model = GPT2LMHeadModel.from_pretrained(ck, attn_implementation="eager").double().eval()
    eos = model.config.eos_token_id
    batch = [tok.encode(t, add_special_tokens=False) for t in GPT2_TEXTS]
    lengths = [len(b) for b in batch]
    ids = torch.tensor(pad_right(batch, eos))
    mask = (~torch.tensor(key_padding_mask(lengths, ids.shape[1]))).long()
    labels = ids.masked_fill(mask == 0, -100)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits
        V = logits.shape[-1]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)
        hf = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    assert abs(float(hf) - float(loss)) < 1e-5, (float(hf), float(loss))
    np.savez(OUT / "padded_gpt2_expected.npz", texts=np.array(GPT2_TEXTS), ids=ids.numpy(),
             attention_mask=mask.numpy(), logits=np64(logits), loss=np.float64(loss))


def main() -> None:
    OUT.mkdir(exist_ok=True)
    torch.set_grad_enabled(False)
    book_3_6()
    causal_mha()
    padded_mha()
    padded_gpt2()
    for p in sorted(OUT.glob("*.npz")):
        with np.load(p, allow_pickle=False) as z:
            print(p.name, {k: z[k].shape for k in z})


if __name__ == "__main__":
    main()
