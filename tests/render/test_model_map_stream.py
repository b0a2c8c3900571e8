"""The model map draws the residual stream (issue 42 item 12): above each block's row, a line runs from what
each ``+`` adds back (the row's earlier ``+`` or norm, or the row's start when the stream comes from the row
above) over the branch, down into the ``+``. Checked against each add step's own inputs, on the render layer,
for a pre-norm (gpt, llama), a post-norm (bert) and the encoder-decoder transformer. Fails on the old code,
which drew the ``+`` nodes with nothing above them."""

from __future__ import annotations

import pytest

import explain
from explain.render.model_map import build, lines_of

RUNS = {"gpt": lambda: explain.run("gpt", random_weights=True, text="the cat sat on the mat"),
        "llama": lambda: explain.run("llama", checkpoint="tests/data/llama/hf_llama"),
        "bert": lambda: explain.run("bert"),
        "transformer": lambda: explain.run("transformer")}


@pytest.mark.parametrize("width", [36, 200])  # the transformer's half of 80 columns wraps rows; 200 does not
@pytest.mark.parametrize("model", list(RUNS))
def test_each_residual_add_has_its_skip_drawn_from_what_it_adds(model, width):
    trace = RUNS[model]()
    columns, _ = build(trace)
    checked = 0
    for rows in columns:
        places: dict[int, tuple[int, int]] = {}
        lines = [t.plain for t in lines_of(rows, width, set(), None, places, 0, 0)]
        for row in (r for r in rows if r.label):
            for j, node in enumerate(row.nodes):
                if node.label != "+" or j == 0:
                    continue  # a row's first +: both its inputs come from the row above (gpt's embed + pos_embed)
                step = trace[node.steps[0]]
                branch = {trace[i].name for i in row.nodes[j - 1].steps}
                stream = [name for name in step.inputs if name not in branch]
                assert len(stream) == 1 and len(step.inputs) == 2, step.name  # a branch added to the stream
                line, col = places[id(node)]
                above = lines[line - 1]
                assert above[col + 1] in "╮┬", (step.name, above)  # the stream comes down into the + (┬: and on)
                owner = [n for n in row.nodes[:j] if stream[0] in {trace[i].name for i in n.steps}]
                if owner:
                    oline, ocol = places[id(owner[-1])]
                    start = lines[oline - 1]
                    assert start[ocol + 1] in "╭┬", (step.name, stream[0], start)  # ... from what it adds
                else:
                    first = min(places[id(n)][0] for n in row.nodes)
                    assert lines[first - 1][0] == "╭", (step.name, lines[first - 1])  # from the row above
                checked += 1
    blocks = sum(1 for rows in columns for r in rows if r.label)
    assert checked >= blocks  # every block adds at least one branch back
