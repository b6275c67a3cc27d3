"""A device that stops answering at one step of a push (its reply held past the read/commit timeout):
the report names the step and the command in one line, says truthfully whether the device was rolled back,
and the device ends where the report says."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions
from roce_tune.deploy.runner import DeviceResult, apply_targets

from .conftest import emulated_inventory
from .test_apply import _opts

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # each waits out a few 2 s timeouts


def _held_push(tmp_path: Path, device: str, pattern: str) -> tuple[DeviceResult, str, str]:
    """Push ``device`` of mixed-vendor.yaml while it holds its reply to the first command matching
    ``pattern``; returns (result, running config before, after)."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path,
                                           faults={device: {"pause_pattern": pattern}})
    try:
        dev = fleet[device]
        targets, _ = load_source(inv)
        before = dev.running_config()
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[device],
                                             device_timeout_s=120,
                                             push=PushOptions(confirm_s=600, read_timeout_s=2,
                                                              commit_timeout_s=2, rollback_retry_s=4)))
        after = dev.running_config()
        dev.resume()
        return res, before, after
    finally:
        fleet.stop()


def _one_line_named(error: str, command: str) -> None:
    assert f"no reply to `{command}" in error and "within 2 s" in error, error
    assert "Pattern not detected" not in error and "Things you might try" not in error, error


def test_save_timeout_is_not_reported_as_rolled_back(tmp_path: Path) -> None:
    """NX-OS: the change is confirmed by its read-back, then `copy running-config startup-config` hangs. It
    was reported "(rolled back)" with rolled_back=True while the change stayed live."""
    res, before, after = _held_push(tmp_path, "spine1", r"^copy running")
    error = res.error or ""
    assert res.state == "failed" and not res.rolled_back, (res.state, res.rolled_back, error)
    assert after != before, "the verified change stays live"
    assert error.startswith("save: `copy running-config startup-config` failed"), error
    assert "live and verified" in error, error
    assert "rolled back" not in error, error
    _one_line_named(error, "copy running-config startup-config")


def test_junos_commit_confirmed_timeout_is_rolled_back(tmp_path: Path) -> None:
    """Junos: `commit confirmed` takes effect but its reply never comes. The rollback on a new session thought
    nothing was committed and reported "rolled back on a new session" with the change still active."""
    res, before, after = _held_push(tmp_path, "leaf3", r"^commit confirmed")
    error = res.error or ""
    assert res.state == "failed" and res.rolled_back, (res.state, res.rolled_back, error)
    assert after == before, "the landed commit must be rolled back"
    assert "rolled back by roce-tune (`rollback N` + `commit`" in error, error
    _one_line_named(error, "commit confirmed 10 comment ")


@pytest.mark.parametrize("device, pattern, confirm", [
    ("leaf1", r"^configure session \S+ commit$", "configure session {tag} commit"),  # eos
    ("leaf7", r"--confirm-yes", "nv config apply --confirm-yes"),                     # cumulus
])
def test_lost_confirm_reply_does_not_promise_a_timer_revert(tmp_path: Path, device: str, pattern: str,
                                                             confirm: str) -> None:
    """The confirm lands but its reply never comes: the device will not revert by itself, so the report must
    not say it will; it says the confirm was sent and how to tell whether it landed."""
    res, before, after = _held_push(tmp_path, device, pattern)
    error = res.error or ""
    assert res.state == "failed", (res.state, error)
    assert after != before and not res.rolled_back, "the confirmed change is still active"
    assert "was sent but its reply never came" in error and "else the change is final" in error, error
    # the rollback ran (and retried) without putting it back: it was not "cut short" (that is a second signal)
    assert "its rollback did not complete" in error and "cut short" not in error, error
    assert "reverts it by itself unless confirmed;" not in error, error
    assert "EOS reverts it by itself within 600 s;" not in error, error
