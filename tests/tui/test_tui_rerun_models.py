"""The re-run form knows the model options: the causal / Q-K-V bias / tied-embedding switches (on/off) and
d_out start from the run shown, appear only for the models that have them, and re-run with what was chosen."""

from __future__ import annotations

from conftest import _until, drive
from textual.widgets import Input, Select

import explain
from explain.tui.app import ExplainApp


def test_switches_start_from_the_run_and_rerun_with_the_change():
    opts = {"causal": True, "d_out": 4}
    app = ExplainApp(explain.run("multihead", **opts), options=opts)

    async def script(pilot):
        s = app.screen
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#causal", Select).value == "on" and form.query_one("#d_out", Input).value == "4"
        assert form.query_one("#qkv_bias", Select).value == "on"
        assert not form.query("#tie_embeddings")  # the transformer's switch: not multihead's
        form.query_one("#qkv_bias", Select).value = "off"
        form.query_one("#d_out", Input).value = "3"
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        t = s.trace
        assert t.config.causal and not t.config.qkv_bias and t["attn_out"].shape == (6, 3)
        assert "attn.masked" in t and "attn.b_Q" not in t.params

    drive(app, script)


def test_another_models_form_shows_its_own_switches_at_their_defaults():
    app = ExplainApp(explain.run("multihead", causal=True), options={"causal": True})

    async def script(pilot):
        await pilot.press("e")
        await pilot.pause()
        form = app.screen
        form.query_one("#model", Select).value = "transformer"
        # the fields are rebuilt by an awaited remove-and-mount: wait for the new model's (one pause was not
        # always enough on a loaded machine, on main too)
        await _until(pilot, lambda: bool(form.query("#tie_embeddings")) and not form.query("#causal"))
        # a Select takes its value when it is mounted, a frame after it is in the DOM
        await _until(pilot, lambda: all(s.value is not Select.NULL for s in form.query(Select)))
        assert not form.query("#causal") and not form.query("#d_out")
        assert form.query_one("#qkv_bias", Select).value == "on"
        assert form.query_one("#tie_embeddings", Select).value == "on"
        await pilot.press("escape")

    drive(app, script)
