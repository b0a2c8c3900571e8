"""Temporary files of writes under way in worker threads are removed when the TUI ends by SIGTERM or SIGHUP
(issue 36 item 6): only the main thread can catch a signal, so a write from ``X`` (a worker) left its
``.explain-tmp-*`` sibling behind. The writer then fails at its rename: the target stays as it was."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from explain.io import pending
from explain.io.atomic import WriteError, atomic_write


def _hidden(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(pending.PREFIX)]


def test_a_worker_threads_write_is_discarded_whole(tmp_path: Path) -> None:
    target = tmp_path / "shot.svg"
    target.write_text("old")
    started, go_on, failed = threading.Event(), threading.Event(), []

    def write() -> None:
        try:
            with atomic_write(target, force=True) as fh:
                fh.write(b"new, half")
                started.set()
                go_on.wait(10)
        except WriteError as exc:
            failed.append(str(exc))

    t = threading.Thread(target=write)
    t.start()
    assert started.wait(10) and len(_hidden(tmp_path)) == 1
    assert pending.discard_all() == 1
    go_on.set()
    t.join(10)
    assert _hidden(tmp_path) == [] and target.read_text() == "old" and failed, failed


def test_the_tuis_signal_handler_discards_and_exits(tmp_path: Path) -> None:
    pytest.importorskip("textual")
    import explain
    from explain.tui.app import ExplainApp

    sys_path = tmp_path / (pending.PREFIX + "1-abcdef01-x.svg")
    sys_path.write_text("partial")
    pending.track(sys_path)
    app = ExplainApp(explain.run("attention"))
    before = signal.getsignal(signal.SIGTERM)
    seen = {}

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            assert signal.getsignal(signal.SIGTERM) == app._ended_by_signal
            app._ended_by_signal(signal.SIGTERM, None)
            await pilot.pause()
            seen["gone"] = not sys_path.exists()
        seen["code"] = app.return_code

    import asyncio

    asyncio.run(main())
    assert seen == {"gone": True, "code": 128 + signal.SIGTERM}
    assert signal.getsignal(signal.SIGTERM) == before  # the handler the process had is back
