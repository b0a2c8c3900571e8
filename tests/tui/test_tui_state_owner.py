"""Issue 38 (a): the step screen sets its own state. Long work (the controller, the interpretability keys, the
exports) and the app post messages (RunFinished, TraceExtended, StepSelected); none of them assigns an attribute
of the screen. An AST scan proves it for every module of explain/tui/ outside the screen's own module, and Pilot
tests check that the messages move the screen as the old writes did."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import drive

import explain
from explain.engine import api
from explain.tui.app import ExplainApp
from explain.tui.messages import RunFinished, StepSelected, TraceExtended
from explain.tui.screens.step import StepScreen

TUI = Path(explain.__file__).parent / "tui"
STATE = {"view", "tour", "run_options"}  # the step screen's state


def _screen_writes(source: str) -> list[str]:
    """Every ``X.view = …`` / ``X.tour = …`` / ``X.run_options = …`` (also augmented) whose target is not ``self``
    (the screen writing its own state), as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and t.attr in STATE and not (
                        isinstance(t.value, ast.Name) and t.value.id == "self"):
                    found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_the_scan_finds_a_write() -> None:
    """The scan sees the writes the controller used to make (so an empty result below means something)."""
    old = "host.view = host.view.go(1)\nself.host.tour = t\nctl.host.run_options |= {}\nscreen.view = v\n"
    assert len(_screen_writes(old)) == 4
    assert _screen_writes("self.view = v\nview = host.view\n") == []


@pytest.mark.parametrize("path", sorted(p for p in TUI.rglob("*.py") if p.name != "step.py"),
                         ids=lambda p: str(p.relative_to(TUI)))
def test_no_one_else_writes_the_screens_state(path: Path) -> None:
    assert _screen_writes(path.read_text()) == [], f"{path.name} writes the step screen's state: post a message"


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_messages_move_the_screen(size: tuple[int, int]) -> None:
    trace = api.run("gpt", text="the cat sat", random_weights=True)
    app = ExplainApp(trace)

    async def script(pilot) -> None:
        screen = app.screen
        assert isinstance(screen, StepScreen)
        # a run of one's own: shown at the step asked for, its options kept, the screen says so
        other = api.run("gpt", text="a dog ran home", random_weights=True)
        screen.post_message(RunFinished(other, {"text": "a dog ran home"}, at="blocks.0.attn.scores"))
        await pilot.pause()
        assert screen.view.trace is other and screen.view.step.name == "blocks.0.attn.scores"
        assert screen.run_options == {"text": "a dog ran home"}
        # a step picked with a cell: there, at that cell
        pattern = other["blocks.0.attn.pattern"]
        cell = (0, 1, 3, 2)[: len(pattern.shape)]
        screen.post_message(StepSelected(pattern.index, "a test", cell))
        await pilot.pause()
        assert screen.view.index == pattern.index and screen.view.index_of_cell == cell
        # a longer trace of another run is ignored; of this one, shown at the same step, its options added
        seen: list[int] = []
        longer = api.with_backward(other)
        screen.post_message(TraceExtended(trace, longer, {"backward": True}))
        await pilot.pause()
        assert screen.view.trace is other and "backward" not in screen.run_options
        screen.post_message(TraceExtended(other, longer, {"backward": True}, lambda t: seen.append(len(t))))
        await pilot.pause()
        assert screen.view.trace is longer and screen.view.index == pattern.index
        assert screen.run_options["backward"] is True and seen == [len(longer)]
        assert screen.view.index_of_cell == cell

    drive(app, script, size)
