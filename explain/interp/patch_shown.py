"""What activation patching's results print (:mod:`explain.interp.patching`): one patched run's logit difference
against the clean and corrupted runs, and a sweep's recovered fractions as a grid (layers down, positions or
heads across), as :mod:`explain.core.shown` parts. ``print(result)`` and a notebook's ``_repr_html_`` write
them, and :mod:`explain.render.patching` draws the same strings as rich tables for ``explain patch --plain``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from explain.core.shown import Grid, Line, Part
from explain.core.text import quoted
from explain.ops.base import num

if TYPE_CHECKING:  # patching imports this module: its classes are only named here
    from explain.interp.patching import Patched, Runs, Sweep, Where
    from explain.trace import Step


def describe(step: Step, where: Where) -> str:
    """``pos 2``, ``head 1``: the cells a patch takes, by axis name."""
    return ", ".join(f"{step.axes[a]} {i}" for a, i in where) or "every cell"


def runs_line(runs: Runs, digits: int = 4) -> str:
    """The two runs' logit differences at the last position."""
    return (f"logit[{quoted(runs.word_text)}] − logit[{quoted(runs.vs_text)}] at the last position: clean "
            f"{num(runs.clean_diff, digits)}, corrupted {num(runs.corrupt_diff, digits)}")


def patched_parts(p: Patched, digits: int = 4) -> list[Part]:
    """Both runs' differences, the patched run's difference and recovered fraction, and any warnings."""
    step = p.runs.corrupt[p.step]
    return [Line(runs_line(p.runs, digits)),
            Line(f"patched {p.step} ({describe(step, p.where)}; {p.cells_changed} cells differ from the corrupted "
                 f"run's): {num(p.diff, digits)}, recovered fraction {num(p.recovered, digits)}"),
            *(Line(f"Note: {n}.", "warn") for n in p.notes)]


def fraction(v: float, digits: int = 2) -> str:
    """A recovered fraction with fixed decimals, so a column's width does not depend on its values; one that rounds
    to zero is 0.00, not -0.00."""
    return f"{round(float(v), digits) + 0.0:.{digits}f}"


def rows_legend(s: Sweep) -> str:
    """What row L of a sweep patches (its rows are labelled by layer only), and what a column label a/b means."""
    cols = "" if s.kind == "heads" else "; a column whose words differ is labelled clean/corrupted"
    return {"resid": f"row L: the input of block L ({s.steps[0]}, then blocks.L−1.resid_post)",
            "mlp": "row L: blocks.L.mlp_out", "heads": "row L: blocks.L.attn.z, one head at every position"}[s.kind] + cols


def sweep_grid(s: Sweep, digits: int = 2) -> Grid:
    """Layers down, positions (``2 tired/happy``) or heads (``h1``) across, each cell its recovered fraction and
    that fraction as the cell's heat."""
    columns = [label.replace("head ", "h") if s.kind == "heads" else f"{c} {label}" for c, label in enumerate(s.columns)]
    rows = tuple((str(r), *(fraction(v, digits) for v in s.recovered[r])) for r in range(len(s.steps)))
    heat = tuple(tuple(float(v) for v in s.recovered[r]) for r in range(len(s.steps)))
    return Grid(("layer", *columns), rows, right=(False, *(True for _ in columns)), heat=heat)


def sweep_parts(s: Sweep, digits: int = 2) -> list[Part]:
    """Both runs' differences, warnings, the caption, the grid, what its rows are and how to read a fraction."""
    what = {"resid": "each block's input at one position", "mlp": "each MLP output at one position",
            "heads": "each head's z at every position"}[s.kind]
    return [Line(runs_line(s.runs)), *(Line(f"Note: {n}.", "warn") for n in s.runs.notes()),
            Line(f"recovered fraction, patching {what}", "caption"), sweep_grid(s, digits),
            Line(rows_legend(s), "note"),
            Line("(patched − corrupted) / (clean − corrupted): 1 restores the clean run's difference, 0 changes "
                 f"nothing; {s.executed:,} steps recomputed in all (only those after each patch point)", "note")]
