"""The layer × head grid (``m``, issue 26): GPT-2 small's 12 layers × 12 heads fit at 200×50 and are paged at
80×24; a long pattern is max-pooled (checked against a block-by-block max computed here) and said so; the cell
cursor is the ``+`` in every tile and the foot gives its value from the trace; the tile colours are the step
screen's [0, 1] scale; Enter opens the chosen head; llama's grouped-query heads name the key/value head they
share, checked against the run's own repeat_kv output; the transformer's rows are its encoder, decoder and
cross-attention patterns."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import drive, text_of
from rich.console import Console

import explain
import explain.tui.screens.heads as heads
from explain.render.colour import Scale
from explain.render.head_grid import Pooled, geometry, pool, tile_lines
from explain.tui.app import ExplainApp
from explain.tui.screens.heads import HeadsScreen

_TRACES: dict[str, object] = {}
TEXT = "the cat sat on the mat and the dog is happy today"  # 12 tokens


def gpt12():
    """GPT-2 small's 12 layers × 12 heads, narrow (the grid's size does not depend on d_model)."""
    if "gpt12" not in _TRACES:
        _TRACES["gpt12"] = explain.run("gpt", d_model=24, n_heads=12, n_layers=12, d_ff=24, text=TEXT)
    return _TRACES["gpt12"]


def grid_text(screen: HeadsScreen, width: int = 400) -> str:
    return "\n".join(text_of(screen.query_one(f"#{i}"), width=width) for i in ("grid-title", "grid", "grid-foot"))


def test_twelve_by_twelve_fit_at_200x50_and_page_at_80x24():
    for size, paged in (((200, 50), False), ((80, 24), True)):
        app = ExplainApp(gpt12())

        async def script(pilot, paged=paged, app=app, size=size):
            await pilot.press("m")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, HeadsScreen)
            grid = text_of(screen.query_one("#grid"), width=400)
            lines = grid.splitlines()
            assert lines[0].split() == [f"h{h}" for h in range(12)]  # every head, on every page
            shown = [ln.split()[0] for ln in lines[1:] if ln[:1] == "L"]
            assert len(max(lines, key=len)) <= size[0] - 4  # inside the dialog: nothing cropped
            if not paged:
                assert shown == [f"L{i}" for i in range(12)] and "of 12" not in grid_text(screen)
                return
            assert shown == [f"L{i}" for i in range(len(shown))] and len(shown) < 12
            assert f"L0–L{len(shown) - 1} of 12" in grid_text(screen)
            await pilot.press("n")  # the next page starts where this one ended
            await pilot.pause()
            grid = text_of(screen.query_one("#grid"), width=400)
            assert [ln.split()[0] for ln in grid.splitlines()[1:] if ln[:1] == "L"][0] == f"L{len(shown)}"

        drive(app, script, size=size)


def test_pool_is_the_largest_weight_of_each_block():
    rng = np.random.default_rng(0)
    heads = rng.random((3, 37, 37))
    (p, *_) = pool(heads, 6, 10)
    assert p.values.shape == (6, 10) and p.row_edges[-1] == 37 and p.col_edges[-1] == 37
    for i in range(6):
        for j in range(10):
            r0, r1, c0, c1 = p.row_edges[i], p.row_edges[i + 1], p.col_edges[j], p.col_edges[j + 1]
            assert p.values[i, j] == max(heads[0, r, c] for r in range(r0, r1) for c in range(c0, c1))
    assert p.block == (7, 4) and p.at(36, 36) == (5, 9)
    small = pool(heads[:, :5, :5], 6, 10)[0]  # shorter than the tile: nothing pooled
    assert np.array_equal(small.values, heads[0, :5, :5]) and small.block == (1, 1)


def test_tiles_use_the_step_screens_scale_and_mark_the_cell():
    vals = np.array([[0.9, 0.0], [0.3, 0.7]])
    p = Pooled(vals, (0, 1, 2), (0, 1, 2))
    geo = geometry(1, 1, 2, 20, 10)
    lines = tile_lines(p, geo, 2, "fixed", cursor=(1, 1))
    scale = Scale(0.0, 1.0, False)
    sx, sy = geo.tile_w // 2, (2 * geo.tile_h) // 2  # columns per key, half-rows per query

    def colour(q: int, k: int) -> str:
        return "#303030" if vals[q, k] == 0 else scale.palette[scale.bin(vals[q, k])]  # 0 (masked): grey

    mark = ((1 * sy) // 2, 1 * sx)
    for line, text in enumerate(lines):
        for x in range(geo.tile_w):
            if (line, x) == mark:
                continue
            style = text.get_style_at_offset(Console(), x)
            q_top, q_bottom = (2 * line) // sy, (2 * line + 1) // sy
            if q_top < 2:
                assert style.color.name == colour(q_top, x // sx), (line, x)
            if q_bottom < 2:
                assert style.bgcolor.name == colour(q_bottom, x // sx), (line, x)
    plain = "".join(t.plain for t in lines)
    assert plain.count("+") == 1 and lines[mark[0]].plain[mark[1]] == "+"


def test_cursor_moves_in_every_tile_the_foot_reads_the_trace_and_enter_opens():
    trace = gpt12()
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        await pilot.press("J", "J", "J", "L", "down", "right", "right")  # cell (3, 1); layer 1, head 2
        await pilot.pause()
        assert screen.cell == (3, 1) and (screen.row, screen.head) == (1, 2)
        grid = text_of(screen.query_one("#grid"), width=400)
        assert grid.count("+") == 12 * 12  # the cell, once in every tile
        foot = text_of(screen.query_one("#grid-foot"), width=400)
        want = trace["blocks.1.attn.pattern"].output[0, 2, 3, 1]
        assert "L1 head 2" in foot and "query 3 'on', key 1 'cat'" in foot and f"{want:.4f}" in foot
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen.view
        assert view.step.name == "blocks.1.attn.pattern" and view.lead == (0, 2)
        assert view.cell == (3, 1)  # the grid's + cell is the step view's cell
        await pilot.press("m", "z", "enter")  # the layer's heads (z), Enter on one: the cell comes along too
        await pilot.pause()
        assert app.screen.view.cell == (3, 1) and app.screen.view.lead == (0, 2)

    drive(app, script, size=(200, 50))


def test_a_long_pattern_is_drawn_max_pooled_and_says_so():
    text = " ".join(TEXT.split() * 4)  # 48 tokens: longer than a tile at 120 columns
    trace = explain.run("gpt", d_model=24, n_heads=12, n_layers=2, d_ff=24, n_ctx=64, text=text)
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        title = text_of(app.screen.query_one("#grid-title"), width=400)
        assert "48×48 drawn" in title and "(max-pool)" in title

    drive(app, script, size=(120, 40))


def test_grouped_query_heads_name_the_key_value_head_they_share():
    trace = explain.run("llama", n_heads=4, n_kv_heads=2, d_model=16)
    k, k_rep = trace["blocks.0.attn.rot_k"].output, trace["blocks.0.attn.k_rep"].output
    shares = [next(j for j in range(2) if np.array_equal(k_rep[:, h], k[:, j])) for h in range(4)]  # from the data
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        screen = app.screen
        lines = text_of(screen.query_one("#grid"), width=400).splitlines()
        assert lines[1].split() == ["kv"] + [f"kv{j}" for j in shares]
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert f"head 3 (shares key/value head {shares[3]})" in text_of(screen.query_one("#grid-foot"), width=400)

    drive(app, script, size=(120, 40))


def test_the_transformers_rows_are_encoder_decoder_and_cross_attention():
    app = ExplainApp(explain.run("transformer"))

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        lines = text_of(app.screen.query_one("#grid"), width=400).splitlines()
        assert [ln.split()[0] for ln in lines[1:] if ln[:1] in ("E", "D")] == ["E0", "E1", "D0", "D0x", "D1", "D1x"]

    drive(app, script, size=(120, 40))


def test_a_long_page_is_pooled_after_the_first_frame_and_kept_with_the_trace(monkeypatch):
    """A page too big to pool at once opens dotted, is pooled in a thread started after that first frame, and
    the pooled layers stay with the trace: opening the grid again pools nothing."""
    calls: list[int] = []
    gate = threading.Event()  # the thread waits: the first frame is seen before any pooling
    real = heads.pool

    def pool(h, r, c):
        gate.wait(30)
        calls.append(len(h))
        return real(h, r, c)

    monkeypatch.setattr(heads, "pool", pool)
    monkeypatch.setattr(heads, "SYNC_VALUES", 0)  # every page in the thread
    text = " ".join(TEXT.split() * 4)  # 48 tokens
    trace = explain.run("gpt", d_model=24, n_heads=12, n_layers=2, d_ff=24, n_ctx=64, text=text)
    app = ExplainApp(trace)

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        first = text_of(app.screen.query_one("#grid"), width=400)
        screen = app.screen
        gate.set()
        assert "·" in first  # dotted until the thread has pooled
        for _ in range(1500):  # the grid's own text, not _pending: the thread clears that before the redraw comes
            pooled = text_of(screen.query_one("#grid"), width=400)
            if "·" not in pooled:
                break
            await pilot.pause(0.02)
        assert "·" not in pooled and calls == [12, 12]  # both layers pooled once, in the thread
        await pilot.press("escape", "m")
        for _ in range(500):  # (under load the new screen's first layout may come a little later)
            await pilot.pause(0.02)
            if isinstance(app.screen, HeadsScreen) and text_of(app.screen.query_one("#grid"), width=400) == pooled:
                break
        assert text_of(app.screen.query_one("#grid"), width=400) == pooled  # pooled at once, from the trace's
        assert calls == [12, 12] and not app.screen._pending  # kept: nothing pooled again

    drive(app, script, size=(120, 40))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_the_grid_has_words_on_its_axes(size):
    """The trained GPT's 4 heads × 2 layers (issue 42 item 12): under the head ruler the keys' words, right of
    each layer's tiles its queries' words, every one of the text's tokens on each axis (at 80×24 a key's word
    that would run into the one before is left out, as a ruler's tick labels are), nothing cut by the dialog.
    On the old code the grid had no words at all."""
    app = ExplainApp(explain.run("gpt", trained=True, text="the cat is happy"))

    async def script(pilot):
        await pilot.press("m")
        await pilot.pause()
        lines = text_of(app.screen.query_one("#grid"), width=400).splitlines()
        assert len(max(lines, key=len)) <= size[0] - 4
        keys = lines[1].split()
        tokens = ("the", "cat", "is", "happy")
        assert keys[0] == "keys" and all(any(t.startswith(k) for t in tokens) for k in keys[1:])  # last: cut at the edge
        assert {"the", "is"} <= set(keys[1:]) and (size == (80, 24) or "cat" in keys)
        l0 = next(i for i, ln in enumerate(lines) if ln.startswith("L0"))
        right = [ln.split()[-1] for ln in lines[l0:] if ln.strip() and not ln.startswith("L1")][: app.screen.geo.tile_h]
        assert {w for r in right for w in r.split("/")} == {"the", "cat", "is", "happy"}

    drive(app, script, size=size)
