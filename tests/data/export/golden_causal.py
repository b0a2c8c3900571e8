"""The steps attn.scores … attn.z (5 steps) of a causal run, as plain numpy.

Model: causal (d_model=2, n_heads=1, d_head=2, d_ff=8, n_layers=1, d_vocab=45,
n_ctx=32, seed=0).
Tokens: Your journey starts

Run it with `python golden_causal.py`: it needs only numpy. It computes each step
from the parameters and the recorded outputs of the steps before them, with the numpy
code explain itself ran, then checks every result against the value explain recorded.
Exported by explain 0.1.0.
"""

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


def causal_mask(scores):
    """Set every score above the diagonal (key position j > query position i)
    to -inf, so that softmax gives those future positions weight 0."""
    t_q, t_k = scores.shape[-2], scores.shape[-1]
    future = np.triu(np.ones((t_q, t_k), dtype=bool), k=1)
    return np.where(future, -np.inf, scores)


# attn.q  (3, 2): recorded output of a step before this export
attn_q = np.array(
    [[1.4306654465758692, -0.8928709712861723],
     [-0.05044162334438285, 0.537477632360662],
     [0.4799275360222055, 0.015785701070526653]]
)

# attn.k  (3, 2): recorded output of a step before this export
attn_k = np.array(
    [[-0.09542515205367808, -0.8807121114903794],
     [0.5326336134506025, 0.4846727877982941],
     [0.306181321092847, -0.11239249660987169]]
)

# attn.scores  (3, 3)
# S = Q·Kᵀ
# (3, 2) · (2, 3) → (3, 3)
# Scores: how well each query matches each key, as a dot product. Row i is query i.
attn_scores = attn_q @ np.swapaxes(attn_k, -1, -2)

# attn.scaled  (3, 3)
# S' = S / √d_k
# (3, 3) / √d_k → (3, 3)
# Divide by √d_k = √2 = 1.41421: dot products grow with d_k, and scaling keeps softmax
# out of its flat, saturated regions.
attn_scaled = attn_scores / np.sqrt(2)

# attn.masked  (3, 3)
# Sₘ = S' + M,  M[i, j] = −inf if j > i else 0
# (3, 3) + mask (3, 3) → (3, 3)
# Causal mask: a position may attend only to itself and earlier positions. Future scores
# become −inf, so softmax gives them weight exactly 0.
attn_masked = causal_mask(attn_scaled)

# attn.pattern  (3, 3)
# A = softmax(Sₘ)  (each row)
# (3, 3) → (3, 3)
# Attention weights: softmax of each row of scores. Row i says how much query i takes
# from each position.
attn_pattern = softmax(attn_masked)

# attn.v  (3, 2): recorded output of a step before this export
attn_v = np.array(
    [[0.29429748989382454, 0.39577029632126975],
     [0.1671824601266136, -0.6297810642469734],
     [0.4808039170784346, -0.3701207518736773]]
)

# attn.z  (3, 2)
# Z = A·V
# (3, 3) · (3, 2) → (3, 2)
# Each output is the sum of the value vectors weighted by the attention weights.
attn_z = attn_pattern @ attn_v


# Check: every step computed above against the value explain recorded for it, to
# rtol=1e-09, atol=1e-12. assert_allclose counts equal infinities as equal, so a masked
# score must be -inf here too.
expected = {
    "attn.scores": np.array(
        [[0.6498408106324652, 0.32927024365118535, 0.5383950340878215],
         [-0.4685496608977365, 0.23363387834523577, -0.07585273584662851],
         [-0.0596998162208455, 0.26327643745115414, 0.14517065265406018]]
    ),
    "attn.scaled": np.array(
        [[0.45950684388997926, 0.2328292221286999, 0.380702779560661],
         [-0.3313146425434468, 0.1652040996928291, -0.05363598388870293],
         [-0.042214144885350496, 0.18616455424834702, 0.10265115292096282]]
    ),
    "attn.masked": np.array(
        [[0.45950684388997926, -np.inf, -np.inf],
         [-0.3313146425434468, 0.1652040996928291, -np.inf],
         [-0.042214144885350496, 0.18616455424834702, 0.10265115292096282]]
    ),
    "attn.pattern": np.array(
        [[1.0, 0.0, 0.0],
         [0.3783591253874405, 0.6216408746125595, 0.0],
         [0.2930450200924281, 0.368228971020369, 0.33872600888720283]]
    ),
    "attn.z": np.array(
        [[0.29429748989382454, 0.39577029632126975],
         [0.215277591612934, -0.2417543484224733],
         [0.3106646309934756, -0.24129464390682462]]
    ),
}
computed = {
    "attn.scores": attn_scores,
    "attn.scaled": attn_scaled,
    "attn.masked": attn_masked,
    "attn.pattern": attn_pattern,
    "attn.z": attn_z,
}
for step_name, got in computed.items():
    np.testing.assert_allclose(
        got, expected[step_name], rtol=1e-09, atol=1e-12, err_msg=step_name
    )
print(f"ok: {len(computed)} steps match the recorded values (rtol=1e-09, atol=1e-12)")
