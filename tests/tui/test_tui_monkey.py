"""A headless monkey (issue 29): 5,000 seeded random keys, with resizes and pastes of hostile text (a NUL, a
300-byte name, ``~nosuchuser``, ``/dev/full``, escape sequences, 5,000 digits) into whatever has focus, on a
small model with a tutorial and the real export and picture writers. The app neither raises nor hangs, and
nothing is written outside the working folder (every write goes through explain.io.atomic, whose targets are
recorded here; the folders around are compared before and after). MONKEY_KEYS overrides the count locally.

Each key is sent as Pilot.press sends it, then ``pilot.pause(0)``: every message queued on the screen and its
widgets is handled and the screen painted before the next key. Pilot.press itself also waits twice per key for
the process to look idle (at least 2 × 20 ms, up to 2 s while a worker thread computes): 5,000 keys spent more
than three of their six minutes asleep. Workers here run while the keys go on, as they do for a quick typist."""

from __future__ import annotations

import faulthandler
import os
import random
import unicodedata
from pathlib import Path

from conftest import drive
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

import explain.io.atomic
from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS

N_KEYS = int(os.environ.get("MONKEY_KEYS", "5000"))
EXTRA = ["up", "down", "left", "right", "tab", "shift+tab", "escape", "enter", "enter", "space", "backspace",
         "1", "0", "z", "pageup", "pagedown", "home", "end", "ctrl+a", "delete"]
PASTES = ["a\0b", "n" * 300, "~nosuchuser_monkey/plot", "/dev/full", "/dev/null", ".", "..", "/", "\x1b[31mred",
          "9" * 5000, "-1", "nan", "1e-320", "sub/", "ok_name", "", "   "]
SIZES = [(80, 24), (120, 40), (200, 50), (60, 20), (100, 30), (81, 25)]


def _key_event(key: str) -> events.Key:
    """The Key event Pilot.press builds for ``key`` (textual's App._press_keys): a name and its character."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


def _listing(d: Path) -> dict[str, int]:
    """Each entry's modification time; not __pycache__, which Python's imports (any process's) rewrite."""
    return {n: os.lstat(d / n).st_mtime_ns for n in sorted(os.listdir(d)) if n != "__pycache__"}


def test_five_thousand_random_keys_with_resizes_and_pastes(gpt_trace, tutorial, monkeypatch, tmp_path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    around = {d: _listing(d) for d in (tmp_path, tmp_path / "home", Path(explain.__file__).parent)}
    written: list[Path] = []
    real = explain.io.atomic._Pending.__init__

    def record(self, target):
        written.append(Path(target))
        real(self, target)

    monkeypatch.setattr(explain.io.atomic._Pending, "__init__", record)
    keys = [k for key in KEYS for k in key.keys.split(",") if k not in ("q", "ctrl+q", "ctrl+c")] + EXTRA
    rng = random.Random(29)
    app = ExplainApp(gpt_trace, tutorial=tutorial)

    async def script(pilot) -> None:
        for _ in range(N_KEYS):
            r = rng.random()
            if r < 0.01:
                await pilot.resize_terminal(*rng.choice(SIZES))
            elif r < 0.03:
                focused = app.screen.focused or app.screen
                focused.post_message(events.Paste(rng.choice(PASTES)))
                await pilot.pause(0)
            else:
                app.post_message(_key_event(rng.choice(keys)))
                await pilot.pause(0)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running

    # Hang guards, not speed targets (about 2 min on a quiet 2-core machine): wait_for ends an await that never
    # returns; faulthandler ends the process with every thread's stack if a key blocks the event loop itself.
    faulthandler.dump_traceback_later(1800, exit=True)
    try:
        drive(app, script, size=(120, 40), timeout=1500)
    finally:
        faulthandler.cancel_dump_traceback_later()
    for path in written:
        assert work in path.resolve().parents, f"wrote {path} outside the working folder"
    for d, before in around.items():
        after = _listing(d)
        if d == tmp_path:
            before, after = ({k: v for k, v in x.items() if k != "work"} for x in (before, after))
        assert after == before, f"{d} changed: {sorted(set(after.items()) ^ set(before.items()))[:10]}"
