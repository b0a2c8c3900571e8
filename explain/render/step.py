"""Rich renderables for a step: its header (name, op, formula, signature, note), its output as matrices, and a
cell explanation (the drill-down). Used by the plain printer and the TUI."""

from __future__ import annotations

import unicodedata
from typing import Any

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text

from explain import ops
from explain.core.names import is_text_axis
from explain.ops.base import CellExplanation, num, term
from explain.render.grid import TensorWindow
from explain.render.tensor import head_tail, number_format
from explain.trace import Step, Trace
from explain.trace.slices import as_matrix, slice_label


def step_header(step: Step, where: str = "") -> Group:
    """Name and op, the formula, the shape signature, the note; ``where`` (e.g. "step 3 of 47") ends the first
    line."""
    title = Text.assemble((step.name, "bold cyan"), "  ", (f"[{step.op}]", "dim"))
    if where:
        title.append(f"   {where}", "dim")
    return Group(title, Text(step.formula, style="bold"), Text(step.signature, style="green"),
                 Text(step.note, style="italic"))


def axis_labels(trace: Trace, step: Step, axis: int, lead: tuple[int, ...] = ()) -> list[str] | None:
    """Token labels for an axis whose name the trace knows (positions, vocabulary), else None; those of the
    batch item that the slice ``lead`` shows."""
    if not step.axes or axis >= len(step.axes):
        return None
    item = trace.item_of(step, tuple(lead))
    labels = trace.axis_labels(step.axes[axis], item)
    n = step.shape[axis]
    if labels is not None and len(labels) < n and step.axes[axis] == "pos":
        more = list(labels) + drawn_words(trace, item or 0)  # a generation's later positions: its tokens
        labels = more[:n] if len(more) >= n else None
    elif labels is not None and len(labels) == n + 1 and step.axes[axis] == "part":
        labels = labels[:n]  # the attribution's stack: every part but the bias row its contributions add
    elif labels is not None and len(labels) == n + 1 and step.axes[axis] == "pos":
        # a loss or its log p(y): position t is scored on the token after it; '→letter' (the drill-down's
        # 'fox→letter' cut to 8 columns lost the word scored: 'fox→let…'), the ruler above says the position
        labels = [f"→{b}" for b in labels[1:]]
    elif labels is not None and len(labels) != n:
        labels = None
    appended = appended_rows(trace, step)
    if appended and axis == len(step.shape) - 2:  # the key/value cache's appended rows say so
        labels = [(labels[i] if labels else "") + (" +new" if i in appended else "") for i in range(n)]
    return labels


def drawn_words(trace: Trace, item: int = 0) -> list[str]:
    """The words a generation drew, in order, for batch item ``item`` (empty without a generation)."""
    vocab = trace.labels.get("vocab") or []
    out = []
    for name in trace.generation.steps if trace.generation is not None else ():
        ids = trace[name].output
        i = int(ids[item if item < ids.shape[0] else 0, 0])
        out.append(vocab[i] if 0 <= i < len(vocab) else f"#{i}")
    return out


def appended_rows(trace: Trace, step: Step) -> range | None:
    """The rows an appending op (the key/value cache) added to its first input's, or None for other ops."""
    if not getattr(ops.get(step.op), "appends", False) or not step.inputs or len(step.shape) < 2:
        return None
    kept = trace[step.inputs[0]].shape[-2] if step.inputs[0] in trace else None
    return range(kept, step.shape[-2]) if kept is not None else None


def step_output(trace: Trace, step: Step, precision: int = 4, max_rows: int = 8, max_cols: int = 8,
                values: bool = True, heat: bool = True, lead: tuple[int, ...] | None = None) -> Group:
    """The step's output: one 2-D slice (``lead`` picks it, the first by default; always named), windowed
    numpy-style, with rulers and the colour legend (``heat``: colours, never for integer tensors)."""
    if step.output is None:
        return Group(Text("(shape only: no values)", style="dim"))
    lead = tuple(lead) if lead is not None else tuple(0 for _ in step.shape[:-2])
    mat, n_rows, n_cols = as_matrix(step, step.output, lead)
    if not step.shape:  # a scalar (the loss): a number with its formula, not a 1×1 grid
        return Group(Text.assemble((f"{step.syms.out} = ", "bold"), (num(float(mat[0, 0]), precision), "bold")))
    nf = number_format(mat, precision, id_words(trace, step))
    nd = len(step.shape)
    row_labels = axis_labels(trace, step, nd - 2, lead) if nd >= 2 else None
    col_labels = axis_labels(trace, step, nd - 1, lead) if nd >= 1 else None
    parts: list[Any] = []
    if lead:
        more = " (other slices not shown)" if any(n > 1 for n in step.shape[:-2]) else ""
        parts.append(Text(f"slice: {slice_label(step, lead, sep=', ')}{more}", style="dim"))
    parts.append(TensorWindow(mat, max_rows=max_rows, row_labels=row_labels, col_labels=col_labels, precision=nf,
                              values=values, heat=heat, probability=ops.get(step.op).probability,
                              **mask_sources(trace, step, lead)))
    return Group(*parts)


