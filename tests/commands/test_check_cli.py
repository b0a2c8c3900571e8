"""CLI tests for ``explain check``: exit codes, one-line errors on stderr, data only on stdout, --json."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from explain.cli import main

ATTENTION = ["softmax(Q @ K.T / sqrt(d_k)) @ V", "--shape", "Q=seq,d_k", "--shape", "K=seq,d_k",
             "--shape", "V=seq,d_v", "--dim", "seq=10", "--dim", "d_k=64", "--dim", "d_v=32"]
EINSUM = ["batch seq d_model, d_model d_head -> batch seq d_head", "--dim", "batch=2", "--dim", "seq=5",
          "--dim", "d_model=8", "--dim", "d_head=4"]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", *args])


def assert_clean_error(result: Result, code: int) -> str:
    """Exit ``code``, nothing on stdout, no traceback, and the last stderr line is one ``Error: …``."""
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
    last = result.stderr.rstrip("\n").split("\n")[-1]
    assert last.startswith("Error: ")
    return last


def test_attention_prints_tree_and_shape() -> None:
    result = run(*ATTENTION)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "shape: (10, 32)" in out
    assert "Q @ K.T" in out and "(64, 10)" in out and "input (seq, d_k)" in out
    assert "dims:  seq=10  d_k=64  d_v=32" in out
    assert result.stderr == ""


def test_einsum_prints_bindings() -> None:
    result = run(*EINSUM)
    assert result.exit_code == 0, result.output
    assert "shape: (2, 5, 4)" in result.stdout
    assert "d_model  8  summed  from --dim d_model=8" in result.stdout


def test_shape_mismatch_exits_1_with_caret_then_one_line_error() -> None:
    args = list(ATTENTION)
    args[0] = "softmax(Q @ K / sqrt(d_k)) @ V"
    result = run(*args)
    last = assert_clean_error(result, 1)
    assert "did you mean Q @ K.T?" in last
    lines = result.stderr.split("\n")
    assert lines[0] == "  softmax(Q @ K / sqrt(d_k)) @ V"
    assert lines[1] == "  " + " " * "softmax(Q @".index("@") + "^"  # the caret sits under the @


def test_einsum_mismatch_points_at_name() -> None:
    result = run("x: b s d, W: d h -> b s h", "--shape", "x=2,5,8", "--shape", "W=6,4")
    last = assert_clean_error(result, 1)
    assert "contracted dimension 'd' differs" in last
    source, carets = result.stderr.split("\n")[:2]
    assert source[carets.index("^")] == "d" and carets.index("^") == source.index("W: d") + 3


@pytest.mark.parametrize(("expr", "shapes", "fragment"), [
    ("np.einsum('bhqd,bhkd->bhqk', q, k)", ["q=2,4,8,16", "k=2,4,8,15"], "axis d has size 16 in operand 0 and 15 in operand 1"),
    ("np.einsum('ij,kj,lj->ikl', a, b, c)", ["a=2,3", "b=4,1", "c=5,7"], "axis j has size 3 in operand 0 and 7 in operand 2"),
])
def test_einsum_call_mismatch_names_both_operands(expr: str, shapes: list[str], fragment: str) -> None:
    """Session 9: 'axis d has size 16 in one operand and 15 in operand 1' (which one?). A size 1 broadcasts, as in
    numpy (b's j), so the size comes from the first operand whose axis is not 1."""
    last = assert_clean_error(run(expr, *[a for s in shapes for a in ("--shape", s)]), 1)
    assert fragment in last


@pytest.mark.parametrize(("args", "fragment"), [
    (["softmax(Q @ K.T"], "was never closed"),
    (["foo(Q)", "--shape", "Q=2,3"], "not supported: function foo()"),
    (["Q", "--shape", "Q=2", "--shape", "Q=3"], "--shape Q is given twice"),
    (["Q", "--shape", "Q=2,-3"], "positive whole numbers, got -3"),
    ([""], "is empty"),
    (["x" * 10_000], "the limit is 2000"),
    (["Q", "--shape", "Q"], "is not NAME=DIMS"),
    (["Q", "--shape", "Q=seq"], "add --dim seq=N"),
    (["Q", "--dim", "seq=ten"], "not a whole number"),
    (["Q @ K", "--shape", "Q=2,3"], "unknown name 'K'"),
    (["x and x", "--shape", "x=3"], "not supported: and/or"),
    (["Q", "@", "K"], "quote EXPR as one argument"),
    (["Q", "--shape"], "requires an argument"),
    (["Q", "--shape", "Q=2", "--shpae", "K=2"], "no such option: --shpae"),
    ([], "Missing argument"),
    (["a b -> a"], "have no size"),
    # session 9: a file without ::function was read as the attribute .py (a list of what is supported)
    (["heads.py"], "like explain check heads.py::function"),
    (["Q @ K.T", "--shape", "Q=4,8", "--shape", "K=4,8", "--dim", "Q=3"], "Q is given as an array"),  # was ignored
    (["heads.py:heads"], "like explain check heads.py::heads"),
])
def test_bad_input_exits_2_with_one_line(args: list[str], fragment: str) -> None:
    result = run(*args)
    last = assert_clean_error(result, 2)
    assert fragment in last
    assert result.stderr.count("\n") == 1  # one line, nothing else


def test_json_expression_document() -> None:
    result = run(*ATTENTION, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["form"] == "expression"
    assert doc["shape"] == [10, 32]
    assert doc["bindings"] == {"seq": 10, "d_k": 64, "d_v": 32}
    assert doc["inputs"]["Q"] == {"shape": [10, 64], "dims": ["seq", "d_k"]}
    tree = doc["tree"]
    assert (tree["text"], tree["op"], tree["shape"]) == (ATTENTION[0], "matmul", [10, 32])

    def walk(node: dict) -> list[dict]:
        return [node] + [n for c in node["children"] for n in walk(c)]

    nodes = {n["text"]: n for n in walk(tree)}
    assert nodes["K.T"]["shape"] == [64, 10] and nodes["K.T"]["op"] == "transpose"
    assert nodes["sqrt(d_k)"]["shape"] == []


def test_json_einsum_document() -> None:
    result = run(*EINSUM, "--json")
    doc = json.loads(result.stdout)
    assert doc["form"] == "einsum" and doc["shape"] == [2, 5, 4]
    assert doc["bindings"] == {"batch": 2, "seq": 5, "d_model": 8, "d_head": 4}
    assert [d["role"] for d in doc["dims"]] == ["kept", "kept", "summed", "kept"]


def test_json_error_writes_nothing_to_stdout() -> None:
    result = run("a @ b", "--shape", "a=2,3", "--shape", "b=2,3", "--json")
    assert_clean_error(result, 1)


def test_expression_may_start_with_minus() -> None:
    result = run("-x @ W", "--shape", "x=2,3", "--shape", "W=3,1")
    assert result.exit_code == 0, result.output
    assert "shape: (2, 1)" in result.stdout


def test_unquoted_expression_gets_the_quoting_hint() -> None:
    last = assert_clean_error(run("Q", "@", "K", "--shape", "Q=2,2"), 2)
    assert last == 'Error: Got unexpected extra arguments (@ K); quote EXPR as one argument, like explain check "Q @ K.T"'


def test_help_has_examples() -> None:
    result = run("--help")
    assert result.exit_code == 0
    assert "explain check" in result.stdout and "--shape NAME=DIMS" in result.stdout
    assert "--dim NAME=SIZE" in result.stdout and "--json" in result.stdout


def test_help_shows_pytorch_einops_and_function_examples() -> None:
    out = CliRunner().invoke(main, ["check", "--help"]).output
    assert 'explain check "q.view(B, T, H, Dh).transpose(1, 2)"' in out
    assert "explain check 'rearrange(x, \"b t (h d) -> b h t d\", h=H)'" in out
    assert "explain check model.py::attention" in out


def test_function_check_cli(tmp_path) -> None:
    src = tmp_path / "m.py"
    src.write_text('def f(x: Float[Tensor, "b t c"]):\n    y = x.reshape(b, t, 12, 64)\n    return y.reshape(b, t, c)\n'
                   'def g(x: Float[Tensor, "b h t d"]):\n    return x.reshape(b, t, h * d)\n')
    dims = ["--dim", "b=2", "--dim", "t=10", "--dim", "c=768", "--dim", "h=12", "--dim", "d=64"]
    ok = run(f"{src}::f", *dims)
    assert ok.exit_code == 0, ok.output
    assert "line 2" in ok.stdout and "shape: (2, 10, 768)" in ok.stdout and "[b, t, c]" in ok.stdout
    doc = json.loads(run(f"{src}::f", *dims, "--json").stdout)
    assert doc["form"] == "function" and doc["shape"] == [2, 10, 768]
    bad = run(f"{src}::g", *dims)
    last = assert_clean_error(bad, 1)
    assert f"{src}:5:" in last and "x.transpose(0, 2, 1, 3).reshape(b, t, h * d)" in last
    assert f"  {src}:5:" in bad.stderr and "^" in bad.stderr
    assert_clean_error(run(f"{tmp_path}/missing.py::f"), 2)


@pytest.mark.parametrize("expr, numpy_way", [
    ("x.sum(dim=1)", "axis="), ("x.mean(-1, keepdim=True)", "keepdims="), ("x.view(4, 3)", ".reshape()"),
    ("x.permute(1, 0)", ".transpose(axes)"), ("x.masked_fill(x > 0, 0)", "np.where(mask, value, x)"),
    ("x.expand(2, 3, 4)", "np.broadcast_to"), ("torch.softmax(x, dim=-1)", "np.…")])
def test_a_pytorch_spelling_under_lib_numpy_is_refused(expr: str, numpy_way: str) -> None:
    """--lib numpy says the line is numpy: a PyTorch spelling there is the mistake (numpy's x.sum(dim=1) is a
    TypeError), refused in one line naming numpy's way; without --lib, or with --lib torch, it means PyTorch."""
    last = assert_clean_error(run(expr, "--shape", "x=3,4", "--lib", "numpy"), 2)
    assert "is PyTorch's, and --lib numpy was given" in last and numpy_way in last and "--lib torch" in last
    for lib in ([], ["--lib", "torch"]):
        ok = run(expr, "--shape", "x=3,4", *lib)
        assert ok.exit_code == 0, (lib, ok.output)
    assert run("x.sum(axis=1)", "--shape", "x=3,4", "--lib", "numpy").exit_code == 0


# issue 45: the three commands a new user tried, each exiting 0 before; the names now warn, --strict fails.
ISSUE_45 = {
    "softmax over heads": (["F.softmax(q @ k.transpose(-2, -1), dim=1)", "--shape", "q=B,H,T,Dh", "--shape",
                            "k=B,H,T,Dh", "--dim", "B=2", "--dim", "H=12", "--dim", "T=10", "--dim", "Dh=64"],
                           "softmax over H (axis 1, the heads)", "dim=-1", "dim=1", "dim=-1"),
    "normalised over T": (["(x - x.mean(axis=0)) / x.std(axis=0)", "--shape", "x=T,C", "--dim", "T=10", "--dim",
                           "C=768"], "over T (the sequence)", "axis=-1, keepdims=True", None, None),
    "h and d swapped": (['rearrange(x, "b t (h d) -> b h t d", h=Dh)', "--shape", "x=B,T,C", "--dim", "B=2", "--dim",
                         "T=10", "--dim", "C=768", "--dim", "H=12", "--dim", "Dh=64"],
                        "h=Dh gives h the size of Dh", "write h=H", "h=Dh", "h=H"),
}


@pytest.mark.parametrize("case", list(ISSUE_45), ids=list(ISSUE_45))
def test_issue_45_commands_warn_and_strict_fails(case: str) -> None:
    args, axis, fix, wrong, right = ISSUE_45[case]
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "shape:" in result.stdout and "Warning" not in result.stdout  # stdout stays data
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("Warning: ")]
    assert warnings and axis in warnings[-1 if case != "normalised over T" else 0] and fix in result.stderr
    strict = run(*args, "--strict")
    last = assert_clean_error(strict, 1)
    assert axis in last and "--strict makes it an error" in last
    doc = json.loads(run(*args, "--json").stdout)
    assert doc["warnings"] and doc["warnings"][0]["fix"]
    if wrong is not None:  # the corrected command is silent, strict or not
        good = run(args[0].replace(wrong, right), *args[1:], "--strict")
        assert good.exit_code == 0 and good.stderr == "", good.output


def test_normalised_over_features_is_silent_under_strict() -> None:
    good = run("(x - x.mean(axis=-1, keepdims=True)) / x.std(axis=-1, keepdims=True)", "--shape", "x=T,C",
               "--dim", "T=10", "--dim", "C=768", "--strict")
    assert good.exit_code == 0 and good.stderr == "", good.output


def test_expect_names_the_swapped_axes_and_the_transpose() -> None:
    base = ["q.view(B, T, H, Dh)", "--shape", "q=B,T,C", "--dim", "B=2", "--dim", "T=10", "--dim", "C=768",
            "--dim", "H=12", "--dim", "Dh=64"]
    last = assert_clean_error(run(*base, "--expect", "B,H,T,Dh"), 1)
    assert "axes 1 and 2 are swapped (T where H is expected)" in last
    assert last.endswith("q.view(B, T, H, Dh).transpose(1, 2)")
    assert run(*base, "--expect", "B,T,H,Dh").exit_code == 0
    assert run(*base, "--expect", "2,10,12,64").exit_code == 0
    assert_clean_error(run(*base, "--expect", "B,T,X"), 2)  # X has no size: a usage error


@pytest.mark.parametrize("dims, said", [("b " + "9" * 5000, "has 5,000 digits"), ("b ²", "got '²'"),
                                        ("b ١٢", "got '١٢'")])
def test_a_jaxtyping_size_int_cannot_read_is_one_line(tmp_path, dims, said) -> None:
    """Issue 36 item 4: '²' and '١٢' are digits to str.isdigit but not to int(), and 5,000 digits are past
    int()'s limit: each was a traceback."""
    f = tmp_path / "m.py"
    f.write_text(f'def f(x: Float[Tensor, "{dims}"]):\n    return x + 1\n', encoding="utf-8")
    assert said in assert_clean_error(run(f"{f}::f", "--dim", "b=2"), 2)


def test_an_einops_size_int_cannot_read_is_one_line() -> None:
    last = assert_clean_error(run('rearrange(x, "b (h ²) -> b h", h=2)', "--shape", "x=B,C", "--dim", "B=2",
                                  "--dim", "C=4"), 2)
    assert "got '²'" in last


def test_a_nul_byte_in_a_checked_file_names_its_line(tmp_path) -> None:
    """Issue 36 item 7: a NUL byte's syntax error has no line number, and the report began 'm.py:None:'."""
    f = tmp_path / "m.py"
    f.write_bytes(b"def f(x):\n    return x\x00\n")
    last = assert_clean_error(run(f"{f}::f"), 2)
    assert "None" not in last and "null bytes (line 2)" in last, last


@pytest.mark.parametrize("args", [
    ["x", "--shape", "x="],  # was read as a 0-d array: shape ()
    ["x", "--shape", "x= "],
    ["x", "--shape", "x=3", "--expect", ""],  # was read as "expected ()": a mismatch, exit 1
    ["x", "--shape", "x=3", "--expect", "  "],
], ids=["shape-empty", "shape-blank", "expect-empty", "expect-blank"])
def test_an_empty_shape_or_expect_is_refused_not_read_as_0d(args: list[str]) -> None:
    """Issue 38 check/ (b): ``--shape x=`` and ``--expect ''`` (an unset shell variable, say) are usage errors
    that show both the usual form and how to ask for a 0-d array, which stays ``()``."""
    last = assert_clean_error(run(*args), 2)
    assert "--shape x=() for a 0-d array" in last or "or () for a 0-d result" in last, last
    assert "empty" in last or "no dimensions" in last


def test_an_explicit_0d_shape_and_expect_still_work() -> None:
    result = run("x * 2", "--shape", "x=()", "--expect", "()")
    assert result.exit_code == 0, result.output
    assert "shape: ()" in result.stdout


def _write(tmp_path, text: str) -> str:
    (tmp_path / "model.py").write_text(text)
    return str(tmp_path / "model.py")


EXPECT_FN = ('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
             'def f(x: Float[Tensor, "B T C"], w: Float[Tensor, "C C"]):\n'
             '    y = x @ w  # expect: {want}\n    return y\n')


def test_an_expect_mismatch_names_its_line_once(tmp_path) -> None:
    """Issue 38 check/ (b): the error read "model.py:6: line 6: # expect: …" (the line twice)."""
    path = _write(tmp_path, EXPECT_FN.format(want="B, C, T"))
    last = assert_clean_error(run(f"{path}::f", "--dim", "B=2", "--dim", "T=3", "--dim", "C=4"), 1)
    assert last.startswith(f"Error: {path}:6: # expect: B, C, T: the result is (2, 3, 4)"), last
    assert "line 6" not in last


def test_an_expect_on_a_later_line_of_a_statement_names_that_line(tmp_path) -> None:
    path = _write(tmp_path, EXPECT_FN.format(want="B, C, T").replace("y = x @ w  #", "y = (x\n         @ w)  #"))
    last = assert_clean_error(run(f"{path}::f", "--dim", "B=2", "--dim", "T=3", "--dim", "C=4"), 1)
    assert last.startswith(f"Error: {path}:6: line 7: # expect: B, C, T: the result is (2, 3, 4)"), last


@pytest.mark.parametrize(("want", "fragment"), [
    ("B, Q", "# expect: B, Q: Q has no size; give it with --dim Q=N"),
    ("", "# expect: is empty: write the expected shape like # expect: B, H, T, Dh"),
], ids=["unknown-name", "empty"])
def test_an_unreadable_expect_comment_names_file_and_line(tmp_path, want: str, fragment: str) -> None:
    """A '# expect:' comment that cannot be read was "line 6: …" with no file; now FILE:LINE like a mismatch."""
    path = _write(tmp_path, EXPECT_FN.format(want=want))
    last = assert_clean_error(run(f"{path}::f", "--dim", "B=2", "--dim", "T=3", "--dim", "C=4"), 2)
    assert last.startswith(f"Error: {path}:6: {fragment}"), last
