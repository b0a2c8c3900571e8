"""The tutorial picker: ``explain tutorial`` with no name opens the TUI with every shipped tutorial listed, the
current one highlighted; Enter opens the one chosen (its first stop), Esc closes the list and keeps the
tutorial behind it, and the palette opens the picker again. Piped, ``explain tutorial`` prints the list."""

from __future__ import annotations

from conftest import drive
from textual.widgets import OptionList

import explain.commands.tutorial as tutorial_cmd
from explain.tui.app import ExplainApp
from explain.tutorial import list_tutorials, load_tutorial, run_tutorial


def picker_app() -> ExplainApp:
    tut = load_tutorial("1")
    return ExplainApp(run_tutorial(tut), tutorial=tut, pick=True)


def test_the_picker_lists_every_tutorial_and_enter_opens_the_one_chosen():
    app = picker_app()

    async def script(pilot):
        assert type(app.screen).__name__ == "TutorialPicker"
        options = app.screen.query_one("#tutorials", OptionList)
        names = [t.name for t in list_tutorials()]
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == names
        assert options.highlighted == 0  # the tutorial behind the list: the first
        await pilot.press("down", "down", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        s = app.screen
        assert type(s).__name__ == "StepScreen"
        assert s.tutorial.name == names[2] and s.tutorial_on and s.tour.stop == 0

    drive(app, script, size=(80, 24))


def test_escape_closes_the_picker_and_keeps_the_tutorial_and_the_palette_opens_it_again():
    app = picker_app()

    async def script(pilot):
        await pilot.press("escape")
        await pilot.pause()
        s = app.screen
        assert type(s).__name__ == "StepScreen" and s.tutorial.name.startswith("01") and s.tutorial_on
        commands = {c.title: c for c in app.get_system_commands(s)}
        commands["Tutorials: choose one"].callback()
        await pilot.pause()
        assert type(app.screen).__name__ == "TutorialPicker"
        await pilot.press("enter")  # the one already on its tour: nothing is re-run
        await pilot.pause()
        assert app.screen is s and s.tutorial.name.startswith("01")

    drive(app, script)


def test_explain_tutorial_with_no_name_opens_the_picker_in_a_terminal_and_lists_when_piped(monkeypatch):
    from click.testing import CliRunner

    from explain.cli import main

    opened: list[dict] = []
    monkeypatch.setattr("explain.tui.open_trace", lambda trace, **kw: opened.append(kw))
    monkeypatch.setattr(tutorial_cmd, "_interactive", lambda: True)
    assert CliRunner().invoke(main, ["tutorial"]).exit_code == 0
    assert opened and opened[0]["pick"] and opened[0]["tutorial"].name == list_tutorials()[0].name

    monkeypatch.setattr(tutorial_cmd, "_interactive", lambda: False)
    res = CliRunner().invoke(main, ["tutorial"])
    assert res.exit_code == 0 and all(t.name in res.output for t in list_tutorials())
