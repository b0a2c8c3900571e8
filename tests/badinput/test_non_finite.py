"""Finite inputs that end in NaN or +inf are named in one line, with the first step that went non-finite
(issue 36 item 3), and a GGUF's RMS epsilon or rotary base that is NaN, infinite, negative or a string is refused
in one line naming the key (item 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from clitools import invoke, one_line_error  # noqa: E402
from gguf_files import write_gguf  # noqa: E402

import explain
from explain.engine.finite import NonFiniteError


def _huge_weights() -> dict[str, np.ndarray]:
    shapes = {k: v.shape for k, v in explain.run("llama", text="the cat sat").params.items()}
    rng = np.random.default_rng(0)
    return {k: rng.standard_normal(s) * 1e300 for k, s in shapes.items()}


def test_a_run_that_overflows_names_the_first_non_finite_step() -> None:
    w = _huge_weights()
    with pytest.raises(NonFiniteError) as err:
        explain.run("llama", text="the cat sat", weights=w, backward=True)
    msg = str(err.value)
    assert "\n" not in msg and "went NaN at step 'blocks.1.resid_post.grad'" in msg and "e+300" in msg, msg
    # the step named is the first: every step before it is finite
    trace = explain.run("llama", text="the cat sat", weights=w)  # the forward alone stays finite (RMSNorm)
    assert all(np.isfinite(s.output).all() for s in trace.steps
               if isinstance(s.output, np.ndarray) and s.output.dtype.kind == "f" and "masked" not in s.name)


def test_an_expert_that_overflows_is_named_though_only_its_taken_rows_are_read() -> None:
    """bench_moe: the check reads an expert's step only at the rows the router sent to it (the rest are 0 by
    construction); an overflow in those rows is still named at the expert's own step, not later at the mixture."""
    opts = dict(text="the cat sat on the mat", n_experts=4, experts_per_token=2)
    w = dict(explain.run("llama", **opts).params)
    for name in ("W_gate", "W_in"):  # each ~1e200: their product, silu(x·W_gate) ⊙ x·W_in, overflows
        w[f"blocks.0.mlp.experts.{name}"] = w[f"blocks.0.mlp.experts.{name}"] * 1e202
    with pytest.raises(NonFiniteError, match="went inf at step 'blocks.0.mlp.experts.post'"):
        explain.run("llama", weights=w, **opts)


def test_the_cli_says_it_in_one_line_with_exit_1(tmp_path: Path) -> None:
    np.savez(tmp_path / "w.npz", **_huge_weights())
    r = invoke("run", "llama", "--text", "the cat sat", "--weights", str(tmp_path / "w.npz"), "--backward", "--plain")
    one_line_error(r, 1, "went NaN at step", "check the weights")


@pytest.mark.parametrize("eps, said", [("tiny", "'tiny'"), (float("nan"), "nan"), (float("inf"), "inf"),
                                       (-1.0, "-1.0")])
def test_a_hostile_gguf_epsilon_is_one_line_naming_the_key(tmp_path: Path, eps: object, said: str) -> None:
    pytest.importorskip("gguf")
    path = write_gguf(tmp_path / "m.gguf", "F32", eps=eps)
    r = invoke("run", "llama", "--checkpoint", str(path), "--text", "hello", "--plain")
    one_line_error(r, 1, "llama.attention.layer_norm_rms_epsilon must be a number above 0", said)


@pytest.mark.parametrize("field, value, said", [
    ("tokens", list(range(40)), "tokenizer.ggml.tokens[0] is a number, not text"),
    ("merges", ["ab"], "tokenizer.ggml.merges[0] is 'ab', not two tokens"),
    ("merges", ["a  b"], "tokenizer.ggml.merges[0] is 'a  b'"),
    ("merges", ["zz qq"], "its tokens and merges do not make a tokenizer"),
    # a vocabulary longer than the embedding's rows (issue 36: 3,000,000 tokens took 75 s and 4.7 GB to open)
    ("tokens", [f"t{i}" for i in range(3000)], "holds 3,000 tokens but token_embd has"),
])
def test_a_hostile_gguf_vocabulary_is_one_line(tmp_path: Path, field: str, value: list, said: str) -> None:
    """Issue 36 item 4: numbers where the tokens should be, and merges that are not two tokens, were tracebacks
    from the tokenizer's build."""
    pytest.importorskip("gguf")
    path = write_gguf(tmp_path / "m.gguf", "F32", **{field: value})
    r = invoke("run", "llama", "--checkpoint", str(path), "--text", "hello", "--plain")
    one_line_error(r, 1, said, "give --tokens")
