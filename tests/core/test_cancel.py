"""explain.core.cancel: a run stops within one op of its token being cancelled from another thread, raising
Cancelled in its own thread; without a token nothing changes."""

from __future__ import annotations

import threading

import pytest

import explain
from explain.core.cancel import Cancelled, CancelToken, cancellable, check_cancelled
from explain.trace.recorder import Recorder


def test_a_cancelled_token_stops_the_recorder_at_its_next_op() -> None:
    token = CancelToken()
    seen: list[int] = []
    original = Recorder.op

    def counting(self, *args, **kwargs):
        seen.append(len(self.steps))
        if len(seen) == 20:  # as if q were pressed while the run is under way
            threading.Thread(target=token.cancel).start()
            threading.Event().wait(0.2)
        return original(self, *args, **kwargs)

    Recorder.op = counting
    try:
        with cancellable(token), pytest.raises(Cancelled):
            explain.run("gpt", n_layers=4)
    finally:
        Recorder.op = original
    full = len(explain.run("gpt", n_layers=4))
    assert 20 <= len(seen) <= 21 < full  # stopped at the op after the cancel, not at the end


def test_without_a_token_or_before_cancel_nothing_is_raised() -> None:
    check_cancelled()
    token = CancelToken()
    with cancellable(token):
        check_cancelled()
        assert len(explain.run("attention")) > 0
        token.cancel()
        with pytest.raises(Cancelled):
            check_cancelled()
    check_cancelled()  # the token is the block's only: after it, this thread has none
