"""Junos: the confirming ``commit`` lands on the device but its reply is lost (the session drops).

roce-tune's ``commit confirmed`` is then rollback 1 and the confirm rollback 0 (both hold the change), so a
fixed ``rollback 1`` would load the change again and leave the device changed. The rollback reads
``show system commit`` and rolls back to the configuration before roce-tune's own commit
(roce_tune.platforms.junos.rollback_index). The Junos SSH emulator processes the confirm, then aborts the
connection (``drop_after_pattern``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import apply_targets

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator]

DEVICE = "leaf3"  # a Junos switch of mixed-vendor.yaml


def test_lost_confirm_reply_rolls_back_to_before_our_commit(tmp_path: Path) -> None:
    fault = {"drop_after_pattern": r"^commit comment confirmed$"}
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults={DEVICE: fault})
    try:
        dev = fleet[DEVICE]
        before = dev.running_config()
        targets, _ = load_source(inv)
        result = {r.name: r for r in apply_targets(
            targets, _opts(tmp_path, known, allow_disruptive=True, limit=[DEVICE],
                           push=PushOptions(confirm_s=600, read_timeout_s=8)))}[DEVICE]
        assert any("connection dropped after 'commit comment confirmed'" in e for e in dev.events), dev.events
        assert not dev.confirm_pending  # the confirm did land: no device timer will revert the change
        assert result.state == "failed", (result.state, result.error)
        assert "rolled back by roce-tune" in (result.error or ""), result.error
        assert dev.running_config() == before, "the device must be back where it was"
        newest = dev.history[0]
        assert newest.comment.endswith("-rollback") and newest.lines == dev.history[3].lines
    finally:
        fleet.stop()
