"""explain starts under a served driver: with Textual's web driver named (as textual-serve and ``explain serve`` run
each visitor's app) the commands open the TUI although stdout is a pipe; a real pipe still gets the plain listing."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import pytest

from explain.core.served import WEB_DRIVER, interactive, served


def _quit_packet() -> bytes:
    """The meta packet textual-serve sends to end an app (``AppService.stop``)."""
    payload = json.dumps({"type": "quit"}).encode()
    return b"M" + len(payload).to_bytes(4, "big") + payload


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"}
    return {**env, **extra}


def test_interactive_follows_the_web_driver(monkeypatch):
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert not served() and not interactive(io.StringIO())
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert not interactive(io.StringIO())
    monkeypatch.setenv("TEXTUAL_DRIVER", WEB_DRIVER)
    assert served() and interactive(io.StringIO())


@pytest.mark.parametrize("argv", [["tutorial", "1"], ["run", "attention", "--text", "Thinking Machines"]])
def test_a_served_command_opens_the_tui(argv):
    """Under the web driver the app writes textual-serve's prelude (``__GANGLION__``) and its frames, then ends
    on the quit packet: before, ``explain tutorial 1`` printed the plain walkthrough and the server said
    "Application failed to start"."""
    proc = subprocess.Popen([sys.executable, "-m", "explain", *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(TEXTUAL_DRIVER=WEB_DRIVER, COLUMNS="100", ROWS="30"))
    try:
        first = proc.stdout.readline()
        assert first == b"__GANGLION__\n", (first, proc.stderr.read() if proc.poll() is not None else b"")
        packet = proc.stdout.read(5)  # a frame: type D and its length
        assert packet[:1] in (b"D", b"M", b"P")
        time.sleep(0.5)
        proc.stdin.write(_quit_packet())
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_real_pipe_still_gets_the_plain_listing():
    out = subprocess.run([sys.executable, "-m", "explain", "tutorial", "1"], capture_output=True, text=True,
                         env=_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert "__GANGLION__" not in out.stdout and "Attention" in out.stdout
