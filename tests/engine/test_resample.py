"""Live sampling's core (issue 26): :func:`explain.report.draw.draw`, one draw stage by stage, checked against a plain
numpy reading of the four rules (divide, keep the k largest, keep the most probable while the mass before is
below p, draw by the inverse CDF) written here without the kernels; and :func:`explain.engine.resample.resample`, which
draws token n again and regenerates the tokens after it on the kept cache, checked against whole fresh runs."""

from __future__ import annotations

import numpy as np
import pytest

import explain
from explain.core.sampling import make_sampling
from explain.engine.api import generated_ids
from explain.engine.resample import resample, token_of
from explain.report.draw import draw

TEXT = "the cat sat on the"
_RUNS: dict[str, object] = {}


def run(key: str = "sampled"):
    if key not in _RUNS:
        opts = dict(temperature=0.8, seed=1) if key == "sampled" else dict(temperature=0)
        _RUNS[key] = explain.generate("gpt", text=TEXT, max_new_tokens=5, ignore_eos=True, **opts)
    return _RUNS[key]


def reference(z, t, k, p, u):
    """The draw by the definitions: p ∝ exp(z / T) over the tokens kept; ties kept as the kernels keep them."""
    s = z / t
    keep = np.ones(z.size, bool)
    if k is not None:
        keep &= s >= np.sort(s)[::-1][k - 1]
    if p is not None:
        order = sorted(np.flatnonzero(keep), key=lambda i: (-s[i], i))
        e = np.exp(s[order] - s[order[0]])
        probs = e / e.sum()
        mass = 0.0
        for i, q in zip(order, probs):
            keep[i] = mass < p  # the mass of the tokens ranked above it
            mass += q
    e = np.where(keep, np.exp(s - s[keep].max()), 0.0)
    probs = e / e.sum()
    token = int(np.searchsorted(np.cumsum(probs), u * probs.sum(), side="right"))
    return probs, keep, token


@pytest.mark.parametrize("t,k,p", [(1.0, None, None), (0.7, 5, None), (1.3, None, 0.9), (0.5, 50, 0.6),
                                   (2.0, 1, None), (1.0, 3, 0.99)])
def test_each_stage_is_the_rule_it_names(t, k, p):
    z = np.random.default_rng(7).normal(0, 2, 300)
    d = draw(z, make_sampling(3, t, k, p, seed=4), n=2)
    probs, keep, token = reference(z, t, k, p, d.u)
    assert d.u == np.random.default_rng([4, 2]).random((1, 1))[0, 0]  # the uniform op's draw
    np.testing.assert_allclose(d.scaled, z / t, rtol=0, atol=0)
    assert np.array_equal(np.isfinite(d.after_p), keep)
    np.testing.assert_allclose(d.probs, probs, rtol=1e-12, atol=1e-15)
    assert d.token == token
    lo, hi, total = d.stretch()
    assert lo <= d.u * total < hi and hi - lo == pytest.approx(d.probs[token], abs=1e-12)
    scaled = np.exp(z / t - (z / t).max())
    np.testing.assert_allclose(d.p_scaled, scaled / scaled.sum(), rtol=1e-12)  # before the filters
    kept = float(d.p_scaled[keep].sum())
    np.testing.assert_allclose(d.probs[keep], d.p_scaled[keep] / kept, rtol=1e-10)  # the renormalisation shown


def test_greedy_is_the_argmax_and_top_puts_the_drawn_token_in_the_rows():
    z = np.array([0.5, 3.0, 3.0, -1.0, 2.0])
    d = draw(z, make_sampling(3, 0), 0)
    assert d.greedy and d.token == 1 and d.u is None  # the first of two tied maxima, as np.argmax
    far = draw(np.linspace(5, 0, 400), make_sampling(3, 5.0, seed=0), 0)
    assert far.token > 3 and far.top(4) == [0, 1, 2, far.token]  # the drawn token takes the last row