def id_words(trace: Trace, step: Step) -> Any:
    """The vocabulary when ``step``'s output is token ids (tokens, targets, the next token), so each id is
    drawn with its word; None for any other step (bool flags and floats included)."""
    out = step.output
    if out is None or getattr(out, "dtype", None) is None or out.dtype.kind not in "iu":
        return None
    if step.axes and is_text_axis(step.axes[-1]):  # a text's bytes or code points (the tokenizer's steps)
        return None
    return trace.labels.get("vocab")


def mask_sources(trace: Trace, step: Step, lead: tuple[int, ...]) -> dict[str, Any]:
    """What the grid needs to draw masked cells, as keyword arguments of
    :func:`~explain.render.grid.draw_window`: for a probability step (softmax after a causal or padding mask)
    ``masked_by``, the input whose −inf cells became weights of 0; for any other step ``before``, the input
    whose −inf cells were already −inf (so a second mask's own cells stand apart from the first's). Each is
    the first input's 2-D slice when it has the output's shape; a view, no copy: only the cells drawn are
    read."""
    if not step.inputs or len(step.shape) < 1:
        return {}
    idle = idle_rows(trace, step, lead)
    if idle is not None:
        return {"idle": idle}
    try:
        value = trace.value(step.inputs[0])
    except Exception:  # an input without values (shape-only): nothing to mark
        return {}
    if value is None or getattr(value, "shape", None) != step.shape or value.dtype.kind != "f":
        return {}
    mat, _, _ = as_matrix(step, value, lead)
    return {"masked_by": mat} if ops.get(step.op).probability else {"before": mat}


def idle_rows(trace: Trace, step: Step, lead: tuple[int, ...]) -> Any:
    """For a step that holds one (positions, features) slice per expert, computed only where the router sent a
    position (a routed op, or its gradient), a flag per row of the slice ``lead``: set where the position did not
    go to that expert. None for any other step or slice."""
    op = ops.get(step.op)
    forward = getattr(op, "fwd", op)  # a gradient's forward op: its inputs end with (…, the choice, the output)
    if not forward.routed or len(step.shape) < 3 or len(lead) != len(step.shape) - 2 or step.axes[-3] != "expert":
        return None
    choice_name = step.inputs[-1] if forward is op else step.inputs[-2]
    try:
        choice = trace.value(choice_name)
    except Exception:  # shape-only: no values to say it
        return None
    if choice is None or choice.shape[-2] != step.shape[-2] or trace[choice_name].axes[-2] != step.axes[-2]:
        return None
    return choice[lead[:-1] + (slice(None), lead[-1])] <= 0  # (T,): the rows expert lead[-1] did not take


def explanation_body(ex: CellExplanation, precision: int = 4, max_rows: int = 12, origin: bool = True,
                     width: int | None = None) -> Group:
    """A cell explanation without its result line: the title, the table of terms (windowed to ``max_rows``
    rows with a ``⋮``), the arithmetic lines and (``origin``) where a weight it reads came from in its file.
    Given the ``width`` it is drawn in, a table one or two columns too wide drops its outer padding, one wider
    still has one space between its columns instead of two."""
    parts: list[Any] = [Text(ex.title, style="bold")]
    if ex.columns and ex.rows:
        n = len(ex.rows)
        cells = [["⋮"] * len(ex.columns) if i is None else [term(v, precision) for v in ex.rows[i]]
                 for i in table_rows(n, n if max_rows >= n - 1 else max(2, max_rows), ex.focus)]  # a ⋮ for one row saves nothing
        words = labelled(cells)
        # each column is its widest cell plus a space either side; at the pane's edge rich would cut the last
        # column, the weights a softmax is about ("weig…", "0.76…" at 80 columns), so the edges' spaces go first
        natural = sum(max(cell_len(t) for t in col) + 2 for col in zip(ex.columns, *cells))
        tight = width is not None and natural > width
        # still too wide without them (tutorial 12's softmax at 80x24: 'k' holds '30 hungry'): one space between
        # columns instead of two, before rich cuts the answer
        closer = width is not None and natural - 2 > width
        table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold", pad_edge=not tight,
                      collapse_padding=closer)
        for i, c in enumerate(ex.columns):  # as Text, never markup: rich read the [k] of 'Q[0, 0, 1][k]' as a style and dropped it
            table.add_column(Text(c), justify="left" if words and i == 0 else "right", no_wrap=True)
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        parts.append(table)
    lines, _ = ex.result(precision)  # the result line is drawn apart (explanation_result)
    parts.extend(Text(line) for line in lines)
    if origin and ex.origin is not None:
        parts.append(origin_view(ex.origin))
    return Group(*parts)


def labelled(cells: list[list[str]]) -> bool:
    """Align a first column of ``index word`` labels in place, the indices right-aligned and the words
    left-aligned after them (the column is then drawn left-justified); False, cells untouched, for any other
    first column. Right-justified as whole strings, ``0 <bos>`` stood two columns left of ``3 the``."""
    split = [c[0].split(" ", 1) if c[0] != "⋮" else None for c in cells]
    if not cells or any(s is not None and (len(s) < 2 or not s[0].lstrip("-").isdigit()) for s in split):
        return False  # plain numbers, or not every row has its word: the right-justified column reads as it is
    wi = max(cell_len(s[0]) for s in split if s is not None)
    ww = max(cell_len(s[1]) for s in split if s is not None)
    for row, s in zip(cells, split):
        row[0] = "⋮".rjust(wi) if s is None else s[0].rjust(wi) + " " + s[1] + " " * (ww - cell_len(s[1]))
    return True


