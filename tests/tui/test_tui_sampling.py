"""Live sampling (``D``, issue 26) on a generation's step: the draw's rows carry their words and every line of the
screen is whole at 80×24 up to 200×50; a key redraws the draw at once (before any regeneration) with the later
tokens struck through as stale; the regenerated run then draws what the screen showed; Enter shows the new run
in the step screen at the same step, Esc leaves the old one. Numbers are checked against the trace the
regeneration recorded (and, in tests/engine/test_resample.py, against the rules written out)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import _until, drive

import explain
from explain.engine.api import generated_ids
from explain.tui.app import ExplainApp
from explain.tui.screens.sampling import SamplingScreen

SIZES = [(80, 24), (100, 30), (120, 40), (160, 45), (200, 50)]
_RUNS: dict[str, object] = {}


def gen():
    if "gen" not in _RUNS:
        _RUNS["gen"] = explain.generate("gpt", text="the cat sat on the", max_new_tokens=5, ignore_eos=True,
                                        temperature=0.9, seed=2)
    return _RUNS["gen"]


def screen_lines(app) -> list[str]:
    return ["".join(seg.text for seg in strip).rstrip() for strip in app.screen._compositor.render_strips()]


async def open_live(pilot, name: str = "gen.1.next") -> SamplingScreen:
    app = pilot.app
    app.screen.view = app.screen.view.go(app.screen.trace[name].index)
    await pilot.pause()
    await pilot.press("D")
    await _until(pilot, lambda: isinstance(app.screen, SamplingScreen))
    await pilot.pause()
    return app.screen


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_line_whole_and_every_token_with_its_word(size):
    trace = gen()
    app = ExplainApp(trace)
    vocab = trace.labels["vocab"]

    async def script(pilot):
        live = await open_live(pilot)
        await pilot.press("t", "k", "k", "p")  # T 0.8, top-k 50 then 20, top-p 0.99: every column in use
        await pilot.pause()
        lines = screen_lines(app)
        text = "\n".join(lines)
        assert all(len(ln) <= size[0] for ln in lines)
        inner = [ln[2:-2].rstrip() for ln in lines if ln.startswith("│")]  # inside the dialog's border
        d = live.draw
        ids = generated_ids(trace)[0]
        prompt = " ".join(vocab[i] for i in trace.generation.prompt[0])
        assert any(ln.startswith(f"text: {prompt} ▸ {vocab[ids[0]]} {vocab[d.token]}") for ln in inner)
        rows = [ln for ln in inner if re.match(r"\s*\d+ '", ln)]
        assert len(rows) >= (4 if size[1] < 30 else size[1] - 20)  # the rest of the height is the draw's rows
        for ln in rows:  # rank, then the word quoted, whole (the shipped words are at most 8 letters): no id
            rank, word = ln.split()[:2]  # without its word, no word cut to 'wan…' beside free columns
            assert word.startswith("'") and word.endswith("'") and word[1:-1] in vocab, ln
        assert sum("◀ drawn" in ln for ln in rows) == 1
        drawn = next(ln for ln in rows if "◀ drawn" in ln)
        assert f"'{vocab[d.token]}'" in drawn and f"{d.probs[d.token]:.4f}" in drawn
        for label in ("z/T:", "top-k 20:", "top-p 0.99:", "renormalised:", "draw:"):
            assert any(ln.startswith(label) for ln in inner), (label, text)
        tail = f"→ '{vocab[d.token]}'"  # the draw's answer, whole (at the end of its wrapped line)
        assert any(ln.endswith(tail) for ln in inner), text

    drive(app, script, size=size)


def test_a_key_redraws_at_once_then_the_later_tokens_are_regenerated(monkeypatch):
    import explain.tui.screens.sampling as sampling

    monkeypatch.setattr(sampling, "WAIT", 1.0)  # a loaded machine's key presses must not outlast the debounce
    trace = gen()
    app = ExplainApp(trace)

    async def script(pilot):
        live = await open_live(pilot, "gen.1.probs")
        assert live.result is trace and not live.pending
        await pilot.press("s", "s", "s", "t", "t", "t", "t")  # seed 5, T 0.5
        d = live.draw
        assert d.sampling.seed == 5 and d.t == 0.5 and live.pending  # redrawn now; the rest is coming
        logits = trace["gen.1.logits"].output[0, 0]
        z = logits / 0.5
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        np.testing.assert_allclose(d.probs, p, rtol=1e-12)  # no filter: softmax(z / T)
        stale = live._text()
        later = [sp for sp in stale.spans if "strike" in str(sp.style)]
        assert later, "the tokens after the draw are struck through while they are regenerated"
        await _until(pilot, lambda: not live.pending, tries=500)
        new = live.result
        assert new is not trace and int(new["gen.1.next"].output[0, 0]) == d.token
        assert np.array_equal(new["gen.1.probs"].output[0, 0], d.probs)
        assert generated_ids(new)[0][0] == generated_ids(trace)[0][0]  # token 0 kept
        assert new["gen.1.u"].attrs["seed"] == 5 and new["gen.0.u"].attrs["seed"] == 2
        assert "Enter shows it" in str(app.screen.query_one("#live-status").render())
        await pilot.press("enter")
        await pilot.pause()
        step = app.screen
        assert step.view.trace is new and step.view.step.name == "gen.1.probs"

    drive(app, script, size=(120, 40))


def test_escape_keeps_the_run_and_zero_goes_back_to_the_recorded_settings():
    trace = gen()
    app = ExplainApp(trace)

    async def script(pilot):
        live = await open_live(pilot)
        first = live.draw.token
        await pilot.press("T", "T", "0")
        assert live.sampling == trace.generation.sampling and not live.pending and live.result is trace
        assert live.draw.token == first == int(trace["gen.1.next"].output[0, 0])
        await pilot.press("K", "escape")  # K: top-k is off already, said
        await pilot.pause()
        assert app.screen.view.trace is trace

    drive(app, script, size=(80, 24))


def test_greedy_and_the_filters_keys_at_temperature_zero():
    trace = gen()
    app = ExplainApp(trace)

    async def script(pilot):
        live = await open_live(pilot)
        await pilot.press(*"t" * 12)  # down the ladder to 0: greedy
        assert live.t == 0 and live.draw.greedy
        assert live.draw.token == int(np.argmax(trace["gen.1.logits"].output[0, 0]))
        await pilot.press("k")  # no filter at T = 0: said, nothing changes
        assert live.k is None
        text = "\n".join(screen_lines(app))
        assert "T = 0: greedy decoding" in text and "(argmax)" in text

    drive(app, script, size=(120, 40))


def test_d_off_a_generation_says_what_to_do():
    app = ExplainApp(explain.run("gpt", random_weights=True))

    async def script(pilot):
        await pilot.press("D")
        await pilot.pause()
        assert not isinstance(app.screen, SamplingScreen)
        assert any("G generates" in str(n.message) for n in app._notifications)

    drive(app, script, size=(120, 40))
