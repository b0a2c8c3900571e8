"""Shared test set-up: colour on for snapshots, and a repo-root path for the data fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Snapshot tests need colours; NO_COLOR in the environment would change every SVG.
os.environ.pop("NO_COLOR", None)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
# The tests mirror the package's folders; what several folders share (checkpoint writers, reference passes, the CLI
# runner) lives in tests/helpers, importable by its module name from every test file.
sys.path.insert(0, str(ROOT / "tests" / "helpers"))


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session", autouse=True)
def explain_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of catalogue models for the whole run (``EXPLAIN_CACHE``, for this process and every command the
    tests start): the xdist workers share it (their temporary folders' common parent), and the fetch's lock file
    lets one worker download while the others wait, so a network test downloads a model once per run. A cache
    the user set (EXPLAIN_CACHE in the environment) is used as it is."""
    if not os.environ.get("EXPLAIN_CACHE"):
        base = tmp_path_factory.getbasetemp()
        shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        os.environ["EXPLAIN_CACHE"] = str(shared / "explain-cache")
    return Path(os.environ["EXPLAIN_CACHE"])


# The quick loop (`pytest -m "not slow and not network"`) draws each screen at 80×24 and below, where most defects
# show first; CI runs everything. A Pilot test parametrized by a terminal size of 100 columns or more, a test that
# drives a real browser, the benchmarks' quick modes and the interrupted-fetch child processes are marked slow here by
# one rule rather than test by test, so a new test at a new size follows it without a decorator.
SLOW_FILES = {"test_browser.py", "test_benchmarks.py"}
SLOW_TESTS = {"test_an_interrupted_fetch_leaves_nothing_a_later_run_uses"}


def _wide_size(value: object) -> bool:
    """A (columns, rows) pair or a 'WxH' string of 100 columns or more."""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return value[0] >= 100
    if isinstance(value, str):
        w, x, h = value.partition("x")
        return bool(x) and w.isdigit() and h.isdigit() and int(w) >= 100
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if (item.path.name in SLOW_FILES or item.originalname in SLOW_TESTS
                or any(_wide_size(v) for v in params.values())):
            item.add_marker(pytest.mark.slow)
