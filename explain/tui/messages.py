"""Messages posted up to the step screen: small dataclasses, past-tense names. Widgets post what the user did
(:class:`StepSelected`, :class:`CellFocused`); the controller's long work posts what it made
(:class:`RunFinished`, :class:`TraceExtended`) and the screen sets its own state from them, so no one else
writes the screen's ``view``, ``tour`` or ``run_options``.
(Textual's Message initialises itself in ``__post_init__``, so a dataclass subclass needs nothing more.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:  # annotations only (postponed): the step tree imports this module before the first frame
    from explain.trace import Trace
    from explain.tui.tutorial import Walkthrough


@dataclass
class StepSelected(Message):
    """The user picked a step (in the tree, the search, a tutorial link, an interpretability screen); ``how``
    says what took them there (off a tutorial's path), ``cell`` the output cell to show (None: the cell kept)."""

    index: int
    how: str = "the tree"
    cell: tuple[int, ...] | None = None


@dataclass
class CellFocused(Message):
    """The user put the cell cursor on (row, col) of the 2-D slice shown (a click, or ↑/↓ in the matrix)."""

    row: int
    col: int


@dataclass
class RunFinished(Message):
    """A run to show with the inputs it was made from: the student's own (``own``: a tutorial followed goes off
    its path, and the screen says the run finished), or a ``tutorial``'s (its tour starts over). ``at`` names the
    step to go to (the step of the same name as before when None or absent), ``cell`` the output cell there."""

    trace: Trace
    options: dict[str, Any]
    tutorial: Walkthrough | None = None
    at: str | None = None
    cell: tuple[int, ...] | None = None
    own: bool = True


@dataclass
class TraceExtended(Message):
    """A longer trace of the run ``old`` (its backward pass, its lens): the same steps at the same indices, so a
    tutorial's stops stay valid. Ignored when another run came in meanwhile; else the screen shows ``trace``,
    adds ``options`` to its run's, then calls ``then(trace)``."""

    old: Trace
    trace: Trace
    options: dict[str, Any] = field(default_factory=dict)
    then: Callable[[Trace], None] | None = None
