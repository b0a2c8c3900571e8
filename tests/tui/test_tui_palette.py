"""Every action is in the command palette and the help screen, and the Footer shows the most used keys that
fit the width, help and quit always (all built from one key table); a palette command runs its action;
``explain`` with no command opens the first tutorial."""

from __future__ import annotations

import io

import pytest
from conftest import _until, drive
from rich.console import Console
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS, palette_title
from explain.tui.screens.help import keys_table


def test_every_action_in_palette_and_help(gpt_trace, tutorial):
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot):
        screen = app.screen
        enabled = [k for k in KEYS if screen.check_action(k.action.split("(")[0], ()) is not False]
        commands = {c.title for c in app.get_system_commands(screen)}
        assert {palette_title(k) for k in enabled if k.action != "quit"} <= commands
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
    monkeypatch.setattr("explain.tui.open_trace", lambda trace, tutorial=None, **_: opened.update(t=trace, tut=tutorial))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    opener.open_default()
    tut = opener.first_tutorial()
    if tut is None:  # the tutorials package is not there: a plain gpt run
        assert opened["tut"] is None and opened["t"].config.model == "gpt"
    else:
        from explain.tutorial import list_tutorials

        assert opened["tut"].name == list_tutorials()[0].name
        assert opened["t"].config.model == opened["tut"].model


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (120, 40), (160, 40), (200, 50)])
@pytest.mark.parametrize("with_tutorial", [True, False])
def test_footer_shows_what_fits_with_help_and_quit_always(gpt_trace, tutorial, size, with_tutorial):
    """At every width: ? and q are in the footer, the most used keys come first, and no key is cut (the footer
    never needs to scroll); the views of issue 27 that work on a plain gpt run (y A: no patch, no generation yet)
    from 80 columns (in a tutorial from 120); '? more' when keys that work do not fit."""
    app = ExplainApp(gpt_trace, tutorial=tutorial if with_tutorial else None)

    async def script(pilot):
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        shown = [k.key_display for k in footer.query(FooterKey)]
        assert "?" in shown and "q" in shown
        assert "→/n" in shown and "h" in shown  # steps and the cell cursor
        if with_tutorial:
            assert "a" in shown  # the answer to the stop's question
        if size[0] >= (120 if with_tutorial else 80):  # y A, one item 'yA why' (a tutorial's 'a w' first)
            assert {"y", "A"} <= set(shown) and not {"P", "W", "E"} & set(shown), shown
        assert footer.virtual_size.width <= footer.size.width, (shown, footer.virtual_size, footer.size)
        labels = [k.description for k in footer.query(FooterKey) if k.key_display == "?"]
        assert labels == ["more"], labels  # gpt has more working keys than 200 columns hold
        why = {c.title for c in app.get_system_commands(app.screen) if c.title.startswith("why: ")}
        assert {k.action for k in KEYS if palette_title(k) in why} == {"lens", "attribution"}  # the palette: 'why'

    drive(app, script, size=size)


def test_footer_follows_a_resize(gpt_trace):
    app = ExplainApp(gpt_trace)

    async def script(pilot):
        footer = app.screen.query_one(Footer)
        narrow = {k.key_display for k in footer.query(FooterKey)}
        keys = lambda: {k.key_display for k in app.screen.query_one(Footer).query(FooterKey)}  # noqa: E731
        await pilot.resize_terminal(200, 50)
        await _until(pilot, lambda: keys() != narrow)  # the footer recomposes a frame or two later (load)
        wide = keys()
        assert narrow < wide and "?" in narrow
        await pilot.resize_terminal(80, 24)
        await _until(pilot, lambda: keys() == narrow)
        assert keys() == narrow
        assert "v" not in narrow
        show = app.screen.view.show
        await pilot.press("v")  # a key left out of the narrow footer works all the same
        await pilot.pause()
        assert app.screen.view.show != show

    drive(app, script, size=(80, 24))


@pytest.mark.parametrize("size", [(40, 4), (60, 3), (80, 2), (80, 24)])
def test_page_keys_in_the_palette_of_a_tiny_terminal_do_not_end_the_app(attention_trace, size):
    """Issue 36 item 5: Ctrl+P then PageUp/PageDown in a terminal 4 rows high or less ended the app with
    Textual 8.2's OptionList ``KeyError: 0`` (a list with options but no lines laid out)."""
    app = ExplainApp(attention_trace)

    async def script(pilot):
        await pilot.press("ctrl+p")
        await _until(pilot, lambda: type(app.screen).__name__ == "Palette")
        for key in ("pagedown", "pageup", "pagedown", "down", "up"):
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running and type(app.screen).__name__ == "Palette"
        await pilot.press("escape")
        await _until(pilot, lambda: type(app.screen).__name__ == "StepScreen")

    drive(app, script, size=size)
