"""roce_tune.gcpause: the collector paused (derive) or the older objects frozen (render)."""

from __future__ import annotations

import gc
import weakref

from roce_tune.gcpause import gc_frozen, gc_paused


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
