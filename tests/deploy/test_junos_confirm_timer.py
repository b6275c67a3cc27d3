"""Junos ``commit confirmed``: the device's timer runs out before roce-tune's confirm arrives.

The device reverts the change by itself; a late confirm then commits an unchanged candidate and Junos
still prints "commit complete". The Junos SSH emulator holds a reply (``pause_pattern``) while its
scaled timer (``time_scale``) runs out, so the timer fires at an exact step of the push, not after a sleep.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import DeviceResult, apply_targets

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # each waits for a 6 s device timer to run out

DEVICE = "leaf3"  # a Junos switch of mixed-vendor.yaml
#: ``--confirm-seconds 60`` = ``commit confirmed 1``; x 0.1 = a 6 s window on the emulated device
CONFIRM_S, TIME_SCALE = 60, 0.1
#: what the report says about the rollback (roce_tune.platforms.junos REVERTED_BY_DEVICE / ROLLED_BACK)
REVERTED_BY_DEVICE = "the device had already reverted the change by itself"
ROLLED_BACK = "rolled back by roce-tune"


def _apply_with_timer_run_out(tmp_path: Path, first_hold: str, later_hold: str | None,
                              device: str = DEVICE) -> tuple[DeviceResult, str, str, list[str]]:
    """Apply to ``device`` (a switch of mixed-vendor.yaml), hold at ``first_hold`` (then, if given, at
    ``later_hold``: setting it releases the first), let the device's timer run out while held, release.
    Returns (result, running before, after, device events)."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, time_scale=TIME_SCALE,
                                           faults={device: {"pause_pattern": first_hold}})
    try:
        dev = fleet[device]
        targets, _ = load_source(inv)
        before = dev.running_config()
        opts = _opts(tmp_path, known, allow_disruptive=True, limit=[device], device_timeout_s=240,
                     push=PushOptions(confirm_s=CONFIRM_S, read_timeout_s=60))
        with ThreadPoolExecutor(1) as pool:
            done = pool.submit(apply_targets, targets, opts)
            dev.wait_held(done, first_hold, timeout_s=120)
            if later_hold is not None:
                dev.set_fault(pause_pattern=later_hold)
                dev.wait_held(done, later_hold, timeout_s=120)
                assert dev.confirm_pending, dev.events  # held while the change is still active
            dev.wait_reverted_by_timer()
            dev.set_fault(pause_pattern=None)  # releases the held session
            [res] = done.result(timeout=240)
        assert not dev.confirm_pending, dev.events
        return res, before, dev.running_config(), list(dev.events)
    finally:
        fleet.stop()


def test_timer_runs_out_before_the_confirm_fails_the_apply(tmp_path: Path) -> None:
    """Held at the read-back (the change still active) until the timer ran out: the read-back passes, the
    confirm comes late, commits nothing and says "commit complete": apply must fail, not report pushed,
    say why and how to lengthen the window, and must not put the change back."""
    # hold at `commit check` first: the timer is only armed after the read-back hold is set
    res, before, after, events = _apply_with_timer_run_out(tmp_path, r"^commit check", r"^show configuration")
    assert res.state == "failed", (res.state, res.error, events)
    error = res.error or ""
    assert "timer ran out before the confirm arrived" in error and "--confirm-seconds" in error, error
    assert REVERTED_BY_DEVICE in error and ROLLED_BACK not in error, error
    assert after == before, "the device reverted the push by itself; nothing of it may be active"


def test_timer_runs_out_then_the_read_back_fails_does_not_reapply(tmp_path: Path) -> None:
    """The output of `commit confirmed` held until the timer ran out: the read-back then fails (the change is
    gone) and the rollback must not run `rollback 1`, which would load the reverted change again (the newest
    commit is the device's own rollback); the report says the device reverted it, not roce-tune."""
    res, before, after, events = _apply_with_timer_run_out(tmp_path, r"^commit confirmed", None)
    assert res.state == "failed", (res.state, res.error, events)
    error = res.error or ""
    assert error.startswith("verify: device does not match the plan"), error
    assert after == before, "rollback 1 after the device's own revert put the change back"
    assert REVERTED_BY_DEVICE in error and ROLLED_BACK not in error, error
