"""push.yml when the connection to a switch is lost mid-push (a TCP reset, a management-network blip, the
switch's CLI process restarted), against the loopback emulators through Ansible's own connections.

Ansible marks such a device UNREACHABLE, and an unreachable device never runs a block's ``rescue`` (nor
its ``always``): an NX-OS switch (``configure terminal`` applies each line at once) or a SONiC switch
(a CONFIG_DB write went through, its answer was lost) was left half-pushed and the run only said
UNREACHABLE. Now the push reconnects and rolls back (NX-OS: to its checkpoint; SONiC: from roce-tune's
snapshot), retried while the switch cannot be reached, as ``roce-tune apply`` does, or, when the switch
stays unreachable, fails with the command to roll it back by hand; Cumulus and Junos say that the device's
commit-confirm timer reverts the change.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.ansible.harness import FABRIC_TEMPLATE, Lab, ansible_missing, prepare_lab, recap, ssh_keypair
from tests.emulators import EmulatorSpec

from .test_push_nvue_sonic import EXTRA, as_declared

pytestmark = [pytest.mark.emulator,
              pytest.mark.skipif(ansible_missing() is not None, reason=ansible_missing() or "")]

PLATFORMS = {"nx1": "nxos", "sonic1": "sonic", "cul1": "cumulus", "qfx1": "junos", "eos1": "eos"}
ALL = ("eos1", "qfx1", "nx1", "gpu01", "gpu02", "sonic1", "cul1")
#: the fault that loses the connection mid-push, after part or all of the change took effect
LOSE: dict[str, dict[str, Any]] = {
    "nx1": {"drop_after_config_lines": 5},                          # 4 lines of nxos_config applied
    "sonic1": {"drop_after_pattern": r"sonic-cfggen -j /tmp/\S+\.write\d+\.json"},  # 1st write landed
    "cul1": {"drop_after_pattern": r"^nv config apply -y"},        # applied with --confirm, answer lost
    "qfx1": {"drop_after_pattern": r"^commit confirmed"},          # committed confirmed, answer lost
}
#: the rollback command a failure names when the switch stays unreachable
BY_HAND = {"nx1": "`rollback running-config checkpoint {cp} atomic`", "sonic1": "`sudo config rollback {cp}`"}


def _lab(emulator_fleet, tmp_path: Path, name: str, time_scale: float = 0.1,  # type: ignore[no-untyped-def]
         ) -> tuple[Any, Any, Lab, list[str]]:
    """The fleet, the emulator ``name`` (key login only) and a lab whose inventory has every platform's leaf
    (only ``name`` answers): (fleet, emulator, lab, the ansible-playbook arguments of a push limited to
    ``name`` and the GPU hosts, whose play must never run after a failed switch)."""
    key, pub = ssh_keypair(tmp_path)
    fleet = emulator_fleet([EmulatorSpec(PLATFORMS[name], name, username="admin", password="not-used",
                                         authorized_keys=[pub], time_scale=time_scale)])
    as_declared(fleet[name])
    template = FABRIC_TEMPLATE.read_text().replace("  - name: nx1\n", EXTRA + "  - name: nx1\n")
    lab = prepare_lab(tmp_path / "lab", {n: 1 for n in ALL} | {name: fleet.port(name)}, template=template)
    lab.env.pop("ROCE_TUNE_PASSWORD", None)
    args = ["--limit", f"{name}:gpu_hosts", "-e", f"roce_tune_base_dir={lab.workdir}", "-e",
            f"ansible_ssh_private_key_file={key}", "-e", "ansible_become=false",
            "-e", "ansible_command_timeout=20"]
    return fleet, fleet[name], lab, args


def _failed_not_unreachable(out: str, name: str) -> None:
    """The switch counts as failed (so `max_fail_percentage` stops the rollout: the GPU hosts' play never
    ran), not as unreachable."""
    counts = recap(out)
    assert counts[name]["failed"] == 1 and counts[name]["unreachable"] == 0, counts
    assert "gpu01" not in counts and "gpu02" not in counts, counts


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nx1", "sonic1"])
def test_lost_connection_mid_push_is_rolled_back(emulator_fleet, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                 name: str) -> None:
    """The connection drops after part of the change took effect and the first reconnect dies too (a
    flapping link): the push reconnects again, rolls back to its checkpoint and says so."""
    _, dev, lab, args = _lab(emulator_fleet, tmp_path, name)
    before = dev.running_config()
    dev.set_fault(**LOSE[name], drop_reconnects=1)
    res = lab.playbook("push.yml", *args)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert any(e.startswith("fault: connection dropped") for e in dev.events), dev.events
    assert dev.running_config() == before, out[-5000:]
    how = (r" to checkpoint roce_tune_\d{8}_\d{6}_\d{3}[0-9a-f]{2}" if name == "nx1" else
           r": the \d+ CONFIG_DB key\(s\) the push touched were restored from roce-tune's snapshot and read "
           r"back")
    assert re.search(rf"fatal: \[{name}\].*push failed and was rolled back{how} \(on a new connection, "
                     r"attempt \d\)", out), out[-5000:]
    _failed_not_unreachable(res.stdout, name)
    if name == "sonic1":  # the always section ran: the files the push and the restore uploaded are gone
        assert re.search(r"TASK \[SONiC \| write the snapshot back to CONFIG_DB\] \**\nchanged: \[sonic1\]",
                         out), out[-5000:]
        assert not list((dev.sandbox / "tmp").glob("*.json"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nx1", "sonic1"])
def test_switch_that_stays_unreachable_names_the_rollback_command(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                   tmp_path: Path, name: str) -> None:
    """Every reconnect dies (for a bounded roce_tune_rollback_retry_s): the push fails saying the rollback
    failed, naming the device, its checkpoint and the exact command to roll it back by hand, which works."""
    fleet, dev, lab, args = _lab(emulator_fleet, tmp_path, name)
    before = dev.running_config()
    dev.set_fault(**LOSE[name], drop_reconnects=100)
    res = lab.playbook("push.yml", *args, "-e", "roce_tune_rollback_retry_s=3")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert dev.running_config() != before, "the fault left the switch changed"
    checkpoints = [n for n in dev.checkpoints if n.startswith("roce_tune_")]
    assert len(checkpoints) == 1, list(dev.checkpoints)
    command = BY_HAND[name].format(cp=checkpoints[0])
    assert re.search(rf"fatal: \[{name}\].*push failed and ROLLBACK FAILED: {name} may be left", out), \
        out[-5000:]
    assert "3 rollback attempts over roce_tune_rollback_retry_s=3 s did not run" in out, out[-5000:]
    assert f"roll it back by hand on {name}: {command} (checkpoint {checkpoints[0]}" in out, out[-5000:]
    _failed_not_unreachable(res.stdout, name)
    dev.clear_faults()
    dev.reconnects_to_drop = 0  # the link is back
    conn = fleet.connect(name)
    try:  # the command the message names restores the switch
        conn.send_command(command.strip("`"))
    finally:
        conn.disconnect()
    assert dev.running_config() == before


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cul1", "qfx1"])
def test_lost_connection_after_commit_confirm_says_the_timer_reverts(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                     tmp_path: Path, name: str) -> None:
    """Cumulus/Junos: the connection drops right after the apply/commit with confirm took effect and every
    reconnect dies: the push fails saying that the device's N min commit-confirm timer reverts the change
    (it is never confirmed), and the emulator shows the change reverted by that timer."""
    # 5 min x 0.02 = a 6 s confirm window: longer than the way from the apply to the failure's report
    _, dev, lab, args = _lab(emulator_fleet, tmp_path, name, time_scale=0.02)
    before = dev.running_config()
    dev.set_fault(**LOSE[name], drop_reconnects=100)
    res = lab.playbook("push.yml", *args, "-e", "roce_tune_rollback_retry_s=1")
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert re.search(rf"fatal: \[{name}\].*push failed", out), out[-5000:]
    assert re.search(r"nothing confirms the (apply|commit), so its commit-confirm timer \(5 min", out), \
        out[-5000:]
    _failed_not_unreachable(res.stdout, name)
    dev.wait_reverted_by_timer()
    assert dev.running_config() == before


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "outcome", "live"), [
    ({"drop_after_config_lines": 3}, "the connection was lost before the configuration session was committed",
     False),
    # the commit's answer is held past the command timeout (5 s): the module fails after the commit took
    # effect
    ({"pause_pattern": r"^commit$"}, "the change is live and complete (EOS commits a session at once) but "
                                     "NOT saved: run `write memory` on eos1 by hand", True),
    # the connection drops right after the commit: eos_config reports the change, the save finds no connection
    ({"drop_after_pattern": r"^commit$"}, "the change is live (the configuration session was committed) but "
                                          "NOT saved", True),
], ids=["lost-before-commit", "commit-answer-held", "lost-after-commit"])
def test_eos_lost_connection_says_whether_the_session_was_committed(emulator_fleet,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path, fault: dict[str, Any],
                                                                    outcome: str, live: bool) -> None:
    """EOS applies a configuration session only at its commit: a session lost before the commit changed
    nothing, one lost after it is complete and live, not saved. The push reconnects, reads the running
    config and says which (it said "the configuration session was aborted" either way)."""
    _, dev, lab, args = _lab(emulator_fleet, tmp_path, "eos1", time_scale=0.01)
    before = dev.running_config()
    dev.set_fault(**fault)
    try:
        res = lab.playbook("push.yml", *args, "-e", "ansible_command_timeout=5")
    finally:
        dev.resume()
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert outcome in out, out[-5000:]
    assert ("qos profile ROCE_LOSSLESS_400G" in dev.running_config()) is live, out[-5000:]
    if not live:
        assert dev.running_config() == before
    _failed_not_unreachable(res.stdout, "eos1")


@pytest.mark.slow
# (SONiC: a dry run sends nothing after reading the running CONFIG_DB; the diff is the controller's)
# (Cumulus: the push's own `nv config diff` after staging, and the refusal probe `nv config diff -o commands`
# before anything is staged: each a failed dry run, never UNREACHABLE)
@pytest.mark.parametrize(("name", "fault"), [
    ("cul1", {"drop_after_pattern": r"^nv config diff$"}),
    ("cul1", {"drop_after_pattern": r"^nv config diff -o commands"}),
], ids=["cul1", "cul1-probe"])
def test_lost_connection_in_a_dry_run_changes_nothing(emulator_fleet, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      name: str, fault: dict[str, Any]) -> None:
    """--check: the connection drops during the dry run. The run fails as a dry run that pushed nothing (no
    rollback, no checkpoint), and a Cumulus revision the dry run staged is detached on a new connection."""
    _, dev, lab, args = _lab(emulator_fleet, tmp_path, name)
    before = dev.running_config()
    dev.set_fault(**fault)
    res = lab.playbook("push.yml", "--check", "--diff", *args)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-5000:]
    assert re.search(rf"fatal: \[{name}\].*dry run \(--check\) failed; nothing was (pushed|applied):", out), \
        out[-5000:]
    assert "rolled back" not in out and "ROLLBACK" not in out, out[-5000:]
    assert dev.running_config() == before
    if name == "cul1":
        assert dev.pending is None, dev.pending
    else:
        assert not dev.checkpoints, list(dev.checkpoints)
    _failed_not_unreachable(res.stdout, name)
