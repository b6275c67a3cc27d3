"""A push that failed before it sent any change says "nothing changed", not "(rolled back)".

The label comes from what the driver did (``Driver.progress["change_sent"]``, set by each platform's push
right before the first command that changes the running configuration), not from the failing stage: a
SONiC session that drops after ``config checkpoint`` or an upload (nothing written to CONFIG_DB) and a
Junos ``configure private`` the device refuses change nothing and roll nothing back. A push that did send
its change is still "rolled back" (tests/deploy/test_apply_reports.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import apply_targets
from tests.emulators.junos import _Db

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator]


@pytest.mark.parametrize("pattern", [r"^sudo config checkpoint roce_tune_",
                                     r"^cat > /tmp/\S+\.write\d+\.json"])
def test_sonic_session_dropped_before_the_patch_changed_nothing(tmp_path: Path, pattern: str) -> None:
    device = "leaf5"  # a SONiC switch of mixed-vendor.yaml
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={device: {"drop_after_pattern": pattern}})
    try:
        dev = fleet[device]
        before = dev.running_config()
        targets, _ = load_source(inv)
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[device],
                                             push=PushOptions(read_timeout_s=8)))
        error = res.error or ""
        assert any("connection dropped after" in e for e in dev.events), dev.events
        assert res.state == "failed" and not res.rolled_back, (res.state, error)
        assert "rolled back" not in error and "nothing changed" in error, error
        assert not any("config rollback" in e for e in dev.events), dev.events
        assert dev.running_config() == before
    finally:
        fleet.stop()


def test_junos_configure_private_refused_changed_nothing(tmp_path: Path) -> None:
    device = "leaf3"  # a Junos switch of mixed-vendor.yaml
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        dev = fleet[device]
        dev.shared = _Db([*dev.active, "system location building b2"])  # someone's uncommitted change
        before = dev.running_config()
        targets, _ = load_source(inv)
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[device],
                                             push=PushOptions(read_timeout_s=20)))
        error = res.error or ""
        assert res.state == "failed" and not res.rolled_back, (res.state, error)
        assert error.startswith("send: device rejected `configure private`"), error
        assert "rolled back" not in error and "nothing changed" in error, error
        assert dev.running_config() == before
    finally:
        fleet.stop()
