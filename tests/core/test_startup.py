"""explain.core.startup.paused_collection: the collector is off in the block and on after it, what the block
built is frozen, nesting changes nothing; and a trace holds no reference cycle, so freezing one keeps nothing
alive that reference counting would not free (the module's docstring relies on it)."""

from __future__ import annotations

import gc

import pytest

import explain
from explain.core.startup import paused_collection


@pytest.fixture
def thawed():
    """Each test starts and ends with nothing frozen and the collector on (freezing is process-wide)."""
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_is_paused_in_the_block_and_frozen_after(thawed) -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with paused_collection():
        assert not gc.isenabled()
        built = [[i] for i in range(1000)]  # containers the collector tracks
        with paused_collection():  # nested: no change
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)


def test_with_the_collector_off_it_stays_off_and_nothing_is_frozen(thawed) -> None:
    gc.disable()
    with paused_collection():
        pass
    assert not gc.isenabled() and gc.get_freeze_count() == 0


def test_the_collector_comes_back_after_an_error(thawed) -> None:
    with pytest.raises(KeyError), paused_collection():
        raise KeyError("x")
    assert gc.isenabled()


@pytest.mark.parametrize("options", [{}, {"backward": True}], ids=["forward", "backward"])
def test_a_trace_holds_no_reference_cycle(thawed, options: dict) -> None:
    trace = explain.run("gpt", **options)
    gc.collect()
    gc.disable()
    try:
        del trace
        assert gc.collect() == 0  # nothing was left for the collector: reference counting freed it all
    finally:
        gc.enable()
