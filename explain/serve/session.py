"""One visitor's app: textual-serve's ``AppService`` started without a shell.

textual-serve runs one command line for every visitor through ``create_subprocess_shell``; here each visitor's
app is ``python -I -m explain.commands.link`` (:func:`visitor_argv`), started with ``create_subprocess_exec`` in an
empty folder with a minimal environment (:func:`visitor_env`): the link it opens rides in ``EXPLAIN_LINK``, already
checked, and explain's memory budget in ``EXPLAIN_MAX_BYTES``. :meth:`VisitorApp.end` ends a process that does not
quit when asked.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from importlib.metadata import version

from textual_serve.app_service import AppService

from explain.core.served import WEB_DRIVER

KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "HOME", "XDG_CACHE_HOME", "HF_HOME")


def visitor_argv() -> list[str]:
    """The argv of every visitor's app: fixed, nothing of the visitor's in it."""
    return [sys.executable, "-I", "-m", "explain.commands.link"]


def visitor_env(link: str, width: int, height: int, budget: int, link_base: str, writes: str | None) -> dict[str, str]:
    """The environment of a visitor's app: the kept variables, Textual's web driver, the checked link, the memory
    budget, the address links are shown on (the server's, with its token), and the folder writes may go to."""
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    env.update(TEXTUAL_DRIVER=WEB_DRIVER, TEXTUAL_FPS="60", TEXTUAL_COLOR_SYSTEM="truecolor", TERM_PROGRAM="textual",
               TERM_PROGRAM_VERSION=version("textual-serve"), COLUMNS=str(width), ROWS=str(height),
               EXPLAIN_LINK=link, EXPLAIN_MAX_BYTES=str(budget), EXPLAIN_SERVE_URL=link_base,
               EXPLAIN_SERVED="1")
    if writes:
        env["EXPLAIN_ALLOW_WRITES"] = writes
    return env


class VisitorApp(AppService):
    """A visitor's app process, started with ``create_subprocess_exec`` (never a shell)."""

    def __init__(self, env: dict[str, str], **kwargs) -> None:
        super().__init__("explain", **kwargs)
        self.env = env
        self.last_input = time.monotonic()
        self.folder = tempfile.TemporaryDirectory(prefix="explain-visitor-")

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def _open_app_process(self, width: int = 80, height: int = 24):
        env = {**self.env, "COLUMNS": str(width), "ROWS": str(height)}
        self._process = process = await asyncio.create_subprocess_exec(
            *visitor_argv(), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env, cwd=self.folder.name)
        self._stdin = process.stdin
        return process

    async def send_bytes(self, data: bytes) -> bool:
        self.last_input = time.monotonic()
        return await super().send_bytes(data)

    async def end(self, grace: float = 3.0) -> None:
        """Ask the app to quit, and kill it if it has not within ``grace`` seconds."""
        process = self._process
        try:
            await asyncio.wait_for(self.stop(), grace)
        except (TimeoutError, Exception):
            pass
        if process is not None and process.returncode is None:
            process.kill()
            try:
                await asyncio.wait_for(process.wait(), grace)
            except TimeoutError:
                pass
        self.folder.cleanup()
