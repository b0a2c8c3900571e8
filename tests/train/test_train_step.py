"""The training path against independent references: the untraced step equals the recorded backward pass
(which itself matches torch autograd, test_backward_torch.py) to 1e-10; AdamW equals torch.optim.AdamW
(tests/data/train/adamw.npz, made by tests/data/make_train_fixtures.py) to 1e-12."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import explain
from explain.train.step import AdamW, loss_and_grads

DATA = Path(__file__).resolve().parents[1] / "data" / "train"
TEXTS = ["the cat sat on the mat", "a dog is happy and nice"]  # the same length: no padding


@pytest.mark.parametrize("opts", [{}, dict(d_model=16, n_heads=4, n_layers=2, qkv_bias=False),
                                  dict(d_model=12, n_heads=3, n_layers=3, seed=4)])
def test_untraced_step_equals_the_recorded_backward(opts):
    tr = explain.run("gpt", text=TEXTS, backward=True, **opts)
    P = {k: np.array(v) for k, v in tr.params.items()}
    loss, G = loss_and_grads(P, np.asarray(tr["tokens"].output), tr.config.n_layers, tr.config.n_heads)
    assert loss == pytest.approx(float(tr["loss"].output), abs=1e-12)
    assert set(G) == set(P)
    for k in P:
        np.testing.assert_allclose(G[k], tr[k + ".grad"].output, rtol=1e-10, atol=1e-12, err_msg=k)


def test_adamw_equals_torch():
    with np.load(DATA / "adamw.npz") as z:
        d = {k: z[k] for k in z.files}
    P = {k.split(":")[1]: v.copy() for k, v in d.items() if k.startswith("p0:")}
    opt = AdamW(lr=0.01, weight_decay=0.1)
    for i in (1, 2, 3):
        opt.step(P, {k: d[f"g{i}:{k}"] for k in P})
    for k in P:
        np.testing.assert_allclose(P[k], d[f"p3:{k}"], rtol=1e-12, atol=1e-14, err_msg=k)
    assert not np.allclose(P["W"], d["p0:W"])  # it moved
