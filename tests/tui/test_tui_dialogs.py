"""The TUI's file-name dialogs (``c`` picture, ``x`` step export, ``X`` run export) given hostile names: each is
refused beside the field with the CLI's own message (:func:`explain.io.paths.check_output`), the dialog stays open
with what was typed, the app keeps running, and nothing is created or changed anywhere (``/dev/full`` is the
device, refused, not a new ``/dev/full.svg``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import drive

from explain.tui.app import ExplainApp

HOSTILE = [
    ("n" * 300, "longer than the 255"),
    ("a\0b", "NUL"),
    ("~nosuchuser_explain/plot", "no user"),
    (".", "is a folder"),
    ("sub", "is a folder"),
    ("/dev/full", "character device"),
    ("/dev/null", "character device"),
    ("fifo", "FIFO"),
    ("nowhere/x", "does not exist"),
    ("file.txt/x", "not a folder"),
    ("   ", "give a file name"),
]


def _snapshot(d: Path) -> dict[str, tuple]:
    return {n: (os.lstat(d / n).st_mode, os.lstat(d / n).st_mtime_ns) for n in sorted(os.listdir(d))}


@pytest.mark.parametrize("key", ["c", "x", "X"])
def test_hostile_names_are_refused_beside_the_field(gpt_trace, monkeypatch, tmp_path: Path, key: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "file.txt").write_text("mine")
    os.mkfifo(tmp_path / "fifo")
    before, dev = _snapshot(tmp_path), set(os.listdir("/dev"))
    app = ExplainApp(gpt_trace)
    seen: list[str] = []

    async def script(pilot) -> None:
        await pilot.press(key)
        await pilot.pause()
        assert type(app.screen).__name__ == "PromptScreen"
        field = app.screen.query_one("#answer")
        for name, words in HOSTILE:
            field.value = name  # as a paste would put it there (a NUL cannot be typed)
            await pilot.press("enter")
            await pilot.pause()
            assert app.is_running
            assert type(app.screen).__name__ == "PromptScreen", name[:40]
            error = str(app.screen.query_one("#error").render())
            assert words in error, (name[:40], error)
            assert field.value == name
            seen.append(error)
        field.value = ""
        await pilot.press(*"sub", "enter")  # typed key by key: the same check
        await pilot.pause()
        assert "is a folder" in str(app.screen.query_one("#error").render())
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ != "PromptScreen" and app.is_running

    drive(app, script)
    assert len(seen) == len(HOSTILE)
    assert _snapshot(tmp_path) == before and set(os.listdir("/dev")) == dev  # /dev/ptmx changes as ptys open


def test_a_dialog_key_in_the_same_burst_as_q_ends_cleanly(gpt_trace, tutorial, monkeypatch, tmp_path) -> None:
    """``q c`` (or ``q x``, or ``q e`` in a tutorial) typed together: the dialog was pushed while the app was ending,
    mounted but never composed, and its on_mount ended the app with a traceback (NoMatches: Input on PromptScreen;
    '#yes' on ConfirmScreen), exit code 1. Now nothing opens and the app ends as q asked. Fails on the old code."""
    monkeypatch.chdir(tmp_path)
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot) -> None:
        app.exit()  # q
        app.action_picture()  # c, e and x, arriving before the app has ended
        app.screen.action_rerun()
        app.screen.action_export_step()
        await pilot.pause()

    drive(app, script)
    assert app.return_code == 0 and app._exception is None
    assert list(tmp_path.iterdir()) == []
