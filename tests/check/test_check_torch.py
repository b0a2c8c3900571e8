"""``explain check`` follows PyTorch's own rules: each case in tests/data/check/torch_cases.json was run by
PyTorch (tests/data/make_check_torch_fixtures.py, once, with the fixture venv) on zero tensors; the checker
must give the same verdict (fits or not) and the same result shape. No torch is imported here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explain.check import check
from explain.core.errors import ExplainError

CASES = json.loads((Path(__file__).parents[1] / "data" / "check" / "torch_cases.json").read_text())["cases"]


def verdict(expr: str, a: list[int], b: list[int]) -> list[int] | str:
    try:
        return list(check(expr, {"a": tuple(a), "b": tuple(b)}, torch=True).shape)
    except ExplainError:
        return "error"


@pytest.mark.parametrize("template", sorted({c["expr"].split("(")[0].split(" ")[0] for c in CASES}))
def test_checker_agrees_with_pytorch(template: str) -> None:
    cases = [c for c in CASES if c["expr"].split("(")[0].split(" ")[0] == template]
    wrong = [(c["expr"], c["a"], c["b"], c["torch"], got) for c in cases
             if (got := verdict(c["expr"], c["a"], c["b"])) != c["torch"]]
    assert not wrong, f"{len(wrong)} of {len(cases)} differ from PyTorch, e.g. {wrong[:3]}"


def test_fixture_covers_errors_and_successes() -> None:
    outcomes = {c["torch"] == "error" for c in CASES}
    assert outcomes == {True, False} and len(CASES) >= 1000
