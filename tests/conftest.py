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
