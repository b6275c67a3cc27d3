"""A device that answers the running-configuration read with its CLI error (no privilege, a command its
release lacks) must fail that device: it was diffed as an empty configuration, so the dry run showed every
line as a change ("would-change") and a push would have gone ahead against a configuration never read."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.runner import apply_targets

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = pytest.mark.emulator

#: one switch per platform of mixed-vendor.yaml, and its read command (the platform's PUSH.read_running)
READS = {"leaf1": "show running-config", "spine1": "show running-config",
         "leaf3": "show configuration | display set", "leaf7": "nv config show -o commands",
         "leaf5": "show runningconfiguration all"}


def test_rejected_read_fails_the_device_in_dry_run_and_push(tmp_path: Path) -> None:
    faults = {name: {"reject_pattern": "^" + command.split(" |")[0]} for name, command in READS.items()}
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults=faults)
    try:
        targets, _ = load_source(inv)
        before = {name: fleet[name].running_config() for name in READS}
        for extra in ({"dry_run": True}, {"allow_disruptive": True}):
            results = apply_targets(targets, _opts(tmp_path, known, limit=list(READS), **extra))
            for r in results:
                error = r.error or ""
                assert r.state == "failed" and not r.diff and not r.rolled_back, (r.name, r.state, r.diff[:3])
                assert error.startswith(f"read: device rejected `{READS[r.name]}`: "), (r.name, error)
                assert "nothing was diffed or changed" in error, error
            assert {name: fleet[name].running_config() for name in READS} == before
    finally:
        fleet.stop()
