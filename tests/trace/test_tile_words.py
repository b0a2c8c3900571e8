"""Words in two drill-downs issue 42 item 12 left without them: tiled attention's running max and sum count
their tile's own keys (j = 0, 1 of the second tile are keys 2, 3), and an RMSNorm gain's gradient sums over
positions numbered bare (layer norm's wrote '0 the'). Each row now carries its key's (its position's) word,
checked against the run's own labels and the tile's start; fails on the old code (bare indices)."""

from __future__ import annotations

import explain
from explain.tutorial import load_tutorial, run_tutorial


def test_each_tiles_rows_name_their_keys_words():
    trace = run_tutorial(load_tutorial("23"))
    words = trace.axis_labels("pos", 0)
    tiles = sorted({s.name.split(".")[1] for s in trace if ".tile" in s.name})
    assert len(tiles) >= 2
    for tile in tiles:
        start = trace[f"attn.{tile}.scores"].attrs["start"]
        for op in ("max", "sum"):
            rows = trace.explain(f"attn.{tile}.{op}", (1, 0)).rows
            assert [r[0] for r in rows] == [f"{j} (key {start + j}) {words[start + j]}" for j in range(len(rows))]
        rows = trace.explain(f"attn.{tile}.acc", (1, 0)).rows
        assert [r[0] for r in rows] == [f"{start + j} {words[start + j]}" for j in range(len(rows))]


def test_an_rms_norm_gains_gradient_names_its_positions():
    trace = explain.run("llama", checkpoint="tests/data/llama/hf_llama", backward=True)
    words = trace.axis_labels("pos", 0)
    rows = trace.explain("blocks.0.ln1.w.grad", (0,)).rows
    assert [r[0] for r in rows] == [f"{p} {w}" for p, w in enumerate(words)]
