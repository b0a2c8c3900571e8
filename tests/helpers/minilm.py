"""all-MiniLM-L6-v2 from the catalogue, fetched once per run into the tests' cache (a failure to fetch is the
test's failure, never a skip)."""

from __future__ import annotations

import pytest

from explain.checkpoints.catalogue import CATALOGUE
from explain.checkpoints.fetch import ensure


def minilm():
    try:
        return ensure(CATALOGUE["minilm"])
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the test's failure
        pytest.fail(f"all-MiniLM-L6-v2 could not be fetched: {exc}")
