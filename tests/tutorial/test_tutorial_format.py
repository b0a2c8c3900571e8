"""The tutorial format: loading by name or path, inline arrays and weights, every expectation kind holding and
failing, and the bad fixtures in tests/data/tutorials/ each giving its own one-line error that names the file,
the line or field, and the fix."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import explain
from explain.core.errors import ExplainError
from explain.tutorial import (
    Tutorial,
    TutorialError,
    TutorialNotFound,
    check_tutorial,
    load_tutorial,
    narration_by_step,
    run_tutorial,
    stop_step,
)
from explain.tutorial.errors import Source

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "tutorials"

HEADER = 'title = "T"\nsummary = "S"\n'
SIMPLE = HEADER + 'model = "simple"\n[options]\ntext = "a b"\nembeddings = [[1, 0], [1, 1]]\n'


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def stop(step: str, expect: str = "", extra: str = "") -> str:
    body = f'\n[[stops]]\nstep = "{step}"\ntitle = "a stop"\nnarration = "words"\n{extra}'
    return body + (f"\n[stops.expect]\n{expect}\n" if expect else "")


def error_of(path: Path) -> str:
    with pytest.raises(TutorialError) as info:
        check_tutorial(load_tutorial(path))
    msg = str(info.value)
    assert "\n" not in msg, "errors are one line"
    return msg


# -- finding tutorials ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["3", "03", "thinking-machines", "03-thinking-machines"])
def test_a_shipped_tutorial_by_number_name_or_full_name(name: str) -> None:
    tut = load_tutorial(name)
    assert tut.name == "03-thinking-machines" and tut.model == "attention"
    assert isinstance(tut, Tutorial) and tut.path is not None and tut.path.name == "03-thinking-machines.toml"


def test_a_tutorial_by_path(tmp_path: Path) -> None:
    p = write(tmp_path, SIMPLE + stop("attn.scores"), "lesson.toml")
    for arg in (p, str(p)):
        tut = load_tutorial(arg)
        assert tut.name == "lesson" and tut.path == p and len(tut.stops) == 1


def test_an_unknown_name_is_a_usage_error_with_a_suggestion() -> None:
    with pytest.raises(TutorialNotFound) as info:
        load_tutorial("thinking-machine")
    assert info.value.exit_code == 2
    assert "'thinking-machines'" in str(info.value) and "explain tutorial list" in str(info.value)
    with pytest.raises(TutorialNotFound, match="does not exist"):
        load_tutorial("no/such/file.toml")


# -- the bad fixtures: each its own error -------------------------------------------------------------
BAD_CASES = {
    # fixture: (line, fragments that must all appear)
    "not_toml": (2, ["not valid TOML", "column 9", "text needs quotes"]),
    "missing_field": (11, ["stop 2 'attn.pattern'", "missing 'narration'", 'add narration = "']),
    "unknown_step": (12, ["stop 2 'attn.score'", "step:", "no step or group named 'attn.score'",
                          "did you mean 'attn.scores'"]),
    "wrong_type": (8, ["options.d_model", "must be a whole number", "got '4'", "write d_model = 4"]),
    "failing_expect": (26, ["stop 2 'attn.scores'", "expect.values", "attn.scores[1][1] is 1.495",
                            "expects 1.459", "tol 5e-05", "correct the expected number"]),
    "cell_outside": (13, ["stop 1 'attn.scores'", "cell:", "[6, 0] is outside attn.scores", "(6, 6)",
                          "e.g. cell = [0, 0]"]),
    "unknown_key": (9, ["unknown key 'narative'", "did you mean 'narration'"]),
    "bad_weight_shape": (12, ['weights."attn.W_Q"', "has shape (4, 3)", "needs (4, 64)", "4 × 64"]),
    "unknown_weight": (10, ['weights."attn.WQ"', "no parameter 'attn.WQ'", "did you mean 'attn.W_Q'"]),
    "ragged_values": (16, ["expect.values", "not rectangular", "nested lists of equal length"]),
    "engine_refuses": (6, ["options", "not divisible by 3 heads", "use n_heads one of"]),
}


@pytest.mark.parametrize("fixture", sorted(BAD_CASES))
def test_each_bad_fixture_gives_its_own_located_one_line_error(fixture: str) -> None:
    line, fragments = BAD_CASES[fixture]
    path = BAD / f"{fixture}.toml"
    msg = error_of(path)
    assert msg.startswith(f"{path}:{line}: "), msg
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    assert "; " in msg  # what is wrong; how to fix it


def test_the_bad_fixtures_give_distinct_errors() -> None:
    msgs = [error_of(BAD / f"{f}.toml").split(": ", 1)[1] for f in BAD_CASES]
    assert len(set(msgs)) == len(msgs)


def test_the_good_fixture_passes() -> None:
    report = check_tutorial(load_tutorial(BAD / "good_minimal.toml"))
    assert [c.kind for c in report.checks] == ["cell", "value", "values", "values", "row_sums"]


def test_a_binary_file_is_not_toml(tmp_path: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    with pytest.raises(TutorialError, match=r"x\.toml: not valid TOML: the file is not UTF-8 text"):
        load_tutorial(p)


# -- schema errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, fragments", [
    (HEADER + 'model = "gtp"' + stop("x"), ["model:", "unknown model 'gtp'", "did you mean 'gpt'"]),
    (HEADER + 'model = "simple"\n', ["the tutorial has no stops", "[[stops]]"]),
    ('summary = "S"\nmodel = "simple"' + stop("embed"), ["missing 'title'", 'add title = "']),
    (SIMPLE + stop("embed", extra='answer = "x"'), ["answer:", "an answer without a question"]),
    (SIMPLE + stop("embed", "value = 1"), ["expect.value", "the stop has no cell", "add cell = [i, j]"]),
    (SIMPLE + stop("embed", "sahpe = [2, 2]"), ["unknown key 'sahpe'", "did you mean 'shape'"]),
    (SIMPLE + stop("embed", "tol = -1"), ["tol must be a finite number ≥ 0"]),
    (SIMPLE + stop("embed", "index = [0]"), ["expect.index", "there are no values"]),
    (SIMPLE + stop("embed", "equal_slices = [[0]]"), ["expect.equal_slices", "at least two slices"]),
    (SIMPLE + stop("embed", 'param_count = 3'), ["expect.param_count", "prefix = count"]),
    (SIMPLE + stop("embed", extra='cell = "1,0"'), ["cell:", "list of whole numbers", "cell = [1, 0]"]),
    (SIMPLE.replace('text = "a b"', 'txt = "a b"') + stop("embed"), ["options.txt", "did you mean 'text'"]),
    (SIMPLE + stop("embed", 'values = { shape = [2, 2], values = [[1, 2, 3]] }'),
     ["expect.values", "do not fit in the leading corner"]),
    (SIMPLE + stop("embed", "equals = 3"), ["expect.equals", "a step name or a list of step names"]),
    (SIMPLE.replace("[options]", "[options]\nbackward = 1") + stop("embed"), ["options.backward", "backward = true"]),
    (SIMPLE.replace("[options]", "[options]\nlr = -0.1") + stop("embed"), ["options.lr", "positive number"]),
])
def test_schema_errors_name_the_field_and_the_fix(tmp_path: Path, text: str, fragments: list[str]) -> None:
    with pytest.raises(TutorialError) as info:
        load_tutorial(write(tmp_path, text))
    msg = str(info.value)
    assert msg.startswith(str(tmp_path / "t.toml")) and "\n" not in msg
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"


# -- every expectation kind, holding and failing ----------------------------------------------------------
@pytest.mark.parametrize("step, expect, fragments", [
    ("attn.scores", "shape = [2, 3]", ["expect.shape", "has shape (2, 2)", "write shape = [2, 2]"]),
    ("attn.scores", "values = [1, 1]", ["expect.values", "gives (2,) numbers", "shape [2, 2]"]),
    ("attn.scores", "index = [5]\nvalues = [1, 1]", ["expect.index", "[5] is outside attn.scores"]),
    ("attn.scores", "row_sums = 2.0", ["expect.row_sums", "the row sums of attn.scores[1] is 3"]),
    ("attn.scores", "above_diagonal = 0.0", ["expect.above_diagonal", "above the diagonal[0] is 1"]),
    ("attn.pattern", "max = 0.6", ["expect.max", "above the expected max 0.6"]),
    ("attn.scores", "min = 1.5", ["expect.min", "below the expected min 1.5"]),
    ("attn.scores", "equal_slices = [[0], [1]]", ["attn.scores[0] and attn.scores[1] differ"]),
    ("attn.scores", 'unequal_slices = [[0, ":"], [":", 0]]', ["are equal", "unequal_slices"]),
    ("attn.scores", 'inputs = ["W_Q"]', ["attn.scores reads embed, embed, not 'W_Q'"]),
    ("attn.scores", "n_params = 5", ["the run has 0 parameters but the tutorial expects 5"]),
    ("attn.scores", 'param_count = { "W_E" = 3 }', ["no parameter name starts with 'W_E'"]),
    ("attn.z", "row_means = 0.0", ["expect.row_means"]),
    ("attn.z", "row_vars = 0.0", ["expect.row_vars"]),
    ("attn.scores", 'equals = "attn.pattern"', ["attn.scores is not attn.pattern", "expect.equals"]),
    ("attn.scores", 'equals = "attn.nothing"', ["no step or parameter named 'attn.nothing'"]),
])
def test_a_failing_expectation_names_the_field(tmp_path: Path, step: str, expect: str, fragments: list[str]) -> None:
    msg = error_of(write(tmp_path, SIMPLE + stop(step, expect)))
    assert f"stop 1 '{step}'" in msg
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"


def test_every_expectation_kind_can_hold(tmp_path: Path) -> None:
    text = SIMPLE + stop("attn.scores", "\n".join([
        "shape = [2, 2]", "value = 2", "values = [[1, 1], [1, 2]]", "above_diagonal = 1.0", "min = 1", "max = 2",
        'equal_slices = [[0, ":"], [":", 0]]', "unequal_slices = [[0], [1]]", 'inputs = ["embed"]', "n_params = 0",
    ]), extra="cell = [1, 1]") + stop("attn.pattern", "row_sums = 1.0\nindex = [0]\nvalues = [0.5, 0.5]\n"
                                      'unequal_slices = [[":", 0], [":", 1]]') \
        + stop("attn.z", "row_means = 0.5\nrow_vars = 0.25\nindex = [\":\", 0]\nvalues = [1, 1]\ntol = 0.5")
    report = check_tutorial(load_tutorial(write(tmp_path, text)))
    kinds = [c.kind for c in report.checks]
    for k in ("shape", "value", "values", "above_diagonal", "min", "max", "equal_slices", "unequal_slices",
              "inputs", "n_params", "row_sums", "values[0]", "row_means", "row_vars", "values[:, 0]"):
        assert k in kinds, k


def test_backward_options_and_equals_hold(tmp_path: Path) -> None:
    """A tutorial can run the backward pass (with a given ∂L/∂output) and check that a step is the sum of
    others: here ∂L/∂X is the sum of its three contributions (X·Xᵀ uses X twice, A·X once)."""
    text = SIMPLE.replace("[options]", '[options]\nbackward = true\ngrad_output = [[1, 0], [0, 1]]') + stop(
        "embed.grad", 'equals = ["embed.grad.from.attn.z", "embed.grad.from.attn.scores.arg0", '
                      '"embed.grad.from.attn.scores.arg1"]') + stop("attn.z.grad", "values = [[1, 0], [0, 1]]")
    kinds = [c.kind for c in check_tutorial(load_tutorial(write(tmp_path, text))).checks]
    assert kinds == ["equals", "values"]


def test_minus_inf_expectations_match_the_mask(tmp_path: Path) -> None:
    # W_Q = W_K = I and b = 0: the score of a with a is 1/√2 after scaling; a with b is masked
    text = HEADER + 'model = "causal"\n[options]\ntext = "a b"\nembeddings = [[1, 0], [0, 1]]\n' + \
        '[weights]\n"attn.W_Q" = [[1, 0], [0, 1]]\n"attn.W_K" = [[1, 0], [0, 1]]\n' + \
        '"attn.b_Q" = [0, 0]\n"attn.b_K" = [0, 0]\n' + \
        stop("attn.masked", f"above_diagonal = -inf\nindex = [0]\nvalues = [{float(1 / np.sqrt(2))!r}, -inf]")
    kinds = [c.kind for c in check_tutorial(load_tutorial(write(tmp_path, text))).checks]
    assert kinds == ["values[0]", "above_diagonal"]


# -- weights, arrays and inputs ---------------------------------------------------------------------------
def test_weights_not_written_come_from_the_seed_as_in_explain_run(tmp_path: Path) -> None:
    text = HEADER + 'model = "attention"\n[options]\ntext = "Thinking Machines"\nseed = 3\n' \
        '[weights]\n"attn.W_Q" = { shape = [4, 4], fill = 0.5, values = [[1, 2], [3, 4]] }\n' + stop("attn.q")
    trace = run_tutorial(load_tutorial(write(tmp_path, text)))
    want_q = np.full((4, 4), 0.5)
    want_q[:2, :2] = [[1, 2], [3, 4]]
    np.testing.assert_array_equal(trace.params["attn.W_Q"], want_q)
    plain = explain.run("attention", text="Thinking Machines", seed=3)
    for name in plain.params:
        if name != "attn.W_Q":
            np.testing.assert_array_equal(trace.params[name], plain.params[name], err_msg=name)


def test_weights_and_embeddings_files_relative_to_the_tutorial(tmp_path: Path) -> None:
    sub = tmp_path / "lesson"
    sub.mkdir()
    np.save(sub / "x.npy", np.array([[1.0, 0.0], [0.0, 2.0]]))
    np.savez(sub / "w.npz", **{"attn.W_Q": np.eye(2), "attn.b_Q": np.zeros(2)})
    text = HEADER.replace('summary = "S"\n', 'summary = "S"\nweights = "w.npz"\n') + \
        'model = "attention"\n[options]\ntext = "a b"\nembeddings = "x.npy"\n' + \
        stop("attn.q", "values = [[1, 0], [0, 2]]")
    assert check_tutorial(load_tutorial(write(sub, text))).checks
    bad = text.replace('"w.npz"', '"missing.npz"')
    with pytest.raises(TutorialError, match=r"weights: weights file .*missing\.npz. does not exist"):
        load_tutorial(write(sub, bad, "bad.toml"))


def test_a_weight_with_inf_is_refused(tmp_path: Path) -> None:
    text = HEADER + 'model = "attention"\n[options]\ntext = "a b"\nd_model = 2\n[weights]\n' \
        '"attn.b_Q" = [0, inf]\n' + stop("attn.q")
    msg = error_of(write(tmp_path, text))
    assert 'weights."attn.b_Q": holds inf or nan' in msg


# -- the API the TUI and the exporter use -----------------------------------------------------------------
def test_stop_step_resolves_a_group_to_its_first_step() -> None:
    tut = load_tutorial("encoder-block")
    trace = run_tutorial(tut)
    group = next(s for s in tut.stops if s.step == "blocks.1")
    assert stop_step(trace, group).name == "blocks.1.attn.q"
    exact = next(s for s in tut.stops if s.step == "blocks.0.attn")
    assert stop_step(trace, exact).name == "blocks.0.attn.q"  # not blocks.0.attn_out
    with pytest.raises(ExplainError, match="did you mean"):
        stop_step(trace, type(group)("blocks.0.atn", "t", "n"))


def test_narration_by_step_keys_resolved_steps_and_carries_questions() -> None:
    tut = load_tutorial("thinking-machines")
    notes = narration_by_step(tut)  # resolved in a shape-only plan: no run needed
    assert list(notes) == [s.step for s in tut.stops]
    assert notes["attn.scores"].startswith("### Scores: q₁·k₁ = 112, q₁·k₂ = 96")
    assert "**Question.**" in notes["attn.scores"] and "<details><summary>Answer</summary>" in notes["attn.scores"]
    assert "Question" not in narration_by_step(tut, questions=False)["attn.scores"]
    enc = load_tutorial("encoder-block")
    assert "blocks.1.attn.q" in narration_by_step(enc, run_tutorial(enc))


def test_narration_of_two_stops_on_one_step_is_joined(tmp_path: Path) -> None:
    text = SIMPLE + stop("attn.scores") + stop("attn.scores").replace("a stop", "again")
    notes = narration_by_step(load_tutorial(write(tmp_path, text)))
    assert list(notes) == ["attn.scores"] and notes["attn.scores"].count("###") == 2


def test_the_readme_example_is_a_valid_tutorial(tmp_path: Path) -> None:
    readme = (ROOT / "tutorials" / "README.md").read_text()
    example = re.search(r"```toml\n(.*?)```", readme, re.S).group(1)
    report = check_tutorial(load_tutorial(write(tmp_path, example)))
    assert {"shape", "values[1]"} <= {c.kind for c in report.checks}


def test_line_of_skips_narration_text() -> None:
    text = 'title = "t"\n[[stops]]\nstep = "x"\nnarration = """\nvalues = not a key\n"""\n[stops.expect]\n' \
           "values = [1]\n"
    src = Source("f.toml", text)
    assert src.stop_lines == [2]
    assert src.line_of("expect.values", stop=0) == 8
    assert src.line_of("title") == 1
    assert src.line_of("nothing", stop=0) == 2


def test_the_core_imports_neither_click_nor_textual_nor_rich() -> None:
    code = ("import sys; from explain.tutorial import load_tutorial, run_tutorial; "
            "run_tutorial(load_tutorial('gpt-and-its-loss')); "
            "print(sorted(m for m in ('click', 'textual', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# A valid value of every [options] key, by type (a key whose type is not here must get a sample of its own)
_SAMPLE = {"int": 3, "float": 2.5, "bool": True, "flag": True, "text": '"a,b"'}


def test_every_option_a_tutorial_may_set_reaches_the_run(tmp_path: Path) -> None:
    """Issue 36: rope_theta was accepted and ignored (any value, nan included, ran with θ = 10000 and passed
    tutorial check). Walk the options table: every key [options] accepts is read into the run's options, and a
    value of the wrong kind is refused naming the key."""
    from explain.core.options import OPTION
    from explain.tutorial.schema import OPTION_KEYS

    special = {"text": '"a b"', "target": '"a b"', "tokens": "[1, 2]", "embeddings": "[[1, 0], [1, 1]]",
               "output_target": "[[1.0]]", "grad_output": "[[1.0]]", "lr": "0.5", "checkpoint": '"smollm2"'}
    for key in OPTION_KEYS:
        o = OPTION[key]
        value = special.get(key)
        if value is None and o.type == "choice":
            value = f'"{o.choices[-1]}"'
        if value is None:
            sample = _SAMPLE[o.type]  # a KeyError here: a new option type needs a sample (and a parser branch)
            value = str(sample).lower() if isinstance(sample, bool) else str(sample)  # "a,b" stays quoted
        text = HEADER + f'model = "simple"\n[options]\n{key} = {value}\n' + stop("attn.scores")
        tut = load_tutorial(write(tmp_path, text))
        assert key in tut.options or (key == "embeddings" and tut.embeddings is not None), key
        bad = {"int": '"x"', "float": '"x"', "bool": '"x"', "flag": '"x"', "choice": '"no-such-choice"',
               "text": "3"}.get(o.type)
        if bad is not None and key not in special:
            with pytest.raises(TutorialError, match=rf"options\.{key}"):
                load_tutorial(write(tmp_path, HEADER + f'model = "simple"\n[options]\n{key} = {bad}\n'
                                    + stop("attn.scores")))


def test_a_tutorials_checkpoint_is_a_model_of_the_catalogue_never_a_path(tmp_path: Path) -> None:
    for value in ('"model.gguf"', '"gpt-tiny"', '"/etc/passwd"'):
        text = HEADER + f'model = "llama"\n[options]\ncheckpoint = {value}\n' + stop("embed")
        msg = error_of(write(tmp_path, text))
        assert "options.checkpoint" in msg and "must name a model of 'explain models' (smollm2" in msg, msg


@pytest.mark.parametrize("theta", ["nan", "inf", "1e308", "0.5"])
def test_a_bad_rope_theta_is_refused_as_the_cli_refuses_it(tmp_path: Path, theta: str) -> None:
    text = HEADER + f'model = "llama"\n[options]\ntext = "the cat"\nrope_theta = {theta}\n' + stop("blocks.0.attn.q")
    msg = error_of(write(tmp_path, text))
    assert "rope_theta" in msg, msg


def test_a_tutorials_rope_theta_is_the_runs(tmp_path: Path) -> None:
    text = HEADER + 'model = "llama"\n[options]\ntext = "the cat"\nrope_theta = 500.0\n' + stop("blocks.0.attn.q")
    assert run_tutorial(load_tutorial(write(tmp_path, text))).config.rope_theta == 500.0
