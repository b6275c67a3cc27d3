"""roce_tune.gcpause. gc_paused: the cyclic collector is off inside the block, restored after; what a large
block leaves behind is frozen (never walked again by the collector), a small block's is not. gc_frozen
(render): the older objects frozen for the block, cycles made inside it still collected."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from roce_tune import gcpause
from roce_tune.gcpause import gc_frozen, gc_paused


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
        (gc.enable if was else gc.disable)()  # as found, whatever the test left


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


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_frozen_objects_are_not_collected_again_and_new_cycles_still_are() -> None:
    before = _Node()
    assert gc.get_freeze_count() == 0
    with gc_frozen():
        assert gc.get_freeze_count() > 0 and gc.is_tracked(before)
        inside = weakref.ref(_Node())  # unreachable at once, kept alive by its cycle
        gc.collect()
        assert inside() is None  # the render's own cycles are freed while frozen
    assert gc.get_freeze_count() == 0  # everything back in the oldest generation


def test_frozen_is_undone_when_the_block_raises() -> None:
    try:
        with gc_frozen():
            raise RuntimeError("render failed")
    except RuntimeError:
        pass
    assert gc.get_freeze_count() == 0


def test_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
