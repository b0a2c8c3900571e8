"""No drill-down numbers a position where the run has its word (issue 42 item 5): over every shipped tutorial's
stops, a table whose rows count positions or keys (a softmax's keys, the j of A·V, a loss's per-token entries, the
t of a mean pool, a gradient's sum over the queries or keys) writes each index with its token ('1 cat'), as a
softmax over the vocabulary does ('27 mat').

Which tables count positions is found from the op's linkage (``feeds``: the operand cells a cell reads), not from
the op's own word-labelling, so an op that forgets its words is caught: an operand read along whole text axes
(positions, source, target; with the batch, flattened) whose cells number the table's rows."""

from __future__ import annotations

from math import prod

import pytest

from explain import ops
from explain.trace.words import TEXT_AXES, axes_of
from explain.tutorial import list_tutorials, run_tutorial, stop_step

TUTORIALS = list_tutorials()


def counts_positions(trace, step, cell, n_rows: int) -> bool:
    """Whether the cell's table has one row per position of the text, by the op's linkage: some operand is read
    along whole axes that are all text axes (or the batch), at least one a text axis, with ``n_rows`` cells."""
    inputs = trace.inputs_of(step)
    for name, value, feed in zip(step.inputs, inputs, ops.get(step.op).feeds(cell, inputs, **step.attrs)):
        if feed is None or value is None or not hasattr(value, "shape"):
            continue
        feed = feed if isinstance(feed, tuple) else (feed,)
        feed = feed + (slice(None),) * (value.ndim - len(feed))
        whole = [i for i, f in enumerate(feed) if f == slice(None) and value.shape[i] > 1]
        axes = axes_of(trace, name)
        if whole and all(axes[i] in (*TEXT_AXES, "batch") for i in whole) \
                and any(axes[i] in TEXT_AXES for i in whole) and prod(value.shape[i] for i in whole) == n_rows:
            return True
    return False


def bare_positions(trace, step, cell) -> list:
    """The indices a position-counting table of ``step`` at ``cell`` shows without their token."""
    if trace.axis_labels("pos") is None and trace.axis_labels("src") is None:
        return []
    ex = trace.explain(step, cell)
    if not ex.rows or not counts_positions(trace, step, cell, len(ex.rows)):
        return []
    return [r[0] for r in ex.rows if not isinstance(r[0], str) or " " not in r[0]]


@pytest.mark.parametrize("tut", TUTORIALS, ids=lambda t: t.name)
def test_no_stop_shows_a_bare_position(tut):
    trace = run_tutorial(tut)
    for stop in tut.stops:
        step = stop_step(trace, stop)
        cell = tuple(stop.cell) if stop.cell is not None else (0,) * len(step.shape)
        bare = bare_positions(trace, step, cell)
        assert not bare, f"{tut.name} stop {stop.number} {step.name}: positions without words {bare[:3]}"


@pytest.mark.parametrize("name", ["14-backpropagation-through-attention", "15-the-residual-gradient-highway"])
def test_no_step_of_a_backward_run_shows_a_bare_position(name):
    """Every step of a run with a loss and its backward pass (the gradients' sums over queries and keys), not only
    the stops: at the cell the last position's query reads, so a causal row has every key."""
    tut = next(t for t in TUTORIALS if t.name == name)
    trace = run_tutorial(tut)
    for step in trace:
        if step.output is None or not hasattr(step.output, "shape"):
            continue
        cell = tuple(n - 1 for n in step.shape)
        bare = bare_positions(trace, step, cell)
        assert not bare, f"{name} {step.name} [{step.op}]: positions without words {bare[:3]}"


def test_a_loss_names_the_token_read_and_the_one_scored():
    """token_loss's mean: position t reads one token and is scored on the next ('0 the→cat')."""
    tut = next(t for t in TUTORIALS if t.name.startswith("21-"))
    trace = run_tutorial(tut)
    ex = trace.explain("loss", ())
    words = trace.axis_labels("pos")
    assert [r[0] for r in ex.rows] == [f"{t} {words[t]}→{words[t + 1]}" for t in range(len(words) - 1)]
