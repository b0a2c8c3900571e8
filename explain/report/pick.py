"""What ``--plain`` and ``--json`` print of a run, when not all of it: ``--match PATTERN`` (the steps whose names
match, as ``explain shapes --match``), ``--slice batch=1,head=3`` (the 2-D slice each step shows, by axis name)
and ``--cell 0,1,2`` (one cell's drill-down), so a slice or one drill-down can be printed and diffed.

:func:`make_pick` parses and checks the three against the trace, before anything is printed, and raises a
one-line :class:`~explain.core.errors.UsageError` naming the problem and the fix. No numpy, rich or click here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from explain.core.errors import UsageError
from explain.core.limits import parse_whole
from explain.core.names import name_matches
from explain.trace import Step, Trace
from explain.trace.slices import lead_shape

_PAIR = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)\s*$")


@dataclass
class Pick:
    """The steps to print and, for each, what of it: the slice's ``lead`` or the ``cell`` explained."""

    steps: list[Step]
    slice: dict[str, int] = field(default_factory=dict)  # axis name → index, as given
    cell: tuple[int, ...] | None = None
    whole: bool = True  # no --match and no --cell: the predictions, generation and loss lines follow the steps

    def lead(self, step: Step) -> tuple[int, ...] | None:
        """The leading indices of the slice ``step`` shows (None: the first, as without --slice)."""
        if not self.slice:
            return None
        lead_axes = step.axes[:len(lead_shape(step))]
        return tuple(self.slice.get(axis, 0) for axis in lead_axes)

    def sliced(self, step: Step) -> dict[str, int]:
        """The --slice axes that pick ``step``'s slice (those among its leading axes), for the output to say."""
        lead_axes = step.axes[:len(lead_shape(step))]
        return {a: i for a, i in self.slice.items() if a in lead_axes}


def parse_slice(text: str) -> dict[str, int]:
    """``batch=1,head=3`` → ``{"batch": 1, "head": 3}``."""
    out: dict[str, int] = {}
    for part in text.split(","):
        m = _PAIR.match(part)
        if not m:
            raise UsageError(f"--slice '{text}': give AXIS=INDEX pairs separated by commas, e.g. --slice batch=1,head=3")
        if m[1] in out:
            raise UsageError(f"--slice '{text}' names '{m[1]}' twice; give each axis once")
        out[m[1]] = parse_whole(m[2], f"--slice {m[1]}")  # int() alone takes '²' and 5,000 digits
    return out


def parse_cell(text: str) -> tuple[int, ...]:
    """``0,1,2`` → ``(0, 1, 2)``."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() for p in parts):
        raise UsageError(f"--cell '{text}': give one index per axis of the step, separated by commas, e.g. --cell 0,1")
    return tuple(parse_whole(p, "--cell") for p in parts)  # int() alone takes '²' and 5,000 digits


def _check_slice(steps: list[Step], sl: dict[str, int]) -> None:
    sliceable = {a for s in steps for a in s.axes[:len(lead_shape(s))]}
    for axis, i in sl.items():
        if axis not in sliceable:
            have = ", ".join(sorted(sliceable)) or "none (every step shown is at most 2-D)"
            raise UsageError(f"--slice {axis}={i}: no step shown has a '{axis}' axis to pick a slice by; the axes "
                             f"a slice is picked by here: {have}")
        for s in steps:
            n = dict(zip(s.axes[:len(lead_shape(s))], s.shape)).get(axis)
            if n is not None and i >= n:
                raise UsageError(f"--slice {axis}={i}: '{s.name}' has {axis} 0 to {n - 1} only; give "
                                 f"{axis}={n - 1} or less")


def _check_cell(steps: list[Step], cell: tuple[int, ...]) -> None:
    given = ",".join(map(str, cell))
    for s in steps:
        if len(s.shape) != len(cell) or any(i >= n for i, n in zip(cell, s.shape)):
            axes = ", ".join(f"{a} {n}" for a, n in zip(s.axes, s.shape)) or "a scalar: no index"
            raise UsageError(f"--cell {given} is not a cell of '{s.name}' ({axes}); give one index per axis, each "
                             f"below its size, and pick the step with --match")


def make_pick(trace: Trace, match: str | None = None, slice_: str | None = None, cell: str | None = None) -> Pick:
    """The steps and parts of them to print, checked; a UsageError for a bad pattern, slice or cell."""
    if slice_ is not None and cell is not None:
        raise UsageError("give --slice or --cell, not both: a cell already names an index on every axis")
    steps = [s for s in trace if match is None or name_matches(match, s.name)]
    if not steps:
        examples = ", ".join(s.name for s in trace.steps[1:4])
        raise UsageError(f"--match '{match}' matches no step of this {trace.config.model} run; names look like "
                         f"{examples} (a glob such as 'blocks.0.*' or a prefix such as 'blocks.0')")
    sl = parse_slice(slice_) if slice_ is not None else {}
    idx = parse_cell(cell) if cell is not None else None
    if sl:
        _check_slice(steps, sl)
    if idx is not None:
        _check_cell(steps, idx)
    return Pick(steps, sl, idx, whole=match is None and idx is None)
