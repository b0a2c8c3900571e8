"""The TUI's side of tutorials: which step a stop shows, and what a stop's cell means on the screen.

Tutorials (``explain.tutorial``: Tutorial, Stop) are read duck-typed, so the TUI works with any object that
has ``stops`` whose items have ``step``, ``title``, ``narration``, ``cell``, ``question`` and ``answer``. The
stop's step comes from ``explain.tutorial.stop_step``: a step name or a group prefix such as
``blocks.0.attn`` (its first step).
"""

from __future__ import annotations

from typing import Any

from explain.errors import ExplainError, StepNotFound
from explain.trace import Step, Trace


def stop_target(trace: Trace, stop: Any) -> Step:
    """The step a tutorial stop shows (a step name, or a group such as ``blocks.0.attn``: its first step)."""
    from explain.tutorial import stop_step  # on first use: a run without a tutorial never loads the package

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
    """Step name → narration of the stops, for an export of the run."""
    from explain.tutorial import narration_by_step

    return narration_by_step(tutorial, trace)
