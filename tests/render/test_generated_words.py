"""The table of attention to generated tokens prints every token as it is (found with issue 42's notebook tables):
rich read a column heading or row label '[unused0]' as markup and dropped it. Fails on the old table."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from explain.interp.generated import GeneratedAttention
from explain.render.generated import generated_table


def test_bracketed_tokens_are_printed() -> None:
    att = GeneratedAttention(0, 0, 0, ["gen.0.blocks.0.attn.pattern", "gen.1.blocks.0.attn.pattern"],
                             ["[unused0]", "[b]"], ["<s>", "[unused0]", "[b]"], 2, np.array([[0.4, 0.6, np.nan],
                                                                                       [0.2, 0.3, 0.5]]))
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(generated_table(att))
    out = console.file.getvalue()
    assert "0 [unused0]" in out and "1 [b]" in out and out.count("[unused0]") == 2 and "[b]*" in out
