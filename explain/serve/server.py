"""``explain serve``'s web server: textual-serve's ``Server`` made safe to share.

What it adds: a random token in every address (checked on the page, the websocket and every download; 403
without it), a cap on live sessions (a visitor over it gets a one-line "full" page) and an idle timeout (a
forgotten visitor's process is ended), links checked before any process starts (:mod:`explain.serve.links`), and
a page that loads nothing from outside the machine (its own template; textual-serve's script and font served from
here). Each visitor's app is started without a shell (:mod:`explain.serve.session`).
"""

from __future__ import annotations

import asyncio
import hmac
import html
import logging
import secrets
import signal
import time
from pathlib import Path

import aiohttp_jinja2
import jinja2
import textual_serve
from aiohttp import web
from textual_serve.server import Server

from explain.core.errors import ExplainError
from explain.serve.links import MAX_LINK, parse_link
from explain.serve.session import VisitorApp, visitor_env

log = logging.getLogger("explain.serve")

STATIC = Path(textual_serve.__file__).parent / "static"
TEMPLATES = Path(__file__).parent / "templates"
COOKIE = "explain_token"
PENDING_SECONDS = 120  # a page's session key is good this long
# textual.js keeps its terminal to itself; the tests (and a curious teacher) read the screen from this
_HOOK = ("this.terminal.open(e),", "this.terminal.open(e),(window.explainTerminals=window.explainTerminals||[])"
         ".push(this.terminal),")


def one_line_page(status: int, line: str) -> web.Response:
    """A page of one line (403, 400, 503): no script, nothing from outside."""
    body = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>explain</title></head>"
            f"<body><p id='message'>{html.escape(line)}</p></body></html>")
    return web.Response(status=status, text=body, content_type="text/html")


