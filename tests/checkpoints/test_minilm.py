"""all-MiniLM-L6-v2 (Apache-2.0), the catalogue's ``minilm``, fetched once per test run by explain's own fetch
(marked network: fails, never skips, without it): the cosines of the README's sentences equal an independent
float64 numpy pass (tests/helpers/reference_bert.py) to 1e-10 and the published figures to their 10 decimals, every
pair view sums to its cosine to 1e-12, and the parameter count is BertModel's."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import reference_bert
from minilm import minilm

import explain

pytestmark = pytest.mark.network
TEXTS = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]


@lru_cache(maxsize=1)
def run():
    """One run of the three sentences per test worker."""
    return explain.run("bert", checkpoint=str(minilm()), text=TEXTS)


def test_the_cosines_are_the_published_ones_and_an_independent_pass() -> None:
    trace = run()
    cos = trace["sentence.cos"].output
    assert abs(cos[0, 1] - 0.7553370806) < 5e-11 and abs(cos[0, 2] - -0.1049584972) < 5e-11
    folder = minilm()
    batch = reference_bert.encode(folder, TEXTS)
    assert batch[0] == [101, 1037, 2158, 2003, 5983, 2833, 1012, 102]
    assert trace["tokens"].output[0, :8].tolist() == batch[0]
    np.testing.assert_allclose(cos, reference_bert.cosines(reference_bert.sentence_embeddings(folder, batch)),
                               rtol=1e-10, atol=1e-10)
    assert trace.n_params == 22_713_216


def test_every_pair_view_sums_to_its_cosine() -> None:
    trace = run()
    cos = trace["sentence.cos"].output
    for a, b in ((0, 1), (0, 2), (1, 2)):
        parts = trace[f"pairs.{a}_{b}.parts"].output
        assert abs(parts.sum() - cos[a, b]) < 1e-12 and abs(float(trace[f"pairs.{a}_{b}.total"].output) - cos[a, b]) < 1e-12
        assert parts.shape == (len(trace.labels[f"text{a}"]), len(trace.labels[f"text{b}"]))
    # the pairs a reader would name first: the shared verb, the shared noun, then food with what else is eaten
    assert trace.labels["pairs0_1"][:4] == ["eating · eating", "man · man", "food · eating", "food · bread"]


def test_the_tokenizer_steps_add_cls_and_sep() -> None:
    from explain.checkpoints.open import open_checkpoint
    from explain.tokenize.family import tokenizer_for

    w = tokenizer_for(open_checkpoint(str(minilm()))).walk(TEXTS[0])
    assert w.ids == [101, 1037, 2158, 2003, 5983, 2833, 1012, 102]
