"""Issue 38 (keys, item a): every key of the step screen is an explicit ``action_*`` of the screen's class, none
forwarded by ``__getattr__``. On the old code the Controller's keys (G r e x X c o / g m y A P W E) existed only
through ``StepScreen.__getattr__``: the class-level check below fails there, and so does the scan."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import drive

import explain
from explain.engine import api
from explain.tui import keys
from explain.tui.app import ExplainApp
from explain.tui.screens.heads import HeadsScreen
from explain.tui.screens.search import SearchScreen
from explain.tui.screens.step import StepScreen

TUI = Path(explain.__file__).parent / "tui"


def test_no_getattr_forwarding_in_the_tui() -> None:
    found = [f"{p.relative_to(TUI)}:{n}" for p in sorted(TUI.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if "__getattr__" in line]
    assert found == [], f"attribute forwarding in explain/tui: {found} (write one action_* per key)"


@pytest.mark.parametrize("key", [k for k in keys.KEYS if not k.action.startswith("app.")], ids=lambda k: k.keys)
def test_every_key_is_an_action_of_the_class(key: keys.Key) -> None:
    name = "action_" + key.action.split("(")[0]
    assert callable(vars_of(StepScreen).get(name)), f"{key.keys}: StepScreen has no {name} (the key does nothing)"


def vars_of(cls: type) -> dict[str, object]:
    """The attributes a class and its bases define (no instance, no ``__getattr__``)."""
    out: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        out.update(vars(base))
    return out


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_controller_keys_open_their_screens(size: tuple[int, int]) -> None:
    """``/`` opens the step search and ``m`` the heads grid, through the explicit actions, at each size."""
    app = ExplainApp(api.run("gpt", text="the cat sat", random_weights=True))

    async def script(pilot) -> None:
        assert isinstance(app.screen, StepScreen)
        await pilot.press("slash")
        await pilot.pause()
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StepScreen)
        await pilot.press("m")
        for _ in range(50):  # the grid is computed in a worker: wait for it, not a fixed time
            await pilot.pause(0.05)
            if isinstance(app.screen, HeadsScreen):
                break
        assert isinstance(app.screen, HeadsScreen)

    drive(app, script, size=size)
