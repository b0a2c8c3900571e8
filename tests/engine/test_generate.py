"""Generation on the GPT-2 test checkpoint against transformers (greedy ids and logits written once by
tests/data/make_generate_expected.py) and against explain's own full, cache-free forward; reproducible seeded
sampling; validation; memory; and the export of a generation reproducing its tokens."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.core.errors import InputError, UsageError
from explain.core.sampling import make_sampling
from explain.engine.api import generated_ids, generation_bytes
from explain.export import write_export

DATA = Path(__file__).resolve().parents[1] / "data"
CKPT = DATA / "gpt2_tiny"


@pytest.fixture(scope="module")
def ref() -> dict:
    with np.load(DATA / "generate" / "expected.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def greedy(ref) -> list:
    return [explain.generate("gpt", checkpoint=CKPT, tokens=ref[f"prompt_{i}"].tolist(), max_new_tokens=20,
                             greedy=True, ignore_eos=True) for i in range(int(ref["n_prompts"]))]


def test_greedy_20_tokens_equal_transformers_generate(ref, greedy) -> None:
    for i, trace in enumerate(greedy):
        assert generated_ids(trace) == [ref[f"greedy_{i}"].tolist()]


def new_logits(trace, n: int) -> np.ndarray:
    """The logits that chose new token n: the prompt's last position for n = 0, else the new position's."""
    return trace["logits"].output[:, -1] if n == 0 else trace[f"gen.{n}.logits"].output[:, 0]


def test_logits_at_every_new_position_match_a_full_forward_and_transformers(ref, greedy) -> None:
    for i, trace in enumerate(greedy):
        prompt, new = ref[f"prompt_{i}"].tolist(), ref[f"greedy_{i}"].tolist()
        for n in range(20):
            full = explain.run("gpt", checkpoint=CKPT, tokens=prompt + new[:n])  # no cache: every position again
            np.testing.assert_allclose(new_logits(trace, n), full["logits"].output[:, -1], rtol=0, atol=1e-10)
            np.testing.assert_allclose(new_logits(trace, n)[0], ref[f"scores_{i}"][n], rtol=0, atol=1e-9)
            if n:  # the cache after token n holds the full forward's keys and values of every position
                for name in ("k", "v"):
                    np.testing.assert_allclose(trace[f"gen.{n}.blocks.1.attn.{name}_cache"].output,
                                               full[f"blocks.1.attn.{name}"].output, rtol=0, atol=1e-12)


def test_each_new_token_records_one_position_and_shares_the_cache(greedy) -> None:
    trace = greedy[0]
    per_token = [[s for s in trace if s.name.startswith(f"gen.{n}.")] for n in range(1, 20)]
    assert len({len(steps) for steps in per_token}) == 1
    assert trace["gen.5.blocks.0.attn.q"].shape == (1, 2, 1, 8)
    assert trace["gen.5.blocks.0.attn.k_cache"].shape == (1, 2, 4 + 5, 8)
    assert trace["gen.5.blocks.0.attn.scores"].shape == (1, 2, 1, 9)
    assert trace["gen.5.blocks.0.attn.k_cache"].output.base is trace["gen.19.blocks.0.attn.k_cache"].output.base
    mem = generation_bytes(trace)
    assert mem["cache"] == 2 * 2 * (4 + 19) * 16 * 8  # layers × (K, V) × positions × d_model × 8 bytes
    assert trace.nbytes == mem["prompt"] + mem["cache"] + sum(
        s.nbytes for s in trace if s.name.startswith("gen.") and s.op != "kv_append")


def test_seeded_sampling_is_reproducible() -> None:
    opts = dict(checkpoint=CKPT, text="The cat", max_new_tokens=8, temperature=2.0, top_k=20)
    a, b = explain.generate("gpt", seed=3, **opts), explain.generate("gpt", seed=3, **opts)
    assert generated_ids(a) == generated_ids(b)
    others = {tuple(generated_ids(explain.generate("gpt", seed=s, **opts))[0]) for s in range(4, 8)}
    assert len(others | {tuple(generated_ids(a)[0])}) > 1
    assert a["gen.3.u"].formula.endswith("(generator seeded with [3, 3])")


def test_sampled_steps_in_order_and_cut_tokens_never_drawn() -> None:
    trace = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=6, temperature=3.0, top_k=5,
                             top_p=0.9, seed=1)
    names = [s.name for s in trace if s.name.startswith("gen.2.") and "blocks" not in s.name]
    assert names == ["gen.2.embed", "gen.2.pos_embed", "gen.2.ln_final", "gen.2.logits", "gen.2.temperature",
                     "gen.2.top_k", "gen.2.top_p", "gen.2.probs", "gen.2.u", "gen.2.next"]
    for n in range(6):
        probs, tok = trace[f"gen.{n}.probs"].output, trace[f"gen.{n}.next"].output
        assert probs[0, 0, tok[0, 0]] > 0 and (probs > 0).sum() <= 5


def test_batch_generation_draws_per_row() -> None:
    trace = explain.generate("gpt", random_weights=True, text=["the cat", "a dog"], max_new_tokens=3, seed=2)
    ids = generated_ids(trace)
    assert len(ids) == 2 and all(len(r) == 3 for r in ids)
    for n in range(1, 3):  # each row's new token is the one drawn for it
        np.testing.assert_array_equal(trace[f"gen.{n}.embed"].output[:, 0], trace.params["W_E"][
            trace[f"gen.{n - 1}.next"].output[:, 0]])


def test_every_generation_cell_explanation_reports_its_value() -> None:
    trace = explain.generate("gpt", random_weights=True, max_new_tokens=3, top_k=3, top_p=0.8)
    for step in trace:
        if not step.name.startswith("gen."):
            continue
        cell = tuple(s - 1 for s in step.shape)
        ex = trace.explain(step, cell)
        assert ex.value == float(step.output[cell]) and ex.lines, step.name


@pytest.mark.parametrize("kwargs,message", [
    (dict(temperature=-1.0), "--temperature must be 0 or more"),
    (dict(temperature=float("nan")), "--temperature is NaN"),
    (dict(temperature=float("inf")), "--temperature is infinite"),
    (dict(top_k=0), "--top-k must be a whole number of at least 1"),
    (dict(top_p=0.0), "--top-p must be more than 0 and at most 1"),
    (dict(top_p=1.5), "--top-p must be more than 0 and at most 1"),
    (dict(top_p=float("nan")), "--top-p is NaN"),
    (dict(max_new_tokens=0), "--max-new-tokens must be a whole number of at least 1"),
    (dict(greedy=True, top_k=3), "--greedy takes the most probable token, so --top-k would have no effect"),
    (dict(temperature=0.0, top_p=0.9), "temperature 0 means greedy decoding"),
])
def test_bad_settings_are_one_line_errors(kwargs, message) -> None:
    with pytest.raises(UsageError, match=message.replace("+", r"\+")) as info:
        make_sampling(**kwargs)
    assert "\n" not in str(info.value)


def test_temperature_zero_is_greedy_and_says_so() -> None:
    s = make_sampling(temperature=0)
    assert s.greedy and "greedy" in s.notes[0]
    a = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=4, temperature=0)
    b = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=4, greedy=True)
    assert generated_ids(a) == generated_ids(b) and "gen.0.u" not in a


def test_generation_stops_at_the_end_of_text_token_unless_told_not_to(ref) -> None:
    prompt = ref["prompt_0"].tolist()  # greedy's first new token here is <|endoftext|> (id 0, eos_token_id)
    stopped = explain.generate("gpt", checkpoint=CKPT, tokens=prompt, max_new_tokens=5, greedy=True)
    assert generated_ids(stopped) == [[0]] and stopped.generation.stopped_at_eos
    assert "gen.1.embed" not in stopped
    going = explain.generate("gpt", checkpoint=CKPT, tokens=prompt, max_new_tokens=5, greedy=True, ignore_eos=True)
    assert generated_ids(going) == [ref["greedy_0"][:5].tolist()]


def test_generation_past_the_context_and_other_models_are_refused() -> None:
    with pytest.raises(InputError, match="use --max-new-tokens 29 or less"):
        explain.generate("gpt", checkpoint=CKPT, text="The cat is happy", max_new_tokens=30)
    with pytest.raises(UsageError, match="use 'gpt' or 'llama' or 'gemma', not 'encoder'"):
        explain.generate("encoder", max_new_tokens=2)


def test_plan_of_a_generation_has_every_step_and_no_values() -> None:
    planned = explain.engine.api.plan("gpt", sampling=make_sampling(4, top_k=2))
    numeric = explain.generate("gpt", random_weights=True, max_new_tokens=4, top_k=2)
    assert [(s.name, s.shape) for s in planned] == [(s.name, s.shape) for s in numeric]
    assert planned.nbytes == numeric.nbytes


def test_exported_generation_reproduces_the_tokens(tmp_path: Path) -> None:
    trace = explain.generate("gpt", checkpoint=CKPT, text="The cat", max_new_tokens=4, temperature=1.5, top_k=8,
                             top_p=0.95, seed=5, ignore_eos=True)
    path = tmp_path / "gen.py"
    write_export(trace, path)
    text = path.read_text()
    assert "np.random.default_rng([5, 3]).random((1, 1))" in text and "def sample(probs, u):" in text
    proc = subprocess.run([sys.executable, "-I", str(path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok:")  # every step, the drawn tokens (gen.n.next) included, matches
    assert "gen_3_next" in text
