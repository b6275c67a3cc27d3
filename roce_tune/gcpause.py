"""Pause Python's cyclic garbage collector around allocation-heavy, cycle-free phases.

Deriving a 4,096-host plan allocates about a million small objects that all live as long as the
plan. Each time the young generation fills, the collector walks them again and frees nothing (they
hold no reference cycles); at 4,096 hosts that was 1.3 s of a 4.3 s derive (``benchmarks/
bench_plan.py``: 3.2 s paused). Reference counting still frees everything as usual while paused.
Rendering is not paused: Jinja's render contexts do form cycles (peak memory rose 270 MB, no gain);
it runs with the objects that exist before it frozen instead (:func:`gc_frozen`): the collector still
frees the render's own cycles but no longer walks the plan's million objects each time (render at 4,096
hosts 2.6 -> 1.9 s CPU, same peak).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: A paused block that leaves more tracked objects than this behind moves them to the permanent
#: generation (:func:`gc.freeze`) instead of handing them to the young one.
FREEZE_AFTER_OBJECTS = 200_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; restore its previous state after (nesting-safe).

    While the collector is off, every new container object stays in the young generation, so the first
    collection after the block would walk all of them (0.36 s for the ~1.4M objects of a 4,096-host
    plan), then again as they age into the older generations (0.4 s, 0.5 s). When the block leaves more
    than :data:`FREEZE_AFTER_OBJECTS` behind, they are frozen instead (:func:`gc.freeze`): the collector
    never walks them again; reference counting still frees each when its last reference goes. The price:
    reference cycles among the frozen objects (including any garbage cycle made before the block and not
    yet collected) are not collected until :func:`gc.unfreeze`. Small blocks (tests, lab inventories)
    never reach the limit and behave as before.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled and gc.get_count()[0] > FREEZE_AFTER_OBJECTS:
            gc.freeze()
        if was_enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """Move every object tracked so far to the collector's permanent generation for the block
    (:func:`gc.freeze`), so its collections walk only objects made inside it; back to the oldest generation
    after (:func:`gc.unfreeze`). Cycles made inside the block are still collected."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
