"""Latent attention as a student sees it, at 80×24, 120×40 and 200×50, in the real step screen: a tiny
``explain generate llama --attention mla``. The header names each step and its op kind, and the drill-downs are
whole (every line on screen, scrolling with ``d`` where the pane is short): the interleaved rotation of the
shared rotary key (a pair at a position > 0), the cache's latent row kept from an earlier position, the absorbed
query, and the absorbed scores as the sum of their two parts."""

from __future__ import annotations

import pytest
from conftest import drive
from test_tui_llama import SIZES, _drill_text, _screen_text, _show, _words

import explain
from explain.ops.base import precision
from explain.render.step import explanation_result
from explain.tui.app import ExplainApp

CELLS = {"blocks.0.attn.rot_k": (0, 0, 3, 1), "gen.2.blocks.1.attn.latent_cache": (0, 0, 2, 3),
         "gen.2.blocks.0.attn.q_absorbed": (0, 1, 0, 2), "gen.2.blocks.0.attn.scores_absorbed": (0, 1, 0, 4)}


@pytest.fixture(scope="module")
def tiny():
    return explain.generate("llama", attention="mla", text="the cat sat on the mat", greedy=True, max_new_tokens=3)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_latent_attention_headers_and_drill_downs_whole(tiny, size):
    app = ExplainApp(tiny)
    problems: list[str] = []

    async def script(pilot):
        for name, index in CELLS.items():
            await _show(pilot, tiny, name, index)
            step = tiny[name]
            if not any(f"{name}  [{step.op}]" in line for line in _screen_text(pilot).splitlines()):
                problems.append(f"{name}: header not on screen whole at {size}")
            with precision(4):
                ex = tiny.explain(step, index)
            drill = await _drill_text(pilot)
            for line in [ex.title, *ex.lines[:-1], explanation_result(ex).plain]:
                if _words(line) not in drill:
                    problems.append(f"{name}{list(index)} at {size}: {line!r} not on screen in\n{drill}")

    drive(app, script, size=size)
    assert not problems, "\n".join(problems)
    rot = tiny.explain("blocks.0.attn.rot_k", CELLS["blocks.0.attn.rot_k"])
    assert "interleaved: dimension 2k pairs with 2k + 1 (0 with 1)" in rot.lines
    assert any("angle = position × frequency = 3 ×" in line for line in rot.lines)
    kept = tiny.explain("gen.2.blocks.1.attn.latent_cache", CELLS["gen.2.blocks.1.attn.latent_cache"])
    assert "from the cache" in kept.lines[0]


def test_the_cache_note_names_both_sizes_on_screen():
    trace = explain.generate("llama", attention="mla", greedy=True, max_new_tokens=2)
    app = ExplainApp(trace)

    async def script(pilot):
        await _show(pilot, trace, "gen.1.blocks.0.attn.rot_k_cache", (0, 0, 0, 0))
        right = [line.split("▕", 1)[-1] for line in _screen_text(pilot).splitlines()]  # the step pane, not the tree
        screen = _words(" ".join(right))
        assert "Together 6 per token per layer, against 16 for plain attention." in screen, screen

    drive(app, script, size=(120, 40))


def test_the_rerun_form_refuses_hostile_widths_in_one_line():
    """At 80×24: the re-run form of a latent-attention run has its widths (empty: derived), a rank of 0 is refused
    under its field, and a rotary part as wide as the head by the config's one line; a good width re-runs."""
    from conftest import _until
    from textual.widgets import Input, Select, Static

    opts = {"attention": "mla"}
    app = ExplainApp(explain.run("llama", **opts), options=opts)

    def said(screen) -> list[str]:
        return [str(s.render()) for s in screen.query(Static) if "↑" in str(s.render()) or "Error" in str(s.render())]

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#attention", Select).value == "mla"
        assert form.query_one("#kv_lora_rank", Input).value == ""
        form.query_one("#kv_lora_rank", Input).value = "0"
        await pilot.press("ctrl+r")
        await _until(pilot, lambda: bool(said(form)))
        assert any("kv-lora-rank must be at least 1, got 0" in line and "\n" not in line for line in said(form))
        form.query_one("#kv_lora_rank", Input).value = "3"
        form.query_one("#d_head", Input).value = ""
        form.query_one("#qk_rope_head_dim", Input).value = "4"
        await pilot.press("ctrl+r")
        await _until(pilot, lambda: any("narrower" in line for line in said(form)))
        assert any("qk rope 4 is not narrower than the head (d_head 4)" in line for line in said(form)), said(form)
        form.query_one("#qk_rope_head_dim", Input).value = "2"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await _until(pilot, lambda: s.trace.config.kv_lora_rank == 3)
        assert s.trace["blocks.0.attn.ln_kv"].shape == (1, 1, 4, 3)

    drive(app, script, size=(80, 24))
