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


def caret_lines(source: str, start: int, end: int, indent: str = "  ") -> list[str]:
    """``source`` and a line of carets under ``source[start:end]`` (at least one caret)."""
    width = max(1, end - start)
    return [indent + source, indent + " " * start + "^" * width]
