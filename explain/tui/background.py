"""Long work off the TUI's event loop, cancellable: :func:`in_background` runs a function in a daemon thread
under a :class:`~explain.core.cancel.CancelToken` and awaits it from a Textual worker.

When the awaiting worker is cancelled (``q`` quits the app; an exclusive worker is replaced by a newer one)
the token is cancelled, so the thread stops at its next recorded op (:func:`explain.core.cancel.check_cancelled`),
and nobody waits for it: it is a daemon thread, not one of Textual's thread workers, which come from an
executor that Python joins at exit (``q`` used to wait 22 s for a GPT-2-size backward pass). Use it for every
run, generation, backward pass, export and sampling loop:

    @work(exclusive=True, group="run", exit_on_error=False)
    async def _job(self) -> None:
        try:
            result = await in_background(lambda: explain.run(model))
        except ExplainError as exc:
            ...  # show it; Cancelled never reaches here when the worker itself was cancelled
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar

from explain.core.cancel import CancelToken, cancellable

T = TypeVar("T")


async def in_background(fn: Callable[[], T], token: CancelToken | None = None) -> T:
    """``fn()`` in a daemon thread under ``token`` (a new one if None), awaited; cancelling the awaiting task
    cancels the token."""
    token = token or CancelToken()
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def target() -> None:
        try:
            with cancellable(token):
                result, error = fn(), None
        except BaseException as exc:  # handed to the awaiting worker, which decides
            result, error = None, exc

        def settle() -> None:
            if not done.done():
                done.set_exception(error) if error is not None else done.set_result(result)

        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the app has quit and its loop is closed: nobody is waiting
            pass

    threading.Thread(target=target, name="explain-run", daemon=True).start()  # the name tests look for
    try:
        return await done
    except asyncio.CancelledError:
        token.cancel()  # the thread stops at its next op instead of running on unseen
        raise
