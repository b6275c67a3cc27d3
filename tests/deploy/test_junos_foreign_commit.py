"""Junos: someone else commits while roce-tune's ``commit confirmed`` is pending and the read-back then
fails. ``rollback N`` would also discard their commit, so roce-tune refuses it; the report must say so,
name the commit, and say what ``rollback N`` would discard (``show system rollback <ours> compare 0``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import apply_targets
from tests.emulators.junos import _Db

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = pytest.mark.emulator

DEVICE = "leaf3"  # a Junos switch of mixed-vendor.yaml


def test_foreign_commit_refuses_rollback_and_says_what_it_would_discard(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={DEVICE: {"pause_pattern": r"^commit confirmed"}})
    try:
        dev = fleet[DEVICE]
        targets, _ = load_source(inv)
        opts = _opts(tmp_path, known, allow_disruptive=True, limit=[DEVICE], device_timeout_s=240,
                     push=PushOptions(confirm_s=600, read_timeout_s=20))
        with ThreadPoolExecutor(1) as pool:
            done = pool.submit(apply_targets, targets, opts)
            dev.wait_held(done, "commit confirmed", timeout_s=120)
            with dev.lock:  # bob's urgent fix: drops one of roce-tune's lines (and confirms, as any commit)
                ours = list(dev.active)
                dropped = next(ln for ln in ours if ln.startswith("class-of-service schedulers "))
                dev.confirm("commit confirmed")
                dev.commit([ln for ln in ours if ln != dropped], "bob", "urgent fix")
            dev.set_fault(pause_pattern=None)
            [res] = done.result(timeout=240)
        error = res.error or ""
        assert res.state == "failed" and not res.rolled_back, (res.state, res.rolled_back, error)
        assert "by bob" in error and "urgent fix" in error and "rollback 2" in error, error
        # what `rollback 2` would discard besides roce-tune's own change: bob's removal of that line
        assert "show system rollback 1 compare 0" in error, error
        leaf = dropped.removeprefix("class-of-service schedulers ").split(" ", 1)[1]
        assert f"-   {leaf};" in error, error
        # bob's commit confirmed roce-tune's: no timer will revert it, and the report must not claim one
        assert "nothing reverts by itself" in error and "reverts it by itself within" not in error, error
        assert dev.history[0].user == "bob", "nothing may be rolled back over bob's commit"
    finally:
        fleet.stop()


def test_configure_private_refused_names_the_reason_at_once(tmp_path: Path) -> None:
    """Someone has an uncommitted change in the shared candidate (`configure`): Junos refuses `configure
    private` and stays in operational mode. That was a 20 s read timeout naming no reason; it must fail at
    once with the device's line, change nothing, and not be retried."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        dev = fleet[DEVICE]
        dev.shared = _Db([*dev.active, "system location building b2"])
        targets, _ = load_source(inv)
        before = dev.running_config()
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[DEVICE],
                                             push=PushOptions(read_timeout_s=20)))
        error = res.error or ""
        assert res.state == "failed", (res.state, error)
        assert error.startswith("send: device rejected `configure private`: error: shared configuration "
                                "database modified"), error
        assert res.seconds < 15, res.seconds
        assert dev.running_config() == before
    finally:
        fleet.stop()
