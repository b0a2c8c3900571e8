"""The TUI's side of tutorials: which step a stop shows, and what a stop's cell means on the screen.

The TUI reads a tutorial through what it uses of it, typed as :class:`Walkthrough` and :class:`WalkthroughStop`
(``explain.tutorial``'s Tutorial and Stop are both, and so is any object with the same fields, as the tests'
fakes). The stop's step comes from ``explain.tutorial.stop_step``: a step name or a group prefix such as
``blocks.0.attn`` (its first step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from explain.core.errors import ExplainError, StepNotFound
from explain.trace import Step, Trace
from explain.tutorial import list_tutorials, narration_by_step, run_options, stop_step


class WalkthroughStop(Protocol):
    """What the TUI reads of a tutorial's stop."""

    step: str
    title: str
    narration: str
    cell: tuple[int, ...] | None  # a tutorial may give a cell to focus
    question: str | None
    answer: str | None


class Walkthrough(Protocol):
    """What the TUI reads of a tutorial: its name, title, summary, model and stops."""

    name: str
    title: str
    summary: str
    model: str

    @property
    def stops(self) -> Sequence[WalkthroughStop]: ...


def stop_target(trace: Trace, stop: WalkthroughStop) -> Step:
    """The step a tutorial stop shows (a step name, or a group such as ``blocks.0.attn``: its first step)."""
    return stop_step(trace, stop)


def resolve_stops(trace: Trace, tutorial: Walkthrough) -> list[int]:
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


def narration_map(trace: Trace, tutorial: Walkthrough) -> dict[str, str]:
    """Step name → narration of the stops, for an export of the run."""
    return narration_by_step(tutorial, trace)


def tour_options(tutorial: Walkthrough, trace: Trace) -> dict[str, Any]:
    """The inputs of a tutorial's run as :func:`explain.run` keyword arguments: its [options], its embeddings,
    and, when it gives weights, every parameter of the run (the given ones and the rest from the seed), so a
    re-run that changes nothing reproduces the tutorial's numbers exactly."""
    if not hasattr(tutorial, "options"):  # a duck-typed tutorial without a run of its own
        return {}
    opts = run_options(tutorial)
    if getattr(tutorial, "weights", None):
        opts["weights"] = dict(trace.params)
    return opts


def next_tutorial(tutorial: Walkthrough) -> Walkthrough | None:
    """The shipped tutorial after ``tutorial`` (by its number), or None at the last one or for a tutorial that
    is not shipped (a teacher's file)."""
    names = [t.name for t in shipped()]
    name = getattr(tutorial, "name", None)
    if name not in names or names.index(name) + 1 == len(names):
        return None
    return shipped()[names.index(name) + 1]


_SHIPPED: list[Walkthrough] = []


def shipped() -> list[Walkthrough]:
    """Every shipped tutorial (read once: the palette and the last stop ask for them)."""
    if not _SHIPPED:
        _SHIPPED.extend(list_tutorials())
    return _SHIPPED
