"""Messages the TUI's widgets post up to the step screen: small dataclasses, past-tense names.
(Textual's Message initialises itself in ``__post_init__``, so a dataclass subclass needs nothing more.)"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message


@dataclass
class StepSelected(Message):
    """The user picked a step (in the tree, the search, a tutorial link)."""

    index: int


@dataclass
class CellFocused(Message):
    """The user put the cell cursor on (row, col) of the 2-D slice shown (a click, or ↑/↓ in the matrix)."""

    row: int
    col: int
