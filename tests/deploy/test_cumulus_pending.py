"""A Cumulus switch whose NVUE pending revision already holds changes nobody applied is refused before any
write, dry runs included.

``nv set`` adds to the pending revision and ``nv config apply`` applies all of it (NVUE command reference,
"Config Commands": "applies the current pending configuration"), so roce-tune's apply used to commit a
colleague's staged ``nv set`` along with its own QoS lines, and its rollback (``nv config detach``) threw that
staged work away. Found by hand: a staged ``nv set system hostname intruder`` was applied by roce-tune, the
prompt changed under netmiko and the push hung for the whole commit timeout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.platforms.cumulus import CONFIRM_PROBE, PENDING_PROBE, probe_pending

from .conftest import (
    colleague_session,
    dry_run_then_push,
    emulated_inventory,
    refused_in_dry_run_and_push,
)

pytestmark = pytest.mark.emulator
SWITCH = "leaf7"
STAGED = "nv set interface swp20 link mtu 1500"
#: commands that change the switch (the probes' `nv config apply --confirm-status` only reads)
WRITES = ("nv set", "nv unset", "nv config apply -y", "nv config apply --confirm-yes",
          "nv config apply --confirm-no", "nv config detach")


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_pending_nvue_changes_are_refused_and_kept(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        colleague_session(fleet, SWITCH, [STAGED])  # a colleague's change, staged and not applied
        applied_before = list(dev.applied)
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert "1 pending line" in error and "nv config diff -o commands" in error, error
            assert "nothing was sent" in error, error
        assert dev.applied == applied_before
        assert dev.pending is not None and "interface swp20 link mtu 1500" in dev.pending  # their work stays
        assert not any(c.startswith(WRITES) for c in dev.commands_seen if STAGED not in c), dev.commands_seen

        fleet.call(setattr, dev, "pending", None)  # the colleague applies or detaches: roce-tune may push
        results = dry_run_then_push(inv, SWITCH, tmp_path, known)
        assert [r.state for r in results] == ["would-change", "pushed"], [(r.state, r.error) for r in results]
        assert "interface swp20 link mtu 1500" not in dev.applied
    finally:
        fleet.stop()


def test_an_apply_waiting_for_its_confirm_is_refused_and_left_to_revert(tmp_path: Path) -> None:
    """A colleague's ``nv config apply --confirm 600s`` not yet confirmed: roce-tune's own apply and
    ``--confirm-yes`` made it permanent (``nv config apply --confirm-status`` then said "No pending
    confirm" and the trial line stayed applied). Now refused before any write; their window keeps running."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    try:
        dev = fleet[SWITCH]
        colleague_session(fleet, SWITCH, [STAGED, "nv config apply -y --confirm 600s"])
        assert dev.confirm_pending and "interface swp20 link mtu 1500" in dev.applied
        seen = len(dev.commands_seen)
        for error in refused_in_dry_run_and_push(inv, SWITCH, tmp_path, known):
            assert "`nv config apply --confirm-status`" in error and "nothing was sent" in error, error
        assert dev.confirm_pending  # their trial still reverts by itself unless they confirm it
        assert not any(c.startswith(WRITES) for c in dev.commands_seen[seen:]), dev.commands_seen[seen:]
    finally:
        fleet.stop()


@pytest.mark.parametrize(("diff", "refused"), [
    ("", None),
    (f"cumulus@leaf7:mgmt:~$ {PENDING_PROBE}\n", None),                   # the command echoed
    ("Note: a release's remark\n", None),                                 # not a verdict either way
    ("nv set interface swp1 link mtu 1500\nnv unset qos roce\n", "holds 2 pending lines nobody applied"),
    (f"Error: Invalid Command: {PENDING_PROBE}\n", "answered `Error: Invalid Command"),  # cannot be judged
])
def test_the_pending_revision_verdict(diff: str, refused: str | None) -> None:
    outputs = {CONFIRM_PROBE: "No pending confirm\n", PENDING_PROBE: diff}
    verdict = probe_pending(outputs.__getitem__)
    assert (verdict is None) if refused is None else (verdict is not None and refused in verdict), verdict
    assert "swp1" not in (verdict or "")  # counted, never quoted
