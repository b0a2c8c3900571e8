"""One number formatter: a grid's cells all with the precision's decimals (exact integers too), integer
tensors bare, scientific notation only when the whole grid needs it (and the legend says the scale); the
explanations' arithmetic at the same precision with negatives in parentheses and one result line; the
residual add's result named apart from its input; the scalar loss as a number; ``--plain`` never cuts a
number and keeps the ``…`` column."""

from __future__ import annotations

import io
import re

import numpy as np
from rich.console import Console

import explain
from explain.ops.base import arg, num, precision
from explain.render.grid import TensorWindow
from explain.render.step import explanation_body, explanation_result, step_output
from explain.render.tensor import number_format


def text(renderable, width: int = 120) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(renderable)
    return console.file.getvalue()


def test_a_float_grid_shows_every_value_with_the_same_decimals():
    mat = np.array([[2.0, 1.23456], [-0.5, 6.209e-06]])
    out = text(TensorWindow(mat, precision=4))
    assert "2.0000" in out and "1.2346" in out and "-0.5000" in out
    assert "6.2e-06" in out and "0.0000" not in out  # a value the decimals round to 0 never looks like 0
    assert out.count("e-") == 1  # one tiny value does not switch the whole grid to scientific notation
    assert number_format(mat, 4).exponent == 0


def test_integer_tensors_are_bare_and_tiny_grids_scaled():
    assert "25" in text(TensorWindow(np.array([[3, 25, 6]]))) and ".0000" not in text(TensorWindow(np.array([[3]])))
    tiny = np.array([[1.5e-6, -2.25e-6], [3e-7, 0.0]])
    nf = number_format(tiny, 4)
    assert nf.exponent == -6 and nf.legend() == "values ×1e-06"
    assert "1.5000" in text(TensorWindow(tiny, precision=nf)) and "-2.2500" in text(TensorWindow(tiny, precision=nf))


def test_arithmetic_follows_the_precision_with_negatives_in_parentheses():
    assert num(-0.436182) == "-0.4362" and arg(-0.436182) == "(-0.4362)" and arg(0.5) == "0.5000"
    assert num(112.0) == "112"  # an exact integer stays bare in arithmetic (112 / 8 = 14)
    with precision(6):
        assert num(0.1234567) == "0.123457"
    t = explain.run("gpt", random_weights=True)
    step = t["blocks.0.ln1"]
    x = t[step.inputs[0]].output[0, 0]
    with precision(3):
        ex = t.explain(step, (0, 0, 0))
    assert f"mean = {x.mean():.3f}" in ex.lines
    if x.mean() < 0:
        assert f"(-{abs(x.mean()):.3f})" in ex.lines[2]


def test_one_result_line():
    t = explain.run("gpt", random_weights=True)
    ex = t.explain(t["blocks.0.attn.scores"], (0, 0, 1, 1))
    body, result = text(explanation_body(ex)), text(explanation_result(ex))
    assert result.startswith("sum of 4 products = ") and result.strip().endswith(f"{ex.value:.4f}")
    assert "sum of 4 products" not in body and f"= {ex.value:.4f}" not in body


def test_residual_add_result_named_apart_from_its_input():
    t = explain.run("gpt", random_weights=True)
    step = t["blocks.0.resid_mid"]
    ex = t.explain(step, (0, 2, 0))
    assert ex.title == "x′[0, 2, 0] = x[0, 2, 0] + O[0, 2, 0]" and step.formula == "x′ = x + O"


def test_scalar_loss_is_a_number_not_a_grid():
    t = explain.run("gpt", random_weights=True)
    out = text(step_output(t, t["loss"]))
    assert re.search(r"= \d+\.\d{4}\s*$", out.strip()) and "0 " not in out.splitlines()[0]


def test_plain_to_a_file_keeps_full_numbers_and_the_elision(tmp_path):
    from click.testing import CliRunner

    from explain.cli import main

    r = CliRunner().invoke(main, ["run", "gpt", "--plain", "--vocab", "500"], catch_exceptions=False)
    block = r.output[r.output.index("logits  [linear]"):]
    rows = [line for line in block.splitlines()[:14] if re.match(r"^\d \w+\s+-?\d", line)]
    assert rows and all("…" in row for row in rows)  # the column that marks hidden columns
    for row in rows:
        for cell in row.split()[2:]:
            assert cell == "…" or re.fullmatch(r"-?\d+\.\d{4}", cell), cell  # no number cut short


def test_a_subnormal_grid_is_scaled_not_divided_by_zero():
    """Values near float64's smallest (4.94e-324: exponent -324, where 10.0 ** -324 is 0.0) print as mantissas
    of the legend's power of ten: each is the value scaled exactly (decimal arithmetic, the reference) and
    rounded to the 4 decimals shown."""
    from decimal import Decimal

    from explain.render.tensor import fmt

    for values in ([5e-324, 1e-323], [4.9e-321, -1e-322], [1e-310, 3e-309], [1.5e308, -1e307]):
        nf = number_format(np.array([values]))
        assert nf.legend() == f"values ×1e{nf.exponent:+03d}"
        for v in values:
            exact = Decimal(v).scaleb(-nf.exponent)
            assert abs(Decimal(fmt(v, nf)) - exact) <= Decimal("0.00005") + abs(exact) * Decimal("1e-12"), (v, nf)


def test_a_window_measures_only_the_columns_that_can_fit(monkeypatch) -> None:
    """Issue 36: a 10⁷-word vocabulary's logits took minutes to print, since the window measured every column
    before cutting them to the width. A column takes two characters at the least, so at most width // 2 are
    measured, whatever the slice's width."""
    import numpy as np

    from explain.render import grid

    calls = []
    real = grid.cell_text
    monkeypatch.setattr(grid, "cell_text", lambda *a, **k: calls.append(1) or real(*a, **k))
    win = grid.head_tail_window(np.zeros((2, 10**7)), max_rows=8, width=80)
    assert win.cols[-1] == 10**7 - 1 and None in win.cols  # the last column shown, an elision before it
    assert len(calls) <= 2 * 40, len(calls)  # 2 rows × at most 80 // 2 columns
