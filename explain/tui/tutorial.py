"""The TUI's side of tutorials: which step a stop shows, and what a stop's cell means on the screen.

Tutorials (``explain.tutorial``: Tutorial, Stop, stop_step) are read duck-typed, so the TUI works with any
object that has ``stops`` whose items have ``step``, ``title``, ``narration``, ``cell``, ``question`` and
``answer``. The stop's step comes from ``explain.tutorial.stop_step`` when that module is there; until it is,
a stop names a step or a group prefix such as ``blocks.0.attn`` (its first step).
"""

from __future__ import annotations

from typing import Any

from explain.errors import ExplainError, StepNotFound
from explain.trace import Step, Trace


def _local_stop_step(trace: Trace, stop: Any) -> Step:
    name = stop.step
    if name in trace:
        return trace[name]
    for step in trace:
        if step.name.startswith(name + "."):
            return step
    return trace.find(name)  # raises StepNotFound with the nearest names


def stop_target(trace: Trace, stop: Any) -> Step:
    """The step a tutorial stop shows."""
    try:
        from explain.tutorial import stop_step
    except ImportError:
        return _local_stop_step(trace, stop)
    return stop_step(trace, stop)


def resolve_stops(trace: Trace, tutorial: Any) -> list[int]:
    """The step index of every stop, refusing a tutorial whose stops name no step of this run."""
    out = []
    for stop in tutorial.stops:
        try:
            out.append(stop_target(trace, stop).index)
        except ExplainError as exc:
            raise StepNotFound(f"tutorial stop '{stop.title}': {exc}") from None
    if not out:
        raise StepNotFound(f"tutorial '{getattr(tutorial, 'name', '?')}' has no stops")
    return out


def narration_map(trace: Trace, tutorial: Any) -> dict[str, str]:
    """Step name → narration of the stops, for an export of the run (``explain.tutorial.narration_by_step``
    when that module is there)."""
    try:
        from explain.tutorial import narration_by_step
    except ImportError:
        pass
    else:
        return narration_by_step(tutorial, trace)
    out: dict[str, str] = {}
    for stop, index in zip(tutorial.stops, resolve_stops(trace, tutorial)):
        text = f"{stop.title}\n\n{stop.narration}".strip()
        name = trace[index].name
        out[name] = f"{out[name]}\n\n{text}" if name in out else text
    return out