def test_the_draw_is_the_regenerated_traces_own():
    trace = run()
    s = make_sampling(5, 1.4, 10, 0.9, seed=9)
    new = resample(trace, 2, s)
    d = draw(trace["gen.2.logits"].output[0, 0], s, 2)
    assert int(new["gen.2.next"].output[0, 0]) == d.token
    assert np.array_equal(new["gen.2.probs"].output[0, 0], d.probs)  # bit for bit: the same kernels


def test_the_same_settings_give_the_same_run_and_nothing_before_the_draw_is_recomputed():
    trace = run()
    again = resample(trace, 2, trace.generation.sampling)
    assert again.names() == trace.names()
    for a, b in zip(trace, again):
        assert np.array_equal(a.output, b.output) and (a.formula, a.syms, a.note) == (b.formula, b.syms, b.note)
    cut = trace["gen.2.logits"].index
    assert all(a is b for a, b in zip(trace.steps[:cut + 1], again.steps[:cut + 1]))  # kept, not run again
    assert again.generation == trace.generation


def test_token_zero_with_new_settings_is_a_fresh_generation_with_them():
    trace = run()
    s = make_sampling(5, 1.5, 3, 0.9, seed=7)
    new = resample(trace, 0, s)
    fresh = explain.generate("gpt", text=TEXT, max_new_tokens=5, ignore_eos=True, temperature=1.5, top_k=3, top_p=0.9,
                             seed=7)
    assert new.names() == fresh.names()
    for a, b in zip(fresh, new):
        assert np.array_equal(a.output, b.output), a.name
    assert new.generation.describe() == fresh.generation.describe()


def test_later_tokens_continue_on_the_cache_as_a_fresh_run_of_the_longer_prompt():
    """Greedy from token 2: the tokens after it are those a fresh greedy run gives the prompt with tokens 0 and 1
    appended (recomputed from scratch there, read from the cache here); logits to 1e-9."""
    trace = run()
    new = resample(trace, 2, make_sampling(5, 0))
    ids = generated_ids(new)[0]
    assert ids[:2] == generated_ids(trace)[0][:2]
    prompt = list(trace["tokens"].output[0]) + ids[:2]
    fresh = explain.generate("gpt", tokens=[int(i) for i in prompt], max_new_tokens=3, temperature=0, ignore_eos=True)
    assert generated_ids(fresh)[0] == ids[2:]
    for n in range(3):
        a = fresh["gen.0.next_logits" if n == 0 else f"gen.{n}.logits"].output
        np.testing.assert_allclose(new[f"gen.{n + 2}.logits"].output, a, rtol=0, atol=1e-9)
    desc = new.generation.describe()
    assert desc.startswith("tokens 0–1 sampled at temperature 0.8, seed 1; from token 2 greedy"), desc
    assert new.generation.sampling_of(1).temperature == 0.8 and new.generation.sampling_of(3).greedy


def test_token_of_a_step():
    trace = run()
    assert token_of(trace, trace["gen.3.blocks.0.ln1"].index) == 3
    assert token_of(trace, trace["embed"].index) == 0  # the prompt's logits give token 0
    assert token_of(explain.run("gpt"), 0) is None


def test_a_one_word_prompt_draws_token_zero_from_the_prompts_own_logits():
    """A one-token prompt has no gen.0.next_logits (its logits are already one position): token 0 is drawn from
    the prompt's ``logits`` (CI's monkey test found D failing there); the prompt's own steps after the logits
    (probs, log_probs) are kept, and the new run equals a fresh generation with the new settings."""
    trace = explain.generate("gpt", text="the", max_new_tokens=3, ignore_eos=True, temperature=0.8, seed=1)
    assert "gen.0.next_logits" not in trace
    s = make_sampling(3, 1.5, 4, None, seed=9)
    new = resample(trace, 0, s)
    fresh = explain.generate("gpt", text="the", max_new_tokens=3, ignore_eos=True, temperature=1.5, top_k=4, seed=9)
    assert new.names() == fresh.names()
    for a, b in zip(fresh, new):
        assert np.array_equal(a.output, b.output), a.name
