"""A headless monkey (issues 29 and 36): seeded random keys, with resizes from 40×4 to 200×50 and pastes of
hostile text (a NUL, a 300-byte name, ``~nosuchuser``, ``/dev/full``, escape sequences, 5,000 digits) into
whatever has focus, with the real export and picture writers, on five runs: a tutorial, ``run gpt --trained``, a
Llama folder, a GGUF file and a generation. The app neither raises nor hangs, and nothing is written outside the
working folder (every write goes through explain.io.atomic, whose targets are recorded here; the folders around
are compared before and after).

CI runs the quick form, 600 keys a run (slow: about 20 s each); the full form is 5,000 keys a run:
``MONKEY_KEYS=5000 pytest tests/tui/test_tui_monkey.py``. It replaces the 1,000-key fuzz test that was its twin.

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

import pytest
from conftest import drive, fake_tutorial
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key

import explain
import explain.io.atomic
from explain.tui.app import ExplainApp
from explain.tui.keys import KEYS

N_KEYS = int(os.environ.get("MONKEY_KEYS", "600"))
EXTRA = ["up", "down", "left", "right", "tab", "shift+tab", "escape", "enter", "enter", "space", "backspace",
         "1", "0", "z", "pageup", "pagedown", "home", "end", "ctrl+a", "delete"]
PASTES = ["a\0b", "n" * 300, "~nosuchuser_monkey/plot", "/dev/full", "/dev/null", ".", "..", "/", "\x1b[31mred",
          "9" * 5000, "-1", "nan", "1e-320", "sub/", "ok_name", "", "   "]
SIZES = [(40, 4), (60, 10), (80, 24), (120, 40), (200, 50), (60, 20), (100, 30), (81, 25)]
DATA = Path(__file__).resolve().parents[1] / "data"


def _app(kind: str, tmp_path: Path) -> ExplainApp:
    """The app on one of the five runs the monkey walks."""
    if kind == "tutorial":
        return ExplainApp(explain.run("gpt", random_weights=True, text="the cat sat on the mat"),
                          tutorial=fake_tutorial())
    if kind == "trained":
        return ExplainApp(explain.run("gpt", trained=True, text="the cat sat on the mat"))
    if kind == "llama-folder":
        return ExplainApp(explain.run("llama", checkpoint=str(DATA / "llama" / "hf_llama"), text="hello world"))
    if kind == "gguf":
        pytest.importorskip("gguf")
        from gguf_files import write_gguf

        path = write_gguf(tmp_path / "m.gguf", "Q8_0")
        return ExplainApp(explain.run("llama", checkpoint=str(path), text="hello world"))
    return ExplainApp(explain.generate("gpt", text="the cat sat on the", max_new_tokens=3, greedy=True))


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


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["tutorial", "trained", "llama-folder", "gguf", "generation"])
def test_random_keys_with_resizes_and_pastes(kind, monkeypatch, tmp_path) -> None:
    app = _app(kind, tmp_path)
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
        drive(app, script, size=(40, 4) if kind == "gguf" else (120, 40), timeout=1500)
    finally:
        faulthandler.cancel_dump_traceback_later()
    for path in written:
        assert work in path.resolve().parents, f"wrote {path} outside the working folder"
    for d, before in around.items():
        after = _listing(d)
        if d == tmp_path:
            before, after = ({k: v for k, v in x.items() if k != "work"} for x in (before, after))
        assert after == before, f"{d} changed: {sorted(set(after.items()) ^ set(before.items()))[:10]}"
