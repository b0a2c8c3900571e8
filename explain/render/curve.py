"""A loss curve drawn with characters: the training loss (one column per group of steps, the group's mean) and
the held-out loss, on a shared y axis with its labels, fitted to a width and a height.

Drawn here rather than with a plotting library: the curve is two series on one axis, and rich (already a
dependency) lays out the coloured text; plotext would be a new dependency for about eighty lines.
"""

from __future__ import annotations

from rich.text import Text

TRAIN, HELD = "·", "●"


def loss_curve(losses: list[float], held: list[tuple[int, float]], total: int, width: int, height: int) -> Text:
    """The curve as text ``height`` lines high and ``width`` wide (y labels included); the x axis spans
    ``total`` steps, so the curve grows to the right as training goes."""
    label_w = 7
    w, h = max(8, width - label_w - 1), max(3, height - 2)  # the axis and the legend take two lines

    def col(step: int) -> int:  # step 1 at the left, step ``total`` at the right end (a whole number of steps
        # per column left up to half the axis empty at the end of a run: 200 steps on 192 columns used 100)
        return min(w - 1, (step - 1) * (w - 1) // max(1, total - 1))

    groups: dict[int, list[float]] = {}
    for step, v in enumerate(losses, 1):
        groups.setdefault(col(step), []).append(v)
    cols = {x: sum(vs) / len(vs) for x, vs in groups.items()}
    marks = {col(s): v for s, v in held}
    vals = [v for v in list(cols.values()) + list(marks.values()) if v is not None]
    top, bottom = (max(vals), min(vals)) if vals else (1.0, 0.0)
    if top - bottom < 1e-9:
        top, bottom = top + 0.5, bottom - 0.5

    def row(v: float) -> int:
        return round((top - v) / (top - bottom) * (h - 1))

    grid = [[" "] * w for _ in range(h)]
    style = [[""] * w for _ in range(h)]
    for x, v in cols.items():
        grid[row(v)][x], style[row(v)][x] = TRAIN, "cyan"
    for x, v in marks.items():
        grid[row(v)][x], style[row(v)][x] = HELD, "bold magenta"
    out = Text()
    for y in range(h):
        label = f"{top - (top - bottom) * y / (h - 1):>{label_w}.3f}" if y in (0, h - 1, (h - 1) // 2) else " " * label_w
        out.append(label + "┤", style="dim")
        for x in range(w):
            out.append(grid[y][x], style=style[y][x] or None)
        out.append("\n")
    out.append(" " * label_w + "└" + "─" * w + "\n", style="dim")
    legend = f"{TRAIN} training loss   {HELD} held-out loss   steps 1–{total}"
    out.append(" " * (label_w + 1) + legend[: w], style="dim")
    return out
