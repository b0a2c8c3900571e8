"""Links: the U key shows the link to what is on screen (Pilot at 80x24, 120x40, 200x50), and the same link opens
there again (open_link, which ``explain run LINK`` and each served visitor's app use)."""

from __future__ import annotations

import asyncio

import pytest

import explain.tui as tui
from explain.commands import link as link_cmd
from explain.engine.api import run
from explain.serve.links import parse_link
from explain.tui.app import ExplainApp
from explain.tutorial import load_tutorial, run_tutorial


def _link_of(app) -> str:
    return next(str(n.message) for n in reversed(list(app._notifications)) if "tutorial=" in str(n.message)
                or "model=" in str(n.message))


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_u_shows_the_stop_then_the_step_and_cell(size, monkeypatch):
    monkeypatch.setenv("EXPLAIN_SERVE_URL", "http://127.0.0.1:8000/?token=T")
    tut = load_tutorial("1")

    async def press_u(app, *before):
        async with app.run_test(size=size) as pilot:
            await pilot.press(*before, "U")
            await pilot.pause()
            return _link_of(app)

    first = asyncio.run(press_u(ExplainApp(run_tutorial(tut), tutorial=tut, stop=1)))
    assert first.startswith("http://127.0.0.1:8000/?token=T&tutorial=01-attention-without-weights&stop=2\n")
    trace = run("gpt", text="the cat sat")
    second = asyncio.run(press_u(ExplainApp(trace, options={"text": "the cat sat"}, start="blocks.0.attn.pattern"),
                                 "j", "l"))
    link = parse_link(second.split("\n")[0])
    assert (link.model, link.text, link.step) == ("gpt", "the cat sat", "blocks.0.attn.pattern")
    assert link.cell is not None and link.cell[-2:] == (1, 1)


@pytest.mark.parametrize("text, opened", [
    ("?tutorial=18&stop=3", {"stop": 2}),
    ("http://127.0.0.1:1/?token=x&model=gpt&text=the+cat+sat&step=blocks.0.attn.pattern&cell=0,0,2,1",
     {"start": "blocks.0.attn.pattern", "cell": (0, 0, 2, 1)}),
])
def test_a_link_opens_there(text, opened, monkeypatch):
    seen = {}
    monkeypatch.setattr(tui, "open_trace", lambda trace, **kw: seen.update(kw))
    link_cmd.open_link(text)
    assert {k: seen.get(k) for k in opened} == opened


@pytest.mark.parametrize("text, says", [
    ("?model=gpt&text=the+cat&step=blocks.9.attn.pattern", "has no step 'blocks.9.attn.pattern'"),
    ("?model=gpt&text=the+cat&step=blocks.0.attn.pattern&cell=0,0,4,2", "is not a cell of blocks.0.attn.pattern"),
])
def test_a_link_past_the_run_is_one_line(text, says, monkeypatch):
    monkeypatch.setattr(tui, "open_trace", lambda trace, **kw: None)
    with pytest.raises(Exception) as e:
        link_cmd.open_link(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_visitor_fetches_no_model(tmp_path, monkeypatch):
    """A tutorial on a catalogue model not on this machine: its link is one line, and a served app (the picker)
    refuses to fetch it, instead of downloading onto the server."""
    from explain.checkpoints.catalogue import CATALOGUE
    from explain.checkpoints.fetch import ensure
    from explain.core.served import WEB_DRIVER
    from explain.serve.links import LinkError

    monkeypatch.setenv("EXPLAIN_CACHE", str(tmp_path))
    with pytest.raises(LinkError, match="not on this machine"):
        parse_link("?tutorial=26")
    monkeypatch.setenv("TEXTUAL_DRIVER", WEB_DRIVER)
    with pytest.raises(Exception, match="explain serve fetches nothing for a visitor"):
        ensure(CATALOGUE["smollm2"])
    assert list(tmp_path.iterdir()) == []
