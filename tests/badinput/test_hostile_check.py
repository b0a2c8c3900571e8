"""The shape checker's FILE.py::Class.method path and --expect given hostile input: one line ``Error: …`` with
exit 2 (or a checked result), never a traceback, and fast."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from explain.cli import main

MODEL = """from torch import nn


class Plain(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.q = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.q(x)


class Loop(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.q = nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.forward(self.q(x))
"""


def _check(tmp_path: Path, *args: str):
    (tmp_path / "model.py").write_text(MODEL)
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["check", str(tmp_path / "model.py") + args[0], "--shape", "x=2,3,8",
                                       "--dim", "d_model=8", *args[1:]], catch_exceptions=False)
    assert time.perf_counter() - start < 5
    return result


@pytest.mark.parametrize("expect,needle", [("9" * 5000, "5,000 digits"), (str(10**30), "31 digits"), ("²", "'²'")],
                         ids=["5000-digits", "10**30", "superscript-two"])
def test_a_hostile_expect_is_one_usage_line(tmp_path: Path, expect: str, needle: str) -> None:
    result = _check(tmp_path, "::Plain.forward", "--expect", expect)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("Error: --expect"), result.output
    assert needle in lines[0]


def test_a_method_that_calls_itself_ends_without_a_traceback(tmp_path: Path) -> None:
    result = _check(tmp_path, "::Loop.forward")  # was a RecursionError traceback
    assert result.exit_code in (0, 1, 2) and "Traceback" not in result.output and "Recursion" not in result.output


def test_a_garbage_expect_comment_is_quoted_as_the_line_and_the_item_only(tmp_path: Path) -> None:
    (tmp_path / "g.py").write_text("from torch import nn\n\n\nclass G(nn.Module):\n    def __init__(self, d_model):\n"
                                   "        super().__init__()\n        self.q = nn.Linear(d_model, d_model)\n\n"
                                   "    def forward(self, x):\n        return self.q(x)  # expect: ((((]]] 12\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path / "g.py") + "::G.forward", "--shape", "x=2,3,8",
                                       "--dim", "d_model=8"], catch_exceptions=False)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].count("((((]]] 12") == 2 and "--expect" not in lines[0] and "# expect: B, H, T, Dh" in lines[0]
