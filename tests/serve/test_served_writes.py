"""A served visitor writes no file on the server: x and c are downloads; with --allow-writes DIR, the dialog
writes only inside DIR (Pilot, with the environment explain serve gives each visitor)."""

from __future__ import annotations

import asyncio

from explain.core.served import WEB_DRIVER
from explain.engine.api import run
from explain.tui.app import ExplainApp
from explain.tui.export import ALLOW_WRITES, check_name


def test_served_exports_are_downloads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEXTUAL_DRIVER", WEB_DRIVER)
    monkeypatch.delenv(ALLOW_WRITES, raising=False)
    app = ExplainApp(run("attention", text="Thinking Machines"))
    delivered = []
    monkeypatch.setattr(app, "deliver_text", lambda f, save_filename=None, **kw: delivered.append((save_filename,
                                                                                                   f.read())))

    async def main():
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await pilot.pause()
            await pilot.press("x")
            for _ in range(50):
                await pilot.pause(0.05)
                if len(delivered) == 2:
                    break

    asyncio.run(main())
    names = [n for n, _ in delivered]
    assert names[0].endswith(".svg") and delivered[0][1].startswith("<svg")
    assert names[1].endswith(".py") and "import numpy" in delivered[1][1]
    assert list(tmp_path.iterdir()) == []


def test_allowed_writes_stay_in_their_folder(tmp_path):
    folder = tmp_path / "allowed"
    folder.mkdir()
    assert check_name("step.py", folder) is None
    assert "outside" in check_name("../escape.py", folder)
    assert "outside" in check_name("/tmp/escape.py", folder)
