"""Junos: a colleague's ``commit confirmed`` still waiting for its confirming commit is refused before any
write, dry runs included.

A later ``commit`` (or ``commit check``) confirms a pending ``commit confirmed`` (Junos CLI reference,
``commit``, option ``confirmed``), so roce-tune's own ``commit confirmed`` and confirming ``commit`` made the
colleague's change permanent although they meant it to roll back by itself unless they confirmed it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import colleague_session, emulated_inventory, refused_in_dry_run_and_push

pytestmark = pytest.mark.emulator
SWITCH = "leaf3"
THEIRS = "set interfaces et-0/0/9 description trial-by-ops"


def test_a_pending_commit_confirmed_is_refused_and_left_to_revert(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        colleague_session(fleet, SWITCH, [THEIRS, "commit confirmed 10"], config_mode=True)
        assert dev.confirm_pending
        before, seen = dev.running_config(), len(dev.commands_seen)
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert "`commit confirmed`" in error and "nothing was sent" in error, error
        assert dev.confirm_pending and dev.running_config() == before  # theirs still reverts by itself
        assert not any(c.startswith(("configure", "commit", "load")) for c in dev.commands_seen[seen:]), \
            dev.commands_seen[seen:]
    finally:
        fleet.stop()
