"""What a derived run adds to its trace is a typed field, never a side channel (issue 38, "no side channels on the
trace"): the trace has no ``meta`` dict, and no module of the package writes or reads one."""

from __future__ import annotations

import re
from pathlib import Path

import explain
from explain.engine.api import plan
from explain.trace import Trace

PACKAGE = Path(explain.__file__).parent
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
