"""1,000 random key presses (seeded) with random resizes, on a small model with a tutorial: the app neither
raises nor hangs. Export goes to a stand-in module in a temporary folder; q (quit) and the command palette
(whose Quit a random Enter could pick) are left out; test_tui_palette covers the palette."""

from __future__ import annotations

import random
import sys
import types
from pathlib import Path

from conftest import drive

from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS

EXTRA = ["up", "down", "tab", "shift+tab", "escape", "enter", "space", "backspace", "1", "0", "z",
         "pageup", "pagedown", "home", "end", "shift+space", "comma", "full_stop"]
SIZES = [(80, 24), (120, 40), (100, 30), (60, 20), (200, 60), (81, 25)]


def test_thousand_random_keys(gpt_trace, tutorial, monkeypatch, tmp_path):
    module = types.ModuleType("explain.export")
    module.write_export = lambda trace, path, **kw: (Path(path).write_text("#\n"), Path(path))[1]  # the path, as the real one
    monkeypatch.setitem(sys.modules, "explain.export", module)
    monkeypatch.chdir(tmp_path)
    keys = [k for key in KEYS for k in key.keys.split(",") if k != "q"] + EXTRA
    rng = random.Random(1234)
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        for i in range(1000):
            if i % 97 == 0:
                await pilot.resize_terminal(*rng.choice(SIZES))
            await pilot.press(rng.choice(keys))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running
        while len(app.screen_stack) > 1:  # close whatever dialog the keys left open
            app.pop_screen()
        await pilot.pause()
        await pilot.press("n")  # still answering
        assert app.screen.view is not None

    drive(app, script, size=(120, 40), timeout=600)
