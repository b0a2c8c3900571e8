"""What a derived run adds to its trace is a typed field, never a side channel (issue 38, "no side channels on the
trace"): the trace has no ``meta`` dict, and no module of the package writes or reads one; a real run's trace
holds no callable anywhere in its fields (where a GGUF's weights came from is data, explain.trace.origin)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from gguf_files import write_gguf

import explain
from explain.engine.api import plan
from explain.trace import Trace
from explain.trace.origin import WeightOrigins

PACKAGE = Path(explain.__file__).parent
DATA = Path(__file__).resolve().parents[1] / "data"
DERIVED = ("tutorial", "checks", "lens", "sweep", "patched")


def test_a_trace_has_typed_fields_and_no_meta_dict() -> None:
    trace = plan("gpt")
    assert isinstance(trace, Trace)
    assert not hasattr(trace, "meta")
    assert (trace.tutorial, trace.checks, trace.lens, trace.sweep, trace.patched) == (None, [], None, None, None)


def test_a_derived_trace_keeps_each_field_of_its_source() -> None:
    source = plan("gpt")
    source.tutorial, source.checks = "04-causal-attention", ["a check"]  # type: ignore[list-item]
    source.lens, source.sweep, source.patched = object(), object(), object()  # type: ignore[assignment]
    derived = plan("gpt").keeps_run_of(source)
    assert [getattr(derived, f) for f in DERIVED] == [getattr(source, f) for f in DERIVED]
    assert derived.checks is not source.checks  # a copy: checking the derived run does not change its source's list


def test_no_module_reads_or_writes_a_meta_dict_on_a_trace() -> None:
    pattern = re.compile(r"\btrace\.meta\b|\.corrupt\.meta\b|\bt\.meta\b|\.meta\[\"|\.meta\.get\(")
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in sorted(PACKAGE.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == []


def _callables(value: object, where: str, seen: set[int]) -> list[str]:
    """Every callable reachable from ``value`` through instance attributes, dataclass fields, mappings and
    sequences (numpy arrays and plain values are leaves)."""
    import dataclasses

    import numpy as np

    if value is None or isinstance(value, (str, bytes, int, float, complex, np.ndarray, np.generic)) or id(value) in seen:
        return []
    seen.add(id(value))
    if callable(value):
        return [f"{where}: {value!r}"[:160]]
    if dataclasses.is_dataclass(value):
        items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif isinstance(value, Mapping):
        items = [(repr(k), v) for k, v in value.items()] + [(f"key {k!r}", k) for k in value]
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [(str(i), v) for i, v in enumerate(value)]
    elif hasattr(value, "__dict__"):
        items = list(vars(value).items())
    else:
        return []
    return [hit for name, v in items for hit in _callables(v, f"{where}.{name}", seen)]


@pytest.mark.parametrize("run", ["gpt --trained", "GGUF llama (Q4_1)", "HF llama folder"])
def test_a_real_run_stores_no_callable_on_its_trace(run: str, tmp_path: Path) -> None:
    """Issue 38's "Done when": the trace is data. Where a GGUF's weights came from is typed data
    (explain.trace.origin.WeightOrigins), no longer a callable the api stored on the trace (fails on the old
    code for the GGUF run: Trace.origin was a functools.partial)."""
    if run == "gpt --trained":
        trace = explain.run("gpt", trained=True)
    elif run == "GGUF llama (Q4_1)":
        trace = explain.run("llama", checkpoint=str(write_gguf(tmp_path / "m.gguf", "Q4_1")), text="The cat sat")
        assert isinstance(trace.origin, WeightOrigins) and set(trace.origin.sources) == set(trace.params)
        assert trace.explain("blocks.0.attn.q", (0, 1, 2, 3)).origin is not None  # consulted by the drill-down
    else:
        trace = explain.run("llama", checkpoint=str(DATA / "llama" / "hf_llama"), text="The cat sat")
        assert trace.origin is None  # a safetensors folder's floats are stored as read: nothing to add
    assert len(trace) > 0 and vars(trace)
    assert _callables(trace, "trace", set()) == []
