"""Helpers: an ``explain serve`` in a subprocess on a free loopback port, for the server's and the browser's tests."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Served:
    proc: subprocess.Popen
    url: str  # with the token
    port: int
    cwd: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def children(self) -> list[int]:
        """The visitors' app processes the server has running now."""
        out = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    stat = (d / "stat").read_text()
                    cmd = (d / "cmdline").read_bytes()
                except OSError:
                    continue
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                if ppid == self.proc.pid and b"explain.commands.link" in cmd and " Z " not in stat[-200:]:
                    out.append(int(d.name))
        return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp: Path, *args: str) -> Served:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"}
    log = open(tmp / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "explain", "serve", "--port", str(port), *args], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+)", line)
        if m:
            return Served(proc, m.group(1), port, tmp)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"explain serve printed no address: {(tmp / 'server.log').read_text()}")


def stop_server(served: Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(20)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        served.proc.wait()
