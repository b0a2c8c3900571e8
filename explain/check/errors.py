"""The checker's shape error: a :class:`~explain.core.errors.ShapeError` that also carries a caret display.

The CLI prints ``Error: {message}`` on one line; the display (the expression with a caret under the failing
operator or name, and the operands' shapes) is printed to stderr just before it by the ``check`` command.
"""

from __future__ import annotations

from explain.core.errors import ShapeError


class CheckShapeError(ShapeError):
    """A shape mismatch in a checked expression, with lines that point at where it happened."""

    def __init__(self, message: str, display: list[str] | None = None,
                 fix: tuple[int, int, str] | None = None) -> None:
        super().__init__(message)
        self.display: list[str] = display or []
        # The one fix, when there is one: replace source[start:end] with the text (tests substitute it).
        self.fix = fix
        # In a function, a fix on an earlier line: (line, text on it, replacement).
        self.edits: list[tuple[int, str, str]] = []


def caret_lines(source: str, start: int, end: int, indent: str = "  ") -> list[str]:
    """``source`` and a line of carets under ``source[start:end]`` (at least one caret)."""
    width = max(1, end - start)
    return [indent + source, indent + " " * start + "^" * width]


class Advice:
    """A warning: code whose shapes fit but whose named axes say it computes the wrong thing (a softmax over the
    heads, a mask after the softmax), with the reason, a caret display and, when there is one, the fix as
    ``(start, end, text)`` in the checked source. ``--strict`` makes it an error."""

    __slots__ = ("message", "display", "fix", "where", "line", "edits")

    def __init__(self, message: str, display: list[str] | None = None,
                 fix: tuple[int, int, str] | None = None, line: int | None = None) -> None:
        self.message, self.display, self.fix = message, display or [], fix
        self.where = ""  # "FILE:LINE" in a function check
        self.line = line  # the line the warning is about, when it is not the statement being checked
        # In a function, fixes as (line, text, replacement): the text on that line of the file to replace.
        self.edits: list[tuple[int, str, str]] = []

    def __repr__(self) -> str:
        return f"Advice({self.message!r})"