def origin_view(origin: CellExplanation) -> Group:
    """Where a weight read from a file came from (a GGUF's quantized block, :mod:`explain.trace.origin`), after a
    blank line: its heading, then its lines."""
    return Group(Text("\n" + origin.title, style="bold yellow"), *(Text(line, style="yellow") for line in origin.lines))


def table_rows(n: int, count: int, focus: tuple[int, ...] = ()) -> list[int | None]:
    """The rows of a table of ``n`` terms shown in about ``count`` lines, ``None`` for a ``⋮``: the first and the
    last (numpy-style), or, given the rows that matter (``focus``, most important first), those and their
    neighbours, in order, with a ``⋮`` for each gap (a softmax over 45 tokens shows its 2 survivors, not the
    −inf rows 0 and 44)."""
    focus = tuple(f for f in focus if 0 <= f < n)
    if n <= count or not focus:
        return head_tail(n, count)
    chosen: list[int] = list(dict.fromkeys(focus[:2]))  # the first two always (a line more, at worst)
    for f in focus[2:]:
        if len(_with_gaps(sorted({*chosen, f}), n)) > count + 1:
            break
        chosen.append(f)
    near = sorted(range(n), key=lambda i: abs(i - focus[0]))  # fill with the first focus's neighbours
    for i in near:
        if i in chosen:
            continue
        if len(_with_gaps(sorted({*chosen, i}), n)) > count + 1:
            continue
        chosen.append(i)
        if len(chosen) >= count:
            break
    return _with_gaps(sorted(chosen), n)


def _with_gaps(rows: list[int], n: int) -> list[int | None]:
    out: list[int | None] = [None] if rows and rows[0] > 0 else []
    for a, b in zip(rows, rows[1:] + [n]):
        out.append(a)
        if b > a + 1:
            out.append(None)
    return out


def widest_row(ex: CellExplanation, precision: int = 4, sample: int = 64) -> tuple[str, ...]:
    """One row of the table of terms whose every cell is the widest text of its column (over the first
    ``sample`` rows): a table with that one row is as wide as the whole table, which is how the drill-down
    measures itself without laying out every row."""
    widest = [""] * len(ex.columns)
    for row in ex.rows[:sample]:
        for i, v in enumerate(row):
            t = term(v, precision)
            if cell_len(t) > cell_len(widest[i]):
                widest[i] = t
    return tuple(widest)


def explanation_result(ex: CellExplanation, precision: int = 4, width: int | None = None) -> Text:
    """The result of a cell explanation: its last arithmetic line when that ends in the value (``sum of 4
    products = 0.2879``), else ``= 0.2879``. Given the ``width`` it is drawn in, a line too long for it breaks
    before its ``=`` signs (``exp(…) / 1.6386`` ⏎ ``= 0.6386 / 1.6386 = 0.3897``), so the value ends a line
    whole: never cut to ``= 0.…`` (the pane shows every line this returns)."""
    _, line = ex.result(precision)
    return Text("\n".join(result_lines(line, width)), style="bold green")


def _cells(text: str) -> int:
    """Cells ``text`` may take on screen, counting a combining mark (the hat of ``x̂``) as one: rich gives it no
    width, but the terminal's line is cropped as if it had one, which cut ``= -0.7970`` to ``= -0.797``."""
    return cell_len(text) + sum(1 for c in text if unicodedata.combining(c))


def result_lines(line: str, width: int | None) -> list[str]:
    """``line`` broken before its `` = `` signs into lines of at most ``width`` cells (each part whole where it
    fits; a part wider than ``width`` is folded at its spaces, the value last and whole on its own line)."""
    if width is None or _cells(line) <= width:
        return [line]
    parts = line.split(" = ")
    parts = [parts[0]] + [f"= {p}" for p in parts[1:]]
    lines: list[str] = []
    for part in parts:
        if lines and _cells(lines[-1]) + 1 + _cells(part) <= width:
            lines[-1] += " " + part
        elif _cells(part) <= width:
            lines.append(part)
        else:  # one part wider than the pane: fold it at its spaces
            lines.extend(_fold(part, width))
    return lines


def _fold(text: str, width: int) -> list[str]:
    out: list[str] = []
    for word in text.split(" "):
        if out and _cells(out[-1]) + 1 + _cells(word) <= width:
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def explanation_view(ex: CellExplanation, precision: int = 4, max_rows: int = 12) -> Group:
    """A cell explanation: the title, the table of terms (windowed), the arithmetic lines, the result."""
    parts = [explanation_body(ex, precision, max_rows, origin=False), explanation_result(ex, precision)]
    return Group(*parts, *([origin_view(ex.origin)] if ex.origin is not None else []))
