"""explain serve without a browser: the token on the page, the websocket and downloads; hostile links as one line;
the session cap; the idle timeout; the missing extra."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from serving import start_server, stop_server


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server with room for two visitors, ending an idle one after 10 seconds (with 4, a loaded machine ended the
    first visitor while the second was still arriving, and the third found room)."""
    s = start_server(tmp_path_factory.mktemp("serve"), "--max-sessions", "2", "--idle-timeout", "10")
    yield s
    stop_server(s)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _message(page: str) -> str:
    m = re.search(r"<p id='message'>(.*)</p>", page)
    assert m, page[:300]
    return m.group(1)


async def _visit(url: str, seconds: float = 30.0) -> tuple[aiohttp.ClientSession, aiohttp.ClientWebSocketResponse]:
    """Open the page and its websocket; wait for the app's first frame."""
    session = aiohttp.ClientSession()
    async with session.get(url) as r:
        page = await r.text()
    ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
    ws = await session.ws_connect(ws_url + "?width=100&height=30")
    got = 0
    while got < 2000:
        msg = await asyncio.wait_for(ws.receive(), seconds)
        assert msg.type == aiohttp.WSMsgType.BINARY, msg
        got += len(msg.data)
    return session, ws


def test_the_address_is_loopback_with_a_token(served):
    assert served.url.startswith(f"http://127.0.0.1:{served.port}/?token=") and len(served.token) >= 20
    status, page = _get(served.url)
    assert status == 200 and "https://" not in page and "fonts.googleapis" not in page
    assert f"/ws/{served.token}/" in page


@pytest.mark.parametrize("path", ["/", "/?token=wrong", "/?tutorial=1", "/ws/wrong/key", "/download/anything"])
def test_without_the_token_403(served, path):
    status, page = _get(served.base + path)
    assert status == 403 and "token" in _message(page)


def test_the_websocket_without_the_token_is_refused(served):
    async def go():
        async with aiohttp.ClientSession() as s:
            with pytest.raises(aiohttp.WSServerHandshakeError) as e:
                await s.ws_connect(f"ws://127.0.0.1:{served.port}/ws/wrong/key")
            assert e.value.status == 403
            with pytest.raises(aiohttp.WSServerHandshakeError) as e:  # the token, but a key no page gave
                await s.ws_connect(f"ws://127.0.0.1:{served.port}/ws/{served.token}/made-up")
            assert e.value.status == 403

    asyncio.run(go())


@pytest.mark.parametrize("query, says", [
    ("tutorial=99", "no tutorial named '99'"),
    ("tutorial=../../etc/passwd", "no tutorial named"),
    ("tutorial=1&stop=400", "is past the end"),
    ("tutorial=1&stop=-1", "stop must be a whole number"),
    ("model=/etc/passwd", "no model"),
    ("model=gpt&step=$(touch%20pwned)", "is not a step name"),
    ("model=gpt&step=x&cell=1,%3Bid", "whole number"),
    ("x=" + "a" * 10_000, "at most 2,048"),
    ("tutorial=1&tutorial=2", "twice"),
    ("evil=1", "unknown part"),
])
def test_a_hostile_link_is_one_line(served, query, says):
    status, page = _get(f"{served.url}&{query}")
    line = _message(page)
    assert status == 400 and says in line.replace("&#x27;", "'"), line
    assert "Traceback" not in page and "\n" not in line
    assert sorted(p.name for p in served.cwd.iterdir()) == ["server.log"]


def test_full_then_idle_then_gone(served):
    """Two visitors fill the server; a third gets the one-line 'full' page; nobody types, and after the idle
    timeout no visitor's process is left. Shell metacharacters and a path in text= are text to the app."""
    marker = Path("/tmp/explain-serve-pwned")
    marker.unlink(missing_ok=True)

    async def go():
        a = await _visit(f"{served.url}&model=gpt&text=%24%28touch+{marker}%29%3B%60touch+{marker}%60")
        b = await _visit(f"{served.url}&model=gpt&text=/etc/passwd&step=blocks.0.attn.pattern&cell=0,0,1,1")
        try:
            assert len(served.children()) == 2
            status, page = _get(served.url)
            assert status == 503 and "full" in _message(page)
            deadline = time.monotonic() + 40
            while served.children() and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
            assert served.children() == []
        finally:
            for session, ws in (a, b):
                await ws.close()
                await session.close()

    asyncio.run(go())
    assert not marker.exists()
    status, _ = _get(served.url)  # room again
    assert status == 200


def test_without_the_extra_one_line(tmp_path):
    code = ("import sys; sys.modules['textual_serve'] = None; sys.argv = ['explain', 'serve']; "
            "from explain.cli import main; main()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip().count("\n") == 0 and "pip install '.[serve]'" in out.stderr, out.stderr
