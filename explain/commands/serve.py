"""``explain serve``: the app in a browser, one process per visitor (the ``serve`` extra, textual-serve)."""

from __future__ import annotations

import click

from explain.core.errors import ExplainError, UsageError

LOOPBACK = ("127.0.0.1", "localhost", "::1")
VISITOR_BYTES = 512 * 2**20  # what one visitor's run may plan to use at the least, for the default session cap


class MissingExtra(ExplainError):
    """explain serve without textual-serve installed."""


def _available() -> int:
    from explain.engine.memory import available_bytes  # lazy: only when serving

    return available_bytes()


def default_sessions(available: int) -> int:
    """Sessions the machine's memory holds: 512 MiB each of 80 % of what is available, from 1 to 64."""
    return max(1, min(64, int(0.8 * available) // VISITOR_BYTES))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Another than 127.0.0.1 shares explain on the network (a warning says so).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free one, printed in the address).")
@click.option("--max-sessions", type=click.IntRange(1, 1000), default=None,
              help="Visitors at once; one more gets a one-line 'full' page.  [default: from the machine's memory]")
@click.option("--idle-timeout", type=click.FloatRange(1, 86400), default=1800, show_default=True,
              help="Seconds without a key from a visitor before their app is ended.")
@click.option("--allow-writes", "allow_writes", type=click.Path(file_okay=False, dir_okay=True, exists=True,
              writable=True), default=None, help="A folder visitors' exports may be written to (none by default).")
def serve(host: str, port: int, max_sessions: int | None, idle_timeout: float, allow_writes: str | None) -> None:
    """Serve explain to browsers: one app per visitor, at an address with a token.

    Prints the address to open (with its random token; a request without it gets 403). Links open a stop or a
    step: add tutorial=NAME&stop=N, or model=NAME&text=...&step=STEP&cell=I,J to the address. Needs the serve
    extra: pip install '.[serve]' in explain's source folder.

    \b
    Examples:
      explain serve                                   # http://127.0.0.1:8000/?token=...
      explain serve --max-sessions 30 --idle-timeout 600
      explain serve --host 0.0.0.0 --port 8080        # a classroom's network: anyone with the token
    """
    try:
        from explain.serve.server import ExplainServer  # lazy: the serve extra
    except ImportError as exc:
        raise MissingExtra(f"explain serve needs textual-serve ({exc.name} is missing): pip install '.[serve]' "
                           "in explain's source folder") from None
    if allow_writes is not None and not allow_writes.strip():
        raise UsageError("--allow-writes needs a folder")
    available = _available()
    sessions = max_sessions or default_sessions(available)
    budget = max(2**20, int(0.8 * available) // sessions)
    if host not in LOOPBACK:
        click.echo(f"warning: --host {host} shares explain with every machine that can reach this one; anyone "
                   "with the address and its token can run explain here", err=True)
    server = ExplainServer(host, port, max_sessions=sessions, idle_timeout=idle_timeout, budget=budget,
                           allow_writes=allow_writes)
    click.echo(f"{sessions} sessions at most, {budget / 2**20:,.0f} MiB each; idle ones end after "
               f"{idle_timeout:g} s", err=True)
    server.serve()
