"""explain.render.tables.fit_tables: a Markdown table wider than the pane becomes a list, every cell kept under
its column's name; a table that fits, and text around it, stay as written. Tutorial 17's RoPE tables were cut to
'fre…' and '(1.…' in the 30- to 60-column tutorial pane."""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown

from explain.render.tables import fit_tables

TABLE = """Pair i turns by the angle p·θ^(−2i/d):

| pair | frequency | angle at p = 2 |
| --- | :---: | --- |
| (0, 2) | 10000^0 = 1 | 2 rad |
| (1, 3) | 10000^(−1/2) = 0.01 | 0.02 rad |

So the first pair spins fast."""


def drawn(markdown: str, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(Markdown(markdown))
    return [line for line in console.file.getvalue().split("\n") if line.strip()]


def test_a_table_that_fits_stays_a_table_and_rich_draws_it_unwrapped() -> None:
    # widest cells 6 + 19 + 14 = 39, plus a space either side of each: 45 columns
    assert fit_tables(TABLE, 45) == TABLE and fit_tables(TABLE, 200) == TABLE
    table = TABLE.split("\n\n")[1]
    assert len(drawn(table, 45)) == 4  # header, rule, two rows: no cell wrapped at the width it was kept at
    assert len(drawn(table, 44)) > 4  # one column less and rich wraps a cell: there it becomes a list
    assert fit_tables(TABLE, 44) != TABLE


def test_a_table_too_wide_becomes_a_list_with_every_cell() -> None:
    got = fit_tables(TABLE, 44)
    assert got.split("\n") == [
        "Pair i turns by the angle p·θ^(−2i/d):",
        "",
        "- **pair (0, 2)**",
        "    - frequency: 10000^0 = 1",
        "    - angle at p = 2: 2 rad",
        "- **pair (1, 3)**",
        "    - frequency: 10000^(−1/2) = 0.01",
        "    - angle at p = 2: 0.02 rad",
        "",
        "So the first pair spins fast.",
    ]


def test_a_row_label_column_with_no_name_and_emphasis() -> None:
    md = "| | dot product | synthesizer |\n| --- | --- | --- |\n| rows of the two *the*s | equal | **equal** |"
    assert fit_tables(md, 30).split("\n") == ["- **rows of the two *the*s**", "    - dot product: equal",
                                              "    - synthesizer: **equal**"]
    # emphasis marks take no room: cells of 20 + 11 + 11 columns and a space either side of each: 48
    assert fit_tables(md, 48) == md and fit_tables(md, 47) != md
    assert len(drawn(md, 48)) == 3 and len(drawn(md, 47)) > 3


def test_text_with_pipes_but_no_rule_is_left_alone() -> None:
    md = "| not a table |\nbecause no rule follows"
    assert fit_tables(md, 5) == md
