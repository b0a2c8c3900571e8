"""The closed-form price of a run (explain.engine.pricing via explain.engine.api.estimate): equal to the full shape-only
plan, byte for byte, for generations of many lengths, layer counts, batches and sampling settings; so
``--max-new-tokens 10**6`` is refused from six small plans instead of a million planned tokens."""

from __future__ import annotations

import time

import pytest

import explain
from explain.core.errors import ResourceError
from explain.core.sampling import make_sampling
from explain.engine.api import estimate, plan
from explain.engine.request import prepare_run as _prepare


@pytest.mark.parametrize("layers, new, options, sampling", [
    (1, 1, {}, {}),
    (1, 5, {}, {}),
    (3, 9, {"text": "a b c d e"}, {"top_k": 3}),
    (2, 12, {"text": ["a b", "c d"]}, {"greedy": True}),
    (4, 7, {"n_heads": 4, "d_model": 16}, {"temperature": [0.5, 1.5], "top_p": 0.9}),
])
def test_the_closed_form_equals_the_full_plan(layers: int, new: int, options: dict, sampling: dict) -> None:
    if isinstance(sampling.get("temperature"), list):
        options = {**options, "text": ["a b", "c d"]}
    s = make_sampling(new, **sampling)
    cfg, inp = _prepare("gpt", n_layers=layers, n_ctx=64, **options)
    full = plan("gpt", n_layers=layers, n_ctx=64, sampling=s, **options)
    assert estimate(cfg, inp, None, s) == (full.n_params, full.nbytes)


def test_a_million_new_tokens_are_refused_at_once_with_the_estimate_named() -> None:
    start = time.process_time()
    with pytest.raises(ResourceError, match=r"needs about [\d.]+ TiB.*999,000 new tokens.*--max-new-tokens"):
        explain.generate("gpt", max_new_tokens=999_000, n_ctx=1_000_000)
    assert time.process_time() - start < 10  # a hang guard only: bench_reliability measures the speed
