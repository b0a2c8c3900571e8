"""How explanations write numbers: the precision setting (the TUI's +/-, ``--precision``), a value rounded to it,
to significant digits, or as an operand in parentheses. :mod:`explain.ops.base` re-exports every name, so an op
imports them from there beside the rest of the op vocabulary; no numpy is imported."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any


def exact_text(x: float) -> str | None:
    """The text of a value that needs no rounding: ±inf spelled out, nan, an integer bare (112, not
    112.0000); None for any other value. Shared by explanations (:func:`num`) and matrix cells."""
    if math.isinf(x):
        return "−inf" if x < 0 else "inf"
    if math.isnan(x):
        return "nan"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return None


_PRECISION: ContextVar[int] = ContextVar("explain_precision", default=4)


@contextmanager
def precision(digits: int) -> Iterator[None]:
    """Explanations built inside this block print their numbers with ``digits`` decimals (the TUI's +/- and
    ``--precision``): the drill-down, the narration's numbers and ``--plain`` follow the one setting."""
    token = _PRECISION.set(digits)
    try:
        yield
    finally:
        _PRECISION.reset(token)


def num(x: Any, digits: int | None = None) -> str:
    """A number as the explanations print it: the precision setting's decimals (``digits``, else the one
    :func:`precision` set, 4 by default); ±inf and nan spelled out; an exact integer bare (112, √d_k = 8); a
    value the decimals would show as 0 (or one too large to read) in scientific notation."""
    x = float(x)
    special = exact_text(x)
    if special is not None:
        return special
    p = _PRECISION.get() if digits is None else digits
    if x != 0 and (abs(x) < 0.5 * 10 ** -p or abs(x) >= 1e12):
        return f"{x:.{max(p - 1, 1)}e}"
    return f"{x:.{p}f}"


def grid_number(v: float, digits: int) -> str:
    """A float as a grid cell or a table of terms writes it: ``digits`` decimals (exact integers too, so ``2``
    never stands beside ``2.0000``), ±inf and nan spelled out, −0 as 0, and a value that would round to 0 as
    ``1.1e-07`` (never ``0.0000``). One function, so ``str(explanation)`` and the drill-down write a term alike."""
    v = float(v)
    if math.isinf(v) or math.isnan(v):
        return exact_text(v) or ""
    if v == 0:
        return f"{0.0:.{digits}f}"  # -0.0 (an ignored target's gradient) is 0, not "-0.0000"
    if abs(v) < 0.5 * 10.0 ** -digits:  # it would round to 0: written so it never looks like 0
        return f"{v:.1e}"
    return f"{v:.{digits}f}"


def term(v: Any, digits: int | None = None) -> str:
    """A cell of an explanation's table of terms: a float as :func:`grid_number` writes it (the precision
    setting's decimals unless ``digits``), anything else (an index, a word) as its text."""
    return grid_number(v, _PRECISION.get() if digits is None else digits) if isinstance(v, float) else str(v)


def sig6(x: Any) -> str:
    """Six significant digits whatever the precision setting: for messages that compare a value to a
    tolerance (a tutorial's expectation), where the display's rounding would hide the difference."""
    x = float(x)
    special = exact_text(x)
    return special if special is not None else f"{x:.6g}"


def sig(x: Any) -> str:
    """The precision setting's digits as significant digits (4: ``-0.003191``, ``1.018e-05``): for the small
    quantities an optimizer explains (a running mean of gradients, its square), where decimals would show 0."""
    x = float(x)
    special = exact_text(x)
    return special if special is not None else f"{x:.{_PRECISION.get()}g}"


def arg(x: Any, digits: int | None = None) -> str:
    """:func:`num` for an operand inside arithmetic: a negative in parentheses (``(-0.4362)``), so ``a − (-b)``
    never reads as ``a − -b``; its minus is the one every other number has (issue 26: ``-0.1045 − (−0.0493)``
    mixed two)."""
    text = num(x, digits)
    return f"({text})" if text.startswith("-") else text


# a number's own sign: a '-' before a digit that follows no letter, digit or closing bracket (so not the e-05 of
# 1.2e-05, not a hyphen in a word, not a subtraction written a-b)
_SIGN = re.compile(r"(?<![\w\])])-(?=\.?\d)")


def one_minus(text: str) -> str:
    """``text`` (a drill-down's formula) with one minus sign: where a number's own sign is ``-`` (as every grid,
    table and result writes it: ``-0.1027``), its subtractions and −inf are ``-`` too, so a line reads
    ``exp(-0.1027 - 0.3457)``, never ``exp(-0.1027 − 0.3457)`` (issue 42). A formula with no negative number
    keeps the typographic ``−`` (``x − μ``)."""
    return text.replace("\u2212", "-") if "\u2212" in text and _SIGN.search(text) else text


def residue(x: float) -> str:
    """A difference that is 0 in exact arithmetic (a sum of parts against the whole): ``0`` when it is float64
    rounding (below 1e-12: '9.7e-17' read as a real difference beside a narration that says they agree), else
    the difference in scientific notation."""
    x = float(x)
    return "0" if x == 0 else f"0 (float64 rounding: {x:.1e})" if abs(x) < 1e-12 else f"{x:.1e}"
