"""The key/value cache is typed (:class:`explain.models.kvcache.KVCache`) and a model's decode step is found through
its registry entry (issue 38, models): a sliding layer's cache keeps only its window, latent attention caches only its
latent and the shared rotary key, and generation names no model."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

import explain
from explain.core.config import Config
from explain.core.registry import MODELS, Model, step_of
from explain.models import generate as generate_module
from explain.models.kvcache import KVCache, layer_caches
from explain.trace.recorder import Recorder


def _caches_after_prompt(model: str, **opts) -> tuple[Config, list[KVCache]]:
    """The caches a generation starts from, rebuilt from a recorded run's steps as generate does."""
    trace = explain.run(model, tokens=[3, 5, 7, 9, 11, 13], seed=1, **opts)
    rec = Recorder.resume(trace)
    return trace.config, layer_caches(rec, trace.config, capacity=9, after=None)


def test_every_model_that_generates_names_a_decode_step_beside_its_forward() -> None:
    generating = [m for m in MODELS.values() if m.generates]
    assert {m.name for m in generating} >= {"gpt", "llama", "gemma"}
    for m in generating:
        step = step_of(m)
        assert callable(step) and step.__module__ == m.function.partition(":")[0], m.name  # beside the forward
        assert list(inspect.signature(step).parameters) == ["rec", "cfg", "token", "pos", "caches"]
    with pytest.raises(ValueError, match="decode step"):
        Model("toy", "no step", {}, "x", "generates")


def test_generation_dispatches_on_no_model_name() -> None:
    """No ``{"gpt": …, "llama": …}`` table: no string in models/generate.py is a model's name."""
    tree = ast.parse(inspect.getsource(generate_module))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not strings & set(MODELS)


def test_plain_attention_caches_keys_and_values_as_attention_reads_them() -> None:
    cfg, caches = _caches_after_prompt("gpt", random_weights=True)
    assert [c.keys.name for c in caches] == ["blocks.0.attn.k", "blocks.1.attn.k"]  # GPT: as projected
    assert all(c.latent is None and c.rot_k is None and c.window is None and c.first for c in caches)
    cfg, caches = _caches_after_prompt("llama")
    assert [c.keys.name for c in caches] == ["blocks.0.attn.rot_k", "blocks.1.attn.rot_k"]  # rotary: rotated
    assert [c.values.name for c in caches] == ["blocks.0.attn.v", "blocks.1.attn.v"]


def test_a_sliding_layer_keeps_only_its_window() -> None:
    gen = explain.generate("gemma", tokens=[3, 5, 7, 9, 11, 13], seed=1, sliding_window=3, max_new_tokens=4,
                           greedy=True, ignore_eos=True)
    cfg = gen.config
    kinds = [cfg.window(i) for i in range(cfg.n_layers)]
    assert kinds == [3, None]  # gemma's pattern: a sliding layer, then a full one (every 6th; 2 layers)
    rec = Recorder.resume(gen)
    after = layer_caches(rec, cfg, capacity=9, after=3)
    assert [c.window for c in after] == kinds and not any(c.first for c in after)
    sliding, full = (c.keys.value for c in after)
    assert sliding.shape[-2] == 3 and full.shape[-2] == 6 + 3  # the window's last keys; every key
    # the window holds the rotated keys of the last three positions, which new tokens 1, 2 and 3 fed in
    fed = np.concatenate([gen[f"gen.{n}.blocks.0.attn.rot_k"].output for n in (1, 2, 3)], axis=-2)
    np.testing.assert_array_equal(sliding, fed)
    np.testing.assert_array_equal(full[..., -3:, :], np.concatenate(
        [gen[f"gen.{n}.blocks.1.attn.rot_k"].output for n in (1, 2, 3)], axis=-2))


def test_latent_attention_caches_a_latent_and_the_shared_rotary_key_only() -> None:
    cfg, caches = _caches_after_prompt("llama", attention="mla")
    for i, c in enumerate(caches):
        assert c.keys is None and c.values is None
        assert (c.latent.name, c.rot_k.name) == (f"blocks.{i}.attn.ln_kv", f"blocks.{i}.attn.rot_k")
        assert c.latent.shape[1] == c.rot_k.shape[1] == 1  # one head, shared by every query head
