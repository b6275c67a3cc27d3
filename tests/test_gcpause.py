"""gc_paused: the cyclic collector is off inside the block, restored after; what a large block leaves
behind is frozen (never walked again by the collector), a small block's is not."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from roce_tune import gcpause
from roce_tune.gcpause import gc_paused


@pytest.fixture()
def collector() -> Iterator[None]:
    """Start with the collector on and nothing frozen; leave it that way."""
    was = gc.isenabled()
    gc.unfreeze()
    gc.enable()
    try:
        yield
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()


def test_small_block_is_paused_and_not_frozen(collector: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert len(kept) == 1000


def test_large_block_leaves_its_objects_frozen(collector: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "FREEZE_AFTER_OBJECTS", 5_000)
    with gc_paused():
        kept = [[i] for i in range(20_000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= 20_000  # the lists made in the block are out of the collector's way
    assert gc.get_count()[0] < 5_000
    del kept


def test_nested_blocks_restore_only_at_the_outer_one(collector: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpause, "FREEZE_AFTER_OBJECTS", 5_000)
    with gc_paused():
        with gc_paused():
            kept = [[i] for i in range(20_000)]
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0  # the inner block neither re-enables nor freezes
    assert gc.isenabled()
    assert gc.get_freeze_count() >= 20_000
    del kept


def test_collector_stays_off_when_it_was_off(collector: None) -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()
