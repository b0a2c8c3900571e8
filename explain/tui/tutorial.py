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
from explain.tutorial import list_tutorials, narration_by_step, run_options, stop_step


def stop_target(trace: Trace, stop: Any) -> Step:
    """The step a tutorial stop shows (a step name, or a group such as ``blocks.0.attn``: its first step)."""
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
    return narration_by_step(tutorial, trace)


def tour_options(tutorial: Any, trace: Trace) -> dict[str, Any]:
    """The inputs of a tutorial's run as :func:`explain.run` keyword arguments: its [options], its embeddings,
    and, when it gives weights, every parameter of the run (the given ones and the rest from the seed), so a
    re-run that changes nothing reproduces the tutorial's numbers exactly."""
    if not hasattr(tutorial, "options"):  # a duck-typed tutorial without a run of its own
        return {}
    opts = run_options(tutorial)
    if getattr(tutorial, "weights", None):
        opts["weights"] = dict(trace.params)
    return opts


def next_tutorial(tutorial: Any) -> Any:
    """The shipped tutorial after ``tutorial`` (by its number), or None at the last one or for a tutorial that
    is not shipped (a teacher's file)."""
    names = [t.name for t in shipped()]
    name = getattr(tutorial, "name", None)
    if name not in names or names.index(name) + 1 == len(names):
        return None
    return shipped()[names.index(name) + 1]


_SHIPPED: list[Any] = []


def shipped() -> list[Any]:
    """Every shipped tutorial (read once: the palette and the last stop ask for them)."""
    if not _SHIPPED:
        _SHIPPED.extend(list_tutorials())
    return _SHIPPED
