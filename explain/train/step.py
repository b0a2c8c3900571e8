"""One training step of the ``gpt`` model, untraced: the forward pass, the loss, every parameter's gradient,
and AdamW.

This is the lean path ``explain train`` runs thousands of times. It computes what a recorded run with
``--backward`` records (``explain.run("gpt", weights=P, backward=True)``; a test holds the two to 1e-10), with
explain's own kernels (:mod:`explain.ops.kernels`: GELU, softmax) and no step recorded.
Parameters use the engine's names and layouts (per-head ``W_Q`` (h, d, d_head), ``W_O`` (h·d_head, d), the
unembedding tied to ``W_E``). Shapes at line end: B sequences, T tokens, h heads, m = d_head.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from explain.ops.kernels import gelu, softmax


def _ln(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> tuple[np.ndarray, tuple]:
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(-1, keepdims=True) + eps)
    xh = xc * rstd
    return xh * w + b, (xh, rstd, w)


def _ln_back(g: np.ndarray, cache: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xh, rstd, w = cache
    d = xh.shape[-1]
    dxh = g * w
    dx = (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True)) * rstd
    return dx, (g * xh).reshape(-1, d).sum(0), g.reshape(-1, d).sum(0)


def _gelu_back(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    c = math.sqrt(2 / math.pi)
    x2 = x * x  # x * x * x, not x**3: numpy's float power is 30 times slower
    t = np.tanh(c * x * (1 + 0.044715 * x2))
    return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x2))


def _heads(W: np.ndarray) -> np.ndarray:
    """(h, d, m) per-head weights as one (d, h·m) matrix: head s owns columns s·m … s·m + m − 1."""
    h, d, m = W.shape
    return W.transpose(1, 0, 2).reshape(d, h * m)


def loss_and_grads(P: dict[str, np.ndarray], ids: np.ndarray, n_layers: int, n_heads: int,
                   eps: float = 1e-5, grads: bool = True) -> tuple[float, dict[str, np.ndarray]]:
    """The mean next-token cross-entropy of ``ids`` (B, T) and ∂loss/∂(every parameter)."""
    B, T = ids.shape
    d = P["W_E"].shape[1]
    h = n_heads
    m = d // h
    mask = np.triu(np.full((T, T), -np.inf), 1)
    x = P["W_E"][ids] + P["W_pos"][:T]  # (B, T, d)
    caches = []
    for i in range(n_layers):
        p = f"blocks.{i}."
        a1, c1 = _ln(x, P[p + "ln1.w"], P[p + "ln1.b"], eps)
        qkv = []
        for n in "QKV":
            y = a1 @ _heads(P[f"{p}attn.W_{n}"])
            if f"{p}attn.b_{n}" in P:
                y = y + P[f"{p}attn.b_{n}"].reshape(-1)
            qkv.append(y.reshape(B, T, h, m).transpose(0, 2, 1, 3))  # (B, h, T, m)
        q, k, v = qkv
        A = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(m) + mask)  # (B, h, T, T)
        cat = (A @ v).transpose(0, 2, 1, 3).reshape(B, T, h * m)  # (B, T, h·m)
        x = x + cat @ P[p + "attn.W_O"] + P[p + "attn.b_O"]
        a2, c2 = _ln(x, P[p + "ln2.w"], P[p + "ln2.b"], eps)
        pre = a2 @ P[p + "mlp.W_in"] + P[p + "mlp.b_in"]  # (B, T, d_ff)
        post = gelu(pre)
        x = x + post @ P[p + "mlp.W_out"] + P[p + "mlp.b_out"]
        caches.append((a1, c1, q, k, v, A, cat, a2, c2, pre, post))
    xf, cf = _ln(x, P["ln_final.w"], P["ln_final.b"], eps)
    logits = xf @ P["W_E"].T  # (B, T, V)
    lp = logits - logits.max(-1, keepdims=True)  # log-softmax at once (the kernel goes row by row, to save memory)
    lp -= np.log(np.exp(lp).sum(-1, keepdims=True))
    y = ids[:, 1:]
    loss = float(-np.take_along_axis(lp[:, :-1], y[..., None], -1).mean())
    if not grads:
        return loss, {}
    G: dict[str, np.ndarray] = {}
    dlogits = np.exp(lp)  # softmax − one-hot, over the mean's count, at the predicting positions
    dlogits[:, -1] = 0.0
    np.put_along_axis(dlogits[:, :-1], y[..., None], np.take_along_axis(dlogits[:, :-1], y[..., None], -1) - 1, -1)
    dlogits /= y.size
    V = dlogits.shape[-1]
    G["W_E"] = dlogits.reshape(-1, V).T @ xf.reshape(-1, d)
    dx, G["ln_final.w"], G["ln_final.b"] = _ln_back(dlogits @ P["W_E"], cf)
    for i in reversed(range(n_layers)):
        p = f"blocks.{i}."
        a1, c1, q, k, v, A, cat, a2, c2, pre, post = caches[i]
        G[p + "mlp.W_out"] = post.reshape(-1, post.shape[-1]).T @ dx.reshape(-1, d)
        G[p + "mlp.b_out"] = dx.reshape(-1, d).sum(0)
        dpre = _gelu_back(dx @ P[p + "mlp.W_out"].T, pre)
        G[p + "mlp.W_in"] = a2.reshape(-1, d).T @ dpre.reshape(-1, dpre.shape[-1])
        G[p + "mlp.b_in"] = dpre.reshape(-1, dpre.shape[-1]).sum(0)
        dln, G[p + "ln2.w"], G[p + "ln2.b"] = _ln_back(dpre @ P[p + "mlp.W_in"].T, c2)
        dx = dx + dln
        G[p + "attn.W_O"] = cat.reshape(-1, h * m).T @ dx.reshape(-1, d)
        G[p + "attn.b_O"] = dx.reshape(-1, d).sum(0)
        dz = (dx @ P[p + "attn.W_O"].T).reshape(B, T, h, m).transpose(0, 2, 1, 3)  # (B, h, T, m)
        dA = dz @ v.transpose(0, 1, 3, 2)
        dv = A.transpose(0, 1, 3, 2) @ dz
        ds = A * (dA - (dA * A).sum(-1, keepdims=True)) / math.sqrt(m)  # softmax Jacobian, then ÷√m
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        da1 = np.zeros_like(a1)
        for n, g in zip("QKV", (dq, dk, dv)):
            g2 = g.transpose(0, 2, 1, 3).reshape(-1, h * m)  # (B·T, h·m)
            G[f"{p}attn.W_{n}"] = (a1.reshape(-1, d).T @ g2).reshape(d, h, m).transpose(1, 0, 2)
            if f"{p}attn.b_{n}" in P:
                G[f"{p}attn.b_{n}"] = g2.sum(0).reshape(h, m)
            da1 += (g2 @ _heads(P[f"{p}attn.W_{n}"]).T).reshape(B, T, d)
        dln, G[p + "ln1.w"], G[p + "ln1.b"] = _ln_back(da1, c1)
        dx = dx + dln
    np.add.at(G["W_E"], ids.reshape(-1), dx.reshape(-1, d))  # the embedding's rows, added to the unembedding's
    G["W_pos"] = np.zeros_like(P["W_pos"])
    G["W_pos"][:T] = dx.sum(0)
    return loss, G


def decayed(p: np.ndarray) -> bool:
    """Whether ``explain train``'s AdamW decays a parameter: every one of two axes or more in explain's layout,
    so the weight matrices and also the per-head biases b_Q, b_K, b_V (heads × d_head); not the one-axis biases
    or the layer-norm gains. nanoGPT decays the 2-D tensors of GPT-2's layout, where the per-head biases are one
    vector (c_attn.bias), so it leaves them alone; the recorded AdamW step (``explain run --optimizer adamw``,
    :func:`explain.engine.backward.sgd`) follows nanoGPT. The two rules differ on b_Q, b_K, b_V only; this one stays
    because the shipped model and its checked-in curve were trained with it (issue 24)."""
    return p.ndim >= 2


@dataclass
class AdamW:
    """AdamW (Loshchilov & Hutter 2019) as torch.optim.AdamW computes it: decay the weight (p −= lr·λ·p), then
    m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², m̂ = m/(1−β₁ᵗ), v̂ = v/(1−β₂ᵗ), p −= lr·m̂/(√v̂ + ε). Weight decay
    by :func:`decayed`'s rule (the shipped model was trained with it)."""

    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.1
    t: int = 0
    m: dict[str, np.ndarray] = field(default_factory=dict)
    v: dict[str, np.ndarray] = field(default_factory=dict)

    def step(self, P: dict[str, np.ndarray], G: dict[str, np.ndarray], lr: float | None = None) -> None:
        """Update ``P`` in place from the gradients ``G``."""
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        self.t += 1
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for name, g in G.items():
            p = P[name]
            if name not in self.m:
                self.m[name], self.v[name] = np.zeros_like(p), np.zeros_like(p)
            m, v = self.m[name], self.v[name]
            if decayed(p) and self.weight_decay:
                p *= 1 - lr * self.weight_decay
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= lr * (m / c1) / (np.sqrt(v / c2) + self.eps)
