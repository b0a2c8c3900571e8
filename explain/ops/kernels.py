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


def rope(x, theta, start=0, sign=1.0):
    """Rotary position embedding as Hugging Face applies it ("rotate-half"):
    dimension i pairs with i + d/2, and the pair at position p turns by the
    angle p·theta^(-2i/d). x is (..., T, d), position p = start + row.
    sign=-1 turns the other way (the inverse rotation, used by the backward)."""
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (np.arange(0, 2 * half, 2) / (2 * half))
    pos = np.arange(start, start + x.shape[-2])
    angle = sign * pos[:, None] * inv_freq[None, :]  # (T, d/2)
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


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


# -- backward: the vector-Jacobian products that are more than one operator --------


def unbroadcast(g, shape):
    """Sum a gradient over the axes that broadcasting added or stretched, so
    it has the shape of the operand it flows back to."""
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def softmax_backward(g, a):
    """Gradient of softmax from the upstream gradient g and the output a:
    dS = A * (dA - rowsum(dA * A)), the softmax Jacobian applied row by row."""
    return a * (g - np.sum(g * a, axis=-1, keepdims=True))


def log_softmax_backward(g, y):
    """Gradient of log-softmax from g and its output y = log p:
    dx = g - p * rowsum(g), with p = exp(y)."""
    d = np.asarray(np.exp(y))  # the one array as large as y (GPT-2: 51 MB), not two
    d *= np.sum(g, axis=-1, keepdims=True)
    return np.subtract(g, d, out=d)


def layer_norm_backward(g, x, w, eps=1e-5):
    """Gradient of layer norm with respect to its input x. With x̂ the
    normalised row, n its width, σ = sqrt(var + eps) and dx̂ = g * w:
    dx = (dx̂ - mean(dx̂) - x̂ * mean(dx̂ * x̂)) / σ."""
    centred = x - np.mean(x, axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean(centred**2, axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    dxhat = g * w
    inner = dxhat - dxhat.mean(-1, keepdims=True)
    return (inner - xhat * np.mean(dxhat * xhat, axis=-1, keepdims=True)) / sigma


def gelu_backward(g, x):
    """Gradient of the tanh GELU: g times its derivative
    0.5·(1 + tanh(u)) + 0.5·x·(1 - tanh(u)²)·u', u = √(2/π)·(x + 0.044715·x³)."""
    # Step by step in four arrays (GPT-2's MLP makes (tokens, 4·d_model) of each),
    # each step the same arithmetic as the formula's, so the same numbers.
    c = np.sqrt(2.0 / np.pi)
    t = np.asarray(x * x)  # x * x * x: numpy's x**3 is slow
    t *= x
    t *= 0.044715
    t += x
    t *= c
    np.tanh(t, out=t)  # t = tanh(u)
    du = np.asarray(x * x)
    du *= 3 * 0.044715
    du += 1.0
    du *= c  # du = u' = √(2/π)·(1 + 3·0.044715·x²)
    s = np.asarray(t * t)
    np.subtract(1.0, s, out=s)  # 1 - tanh(u)²
    d = np.asarray(x * 0.5)
    d *= s
    d *= du  # 0.5·x·(1 - tanh(u)²)·u'
    t += 1.0
    t *= 0.5
    t += d
    t *= g
    return t


def causal_mask_backward(g):
    """Gradient through the causal mask: a masked score was replaced by -inf,
    a constant, so no gradient flows to it (0); kept scores pass g through."""
    t_q, t_k = g.shape[-2], g.shape[-1]
    future = np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
    return np.where(future, 0.0, g)


def padding_mask_backward(g, key_padding):
    """Gradient through the padding mask: a score whose key is padding was
    replaced by -inf, a constant, so no gradient flows to it (0)."""
    pad = key_padding.astype(bool)
    pad = pad.reshape(pad.shape[0], *[1] * (g.ndim - 2), pad.shape[1])
    return np.where(pad, 0.0, g)


def pad_back(g, shape):
    """Gradient of a cut (the first entries of each axis): g in the entries
    that were kept, zeros after them, up to the operand's shape."""
    return np.pad(g, [(0, n - m) for n, m in zip(shape, g.shape)])


def heads_weight_backward(x, g):
    """Gradient of a per-head projection x·W_s for its weights: for every
    head s, xᵀ·g_s summed over the batch. The heads are laid side by side
    (…, T, h·l), so one matrix product per batch item computes every head's
    sums (each the same dot product over positions as head by head, so the
    same numbers) instead of one small product per head."""
    *lead, h, t, m = g.shape
    side = np.swapaxes(g, -2, -3).reshape(*lead, t, h * m)
    per = (np.swapaxes(x, -1, -2) @ side).reshape(*lead, x.shape[-1], h, m)
    return np.moveaxis(per, -2, -3).reshape(-1, h, x.shape[-1], m).sum(axis=0)


def split_heads(g, h):
    """Undo the concatenation of heads: (..., T, h·l) -> (..., h, T, l)."""
    *lead, t, c = g.shape
    return np.moveaxis(g.reshape(*lead, t, h, c // h), -2, -3)


def embed_backward(g, ids, n_vocab):
    """Gradient of an embedding lookup for the matrix: row t collects the sum
    of the gradients at every position that holds token t (others stay 0)."""
    d = np.zeros((n_vocab, g.shape[-1]))
    np.add.at(d, np.reshape(ids, -1), g.reshape(-1, g.shape[-1]))
    return d


def pick_backward(g, lp, targets):
    """Gradient of picking lp[..., t, target[t]]: g at each picked entry, 0
    everywhere else."""
    d = np.zeros(lp.shape, lp.dtype)  # left untouched (zeros_like writes every 0)
    np.put_along_axis(d, targets[..., None], g[..., None], axis=-1)
    return d


def patched(corrupt, clean, where):
    """Activation patching: a copy of ``corrupt`` whose cells selected by
    ``where`` (pairs (axis, index), each fixing one axis) come from ``clean``."""
    out = np.array(corrupt, dtype=float)
    cells = [slice(None)] * out.ndim
    for axis, i in where:
        cells[axis] = i
    out[tuple(cells)] = clean[tuple(cells)]
    return out


def rms_norm_backward(g, x, w, eps=1e-6):
    """Gradient of RMSNorm with respect to x. With r = 1/sqrt(mean(x²) + eps)
    and dx̂ = g * w: dx = r * (dx̂ - x * r² * mean(dx̂ * x))."""
    r = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    dxhat = g * w
    return r * (dxhat - x * r * r * np.mean(dxhat * x, axis=-1, keepdims=True))


def swiglu_backward(g, gate, up, wrt):
    """Gradient of silu(gate) * up: for up (wrt=1) g * silu(gate); for the
    gate (wrt=0) g * up * silu'(gate), silu'(z) = σ(z)·(1 + z·(1 - σ(z)))."""
    s = 0.5 * (1.0 + np.tanh(0.5 * gate))
    if wrt == 1:
        return g * gate * s
    return g * up * s * (1.0 + gate * (1.0 - s))
