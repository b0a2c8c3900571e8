"""Words beside the indices of a drill-down's table (issue 42 item 5): where an op's table counts positions or
keys (the keys of a softmax, the j of a weighted sum A·V, the i of a loss's mean, the j of a gradient's dot
product), each index is written with the run's token for it, ``1 cat``, as a softmax over the vocabulary writes
``27 mat``. The op says which of its inputs' axes its rows count (:meth:`explain.ops.base.Op.row_axes`); this
module finds the words. It may import ``core`` and ``ops``; it imports no numpy.
"""

from __future__ import annotations

import re
from dataclasses import replace
from math import prod
from typing import TYPE_CHECKING

from explain import ops
from explain.ops.base import CellExplanation

if TYPE_CHECKING:
    from explain.trace.trace import Step, Trace

TARGETS = "targets"  # the step of the correct next tokens (explain.models.layers records it)
TEXT_AXES = ("pos", "src", "tgt")  # the axes whose indices are the text's tokens (the run's labels name them)


def axes_of(trace: Trace, name: str) -> tuple[str, ...]:
    """The axis names of a step's output or of a parameter."""
    return trace[name].axes if name in trace else trace.specs[name].axes


def counted_axes(trace: Trace, step: Step) -> tuple[str, ...]:
    """The axes the step's explanation table counts, flattened in that order (``()`` for a table over features)."""
    op = ops.get(step.op)
    return op.row_axes([axes_of(trace, n) for n in step.inputs], **step.attrs)


def _item(step: Step, index: tuple[int, ...]) -> int:
    """The batch item (or text) a cell of ``step`` belongs to; 0 without a batch."""
    for axis in ("batch", "text"):
        if axis in step.axes and step.axes.index(axis) < len(index):
            return index[step.axes.index(axis)]
    return 0


def word_at(words: list[str], t: int, n: int) -> str | None:
    """The token of index ``t`` on an axis of length ``n``: the word itself when the labels count the axis; when
    the axis is one shorter (a loss or a target, where position t is scored on the token after it), ``the→cat``."""
    if len(words) == n and 0 <= t < n:
        return words[t]
    if len(words) == n + 1 and 0 <= t < n:
        return f"{words[t]}→{words[t + 1]}"
    return None


def with_words(trace: Trace, step: Step, index: tuple[int, ...], ex: CellExplanation) -> CellExplanation:
    """``ex`` with each row's index written beside its token, where the table counts positions the run has words
    for; ``ex`` unchanged otherwise (a table over features, a run without text, rows that are not one per index)."""
    if step.op in TILE_OPS:
        return _tile_words(trace, step, index, ex)
    axes = counted_axes(trace, step)
    if not ex.rows or not any(a in TEXT_AXES for a in axes):
        return ex
    source = next((n for n in step.inputs if set(axes) <= set(axes_of(trace, n))), None)
    if source is None:
        return ex
    src_axes, src_shape = axes_of(trace, source), trace.shape_of(source)
    # the last axis of that name: a key/value cache's keys (…, pos, pos) outnumber its one query
    sizes = tuple(src_shape[len(src_axes) - 1 - src_axes[::-1].index(a)] for a in axes)
    if len(ex.rows) != prod(sizes):
        return ex  # not one row per index: leave the table as the op wrote it
    vocab = trace.labels.get("vocab")
    target = trace.value(TARGETS) if TARGETS in trace and trace.shape_of(TARGETS) == src_shape else None
    rows = []
    for i, row in enumerate(ex.rows):  # the rows in index order, numbered (0) or written as an index ([0, 1])
        index_of = row[0] if isinstance(row[0], int) else i
        coords, flat = {}, index_of
        for axis, n in zip(reversed(axes), reversed(sizes)):
            flat, coords[axis] = divmod(flat, n)
        item = coords.get("batch", _item(step, index))
        text = next((a for a in axes if a in TEXT_AXES), "pos")
        words = trace.axis_labels(text, item)
        word = word_at(words, coords[text], sizes[axes.index(text)]) if words else None
        if word is not None and target is not None:  # a loss's entry: the token read → the one it is scored on
            wanted = target.reshape(-1)[index_of]
            word = f"{word.split('→')[0]}→{vocab[wanted]}" if vocab and 0 <= wanted < len(vocab) else word
        rows.append(row if word is None else (f"{row[0]} {word}", *row[1:]))
    return replace(ex, rows=rows)


TILE_OPS = ("tile_max", "tile_sum", "tile_acc")  # tiled attention's tables over a tile's keys


def _tile_words(trace: Trace, step: Step, index: tuple[int, ...], ex: CellExplanation) -> CellExplanation:
    """A tiled attention's running max and sum count their tile's own keys (j = 0, 1 are keys 2, 3 of the text in
    the second tile): each row says its key and word, ``0 (key 2) two``; the accumulator counts keys, ``2 two``.
    The tile's first key is its scores step's ``start``, found back along the first inputs."""
    s, start = step, None
    for _ in range(3):
        if "start" in s.attrs or not s.inputs or s.inputs[0] not in trace:
            start = s.attrs.get("start")
            break
        s = trace[s.inputs[0]]
    words = trace.axis_labels("pos", _item(step, index))
    if start is None or not words or not ex.rows:
        return ex
    rows = []
    for row in ex.rows:
        j = row[0]
        key = j if step.op == "tile_acc" else start + j if isinstance(j, int) else -1
        if not isinstance(j, int) or not 0 <= key < len(words):
            rows.append(row)
            continue
        rows.append((f"{j} {words[key]}" if step.op == "tile_acc" else f"{j} (key {key}) {words[key]}", *row[1:]))
    return replace(ex, rows=rows)


POSITION = re.compile(r"\b(?:position|query|key) (\d+)\b(?! ')")  # 'position 3', 'key 2', not yet with its word


def with_position_words(trace: Trace, step: Step, index: tuple[int, ...], ex: CellExplanation) -> CellExplanation:
    """``ex`` with each "position t" (or "query t", "key t") of its title and lines followed by the run's token
    there, ``position 0 'the' goes to expert 2`` (the router's, the experts', a mask's, the position embedding's
    drill-downs said only ``position 0``). Only where the step counts the text's positions: a ``pos`` axis as long
    as the words."""
    if "pos" not in step.axes:
        return ex
    words = trace.axis_labels("pos", _item(step, index))
    n = step.shape[step.axes.index("pos")]
    t = index[step.axes.index("pos")] if step.axes.index("pos") < len(index) else -1
    if words and len(words) == n + 1 and not ex.rows and 0 <= t < n:
        # a loss's entry without a table (token_loss: 'ℓ[0, 9] = −log p(y)[0, 9]'): which token it scores
        return replace(ex, lines=[f"position {t} reads '{words[t]}' and is scored on the next token, '{words[t + 1]}'",
                                  *ex.lines])
    if not words or len(words) != n:
        return ex  # a generation's longer axis, a run without text: the number alone

    def say(text: str) -> str:
        return POSITION.sub(lambda m: m.group(0) + (f" '{words[int(m.group(1))]}'" if int(m.group(1)) < n else ""), text)

    return replace(ex, title=say(ex.title), lines=[say(line) for line in ex.lines])
