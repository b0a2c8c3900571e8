"""Errors the user can cause and fix.

Every error the core raises for bad input is an :class:`ExplainError`. The CLI catches them at its edge and
prints one line, ``Error: …``, naming what is wrong and how to fix it; the exit code is the class's
``exit_code`` (2 for usage errors, 1 for domain errors). Nothing here imports numpy.
"""

from __future__ import annotations

from explain.core.text import visible


class ExplainError(Exception):
    """Base of every error a user can fix; the message is one line that says what and how.

    Messages quote what the user's files hold (a TOML key, a tensor name), so the message is passed through
    :func:`~explain.core.text.visible` here, once for every error: a control character in it is shown, never obeyed,
    wherever the message ends up (the CLI's ``Error:`` line, the TUI, a Python traceback)."""

    exit_code = 1

    def __init__(self, message: object = "", *args: object) -> None:
        super().__init__(visible(message), *args)


class UsageError(ExplainError):
    """The command line or a value in it is wrong (an unknown model, a bad option value)."""

    exit_code = 2


class ConfigError(UsageError):
    """A model configuration that cannot be built (d_model not divisible by the heads, …)."""


class InputError(ExplainError):
    """Input data that cannot be used (text longer than the context, embeddings of the wrong width, …)."""


class WeightsError(ExplainError):
    """A weights file that is unreadable, pickled, or does not match the model."""


class ShapeError(ExplainError):
    """Two shapes that do not fit an operation; the message names both and the rule that failed."""


class ResourceError(ExplainError):
    """A run whose weights or trace would not fit in memory; refused before anything is allocated."""


class StepNotFound(UsageError):
    """A step name that is not in the trace; the message suggests the nearest names."""
