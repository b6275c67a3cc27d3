"""EOS: a colleague's change made while roce-tune's configuration session is staged. Committing a session
makes the running-config the session's copy (taken when the session opened), so the colleague's change
would be undone without a word, and apply reported "pushed". The push now reads the running-config again
before ``commit timer``: changed since the diff was computed, the session is aborted, nothing is committed
and the report says why (re-run apply to diff against the new configuration)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.runner import DeviceResult, apply_targets

from .conftest import colleague_session, emulated_inventory
from .test_apply import _opts

pytestmark = pytest.mark.emulator


def test_a_change_made_while_the_session_is_staged_is_kept_and_nothing_commits(tmp_path: Path) -> None:
    hold = {"leaf1": {"pause_pattern": r"^show session-config diffs$"}}
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, faults=hold)
    try:
        dev = fleet["leaf1"]
        targets, _ = load_source(inv)
        out: list[DeviceResult] = []
        run = threading.Thread(target=lambda: out.extend(apply_targets(
            targets, _opts(tmp_path, known, allow_disruptive=True, limit=["leaf1"]))))
        run.start()
        assert dev.wait_paused(30)
        colleague_session(fleet, "leaf1", ["ntp server 192.0.2.99"], config_mode=True)
        theirs = dev.running_config()
        dev.resume()
        run.join(60)
        [res] = out
        assert dev.running_config() == theirs  # their change kept, none of ours committed
        assert res.state == "failed" and not res.rolled_back, (res.state, res.error)
        assert res.error is not None and "changed since" in res.error, res.error
        assert "nothing changed" in res.error, res.error
        [again] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=["leaf1"]))
        assert again.state == "pushed", again.error
        assert "ntp server 192.0.2.99" in dev.running_config()
    finally:
        fleet.stop()
