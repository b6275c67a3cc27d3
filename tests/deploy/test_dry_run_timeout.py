"""A device that exceeds the device timeout in a dry run: the report says nothing was changed on it, not
that an unconfirmed commit will revert (before: the push's wording, although a dry run commits nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.runner import apply_targets

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # waits out a 3 s device timeout


@pytest.mark.parametrize("device", ["leaf1", "leaf5"])  # EOS (commit timer), SONiC (no commit-confirm)
def test_dry_run_timeout_says_nothing_changed(tmp_path: Path, device: str) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={device: {"delay_per_command_s": 2.0}})
    try:
        targets, _ = load_source(inv)
        [res] = apply_targets(targets, _opts(tmp_path, known, dry_run=True, limit=[device],
                                             device_timeout_s=3))
        assert res.state == "failed", res
        assert res.error is not None and res.error.startswith("timed out after 3 s"), res.error
        assert "dry run" in res.error and "nothing was changed" in res.error, res.error
        assert "commit" not in res.error and "restore point" not in res.error, res.error
    finally:
        fleet.stop()
