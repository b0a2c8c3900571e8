"""How exported arrays are written: as numpy literals in the script, or in a sidecar ``.npz``.

Floats are written with ``repr(float)``, the shortest text that reads back to the same double, so a literal
round-trips exactly; ±inf and NaN become ``np.inf``/``-np.inf``/``np.nan``. Literals are laid out like numpy's
own repr (one innermost row per line, inner brackets aligned) and wrapped to the script's width.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

WIDTH = 88  # the default line length of black and ruff: a learner's linter accepts the script as it is
INDENT = "    "

# An export whose arrays hold more values than this goes to a sidecar .npz: ~2,000 values of ~20 characters
# each is already a few hundred lines of numbers, about as much as anyone reads.
LITERAL_LIMIT = 2000


def float_text(x: float) -> str:
    """The exact text of one float: repr, with numpy's names for the values Python cannot spell."""
    if math.isnan(x):
        return "np.nan"
    if math.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(float(x))


def _scalar_text(x: Any, is_int: bool) -> str:
    return str(int(x)) if is_int else float_text(float(x))


def _rows(arr: np.ndarray, is_int: bool, col: int, width: int, per_line: int, tail: int = 0) -> list[str]:
    """A nested list literal for ``arr`` (ndim >= 1) starting at column ``col``, ``per_line`` numbers to a
    line, or a whole row on one line when it fits with ``tail`` characters (closing brackets, a comma) to
    spare; continuation lines are indented so inner brackets line up under each other (numpy's layout)."""
    if arr.ndim == 1:
        items = [_scalar_text(x, is_int) for x in arr]
        if col + 1 + len(", ".join(items)) + tail <= width:  # the whole row fits: one line
            per_line = max(len(items), 1)
        chunks = [items[i:i + per_line] for i in range(0, len(items), per_line)] or [[]]
        lines = [", ".join(c) for c in chunks]
        return ["[" + "\n".join(ln + ("," if i < len(lines) - 1 else "") for i, ln in enumerate(lines))
                .replace("\n", "\n" + " " * (col + 1)) + "]"]
    out: list[str] = []
    for i, sub in enumerate(arr):
        sub_lines = "\n".join(_rows(sub, is_int, col + 1, width, per_line, tail)).split("\n")
        sub_lines[-1] += "]" if i == len(arr) - 1 else ","
        out.append(("[" if i == 0 else " " * (col + 1)) + sub_lines[0])
        out.extend(sub_lines[1:])
    return ["\n".join(out)]


def _flat(arr: np.ndarray, is_int: bool) -> str:
    """The nested list on one line."""
    if arr.ndim == 1:
        return "[" + ", ".join(_scalar_text(x, is_int) for x in arr) + "]"
    return "[" + ", ".join(_flat(sub, is_int) for sub in arr) + "]"


def _per_line(arr: np.ndarray, is_int: bool, col: int, width: int) -> int:
    """How many numbers fit on a line at the innermost indent (the same for every row, so columns line
    up), keeping room for the closing brackets and comma."""
    longest = max(len(_scalar_text(x, is_int)) for x in arr.reshape(-1))
    room = width - col - arr.ndim - arr.ndim  # the opening brackets, and the closing ones and a comma
    return max(1, (room + 2) // (longest + 2))


def literal(value: Any, prefix: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """Lines of ``prefix + np.array(...)``: the array as an exact literal. One line when it fits, else the
    nested list on its own lines one level in from ``indent`` (the indentation of the line ``prefix`` starts)."""
    arr = np.asarray(value)
    is_int = arr.dtype.kind in "iub"
    if arr.dtype.kind not in "iubf":
        raise TypeError(f"cannot write an array of dtype {arr.dtype} as a literal")
    if arr.ndim == 0:
        return [f"{prefix}np.array({_scalar_text(arr, is_int)})"]
    if arr.size == 0:
        dtype = ", dtype=np.int64" if is_int else ""
        return [f"{prefix}np.zeros({tuple(arr.shape)!r}{dtype})"]
    one = _flat(arr, is_int)
    if len(prefix) + len(one) + len("np.array(),") <= width:
        return [f"{prefix}np.array({one})"]
    inner = indent + INDENT
    per_line = _per_line(arr, is_int, len(inner), width)
    body = _rows(arr, is_int, len(inner), width, per_line, arr.ndim + 1)[0].split("\n")
    return [f"{prefix}np.array(", inner + body[0], *body[1:], indent + ")"]


def is_int_array(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "iub"
