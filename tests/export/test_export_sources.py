"""The ops' export views, checked in-process for every step of every model: each op's ``source()``, evaluated
with numpy and only the helpers the op declares (copied from explain/kernels.py, as the script gets them),
gives exactly the step's recorded output. A wrong ``source()`` or a missing ``helpers`` entry fails here with
the step's name, before any script is written."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from interp_runs import GPT2_TINY, interp_run

import explain
from explain import ops
from explain.core.sampling import make_sampling
from explain.export.plan import build, var_names
from explain.ops import kernels

RUNS = {
    "simple": {}, "simple-sum": {"normalize": "sum"}, "attention": {}, "causal": {}, "multihead": {},
    "synthesizer": {}, "encoder": {}, "transformer": {}, "gpt": {}, "gpt-batch": {"text": ["the cat", "a dog"]},
    "simple-embeddings": {"embeddings": None},
    # generation: the cached forward, temperature, both filters and a seeded draw; and greedy decoding
    "gpt-generate": {"sampling": make_sampling(3, temperature=0.8, top_k=4, top_p=0.9, seed=1)},
    "gpt-greedy": {"sampling": make_sampling(2, greedy=True)},
    # the backward pass: every gradient step's source too
    "simple-backward": {"backward": True}, "simple-sum-backward": {"normalize": "sum", "backward": True},
    "causal-backward": {"backward": True}, "multihead-backward": {"backward": True},
    "synthesizer-backward": {"backward": True}, "encoder-backward": {"backward": True},
    "transformer-backward": {"backward": True}, "gpt-lr": {"text": ["the cat", "a dog"], "lr": 0.1},
    "gpt-adamw": {"text": ["the cat", "a dog"], "lr": 0.01, "optimizer": "adamw", "random_weights": True},
    "gpt-padded": {"text": ["the cat sat on the mat", "a dog"]},
    # the interpretability steps: a patched run, its logit lens and an attribution (explain.interp)
    "gpt-interp": {},
    "transformer-padded": {"text": ["the cat sat", "a dog"], "target": ["the dog", "a cat is happy"]},
    "multihead-book": {"causal": True, "qkv_bias": False, "d_out": 3},
    "gpt-padded-backward": {"text": ["the cat sat on the mat", "a dog"], "backward": True},
    "llama": {}, "llama-backward": {"backward": True}, "llama-generate": {"sampling": make_sampling(3, greedy=True)},
    "llama-qwen2": {"qkv_bias": True, "n_kv_heads": 2, "tie_embeddings": False},
    # the tiled attention kernel: a padded causal batch, and a generation (tiles that do not divide the length)
    "gpt-tiled": {"text": ["the cat sat on the mat", "a dog"], "attention_kernel": "tiled", "attention_tile": 4},
    "llama-tiled": {"attention_kernel": "tiled", "attention_tile": 3, "sampling": make_sampling(2, greedy=True)},
    "gemma-tiled": {"attention_kernel": "tiled", "attention_tile": 3, "backward": True},  # the window in tiles
    "gpt-tiledbackward": {"text": ["the cat sat on the mat", "a dog"], "attention_kernel": "tiled", "attention_tile": 4,
                          "backward": True},
    # the tokenizer's steps: the word tokenizer, byte-level BPE (the GPT-2 fixture) and WordPiece (its fixture)
    "gpt-tokenizer": {"tokenizer_steps": True, "text": "The cat is happy, ok?"},
    "gpt-tokenizer-bpe": {"tokenizer_steps": True, "text": "The capital of France 😀", "checkpoint": str(GPT2_TINY)},
    "wordpiece-walk": {},
    # a mixture of experts: Mixtral's router; DeepSeek's grouped sigmoid router with a gated shared expert,
    # backward; and generation on the cache
    "llama-moe": {"n_experts": 4, "text": ["the cat sat", "a dog ran"]},
    "llama-moe-backward": {"n_experts": 6, "router": "sigmoid", "n_group": 3, "topk_group": 2,
                           "routed_scaling_factor": 2.5, "n_shared_experts": 1, "shared_expert_gate": True,
                           "first_k_dense_replace": 1, "backward": True},
    "llama-moe-generate": {"n_experts": 4, "experts_per_token": 1, "sampling": make_sampling(2, greedy=True)},
    # Gemma: the window mask, GeGLU, the (1 + w) norms, backward; generation on the window's cache; a padded batch
    "gemma": {}, "gemma-backward": {"backward": True},
    "gemma-generate": {"sampling": make_sampling(3, greedy=True), "sliding_window": 3},
    "gemma-padded": {"text": ["once upon a time there was", "a cat"]},
    "llama-window": {"sliding_window": 2, "rope_local_base_freq": 100.0, "backward": True},
    # BERT: the sentence head and the pairs of a padded batch of three, and the backward from 1 − cos
    "bert": {"text": ["a man is eating", "a man eats bread", "the girl is here"]},
    "bert-backward": {"backward": True},
}


def make_run(key: str):
    model = key.split("-")[0]
    options = dict(RUNS[key])
    if key == "gpt-interp":
        return interp_run()
    if key == "wordpiece-walk":
        return wordpiece_walk()
    if key.startswith("simple-embeddings"):
        options["embeddings"] = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.0, 1.0, 1.0]])
        options["text"] = "Your journey starts"
    return explain.run(model, **options)


def wordpiece_walk():
    """The WordPiece fixture's walkthrough as recorded steps (no model of the zoo reads WordPiece yet)."""
    import json

    from explain.tokenize.record import record_walkthrough
    from explain.tokenize.wordpiece import WordPiece

    data = json.loads((GPT2_TINY.parent / "wordpiece_tiny" / "tokenizer.json").read_text())
    return record_walkthrough(WordPiece.from_json(data, "fixture").walk("Unbelievable tokenization, résumé!"), "fixture")


