"""Shared test set-up: colour on for snapshots, and a repo-root path for the data fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Snapshot tests need colours; NO_COLOR in the environment would change every SVG.
os.environ.pop("NO_COLOR", None)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


@pytest.fixture
def data_dir() -> Path:
    return DATA
