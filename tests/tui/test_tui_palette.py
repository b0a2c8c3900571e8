"""Every action is in the Footer, the command palette and the help screen (all built from one key table);
a palette command runs its action; ``explain`` with no command opens the first tutorial."""

from __future__ import annotations

import io

from conftest import drive
from rich.console import Console

from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS
from explain.tui.screens.help import keys_table


def test_every_action_in_footer_palette_and_help(gpt_trace, tutorial):
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        screen = app.screen
        shown = {b.binding.action for b in screen.active_bindings.values() if b.binding.show}
        enabled = [k for k in KEYS if screen.check_action(k.action.split("(")[0], ()) is not False]
        assert {k.action for k in enabled} <= shown
        commands = {c.title for c in app.get_system_commands(screen)}
        assert {k.help for k in enabled if k.action != "quit"} <= commands
        assert "Quit the application" in {c.help for c in app.get_system_commands(screen)} or "Quit" in commands
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        console = Console(file=io.StringIO(), width=200, color_system=None)
        console.print(keys_table())
        assert all(k.help in console.file.getvalue() for k in KEYS)
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "StepScreen"

    drive(app, script)


def test_palette_runs_an_action(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Last step")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.view.step.name == "loss"

    drive(app, script)


def test_open_default_opens_the_first_tutorial(monkeypatch):
    import explain.commands.open as opener

    opened = {}
    monkeypatch.setattr("explain.tui.open_trace", lambda trace, tutorial=None: opened.update(t=trace, tut=tutorial))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    opener.open_default()
    tut = opener.first_tutorial()
    if tut is None:  # the tutorials package is not there: a plain gpt run
        assert opened["tut"] is None and opened["t"].config.model == "gpt"
    else:
        from explain.tutorial import list_tutorials

        assert opened["tut"].name == list_tutorials()[0].name
        assert opened["t"].config.model == opened["tut"].model
