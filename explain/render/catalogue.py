"""``explain models``'s table: the catalogue's models, what each is, its size, and where it is on this machine."""

from __future__ import annotations

import os
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text


def _size(n: int) -> str:
    return f"{n / 1e6:,.0f} MB" if n >= 1e6 else f"{n / 1e3:,.0f} kB"


def _params(n: int) -> str:
    return f"{n / 1e6:,.0f}M" if n >= 1e6 else f"{n / 1e3:,.0f}k"


def _home(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path


def catalogue_table(rows: list[dict[str, Any]], cache: str) -> Group:
    """One row per model (what it is, whether it is here), then where each fetched one is. Rows are the dicts
    ``explain models --json`` writes (which has every pin and size)."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, expand=False,
                  padding=(0, 1, 0, 0))
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("model", no_wrap=True)
    table.add_column("family", no_wrap=True)
    table.add_column("params", justify="right", no_wrap=True)
    table.add_column("licence", no_wrap=True)
    table.add_column("here?", no_wrap=True)
    lines = []
    for r in rows:
        if r["status"] == "here":
            here = Text(f"{_size(r['size_bytes'])}, fetched", style="green")
            lines.append(Text.assemble((f"{r['name']}: ", "bold"), _home(r["path"])))
        elif r["status"] == "in the box":
            here = Text("in the box", style="green")
        else:
            here = Text(f"{_size(r['download_bytes'])} to fetch", style="yellow")
        table.add_row(r["name"], r["model"], r["family"], _params(r["parameters"]), r["licence"], here)
    foot = Text(f"cache: {_home(cache)} (EXPLAIN_CACHE moves it). A name runs as a model: explain run NAME, or "
                "--checkpoint NAME; its first use fetches it once (explain fetch NAME does only that).", style="dim")
    return Group(table, *lines, foot)
