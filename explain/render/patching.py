"""Rich renderables of activation patching (:mod:`explain.interp.patching`): one patched run's logit difference
against the clean and corrupted runs, and a sweep's recovered fractions as a heatmap (layers down, positions or
heads across), each cell its number on the diverging palette the matrices use."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain.interp.patching import Patched, Runs, Sweep, describe
from explain.ops.base import num


def _what(runs: Runs) -> str:
    return f"logit[{runs.word_text!r}] − logit[{runs.vs_text!r}]"


def runs_line(runs: Runs, digits: int = 4) -> Text:
    return Text(f"{_what(runs)} at the last position: clean {num(runs.clean_diff, digits)}, corrupted "
                f"{num(runs.corrupt_diff, digits)}")


def patched_view(p: Patched, digits: int = 4) -> Group:
    step = p.runs.corrupt[p.step]
    lines = [runs_line(p.runs, digits),
             Text(f"patched {p.step} ({describe(step, p.where)}; {p.cells_changed} cells differ from the corrupted "
                  f"run's): {num(p.diff, digits)}, recovered fraction {num(p.recovered, digits)}")]
    lines += [Text(f"Note: {n}.", style="bold") for n in p.notes]
    return Group(*lines)


def _style(v: float) -> str:
    """A background from blue (−1) through white (0) to red (+1), fixed scale: the recovered fraction's own."""
    x = max(-1.0, min(1.0, v))
    r, g, b = (255, int(255 * (1 - x)), int(255 * (1 - x))) if x >= 0 else \
        (int(255 * (1 + x)), int(255 * (1 + x)), 255)
    return f"black on rgb({r},{g},{b})"


def fraction(v: float, digits: int = 2) -> str:
    """A recovered fraction with fixed decimals, so a column's width does not depend on its values; one that rounds
    to zero is 0.00, not -0.00."""
    return f"{round(float(v), digits) + 0.0:.{digits}f}"


def rows_legend(s: Sweep) -> str:
    """What row L of a sweep patches (its rows are labelled by layer only), and what a column label a/b means."""
    cols = "" if s.kind == "heads" else "; a column whose words differ is labelled clean/corrupted"
    return {"resid": f"row L: the input of block L ({s.steps[0]}, then blocks.L−1.resid_post)",
            "mlp": "row L: blocks.L.mlp_out", "heads": "row L: blocks.L.attn.z, one head at every position"}[s.kind] + cols


def sweep_heatmap(s: Sweep, digits: int = 2) -> Group:
    what = {"resid": "each block's input at one position", "mlp": "each MLP output at one position",
            "heads": "each head's z at every position"}[s.kind]
    title = Text(f"recovered fraction, patching {what}", style="italic")
    table = Table(padding=(0, 1), collapse_padding=True)
    table.add_column("layer", no_wrap=True)
    for c, label in enumerate(s.columns):
        table.add_column(label.replace("head ", "h") if s.kind == "heads" else f"{c} {label}", justify="right",
                         no_wrap=True)
    for r in range(len(s.steps)):
        table.add_row(str(r), *[Text(fraction(v, digits), style=_style(v)) for v in s.recovered[r]])
    rows = Text(rows_legend(s), style="dim")
    note = Text("(patched − corrupted) / (clean − corrupted): 1 restores the clean run's difference, 0 changes "
                f"nothing; {s.executed:,} steps recomputed in all (only those after each patch point)", style="dim")
    warn = [Text(f"Note: {n}.", style="bold") for n in s.runs.notes()]
    return Group(runs_line(s.runs), *warn, title, table, rows, note)
