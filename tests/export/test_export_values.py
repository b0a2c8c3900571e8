"""Export building blocks: array literals read back bit for bit (±inf and NaN included) and fit the line width;
wrapping a long statement never changes what it means (the AST is the same); comments stay comments."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import explain
from explain import ops
from explain.export.layout import comment, statement
from explain.export.plan import var_names
from explain.export.values import WIDTH, float_text, literal

MODELS = ["simple", "attention", "causal", "multihead", "synthesizer", "encoder", "transformer", "gpt"]


def read_back(lines: list[str], prefix: str) -> np.ndarray:
    text = "\n".join(lines).strip()
    assert text.startswith(prefix.strip())
    return eval(text[len(prefix.strip()):].strip(), {"np": np})  # noqa: S307 - our own generated literal


@pytest.mark.parametrize("x, text", [(0.1, "0.1"), (-0.0, "-0.0"), (1e-300, "1e-300"), (float("inf"), "np.inf"),
                                     (float("-inf"), "-np.inf"), (float("nan"), "np.nan"), (2.0, "2.0")])
def test_float_text_is_repr_with_numpy_names_for_the_rest(x: float, text: str) -> None:
    assert float_text(x) == text


floats = hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=4, max_side=6),
                    elements=st.floats(allow_nan=True, allow_infinity=True, width=64))
ints = hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.integers(-10**12, 10**12))


@settings(max_examples=150, deadline=None)
@given(arr=st.one_of(floats, ints), indent=st.sampled_from(["", "    "]))
def test_literal_reads_back_exactly_and_fits(arr: np.ndarray, indent: str) -> None:
    prefix = indent + "blocks_0_attn_W_Q = "
    lines = literal(arr, prefix, indent=indent)
    back = read_back(lines, prefix)
    assert back.shape == arr.shape
    assert back.dtype.kind == arr.dtype.kind
    np.testing.assert_array_equal(back, arr)  # NaN equals NaN here; ±inf must match exactly
    numbers = ~np.isnan(arr)  # bit for bit: -0.0 stays -0.0 (a NaN's sign means nothing)
    assert np.array_equal(np.signbit(back)[numbers], np.signbit(arr)[numbers])
    assert all(len(ln) <= WIDTH for ln in lines), max(lines, key=len)


def test_literal_layout_is_numpy_like() -> None:
    a = np.array([[1.0, -np.inf], [0.5, 2.0]])
    assert literal(a, "x = ") == ["x = np.array([[1.0, -np.inf], [0.5, 2.0]])"]
    b = np.arange(24.0).reshape(2, 3, 4) / 7
    lines = literal(b, "x = ")
    assert lines[0] == "x = np.array(" and lines[-1] == ")"
    assert lines[1].startswith("    [[[") and lines[2].startswith("      [")  # inner brackets line up
    assert literal(np.array(3.5), "loss = ") == ["loss = np.array(3.5)"]
    assert literal(np.array([[3, 1, 4]]), "tokens = ") == ["tokens = np.array([[3, 1, 4]])"]


def _sources(trace) -> list[tuple[str, str]]:
    names = var_names(trace)
    out = []
    for s in trace:
        if s.op == "input":
            continue
        # stretch the names so that every statement must wrap, however short the real one is
        ins = [names[n] + "_with_a_long_suffix_to_force_wrapping" for n in s.inputs]
        out.append((names[s.name] + "_long_target", ops.get(s.op).source(names[s.name], ins, **s.attrs)))
    return out


@pytest.mark.parametrize("model", MODELS)
def test_wrapping_keeps_the_statement_the_same(model: str) -> None:
    trace = explain.run(model)
    for target, expr in _sources(trace):
        lines = statement(target, expr)
        original = ast.dump(ast.parse(f"{target} = {expr}"))
        assert ast.dump(ast.parse("\n".join(lines))) == original, "\n".join(lines)
        assert all(len(ln) <= WIDTH for ln in lines), "\n".join(lines)


def test_wrapping_splits_sums_then_call_arguments() -> None:
    lines = statement("decoder_blocks_0_cross_attn_q",
                      'np.einsum("...td,hdm->...htm", decoder_blocks_0_ln1, decoder_blocks_0_cross_attn_W_Q) '
                      "+ decoder_blocks_0_cross_attn_b_Q[:, None, :]", width=60)
    assert lines == [
        "decoder_blocks_0_cross_attn_q = (",
        "    np.einsum(",
        '        "...td,hdm->...htm",',
        "        decoder_blocks_0_ln1,",
        "        decoder_blocks_0_cross_attn_W_Q,",
        "    )",
        "    + decoder_blocks_0_cross_attn_b_Q[:, None, :]",
        ")",
    ]
    assert statement("a", "-b + -c") == ["a = -b + -c"]  # short: untouched


def test_comment_wraps_and_never_leaves_code_behind() -> None:
    lines = comment("word " * 40 + "\n\nS = Q·Kᵀ")
    assert all(ln.startswith("#") and len(ln) <= WIDTH for ln in lines)
    assert "#" in lines and lines[-1] == "# S = Q·Kᵀ"


def test_variable_names_follow_the_step_names_and_never_clash() -> None:
    class Fake:
        params = {"blocks.0.attn.W_Q": None, "np": None, "softmax": None}

        @staticmethod
        def names() -> list[str]:
            return ["a.b", "a_b", "class", "0.x", "data", "blocks.0.attn.scores"]

    names = var_names(Fake())  # type: ignore[arg-type]
    assert names["blocks.0.attn.W_Q"] == "blocks_0_attn_W_Q"
    assert names["blocks.0.attn.scores"] == "blocks_0_attn_scores"
    assert names["np"] != "np" and names["softmax"] != "softmax" and names["data"] != "data"
    assert names["class"] != "class" and names["0.x"].isidentifier()
    assert names["a.b"] != names["a_b"]
    assert len(set(names.values())) == len(names)
    assert all(v.isidentifier() for v in names.values())
