"""``--confirm-seconds`` on Junos: ``commit confirmed N`` counts whole minutes.

A value that is not a whole number of minutes is rounded UP (never a shorter window than asked, which could
revert the push before its read-back and confirm) and apply says so before touching any device, in the text
report, on stderr with ``--format json``, and in the device's session log. (And EOS, whose ``commit timer``
is ``hh:mm:ss``: a window of a day or more is refused, not wrapped.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from roce_tune.deploy.apply import load_source
from roce_tune.deploy.drivers import PushOptions, confirm_window_note
from roce_tune.deploy.runner import apply_targets

from .conftest import PASSWORD, REPO, emulated_inventory
from .test_apply import _opts

pytestmark = pytest.mark.emulator

DEVICE = "leaf3"  # a Junos switch of mixed-vendor.yaml


@pytest.mark.parametrize("confirm_s, minutes", [(30, 1), (60, 1), (61, 2), (89, 2), (150, 3), (300, 5)])
def test_window_is_rounded_up_to_whole_minutes(confirm_s: int, minutes: int) -> None:
    note = confirm_window_note("junos", confirm_s)
    if confirm_s % 60 == 0:
        assert note is None
    else:
        assert note is not None and f"`commit confirmed {minutes}` ({minutes * 60} s)" in note, note
        assert f"--confirm-seconds {confirm_s} is rounded up" in note
    # platforms whose timers take seconds take the window as given
    assert all(confirm_window_note(p, confirm_s) is None for p in ("eos", "cumulus", "nxos", "sonic", "host"))


def test_push_arms_the_rounded_up_window_and_logs_it(tmp_path: Path) -> None:
    """150 s: the device's timer is armed for 3 min (it was 2 min, shorter than asked), and the session log
    says why."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=[DEVICE],
                                             push=PushOptions(confirm_s=150, read_timeout_s=20)))
        events = fleet[DEVICE].events
        assert res.state == "pushed", (res.state, res.error, events)
        assert any("armed 180s" in e for e in events), events
        log = (tmp_path / "logs" / f"{DEVICE}.log").read_text()
        assert "commit confirmed 3 comment" in log
        assert "--confirm-seconds 150 is rounded up to `commit confirmed 3` (180 s)" in log
    finally:
        fleet.stop()


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_cli_says_so_before_the_run(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        env = dict(os.environ, ROCE_TUNE_USERNAME="netops", ROCE_TUNE_PASSWORD=PASSWORD, COLUMNS="250")
        base = [sys.executable, "-m", "roce_tune.cli", "apply", str(inv), "--dry-run", "--known-hosts",
                str(known), "--log-dir", str(tmp_path / "logs"), "--session-timing", "fast"]
        text = subprocess.run([*base, "--limit", DEVICE, "--confirm-seconds", "90"], capture_output=True,
                              text=True, env=env, cwd=REPO, timeout=120)
        assert text.returncode == 0, text.stdout + text.stderr
        assert "note: Junos `commit confirmed` counts whole minutes: --confirm-seconds 90 is rounded up to " \
               "`commit confirmed 2` (120 s)" in text.stdout, text.stdout
        js = subprocess.run([*base, "--limit", DEVICE, "--confirm-seconds", "90", "--format", "json"],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
        assert js.returncode == 0 and "rounded up to `commit confirmed 2`" in js.stderr, js.stderr
        # no Junos device selected, or a whole number of minutes: nothing to say
        for extra in (["--limit", "leaf1", "--confirm-seconds", "90"], ["--limit", DEVICE]):
            quiet = subprocess.run([*base, *extra], capture_output=True, text=True, env=env, cwd=REPO,
                                   timeout=120)
            assert quiet.returncode == 0 and "rounded up" not in quiet.stdout, quiet.stdout + quiet.stderr
    finally:
        fleet.stop()


def test_eos_window_of_a_day_or_more_is_refused_not_wrapped(tmp_path: Path) -> None:
    """EOS `commit timer` is hh:mm:ss: 90000 s was sent as `commit timer 01:00:00` (wrapped at 24 h)."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        targets, _ = load_source(inv)
        before = fleet["leaf1"].running_config()
        [res] = apply_targets(targets, _opts(tmp_path, known, allow_disruptive=True, limit=["leaf1"],
                                             push=PushOptions(confirm_s=90_000, read_timeout_s=20)))
        error = res.error or ""
        assert res.state == "failed" and not res.rolled_back, (res.state, error)
        assert error.startswith("preflight: --confirm-seconds 90000 does not fit `commit timer "
                                "hh:mm:ss`"), error
        assert fleet["leaf1"].running_config() == before and not fleet["leaf1"].events, fleet["leaf1"].events
    finally:
        fleet.stop()