def helper_namespace(names: tuple[str, ...]) -> dict:
    """numpy and the named helpers, defined from their source text the way the script defines them."""
    ns: dict = {"np": np}
    for h in names:
        exec(inspect.getsource(getattr(kernels, h)), ns)  # noqa: S102 - the project's own kernel source
    return ns


@pytest.mark.parametrize("key", list(RUNS))
def test_every_source_reproduces_its_step(key: str) -> None:
    trace = make_run(key)
    names = var_names(trace)
    for step in trace:
        if step.op == "input":
            continue
        op = ops.get(step.op)
        ns = helper_namespace(op.helpers)
        for n in step.inputs:
            ns[names[n]] = trace.value(n)
        expr = op.source(names[step.name], [names[n] for n in step.inputs], **step.attrs)
        got = eval(expr, ns)  # noqa: S307 - the op's own source
        assert np.shape(got) == step.shape, (step.name, expr)
        np.testing.assert_allclose(got, step.output, rtol=1e-12, atol=0, err_msg=f"{step.name}: {expr}")


def test_every_op_kind_is_exercised() -> None:
    """A new op kind must be covered by the runs above (and so by the exported scripts)."""
    seen = {s.op for key in RUNS for s in make_run(key)}
    assert seen == set(ops.REGISTRY), set(ops.REGISTRY) - seen


def test_helpers_are_functions_of_the_kernels_module() -> None:
    """Every helper an op names is a function of explain/ops/kernels.py, defined there or in one of its rooms
    (whose source the script copies; that the copy needs nothing but np is what the eval above checks, with no
    other name defined)."""
    for h in {h for op in ops.REGISTRY.values() for h in op.helpers}:
        fn = getattr(kernels, h, None)
        assert inspect.isfunction(fn) and fn.__module__ in kernels.MODULES, h


def test_export_plan_uses_each_ops_source_and_helpers() -> None:
    trace = make_run("gpt")
    export = build(trace)
    for code in export.steps:
        if code.step.op == "input":
            assert code.expr is None
            continue
        op = ops.get(code.step.op)
        assert code.expr == op.source(code.var, [var_names(trace)[n] for n in code.step.inputs], **code.step.attrs)
    wanted = {h for c in export.checked for h in ops.get(c.step.op).helpers}
    assert set(export.helpers) == wanted
    assert [s.split("(")[0] for s in export.helper_sources()] == [f"def {h}" for h in export.helpers]