class ExplainServer(Server):
    """textual-serve's server with a token, a session cap, an idle timeout and links."""

    def __init__(self, host: str, port: int, *, token: str | None = None, max_sessions: int = 8,
                 idle_timeout: float = 1800.0, budget: int = 2**30, allow_writes: str | None = None) -> None:
        super().__init__("explain", host=host, port=port, title="explain", statics_path=STATIC,
                         templates_path=TEMPLATES)
        self.token = token or secrets.token_urlsafe(18)
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.budget = budget
        self.allow_writes = allow_writes
        self.sessions: dict[VisitorApp, web.WebSocketResponse] = {}
        self.pending: dict[str, tuple[str, float]] = {}  # session key → (the checked link's query, when)
        self._watch: asyncio.Task | None = None

    @property
    def url(self) -> str:
        """The address to open, with the token."""
        return f"{self.public_url}/?token={self.token}"

    def _ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    async def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024)
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
        app.add_routes([
            web.get("/", self.handle_index, name="index"),
            web.get("/ws/{token}/{key}", self.handle_websocket, name="websocket"),
            web.get("/download/{key}", self.handle_download, name="download"),
            web.get("/static/js/textual.js", self.handle_script),
            web.static("/static", self.statics_path, show_index=False, name="static"),
        ])
        app.on_shutdown.append(self.on_shutdown)
        return app

    def initialize_logging(self) -> None:
        """One plain line per request or problem: textual-serve's rich tracebacks show local values (the token)."""
        logging.basicConfig(level="INFO", format="%(message)s")
        logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)  # a malformed request is its 400, not a trace

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl+C; the address is printed once the port listens. A request line may hold a long link
        (its page then says it is too long)."""
        self.initialize_logging()
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log=None,
                               max_line_size=4 * MAX_LINK + 8192)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            if self.port == 0:  # the port the system chose
                self.port = runner.addresses[0][1]
                self.public_url = f"http://{self.host}:{self.port}"
            self.console.print(f"explain serve: open {self.url}", highlight=False, soft_wrap=True)
            self.console.print("Press Ctrl+C to stop.", highlight=False)
            self.console.file.flush()
            self._watch = asyncio.create_task(self._watch_idle())
            await stop.wait()
        finally:
            await runner.cleanup()

    async def on_shutdown(self, app: web.Application) -> None:
        if self._watch is not None:
            self._watch.cancel()
        await asyncio.gather(*(s.end() for s in list(self.sessions)), return_exceptions=True)

    async def handle_script(self, request: web.Request) -> web.Response:
        text = (STATIC / "js" / "textual.js").read_text(encoding="utf-8")
        return web.Response(text=text.replace(*_HOOK, 1), content_type="application/javascript")

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if len(request.query_string) > MAX_LINK + 200:
            return one_line_page(400, f"explain: the link is {len(request.query_string):,} characters; a link to "
                                      f"explain is at most {MAX_LINK:,}")
        if not self._ok(request.query.get("token")):
            return one_line_page(403, "explain: this address needs the token printed by 'explain serve'")
        if len(self.sessions) >= self.max_sessions:
            return one_line_page(503, f"explain is full: {self.max_sessions} sessions are open; try again when "
                                      "one ends")
        try:
            link = parse_link(request.query_string)
        except ExplainError as exc:
            return one_line_page(400, f"explain cannot open this link: {exc}")
        now = time.monotonic()
        self.pending = {k: v for k, v in self.pending.items() if now - v[1] < PENDING_SECONDS}
        while len(self.pending) >= 4 * self.max_sessions:  # a flood of page loads keeps no more than this
            self.pending.pop(next(iter(self.pending)))
        key = secrets.token_urlsafe(12)
        self.pending[key] = (link.query(), now)
        ws = ("wss:" if self.public_url.startswith("https:") else "ws:") + self.public_url.split(":", 1)[1]
        context = {"font_size": _size(request.query.get("fontsize"), 16), "app_websocket_url":
                   f"{ws}/ws/{self.token}/{key}", "config": {"static": {"url": f"{self.public_url}/static/"}},
                   "application": {"name": "explain"}}
        response = aiohttp_jinja2.render_template("app_index.html", request, context)
        response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        # not kept in the back-forward cache (its websocket, and so its app, would live on behind another page),
        # and its address, which holds the token, is not sent to other sites
        response.headers.update({"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
        return response

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        if not (self._ok(request.cookies.get(COOKIE)) or self._ok(request.query.get("token"))):
            return one_line_page(403, "explain: a download needs the token printed by 'explain serve'")
        return await super().handle_download(request)

    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
        if not self._ok(request.match_info["token"]):
            return one_line_page(403, "explain: this address needs the token printed by 'explain serve'")
        pending = self.pending.pop(request.match_info["key"], None)
        if pending is None:
            return one_line_page(403, "explain: this session's page is old; reload it")
        if len(self.sessions) >= self.max_sessions:
            return one_line_page(503, f"explain is full: {self.max_sessions} sessions are open")
        return await self._serve_visitor(request, pending[0])

    async def _serve_visitor(self, request: web.Request, link: str) -> web.WebSocketResponse:
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=64 * 1024)
        width = _size(request.query.get("width"), 80)
        height = _size(request.query.get("height"), 24)
        env = visitor_env(link, width, height, self.budget, self.url, self.allow_writes)
        await websocket.prepare(request)
        app = VisitorApp(env, write_bytes=websocket.send_bytes, write_str=websocket.send_str, close=websocket.close,
                         download_manager=self.download_manager)
        self.sessions[app] = websocket
        log.info("a session started: %d of %d open", len(self.sessions), self.max_sessions)
        try:
            await app.start(width, height)
            await self._process_messages(websocket, app)
        except asyncio.CancelledError:
            pass
        except Exception as error:  # a visitor's broken message ends their session, not the server
            self.console.print(f"explain serve: a session ended: {type(error).__name__}", highlight=False)
        finally:
            self.sessions.pop(app, None)
            await app.end()
            await websocket.close()
            log.info("a session ended: %d of %d open", len(self.sessions), self.max_sessions)
        return websocket

    async def _watch_idle(self) -> None:
        """End the sessions nobody has typed in for ``idle_timeout`` seconds."""
        while True:
            await asyncio.sleep(min(5.0, max(0.5, self.idle_timeout / 4)))
            now = time.monotonic()
            for app, websocket in list(self.sessions.items()):
                if now - app.last_input > self.idle_timeout:
                    self.sessions.pop(app, None)
                    await app.end()
                    await websocket.close()


def _size(value: str | None, default: int) -> int:
    """A terminal size from the page's query: a whole number from 1 to 1,000, else ``default``."""
    if value is None or not (value.isascii() and value.isdigit()) or len(value) > 4:
        return default
    return min(max(int(value), 1), 1000)
