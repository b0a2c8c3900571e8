"""The model map (``M``, issue 26): GPT-2 small's 12 blocks fit whole at 80×24; the part the step screen is on
is lit and chosen (a gradient step lights the forward part it comes from); the arrows choose a part and Enter
jumps to its first step; the edges carry the shapes the run's own steps have; the transformer's encoder and
decoder stand side by side."""

from __future__ import annotations

import pytest
from conftest import drive, text_of

import explain
from explain.core.shape_rules import fmt_shape
from explain.tui.app import ExplainApp
from explain.tui.screens.model_map import ModelMapScreen

TEXT = "the cat sat on the mat"


def map_text(screen: ModelMapScreen) -> str:
    return text_of(screen.query_one("#map"), width=300)


def test_gpt2_small_blocks_fit_whole_at_80x24_with_shapes_on_the_edges():
    trace = explain.run("gpt", d_model=24, n_heads=12, n_layers=12, d_ff=24, text=TEXT)
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("M")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ModelMapScreen)
        lines = map_text(screen).splitlines()
        assert [ln.split()[0] for ln in lines if ln[:1] == "L"] == [f"L{i}" for i in range(12)]
        assert all(len(ln.rstrip()) <= 76 for ln in lines)  # inside the dialog's border and padding
        scroll = screen.query_one("#map-scroll")
        assert scroll.virtual_size.height <= scroll.size.height  # nothing scrolled away
        text = "\n".join(lines)
        assert "L0   + → ln1 → attn → + → ln2 → mlp → +" in text
        embed, pos = fmt_shape(trace["embed"].shape), fmt_shape(trace["pos_embed"].shape)
        assert f"│ {embed} + {pos}" in text  # what block 0's first add reads
        assert f"─{fmt_shape(trace['tokens'].shape)}→ embed" in text
        assert f"│ {fmt_shape(trace['blocks.11.resid_post'].shape)}" in text and "loss" in text

    drive(app, script, size=(80, 24))


def test_the_step_is_lit_and_enter_jumps_to_the_part_chosen():
    trace = explain.run("gpt", text=TEXT)
    app = ExplainApp(trace)

    async def script(pilot):
        app.screen.view = app.screen.view.go(trace["blocks.0.mlp.post"].index)
        await pilot.pause()
        await pilot.press("M")
        await pilot.pause()
        screen = app.screen
        assert screen.chosen.key == "blocks.0.mlp" and trace["blocks.0.mlp.post"].index in screen.lit
        assert "mlp" in text_of(screen.query_one("#map-foot"), width=200)
        await pilot.press("down")  # the nearest part a line down: block 1's
        await pilot.pause()
        assert screen.chosen.key.startswith("blocks.1.")
        keys = [n.key for n in screen.order]
        await pilot.press(*["left"] * (keys.index(screen.chosen.key) - keys.index("blocks.1.attn")))
        await pilot.pause()
        assert screen.chosen.key == "blocks.1.attn"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.view.step.name == "blocks.1.attn.q"  # the part's first step

    drive(app, script, size=(120, 40))


def test_a_gradient_step_lights_its_forward_part():
    trace = explain.run("gpt", text=TEXT, backward=True)
    app = ExplainApp(trace)

    async def script(pilot):
        app.screen.view = app.screen.view.go(trace["blocks.0.attn.q.grad"].index)
        await pilot.pause()
        await pilot.press("M")
        await pilot.pause()
        assert app.screen.chosen.key == "blocks.0.attn"

    drive(app, script, size=(80, 24))


def test_the_transformers_encoder_and_decoder_side_by_side():
    app = ExplainApp(explain.run("transformer"))

    async def script(pilot):
        await pilot.press("M")
        await pilot.pause()
        lines = map_text(app.screen).splitlines()
        assert lines[0].split() == ["encoder", "decoder"]
        both = [ln for ln in lines if ln.startswith("E0")]
        assert both and "D0" in both[0] and "cross" in "\n".join(lines)  # one line: the two stacks side by side
        assert "each decoder cross" in "\n".join(lines)

    drive(app, script, size=(80, 24))


def test_an_arrow_joins_two_parts_only_where_one_reads_the_other():
    """gpt's embed and pos_embed are both read by block 0's first add, neither by the other: drawn side by side
    (·), not as embed → pos_embed; attention's q, k and v the same (the scores read q and k, not v). Checked
    against the steps' own inputs for every pair drawn."""
    from explain.render.model_map import build

    for trace in (explain.run("gpt", random_weights=True, text=TEXT), explain.run("attention"),
                  explain.run("transformer")):
        columns, tail = build(trace)
        for rows in [*columns, tail]:
            for row in rows:
                for before, node in zip(row.nodes, row.nodes[1:]):
                    reads = {n for i in node.steps for n in trace[i].inputs}
                    assert node.fed == bool(reads & {trace[i].name for i in before.steps}), (before.label, node.label)
    app = ExplainApp(explain.run("gpt", random_weights=True, text=TEXT))

    async def script(pilot):
        await pilot.press("M")
        await pilot.pause()
        text = map_text(app.screen)
        assert " embed · pos_embed " in text and "embed → pos_embed" not in text and "→ embed" in text

    drive(app, script, size=(80, 24))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_residual_stream_is_drawn_over_every_block_that_fits(size):
    """GPT-2 small's 12 blocks: at 120×40 and 200×50 every block has its residual stream drawn above it; at 80×24,
    where the blocks fit whole only one line each, the chosen block's alone (the first block's when the cursor
    is outside the blocks), and it follows the cursor. A chosen ``+`` says in the foot what it adds to what. On
    the old code no line was drawn above any block."""
    trace = explain.run("gpt", d_model=24, n_heads=12, n_layers=12, d_ff=24, text=TEXT, random_weights=True)
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("M")
        await pilot.pause()
        screen = app.screen
        lines = map_text(screen).splitlines()
        above = [lines[i - 1] for i, ln in enumerate(lines) if ln[:1] == "L"]
        drawn = [a.lstrip().startswith("╭") for a in above]
        assert drawn == ([True] + [False] * 11 if size == (80, 24) else [True] * 12), above
        scroll = screen.query_one("#map-scroll")
        assert scroll.virtual_size.height <= scroll.size.height  # the whole map still fits
        keys = [n.key for n in screen.order]
        await pilot.press(*["right"] * keys.index("blocks.3.resid_mid"))
        await pilot.pause()
        lines = map_text(screen).splitlines()
        l3 = next(i for i, ln in enumerate(lines) if ln.startswith("L3 "))
        assert lines[l3 - 1].startswith("╭─residual")  # the stream from block 2 into block 3's first +
        foot = text_of(screen.query_one("#map-foot"), width=300)
        assert "blocks.3.resid_mid = blocks.2.resid_post + blocks.3.attn_out" in foot

    drive(app, script, size=size)
