"""The pieces latent attention added: the interleaved rotary layout, a slice that starts inside a row, the latent
widths' defaults and refusals, and the absorbed scores against the naive ones on random weights."""

from __future__ import annotations

import numpy as np
import pytest

# pytest runs with no package root on the path (the tests folder has no __init__)
from clitools import invoke, one_line_error  # noqa: E402

import explain
from explain import ops
from explain.core.config import make_config
from explain.core.errors import ConfigError
from explain.ops import kernels
from explain.ops.base import Syms


def test_interleaved_rope_is_rotate_half_on_the_pairs_laid_side_by_side() -> None:
    # pairs (2i, 2i+1) rotated in place = de-interleave (evens, then odds), rotate-half, interleave back: the
    # permutation GGUF files and DeepSeek's weights are stored in (written here without the kernel's code)
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 8))
    order = np.r_[0:8:2, 1:8:2]  # evens then odds
    back = np.argsort(order)
    want = kernels.rope(x[..., order], 500.0, start=3)[..., back]
    got = kernels.rope(x, 500.0, start=3, interleaved=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    # by hand, pair 1 = dimensions (2, 3) at position 3 + 4: angle 7·500^(−2/8)
    ang = 7 * 500.0 ** (-2 / 8)
    a, b = x[0, 0, 4, 2], x[0, 0, 4, 3]
    assert got[0, 0, 4, 2] == pytest.approx(a * np.cos(ang) - b * np.sin(ang), abs=1e-14)
    assert got[0, 0, 4, 3] == pytest.approx(b * np.cos(ang) + a * np.sin(ang), abs=1e-14)
    np.testing.assert_allclose(kernels.rope(got, 500.0, start=3, sign=-1.0, interleaved=True), x, atol=1e-14)


def test_interleaved_rope_views() -> None:
    op = ops.get("rope")
    x = np.random.default_rng(1).standard_normal((1, 4, 6))
    attrs = dict(theta=100.0, start=2, layout="interleaved")
    out = op.compute(x, **attrs)
    syms = Syms("Kᵣ", ("K",))
    assert "(K[2i], K[2i+1])" in op.formula(syms, **attrs)
    assert op.source("o", ["k"], **attrs) == "rope(k, 100.0, start=2, interleaved=True)"
    ex = op.explain((0, 1, 3), [x], out, syms, **attrs)
    assert ex.title.endswith("pair 1 = dimensions (2, 3) at position 3")
    assert "interleaved: dimension 2k pairs with 2k + 1 (2 with 3)" in ex.lines
    assert sum(r[-1] for r in ex.rows) == pytest.approx(out[0, 1, 3], abs=1e-14)
    assert op.source("o", ["k"], theta=100.0, start=2) == "rope(k, 100.0, start=2)"  # rotate-half as before


def test_a_slice_from_inside_a_row() -> None:
    op = ops.get("slice")
    x = np.arange(24.0).reshape(2, 3, 4)
    attrs = dict(axis=-1, start=1, stop=3)
    out = op.compute(x, **attrs)
    np.testing.assert_array_equal(out, x[..., 1:3])
    assert op.shape((2, 3, 4), **attrs) == (2, 3, 2)
    assert op.feeds((1, 2, 0), [x], **attrs) == [(1, 2, 1)]
    assert op.explain((1, 2, 0), [x], out, Syms("Q_R", ("Q",)), **attrs).title == "Q_R[1, 2, 0] = Q[1, 2, 1]"
    assert op.formula(Syms("Q_R", ("Q",)), **attrs) == "Q_R = Q[…, 1:3]"


@pytest.mark.parametrize("options, needle", [
    (dict(kv_lora_rank=4), "--kv-lora-rank is a width of latent attention; add --attention mla"),
    (dict(attention="mla", qk_rope_head_dim=4), "is not narrower than the head (d_head 4)"),
    (dict(attention="mla", qk_rope_head_dim=12, qk_nope_head_dim=4, d_head=8), "is not --qk-nope-head-dim 4 + "),
    (dict(attention="mla", qk_rope_head_dim=3), "must be even; use 2"),
    (dict(attention="mla", d_head=8, qk_nope_head_dim=8), "leaves no rotary part in the head (--d-head 8)"),
    (dict(attention="mla", n_kv_heads=2), "latent attention has no key/value heads"),
    (dict(attention="mla", qkv_bias=True), "no biases"),
])
def test_latent_widths_that_cannot_be_built_are_refused(options: dict, needle: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        make_config("llama", **options)
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("args, needle", [
    (("--kv-lora-rank", "0"), "0 is not in the range x>=1"),
    (("--q-lora-rank", "0"), "0 is not in the range x>=1"),
    (("--qk-rope-head-dim", "8"), "--qk-rope-head-dim 8 is not narrower than the head"),
    (("--qk-rope-head-dim", "64", "--qk-nope-head-dim", "32", "--d-head", "48"), "--d-head 48 is not"),
])
def test_hostile_widths_are_one_line_on_the_command_line(args: tuple, needle: str) -> None:
    result = invoke("run", "llama", "--attention", "mla", *args, "--plain")
    one_line_error(result, 2, needle)


def test_the_default_widths_and_deepseek_v3s() -> None:
    lat = make_config("llama", attention="mla").latent  # d_model 8, 2 heads: a head of 4
    assert (lat.q_lora_rank, lat.kv_lora_rank, lat.qk_nope_head_dim, lat.qk_rope_head_dim, lat.v_head_dim) == \
        (4, 4, 2, 2, 4)
    v3 = make_config("llama", attention="mla", d_model=7168, n_heads=128, q_lora_rank=1536, kv_lora_rank=512,
                     qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)
    assert v3.head_dim == 192
    assert (v3.latent.cache_per_token(), v3.latent.plain_cache_per_token(128)) == (512 + 64, 128 * (192 + 128))
    assert 40_960 / 576 > 71  # the "71× smaller"


def test_absorbed_scores_equal_the_naive_ones_on_random_weights() -> None:
    trace = explain.generate("llama", attention="mla", d_model=24, n_heads=3, kv_lora_rank=5, qk_rope_head_dim=4,
                             seed=4, greedy=True, max_new_tokens=4, text="the cat sat on the mat")
    pairs = [(s.name, s.name.replace("scores_absorbed", "scores")) for s in trace if s.name.endswith("scores_absorbed")]
    assert len(pairs) == 3 * 2  # new tokens 1–3, two layers (token 0 is read off the prompt)
    for absorbed, naive in pairs:
        np.testing.assert_allclose(trace[absorbed].output, trace[naive].output, rtol=1e-12, atol=1e-12)
    # the latent path by hand: (q·W_UKᵀ)·cᵀ for head 1 of layer 0 at new token 2
    at = "gen.2.blocks.0.attn."
    q, W_UK, c = trace[at + "q_nope"].output, trace.params["blocks.0.attn.W_UK"], trace[at + "latent_cache"].output
    want = (q[0, 1] @ W_UK[1].T) @ c[0, 0].T
    np.testing.assert_allclose(trace[at + "scores_latent"].output[0, 1], want, rtol=1e-12)


@pytest.mark.parametrize("kind", ["backward", "generate"])
def test_an_exported_latent_attention_run_reproduces_its_steps(kind: str, tmp_path) -> None:
    # the new views' numpy sources (interleaved rope, a slice from inside a row and its gradient, the latent
    # cache), run by a clean interpreter with numpy alone
    from scripts import passed, run_script  # lazy: the export tests' helpers (tests/helpers)

    from explain.export import write_export

    if kind == "backward":
        trace = explain.run("llama", attention="mla", backward=True)
    else:
        trace = explain.generate("llama", attention="mla", greedy=True, max_new_tokens=3)
    path = write_export(trace, tmp_path / "mla.py")
    passed(run_script(path, tmp_path), len([s for s in trace if s.op != "input"]))
