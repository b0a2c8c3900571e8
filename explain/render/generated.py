"""Rich renderable of the attention to generated tokens (:mod:`explain.interp.generated`): one row per new token's
query, one column per position of the text so far (generated ones marked *), each cell a recorded weight."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from explain.interp.generated import GeneratedAttention
from explain.ops.base import num


def generated_table(att: GeneratedAttention, digits: int = 2) -> Table:
    """Rows: the prompt's last token, then each generated token fed back; columns: the text so far. A column's
    header is its position over its word, so the table stays as narrow as its numbers."""
    table = Table(title=f"attention to generated tokens: layer {att.layer}, head {att.head} (row n is "
                        f"gen.n.blocks.{att.layer}.attn.pattern; * marks a generated token)", title_justify="left")
    table.add_column("row", no_wrap=True)
    for i, word in enumerate(att.keys):
        # as Text, never markup: a token '[unused0]' (BERT's) or '[b]' was read as a style and vanished
        table.add_column(Text(f"{i}\n{word}" + ("*" if i >= att.prompt_len else "")), justify="right", no_wrap=True)
    for n, (query, row) in enumerate(zip(att.queries, att.weights)):
        table.add_row(Text(f"{n} {query}"), *[num(float(v), digits) if v == v else "" for v in row])
    return table
