"""Issue 42 item 10 and issue 38 (keys declare what they need), on the screen: the Footer shows the keys that work
on this run, in the key table's order, ``? more`` when some do not fit, and it follows the run when it changes (a
run of one's own, a tutorial opened, G). One app per size walks four runs: ``run gpt --trained``, the llama HF
fixture, a BERT tiny run, then tutorial 1 (the ``simple`` model), which must not offer ``yAPW why sSbB slice``.

On the code before the needs every size fails: tutorial 1's footer showed ``y A P W E`` and ``s S b B``, help
was never "more", and a key pressed where it cannot work (G on tutorial 1) refused from its action, not by
``check_action``. The key-by-run table itself is tested without Pilot in test_tui_key_needs.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import _until, drive
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

import explain
from explain.tui import keys
from explain.tui.app import ExplainApp
from explain.tui.messages import RunFinished
from explain.tutorial import load_tutorial, run_options, run_tutorial

HF_LLAMA = Path(__file__).resolve().parents[1] / "data" / "llama" / "hf_llama"
NEVER_ON_TUTORIAL_1 = {"y", "A", "P", "W", "E", "s", "S", "b", "B", "G", "D", "o"}


@pytest.fixture(scope="module")
def runs():
    tut = load_tutorial("01-attention-without-weights")
    return {"gpt": explain.run("gpt", trained=True), "llama": explain.run("llama", checkpoint=str(HF_LLAMA)),
            "bert": explain.run("bert"), "tutorial": (tut, run_tutorial(tut), run_options(tut))}


def _footer(screen) -> list[FooterKey]:
    return [k for k in screen.query_one(Footer).query(FooterKey) if "-command-palette" not in k.classes]


def _check(screen, width: int) -> list[str]:
    """The footer shows what the rule picks for this run at this width, in the key table's order, whole; help
    says "more" exactly when working keys were left out. Returns the keys shown."""
    footer = _footer(screen)
    rule = keys.footer_actions(width, screen.works)
    assert [k.action for k in footer] == [k.action for k in keys.KEYS if k.action in rule.actions]
    assert all(screen.works(keys.KEYS[[k.action for k in keys.KEYS].index(f.action)].name) for f in footer)
    helps = [f.description for f in footer if f.action == "help"]
    assert helps == (["more"] if rule.more else ["help"])
    f = screen.query_one(Footer)
    assert f.virtual_size.width <= f.size.width  # nothing cut or scrolled
    return [f.key_display for f in footer]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40), (200, 50)])
def test_the_footer_follows_the_run(runs, size):
    width = size[0]
    app = ExplainApp(runs["gpt"])

    async def shows(pilot, trace, **message):
        screen = app.screen
        if trace is not screen.trace:
            screen.post_message(RunFinished(trace, message.pop("options", {}), **message))
            await _until(pilot, lambda: screen.trace is trace, tries=300)
        await _until(pilot, lambda: [f.action for f in _footer(screen)] == sorted(
            keys.footer_actions(width, screen.works).actions, key=[k.action for k in keys.KEYS].index), tries=300)
        return _check(screen, width)

    async def script(pilot):
        gpt = await shows(pilot, runs["gpt"])
        if width >= 120:
            assert {"y", "A", "s", "M", "G", "r", "e"} <= set(gpt) and not {"P", "W", "E", "D", "a"} & set(gpt), gpt
        llama = await shows(pilot, runs["llama"])
        if width >= 120:
            assert {"y", "A", "M", "G"} <= set(llama), llama
        bert = await shows(pilot, runs["bert"])
        assert not {"y", "A", "G"} & set(bert), bert  # post-LN, and no next token
        tut, trace, options = runs["tutorial"]
        t1 = await shows(pilot, trace, options=options, tutorial=tut, own=False)
        assert app.screen.tour is not None and not NEVER_ON_TUTORIAL_1 & set(t1), t1
        assert {"→/n", "h", "?", "q"} <= set(t1) and "more" in [f.description for f in _footer(app.screen)]
        if width >= 120:
            assert {"a", "w", "M", "r", "e"} <= set(t1), t1
        await pilot.press("G")  # a key that cannot work here says why, in one line
        await _until(pilot, lambda: any("G:" in str(n.message) for n in app._notifications))
        said = [str(n.message) for n in app._notifications if str(n.message).startswith("G:")]
        assert said and "writes the next token" in said[-1] and app.screen.trace is trace

    drive(app, script, size=size)


def test_g_brings_w_and_d_into_the_footer():
    """After G (a generation), W (attention to new tokens) and D (live sampling) work, and the footer shows them."""
    app = ExplainApp(explain.run("gpt", trained=True, text="the cat sat"))

    async def script(pilot):
        screen = app.screen
        before = [f.key_display for f in _footer(screen)]
        assert not {"W", "D"} & set(before)
        trace = screen.trace
        await pilot.press("G")
        await _until(pilot, lambda: screen.trace is not trace and screen.trace.generation is not None, tries=1500)
        await _until(pilot, lambda: "D" in [f.key_display for f in _footer(screen)], tries=300)
        after = _check(screen, 200)
        assert {"W", "D", "G"} <= set(after), after

    drive(app, script, size=(200, 50))
