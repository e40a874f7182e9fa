"""Bulk construction: what a pause of the collector leaves behind."""

import gc

import pytest

from inventory.bulk import gc_paused


@pytest.fixture
def collector():
    """The collector enabled, nothing frozen, as in a process that has not settled."""
    was_enabled = gc.isenabled()
    gc.unfreeze()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


def test_what_a_pause_built_goes_to_the_oldest_generation_unscanned(collector):
    with gc_paused():
        built = [[i] for i in range(20_000)]
        assert not gc.isenabled()
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(built) in oldest and id(built[-1]) in oldest
    assert gc.get_count()[0] < 100  # no young collection is due to scan them
    assert gc.get_freeze_count() == 0


def test_a_pause_leaves_what_was_frozen_frozen(collector):
    kept = [[i] for i in range(100)]
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        with gc_paused():
            built = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen  # not handed back to the collector
        assert id(built) not in {id(o) for o in gc.get_objects(generation=2)}  # left young
    finally:
        gc.unfreeze()
    assert kept


def test_a_pause_inside_a_pause_leaves_the_collector_off(collector):
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
