"""One new token's draw, stage by stage, for one sequence: the model's logits z, z / T, the top-k cut, the top-p
cumulative cut, the renormalised probabilities and the draw (:func:`draw`). The TUI's live sampling screen redraws
from it at every key, before the tokens after it are regenerated (:mod:`explain.engine.resample`).

Every stage is computed by the kernels the recorded ops run (:mod:`explain.ops.kernels`, in the order
:func:`explain.models.generate.next_token` records them), so the token drawn here is the one the regenerated
trace draws, and the numbers are the ones its steps show. One row of GPT-2's 50,257 logits takes a few
milliseconds (a sort for top-k, a stable argsort for top-p); the rows shown are the top few, found without a sort.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from explain import ops
from explain.core.sampling import Sampling
from explain.ops import kernels


@dataclass(frozen=True)
class Draw:
    """The stages of one draw over a vocabulary of V tokens (every array is (V,))."""

    sampling: Sampling
    logits: Any  # z: the model's
    scaled: Any  # z / T (z itself when greedy)
    after_k: Any  # z / T with the tokens top-k cuts at −inf (as scaled without top-k)
    after_p: Any  # … and those top-p cuts: what softmax turns into the probabilities drawn from
    p_model: Any  # softmax(z): the model's own distribution
    p_scaled: Any  # softmax(z / T): after the temperature, before the filters
    p_ranked: Any  # softmax(after_k): what top-p ranks and adds up
    probs: Any  # softmax(after_p): renormalised over the tokens kept; the draw's
    u: float | None  # the seeded uniform number (None when greedy)
    token: int
    t: float = 1.0  # the temperature this sequence's logits are divided by

    @property
    def greedy(self) -> bool:
        return self.sampling.greedy

    @property
    def kth(self) -> float | None:
        """The k-th largest z / T (top-k keeps the logits at least this), or None without top-k."""
        k = self.sampling.top_k
        if k is None or self.greedy:
            return None
        k = min(k, self.scaled.size)
        return float(np.partition(self.scaled, self.scaled.size - k)[self.scaled.size - k])

    def kept(self, stage: Any) -> int:
        """How many tokens a stage leaves finite (the others are −inf: cut)."""
        return int(np.isfinite(stage).sum())

    @property
    def mass_kept(self) -> float:
        """The probability (after top-k) the tokens top-p keeps hold: the renormalising divisor."""
        return float(self.p_ranked[np.isfinite(self.after_p)].sum())

    def top(self, n: int) -> list[int]:
        """``n`` tokens, largest logit first (ties in id order); when the drawn token is not among the first
        ``n``, it takes the last place."""
        from explain.report.predict import top_k  # lazy: the api layer's partition, one above this module's

        order = [int(i) for i in top_k(self.logits, n)]
        return order if self.token in order else [*order[:max(0, n - 1)], self.token]

    def rank(self, v: int) -> int:
        """1 + the number of tokens with a larger logit than token ``v``."""
        return 1 + int((self.logits > self.logits[v]).sum())

    def stretch(self) -> tuple[float, float, float]:
        """The draw's inverse CDF over token ids: (cumulative before the token, through it, the total)."""
        c = np.cumsum(self.probs)
        t = self.token
        return (float(c[t - 1]) if t > 0 else 0.0), float(c[t]), float(c[-1])


@lru_cache(maxsize=64)
def uniform(seed: int, n: int, batch: int, b: int) -> float:
    """The uniform number token ``n`` of sequence ``b`` (of ``batch``) is drawn with: the ``uniform`` op's own
    computation, so the two cannot differ (remembered: seeding a generator costs more than the rest of a small
    draw)."""
    return float(ops.get("uniform").compute(shape=(batch, 1), seed=seed, n=n)[b, 0])


def draw(logits: Any, sampling: Sampling, n: int, batch: int = 1, b: int = 0) -> Draw:
    """Every stage of new token ``n``'s draw for sequence ``b`` (of ``batch``) from its logits (V,)."""
    z = np.asarray(logits, dtype=float)
    if sampling.greedy:
        p_model = kernels.softmax(z.copy())
        token = int(np.argmax(p_model))
        return Draw(sampling, z, z, z, z, p_model, p_model, p_model, p_model, None, token)
    t = sampling.temperature
    tb = float(t[b] if isinstance(t, tuple) else t)
    scaled = z / tb
    after_k = scaled if sampling.top_k is None else kernels.top_k_filter(scaled, sampling.top_k)
    after_p = after_k if sampling.top_p is None else kernels.top_p_filter(after_k, sampling.top_p)
    p_scaled = kernels.softmax(scaled.copy())
    p_model = p_scaled if tb == 1 else kernels.softmax(z.copy())
    p_ranked = p_scaled if after_k is scaled else kernels.softmax(after_k.copy())
    probs = p_ranked if after_p is after_k else kernels.softmax(after_p.copy())
    u = uniform(sampling.seed, n, batch, b)
    token = int(kernels.sample(probs, np.asarray(u)))
    return Draw(sampling, z, scaled, after_k, after_p, p_model, p_scaled, p_ranked, probs, u, token, tb)
