"""``explain check FILE.py::function``: whole functions checked from the syntax tree, statement by statement."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from explain.check.errors import CheckShapeError
from explain.check.function import check_function
from explain.check.names import fmt_names
from explain.check.parse import parse_options
from explain.core.errors import UsageError

DIMS = ["batch=2", "seq=10", "d_model=768", "n_head=12"]

NANOGPT = '''
import torch
import torch.nn.functional as F
from jaxtyping import Float
from torch import Tensor

open("{marker}", "w").write("the file was run")  # must never happen: the checker only parses


def attention(x: Float[Tensor, "batch seq d_model"], W_qkv: Float[Tensor, "d_model 2304"], n_head: int):
    """Causal self-attention as nanoGPT writes it (karpathy/nanoGPT model.py, CausalSelfAttention.forward)."""
    B, T, C = x.size()
    q, k, v = (x @ W_qkv).split(C, dim=2)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
    att = F.softmax(att, dim=-1)
    y = att @ v
    y = {merge}
    return y
'''


def write(tmp_path: Path, merge: str = "y.transpose(1, 2).contiguous().view(B, T, C)") -> Path:
    path = tmp_path / "model.py"
    path.write_text(NANOGPT.format(marker=tmp_path / "ran", merge=merge))
    return path


def run(target: str, shapes: list[str] | None = None, dims: list[str] | None = None):
    return check_function(target, parse_options(shapes or [], DIMS if dims is None else dims))


def test_nanogpt_attention_passes_with_names_and_is_never_run(tmp_path: Path) -> None:
    path = write(tmp_path)
    result = run(f"{path}::attention")
    assert result.result is not None and result.result.shape == (2, 10, 768)
    assert fmt_names(result.result.names) == "[batch, seq, d_model]"
    q = next(r for r in result.rows if r.text.startswith("q = "))
    assert fmt_names(q.node.names) == "[batch, n_head, seq, d_model/n_head]"  # C // n_head names the width
    assert not (tmp_path / "ran").exists()


def test_head_merge_without_transpose_stops_at_its_line_with_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path, merge="y.view(B, T, C)")
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::attention")
    err = info.value
    line = NANOGPT.splitlines().index("    y = {merge}") + 1
    assert str(err).startswith(f"{path}:{line}: view of (2, 12, 10, 64) to (2, 10, 768) fits by size")
    assert "y.transpose(1, 2).contiguous().view(B, T, C)" in str(err)
    assert err.display[0] == f"  {path}:{line}:" and "^^^^" in err.display[2]


def test_a_loop_is_skipped_once_and_what_it_assigns_becomes_unknown(tmp_path: Path) -> None:
    path = tmp_path / "loop.py"
    path.write_text(textwrap.dedent('''
        def f(x: Float[Tensor, "seq d_model"]):
            for i in range(3):
                x = x @ x.T
            y = x + 1
            z = y * 2
            h = helper(z)
            return h + 1
    '''))
    with pytest.raises(UsageError) as info:  # nothing is left to return a checked value from
        raise_if_unchecked(run(f"{path}::f"))
    assert "h is unknown here" in str(info.value) or "x is unknown here" in str(info.value)
    result = run(f"{path}::f")
    notes = [r.note for r in result.rows if r.note.startswith("skipped")]
    assert notes[0] == "skipped: a for loop over anything but a list of modules is not followed; now unknown: i, x"
    assert "x is unknown here: line 3 was skipped (a for loop over anything but a list of modules is not followed)" in notes[1]
    assert "y is unknown here: line 3 was skipped" in notes[2]  # the first cause, passed on
    assert "helper()" in notes[3]
    assert "h is unknown here: line 7 was skipped (not supported: function helper())" in notes[4]


def raise_if_unchecked(result) -> None:
    if result.result is None:
        raise UsageError(next(r.note for r in reversed(result.rows) if r.note.startswith("skipped")))


def test_unknown_function_is_skipped_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text('def f(x: Float[Tensor, "seq d_model"]):\n    y = my_norm(x)\n    z = x * 2\n    return z\n')
    result = run(f"{path}::f")
    assert result.result.shape == (10, 768)
    assert any("my_norm" in r.note for r in result.rows)


@pytest.mark.parametrize(("annotation", "fragment"), [
    ('Float[Tensor, "*batch d_model"]', "give its shape with --shape x=DIMS"),
    ('Float[Tensor, "batch d_model+1"]', "'d_model+1' is not supported"),
    ('Float[Tensor, "batch width"]', "--dim width=N"),
])
def test_annotation_forms(tmp_path: Path, annotation: str, fragment: str) -> None:
    path = tmp_path / "a.py"
    path.write_text(f"def f(x: {annotation}):\n    return x\n")
    with pytest.raises(UsageError) as info:
        run(f"{path}::f")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_literal_sizes_and_shape_option(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text('def f(x: Float[Tensor, "batch 3"], y):\n    return x @ y\n')
    result = run(f"{path}::f", shapes=["y=3,d_model"])
    assert result.result.shape == (2, 768)
    star = tmp_path / "s.py"
    star.write_text('def f(x: Float[Tensor, "*batch d_model"]):\n    return x.mean(-1)\n')
    assert run(f"{star}::f", shapes=["x=batch,seq,d_model"]).result.shape == (2, 10)


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is not a file"),
    (lambda p: p.write_bytes(b"\xff\xfe\x00bad"), "is not UTF-8"),
    (lambda p: p.write_text("def f(:\n"), "cannot parse"),
    (lambda p: p.write_text("x = 1\n"), "has no function f"),
    (lambda p: p.write_text("def f():\n" + "    y = " + "-" * 200 + "1" + "\n"), "nests"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, make, fragment: str) -> None:
    path = tmp_path / "bad.py"
    make(path)
    with pytest.raises(UsageError) as info:
        run(f"{path}::f")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.py"
    with path.open("wb") as fh:
        fh.truncate(50_000_000)  # sparse: nothing is written, and nothing must be read
    with pytest.raises(UsageError, match="the limit is 1,000,000"):
        run(f"{path}::f")


def test_target_must_name_a_function(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="FILE.py::function"):
        run("model.py::")


def test_sizes_assigned_in_the_body_and_self_attributes(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent('''
        class Attention:
            def forward(self, x: Float[Tensor, "batch seq d_model"]):
                B, T, C = x.shape
                H = self.n_head
                hd = C // H
                q = x.view(B, T, H, hd).transpose(1, 2)
                return q.view(B, T, C)
    '''))
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::Attention.forward")
    assert "q.transpose(1, 2).contiguous().view(B, T, C)" in str(info.value)
    rows = check_function_rows(path)
    assert [r.note for r in rows if r.text.startswith(("H =", "hd ="))] == ["size 12", "size 64"]


def check_function_rows(path: Path):
    import ast

    from explain.check.function import FunctionCheck
    from explain.check.source import find_function

    source = path.read_text()
    fn = find_function(ast.parse(source), "Attention.forward", path)
    fc = FunctionCheck(source, path, fn, parse_options([], DIMS), None)
    for stmt in fn.body[:-2]:
        fc.statement(stmt)
    return fc.rows


def apply_edits(path: Path, edits: list) -> None:
    lines = path.read_text().splitlines(keepends=True)
    for line, old, new in edits:
        assert old in lines[line - 1], (line, old, lines[line - 1])
        lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("".join(lines))


def test_forgotten_transpose_on_k_names_the_line_and_the_transpose(tmp_path: Path) -> None:
    """Issue 45: one line forgets .transpose(1, 2) on k; the error was only 'batch axes do not broadcast'."""
    path = tmp_path / "model.py"
    path.write_text(NANOGPT.format(marker=tmp_path / "ran", merge="y.transpose(1, 2).contiguous().view(B, T, C)")
                    .replace("k = k.view(B, T, n_head, C // n_head).transpose(1, 2)",
                             "k = k.view(B, T, n_head, C // n_head)"))
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::attention")
    err = info.value
    k_line = path.read_text().splitlines().index("    k = k.view(B, T, n_head, C // n_head)") + 1
    assert "k is [batch, seq, n_head, d_model/n_head] where [batch, n_head, seq, d_model/n_head] lines up" in str(err)
    assert f"line {k_line} is missing .transpose(1, 2)" in str(err)
    assert err.edits == [(k_line, "k.view(B, T, n_head, C // n_head)", "k.view(B, T, n_head, C // n_head).transpose(1, 2)")]
    apply_edits(path, err.edits)
    assert run(f"{path}::attention").result.shape == (2, 10, 768)


def test_warnings_in_a_function_carry_their_line_and_edits(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''
        def f(att: Float[Tensor, "batch n_head seq seq"], mask: Float[Tensor, "seq seq"]):
            att = F.softmax(att, dim=-1)
            att = att.masked_fill(mask == 0, float("-inf"))
            return att
    '''))
    result = run(f"{path}::f")
    (a,) = result.advice
    assert a.where == f"{path}:4" and "(line 3) already sums to 1" in a.message and "swap line 3" in a.message
    apply_edits(path, a.edits)
    assert run(f"{path}::f").advice == []


def test_keepdim_dropped_on_an_earlier_line_is_fixed_there(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''
        def f(x: Float[Tensor, "batch seq d_model"]):
            mu = x.mean(-1)
            return x - mu
    '''))
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::f")
    assert "from line 3, which dropped the reduced axis" in str(info.value)
    apply_edits(path, info.value.edits)
    assert run(f"{path}::f").result.shape == (2, 10, 768)


def test_expect_comments_are_read_with_tokenize(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    body = '''
        def f(x: Float[Tensor, "batch seq d_model"], n_head: int):
            B, T, C = x.shape
            q = x.view(B, T, n_head, C // n_head)  # expect: B, n_head, T, C // n_head
            return q
    '''
    path.write_text(textwrap.dedent(body).replace("C // n_head  #", "C // n_head)  #").replace(
        "# expect: B, n_head, T, C // n_head", "# expect: B, n_head, T, 64"))
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::f")
    assert str(info.value).startswith(f"{path}:4: # expect: B, n_head, T, 64: the result is (2, 10, 12, 64)")
    assert "axes 1 and 2 are swapped" in str(info.value) and ".transpose(1, 2)" in str(info.value)
    path.write_text(path.read_text().replace("# expect: B, n_head, T, 64", "# expect: B, T, n_head, 64"))
    assert run(f"{path}::f").result.shape == (2, 10, 12, 64)


def test_a_statements_source_is_cut_as_ast_cuts_it(tmp_path) -> None:
    """Each row's source is cut from lines split once (linear in the function's length; issue 36), and equals
    what ``ast.get_source_segment`` gives, for multi-line statements, non-ASCII names and \\r\\n line ends."""
    import ast

    from explain.check.function import FunctionCheck, utf8_lines

    source = ("def fn(x: 'T C', é: 'C C'):\r\n    y = (x @ é\r\n         + x @ é)  # ünï\r\n"
              "    z = {'k': 'ü'}['k']\n    return y\n")
    fn = ast.parse(source).body[0]
    walk = FunctionCheck.__new__(FunctionCheck)
    walk._utf8 = utf8_lines(source)
    for node in ast.walk(fn):
        if isinstance(node, (ast.stmt, ast.expr)):
            want = " ".join((ast.get_source_segment(source, node) or "").split())
            assert walk.snippet(node) == want, ast.dump(node)


@pytest.mark.parametrize(("k_line", "fixed"), [
    # einops: the pattern puts t before h; the fix is the pattern, not a transpose
    ('k = rearrange(x, "b t (h d) -> b t h d", h=n_head)', 'rearrange(x, "b t (h d) -> b h t d", h=n_head)'),
    # numpy: the missing transpose spelled numpy's way
    ("k = x.reshape(B, T, n_head, C // n_head)", "x.reshape(B, T, n_head, C // n_head).swapaxes(1, 2)"),
])
def test_forgotten_transpose_is_fixed_in_the_line_s_own_spelling(tmp_path: Path, k_line: str, fixed: str) -> None:
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(f'''
        def f(x: Float[Tensor, "batch seq d_model"], n_head: int):
            B, T, C = x.shape
            q = rearrange(x, "b t (h d) -> b h t d", h=n_head)
            {k_line}
            return q @ k.swapaxes(-2, -1)
    '''))
    with pytest.raises(CheckShapeError) as info:
        run(f"{path}::f")
    ((line, old, new),) = info.value.edits
    assert line == 5 and new == fixed, info.value.edits
    apply_edits(path, info.value.edits)
    assert run(f"{path}::f").result.shape == (2, 12, 10, 10)
