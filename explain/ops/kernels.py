"""The numpy functions behind the ops that are more than one operator.

Each function here is used twice, from one text: the ops call it to compute a
step, and the exporter copies its source (``inspect.getsource``) into a
standalone script. So each must be self-contained (only ``np``, no other names
from this module), with a docstring a learner can read in the exported script,
and lines of at most 88 columns so the script passes a linter's defaults.
"""

from __future__ import annotations

import numpy as np


def softmax(x, axis=-1):
    """Numerically stable softmax: subtract the row max (softmax is unchanged
    by a shift), exponentiate, divide by the row sum. A row that is entirely
    -inf (every position masked) has no defined softmax (0/0); it is returned
    as all zeros rather than NaN."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0.0, m)
    e = x - m
    np.exp(e, out=e)  # in place: GPT-2's logits make a 51 MB array; one is enough
    s = np.sum(e, axis=axis, keepdims=True)
    e /= np.where(s > 0, s, 1.0)  # a fully masked row: 0 / 1 = 0
    return e


def log_softmax(x, axis=-1):
    """log(softmax(x)) computed stably as x - max - log(sum(exp(x - max))).
    The exponentials are summed one row at a time, so the result is the only
    array as large as x (GPT-2's logits make a 51 MB array; exp(x - max) over
    all of them at once would make a second)."""
    x = np.asarray(x, dtype=float)  # no copy for floats; integers become floats
    out = x - np.max(x, axis=axis, keepdims=True)
    rows = np.moveaxis(out, axis, -1)  # a view of out, one row per leading index
    for i in np.ndindex(rows.shape[:-1]):
        rows[i] -= np.log(np.sum(np.exp(rows[i])))
    return out


def layer_norm(x, w, b, eps=1e-5):
    """Layer norm over the last axis: (x - mean) / sqrt(var + eps) * w + b,
    with the biased variance (divide by n), as torch.nn.LayerNorm does."""
    mean = np.mean(x, axis=-1, keepdims=True)
    out = x - mean
    var = np.mean(out * out, axis=-1, keepdims=True)
    out /= np.sqrt(var + eps)  # in place: one array of x's size, not four
    out *= w
    out += b
    return out


def gelu(x):
    """GELU, tanh approximation (as GPT-2):
    0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))."""
    # Step by step in one buffer: GPT-2's MLP makes (tokens, 4·d_model) of these, and
    # x * x * x is several times faster than numpy's x**3.
    x = np.asarray(x, dtype=float)  # no copy for floats; integers become floats
    u = np.asarray(x * x * x)  # an array even for one number: each step works in it
    u *= 0.044715
    u += x
    u *= np.sqrt(2.0 / np.pi)  # u = √(2/π)·(x + 0.044715·x³)
    np.tanh(u, out=u)
    u += 1.0
    u *= x
    u *= 0.5  # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
    return u


def relu(x):
    """ReLU: max(0, x), elementwise."""
    return np.maximum(x, 0.0)


def causal_mask(scores):
    """Set every score above the diagonal (key position j > query position i)
    to -inf, so that softmax gives those future positions weight 0."""
    t_q, t_k = scores.shape[-2], scores.shape[-1]
    future = np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
    return np.where(future, -np.inf, scores)


def window_mask(scores, window, fill=-np.inf):
    """Sliding-window attention: set every score whose key is window or more
    positions before its query (i - j >= window) to fill (-inf: softmax gives
    it weight 0), so each query sees at most the window most recent keys,
    itself included. fill=0.0 is its backward: no gradient reaches them."""
    t_q, t_k = scores.shape[-2], scores.shape[-1]
    i, j = np.arange(t_q)[:, None], np.arange(t_k)[None, :]
    return np.where(i - j >= window, fill, scores)


def sinusoidal(n_pos, d_model):
    """Sinusoidal positional encoding (Vaswani et al. 2017, §3.5):
    PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d))."""
    pos = np.arange(n_pos)[:, None]
    i2 = np.arange(0, d_model, 2)[None, :]
    angle = pos / np.power(10000.0, i2 / d_model)
    pe = np.zeros((n_pos, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


def rms_norm(x, w, eps=1e-6):
    """RMSNorm over the last axis (Zhang & Sennrich 2019; Llama):
    x / sqrt(mean(x²) + eps) * w. No mean is subtracted and there is no bias."""
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return x * r * w


def rope(x, theta, start=0, sign=1.0, interleaved=False):
    """Rotary position embedding: pair i at position p turns by p·theta^(-2i/d).
    Pairs (i, i + d/2) as Hugging Face ("rotate-half"), or (2i, 2i + 1) with
    interleaved=True (Meta's Llama, GPT-J, DeepSeek). x is (..., T, d), p =
    start + row; sign=-1 turns back (the inverse, used by the backward)."""
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (np.arange(0, 2 * half, 2) / (2 * half))
    pos = np.arange(start, start + x.shape[-2])
    angle = sign * pos[:, None] * inv_freq[None, :]  # (T, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = (x[..., 0::2], x[..., 1::2]) if interleaved else np.split(x, 2, -1)
    y = [a * cos - b * sin, b * cos + a * sin]  # the pairs: first, second members
    return np.stack(y, -1).reshape(x.shape) if interleaved else np.concatenate(y, -1)


def swiglu(gate, up):
    """The SwiGLU gate (Shazeer 2020): silu(gate) * up, where
    silu(z) = z·σ(z), and σ(z) = (1 + tanh(z/2))/2 cannot overflow."""
    return gate * (0.5 * (1.0 + np.tanh(0.5 * gate))) * up


def merge_heads(z):
    """Concatenate the heads: (..., h, T, l) -> (..., T, h·l), head 0 first."""
    *lead, h, t, d = z.shape
    return np.moveaxis(z, -3, -2).reshape(*lead, t, h * d)


def top_k_filter(logits, k):
    """Top-k filter: keep the k largest logits of each row and set the rest to
    -inf, so softmax gives them probability 0. A logit equal to the k-th
    largest is kept too (as transformers' TopKLogitsWarper does)."""
    k = min(int(k), logits.shape[-1])
    kth = np.sort(logits, axis=-1)[..., -k, None]
    return np.where(logits < kth, -np.inf, logits)


def top_p_filter(logits, p):
    """Top-p (nucleus) filter: rank the tokens by probability, keep them while
    the probability of the tokens ranked above is still below p, set the rest
    to -inf. The most probable token is always kept."""
    order = np.argsort(-logits, axis=-1, kind="stable")
    ranked = np.take_along_axis(logits, order, axis=-1)
    e = np.exp(ranked - ranked[..., :1])
    probs = e / np.sum(e, axis=-1, keepdims=True)
    c = np.cumsum(probs, axis=-1)
    before = np.concatenate([np.zeros_like(c[..., :1]), c[..., :-1]], axis=-1)
    cut = np.empty(logits.shape, dtype=bool)
    np.put_along_axis(cut, order, before >= p, axis=-1)
    return np.where(cut, -np.inf, logits)


def sample(probs, u):
    """Inverse-CDF draw: for each row, the first token whose cumulative
    probability exceeds u times the row's total (u uniform in [0, 1)); a
    token of probability 0 is never drawn. probs (..., V), u (...) -> ids."""
    c = np.cumsum(probs, axis=-1)
    return np.sum(c <= u[..., None] * c[..., -1:], axis=-1)


def padding_mask(scores, key_padding):
    """Set every score whose key is padding (key_padding[b, j] == 1) to -inf,
    for every query (and head) of sequence b, so that softmax gives the padded
    positions weight 0: torch's key_padding_mask."""
    pad = key_padding.astype(bool)
    pad = pad.reshape(pad.shape[0], *[1] * (scores.ndim - 2), pad.shape[1])
    return np.where(pad, -np.inf, scores)


# -- the rooms of this module, in scope here like the kernels above (an export copies them in this order) -------
from explain.ops.kernels_backward import *  # noqa: E402,F401,F403  the vector-Jacobian products
from explain.ops.kernels_bert import *  # noqa: E402,F401,F403  erf, BERT's GELU and the sentence head
from explain.ops.kernels_flash import *  # noqa: E402,F401,F403  the tiled attention kernel's backward
from explain.ops.kernels_moe import *  # noqa: E402,F401,F403  the mixture of experts' router and experts

MODULES = (__name__, "explain.ops.kernels_backward", "explain.ops.kernels_moe", "explain.ops.kernels_bert",
           "explain.ops.kernels_flash")  # where the kernels are written
