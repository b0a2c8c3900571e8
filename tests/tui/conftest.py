"""Fixtures for the TUI tests: small traces (built once per session), a duck-typed fake tutorial, and helpers
to run a pilot coroutine without an async pytest plugin and to read a widget's rendering as plain text."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from rich.console import Console

import explain


@dataclass
class FakeStop:
    step: str
    title: str
    narration: str
    cell: tuple[int, ...] | None = None
    question: str | None = None
    answer: str | None = None


@dataclass
class FakeTutorial:
    name: str = "fake"
    title: str = "A fake tutorial"
    summary: str = "Three stops through a tiny GPT."
    model: str = "gpt"
    stops: list[FakeStop] = field(default_factory=list)


def fake_tutorial() -> FakeTutorial:
    return FakeTutorial(stops=[
        FakeStop("embed", "Embeddings", "Each **token** picks its row of W_E."),
        FakeStop("blocks.0.attn", "Queries", "The first step of attention.", question="What shape is Q?",
                 answer="(1, 2, 4, 4): batch, head, position, d_head."),
        FakeStop("blocks.0.attn.masked", "The mask", "Future positions become −inf.", cell=(0, 1, 0, 2)),
    ])


@pytest.fixture(scope="session")
def gpt_trace():
    return explain.run("gpt", random_weights=True)


@pytest.fixture(scope="session")
def attention_trace():
    return explain.run("attention")


@pytest.fixture(scope="session")
def wide_trace():
    """A gpt run with a 3000-word vocabulary: logits too wide for any terminal."""
    return explain.run("gpt", d_vocab=3000, n_layers=1)


@pytest.fixture
def tutorial() -> FakeTutorial:
    return fake_tutorial()


def drive(app: Any, script: Callable[[Any], Awaitable[None]], size: tuple[int, int] = (120, 40),
          timeout: float = 300.0) -> None:
    """Run ``script(pilot)`` against ``app`` headless (pytest-asyncio is not a dependency). ``timeout`` is a hang
    guard, not a speed target: generous, so a loaded machine does not fail a test that only ran slowly."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(pilot)

    asyncio.run(asyncio.wait_for(main(), timeout))


def text_of(widget: Any, width: int = 200) -> str:
    """What a widget draws, as plain text (its own render(), without Textual's styles)."""
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    console.print(widget.render(), crop=False, soft_wrap=True)
    return console.file.getvalue()


async def _until(pilot: Any, done: Callable[[], bool], tries: int = 100) -> None:
    """Pause until ``done()`` (or give up quietly after ``tries`` short pauses: the test's asserts decide)."""
    for _ in range(tries):
        if done():
            return
        await pilot.pause(0.02)


async def goto(pilot: Any, name: str, *then: str) -> None:
    """``g``, the step's name, Enter, then the keys ``then``, waiting for the go-to screen to open and to close.
    Keys pressed before a pushed screen is active go to the screen below (on a loaded machine, 'a' of
    'attn.scores' would reach the step screen), so each transition is awaited."""
    on_search = lambda: type(pilot.app.screen).__name__ == "SearchScreen"  # noqa: E731
    await pilot.press("g")
    await _until(pilot, on_search)
    await pilot.press(*name, "enter")
    await _until(pilot, lambda: not on_search(), tries=25)  # a wrong name keeps the screen open, with an error
    await pilot.pause()
    if then:
        await pilot.press(*then)


def region_lines(app: Any, region: Any) -> list[str]:
    """The screen's lines inside ``region``, as the compositor drew them (what the terminal shows)."""
    strips = app.screen._compositor.render_strips()
    return ["".join(seg.text for seg in strips[y])[region.x:region.x + region.width]
            for y in range(region.y, min(region.y + region.height, len(strips)))]


def drill_answer(app: Any) -> str:
    """The drill-down's last line on screen (its result line: the answer), stripped; '' when none is drawn."""
    panel = app.screen.query_one("#cell")
    lines = [line.rstrip() for line in region_lines(app, panel.content_region) if line.strip()]
    return lines[-1].strip() if lines else ""
