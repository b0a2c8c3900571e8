"""The TUI's re-run form given what the CLI refuses: a 5,000-digit paste, 10⁶ and 10⁸ layers, a number that is
not ASCII digits. Each is refused in the form (the error beside the field it concerns), the form stays open with
everything typed in it, and nothing runs; quitting while a long run is working ends the app at once, and a form
opened as the app quits builds nothing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import explain
from explain.tui.app import ExplainApp
from explain.tui.screens.rerun import RerunScreen


@pytest.mark.parametrize("field, value, words", [
    ("n_layers", "9" * 5000, "digits"),
    ("n_layers", "1000000", "maximum"),
    ("n_layers", "100000000", "maximum"),
    ("d_model", "1" + "0" * 15, "maximum"),
    ("seed", "9" * 30, "digits"),
])
def test_the_form_refuses_in_place(field: str, value: str, words: str) -> None:
    asyncio.run(_refuses_in_place(field, value, words))


async def _refuses_in_place(field: str, value: str, words: str) -> None:
    # the seed field is a random run's (a trained run has nothing random to seed: no seed field)
    app = ExplainApp(explain.run("gpt", random_weights=field == "seed"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RerunScreen)
        box = screen.query_one(f"#{field}")
        box.value = value
        screen.action_submit()
        await pilot.pause()
        assert app.screen is screen, "the form closed on a bad value"
        assert screen.query_one(f"#{field}").value == value, "what was typed was lost"
        beside = str(screen.query_one(f"#error-{field}").render())  # the error sits under its field
        assert words in beside, beside
        assert not any(w.is_running for w in app.workers), "a run started"


def test_quitting_during_a_long_run_does_not_wait_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine runs in a daemon thread the worker awaits: 'q' while it works ends the app (and so the
    process) without joining it."""
    asyncio.run(_quit_during_run(monkeypatch))


async def _quit_during_run(monkeypatch: pytest.MonkeyPatch) -> None:
    started, release = threading.Event(), threading.Event()

    def slow_run(model: str, **options: object) -> None:
        started.set()
        release.wait(30)  # far longer than the test waits
        raise explain.core.errors.ResourceError("never reached")

    app = ExplainApp(explain.run("gpt"))  # built before the engine is slowed down
    monkeypatch.setattr("explain.engine.api.run", slow_run)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("e")
        await pilot.pause()
        app.screen.action_submit()
        for _ in range(1200):  # up to a minute: the engine thread starts late on a loaded machine
            if started.is_set():
                break
            await pilot.pause(0.05)
        assert started.is_set()
        t0 = time.perf_counter()
        await pilot.press("q")
    assert time.perf_counter() - t0 < 10
    engine = [t for t in threading.enumerate() if t.name == "explain-run"]
    assert engine and all(t.daemon for t in engine), "the engine thread must not block interpreter exit"
    release.set()


def test_a_form_opened_as_the_app_quits_builds_nothing():
    """'q' then 'e' typed fast in a terminal (80x24): the re-run form was mounted while the app shut down, before its
    children, and its field builder's query for #form ended the session with a NoMatches traceback. Not composed,
    it builds nothing (a Pilot app exits differently, so the form is driven directly, as the monkey test's
    Enter-before-compose case is)."""
    screen = RerunScreen(explain.run("gpt", trained=True, text="the cat"), {})
    asyncio.run(screen._build("gpt"))  # no NoMatches
    assert screen._built is None
