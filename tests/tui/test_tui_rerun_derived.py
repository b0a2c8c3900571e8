"""The re-run form (``e``) advised "give d_head" while its d_head field showed 4 (issue 42 item 12): the field
held the width the run had worked out, and an unchanged field is not passed, so after d_model 8 → 9 (2 heads) the engine
refused and asked for what the form seemed to have. A worked-out width (d_head, d_ff, d_out) is now a blank
field whose placeholder says its value; typed, it is given. Both tests fail on the old code."""

from __future__ import annotations

from conftest import _until, drive
from textual.widgets import Input, Static

import explain
from explain.tui.app import ExplainApp
from explain.tui.screens.rerun import parse_form, shown_values


def test_a_worked_out_width_is_blank_and_a_given_one_shown():
    derived = explain.run("gpt", random_weights=True)
    shown = shown_values(derived, {"random_weights": True})
    assert (shown["d_head"], shown["d_ff"], shown["d_model"]) == ("", "", "8")
    given = explain.run("gpt", random_weights=True, d_head=3)
    assert shown_values(given, {"random_weights": True, "d_head": 3})["d_head"] == "3"
    typed = {**shown, "d_model": "30", "d_head": "15"}
    options, errors = parse_form("gpt", typed, shown, {"random_weights": True}, True)
    assert not errors and (options["d_model"], options["d_head"]) == (30, 15)


def test_the_form_asks_for_d_head_only_when_its_field_is_empty():
    app = ExplainApp(explain.run("gpt", random_weights=True), options={"random_weights": True})

    def said(form) -> str:
        return " ".join(str(s.render()) for s in form.query(Static) if "divisible" in str(s.render()))

    async def script(pilot):
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#d_head", Input).value == "" and form.query_one("#d_head", Input).placeholder \
            == "4, worked out"
        form.query_one("#d_model", Input).value = "9"
        await pilot.press("ctrl+r")
        await _until(pilot, lambda: bool(said(form)))
        assert "d_head" in said(form) and form.query_one("#d_head", Input).value == ""  # asked for: it is empty
        form.query_one("#d_head", Input).value = "3"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await _until(pilot, lambda: app.screen.view.trace.config.d_model == 9)
        assert app.screen.view.trace.config.head_dim == 3

    drive(app, script, size=(80, 24))
