"""netmiko ``cisco_nxos`` (CiscoNxosSSH) against the NX-OS emulator."""

from __future__ import annotations

import pytest
from netmiko.exceptions import ConfigInvalidException

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

ROCE = [
    "class-map type qos match-any ROCEv2",
    "  match dscp 26",
    "policy-map type qos QOS_CLASSIFICATION",
    "  class ROCEv2",
    "    set qos-group 3",
    "policy-map type network-qos qos_network",
    "  class type network-qos c-8q-nq3",
    "    mtu 9216",
    "    pause pfc-cos 3",
    "system qos",
    "  service-policy type network-qos qos_network",
    "interface Ethernet1/1",
    "  mtu 9216",
    "  priority-flow-control mode on",
    "  service-policy type qos input QOS_CLASSIFICATION",
]


def test_checkpoint_push_diff_rollback(one):
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    assert conn.base_prompt == "nx1"
    before = dev.running_config()
    conn.send_command("terminal dont-ask")
    assert "Done" in conn.send_command("checkpoint roce_pre")
    assert "1) roce_pre:" in conn.send_command("show checkpoint summary")
    assert "Rollback Patch is Empty" in conn.send_command(
        "show diff rollback-patch checkpoint roce_pre running-config")
    out = conn.send_config_set(ROCE)
    assert "(config-pmap-nqos-c)#" in out and "(config-sys-qos)#" in out
    running = conn.send_command("show running-config")
    assert "!Time:" in running and "policy-map type network-qos qos_network" in running
    assert "\n    pause pfc-cos 3\n" in dev.running_config()
    patch = conn.send_command("show diff rollback-patch checkpoint roce_pre running-config")
    assert "interface Ethernet1/1\n  mtu 9216" in patch and "system qos" in patch
    back = conn.send_command("show diff rollback-patch running-config checkpoint roce_pre")
    assert "  no mtu 9216" in back and "no system qos" in back
    assert "Rollback completed successfully." in conn.send_command(
        "rollback running-config checkpoint roce_pre atomic")
    assert dev.running_config() == before
    assert "Copy complete." in conn.save_config()


def test_rejected_command(one):
    fleet, conn = one("nxos", name="nx1")
    fleet["nx1"].set_fault(reject_pattern=r"pause pfc-cos")
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(ROCE, error_pattern=r"% Invalid command")
    conn.exit_config_mode()


def test_drop_mid_push_then_rollback_restores_byte_identical(one):
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    before = dev.running_config()
    conn.send_command("checkpoint roce_pre")
    dev.set_fault(drop_after_config_lines=6)
    with pytest.raises(NETMIKO_DROP_ERRORS):
        conn.send_config_set(ROCE, read_timeout=1)
    assert dev.running_config() != before, "configure terminal applies line by line"
    again = fleet.connect("nx1")
    try:
        again.send_command("rollback running-config checkpoint roce_pre atomic")
        assert dev.running_config() == before
    finally:
        again.disconnect()


def test_checkpoint_limit_duplicate_and_delete(one):
    """Ten user checkpoints at most, unique names (Cisco Nexus 3548 System Management guide, "Configuring
    Rollback"); ``no checkpoint NAME`` frees one and ``show checkpoint summary`` lists them."""
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    for i in range(10):
        assert "Done" in conn.send_command(f"checkpoint cp{i}")
    assert "ERROR: Checkpoint name is already in use" in conn.send_command("checkpoint cp3")
    assert "ERROR: Maximum number of checkpoints (10) reached" in conn.send_command("checkpoint cp10")
    assert "cp10" not in dev.checkpoints
    summary = conn.send_command("show checkpoint summary")
    assert summary.startswith("User Checkpoint Summary") and "10) cp9:" in summary
    assert "Done" in conn.send_command("no checkpoint cp0")
    assert "ERROR: No checkpoint with this name exists" in conn.send_command("no checkpoint cp0")
    assert "Done" in conn.send_command("checkpoint cp10")
    assert list(dev.checkpoints) == [f"cp{i}" for i in range(1, 11)]


WATCHDOG_ON = ["priority-flow-control watch-dog-interval on", "interface Ethernet1/1",
               "  priority-flow-control watch-dog-interval on"]


def test_watchdog_interval_on_off_accepted_globally_and_per_interface(one):
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    conn.send_config_set(WATCHDOG_ON, error_pattern=r"% Invalid command")
    running = dev.running_config()
    assert "\npriority-flow-control watch-dog-interval on\n" in running
    assert "interface Ethernet1/1\n  priority-flow-control watch-dog-interval on\n" in running
    conn.send_config_set(["interface Ethernet1/1", "  priority-flow-control watch-dog-interval off"],
                         error_pattern=r"% Invalid command")
    running = dev.running_config()
    assert "interface Ethernet1/1\n  priority-flow-control watch-dog-interval off\n" in running
    assert "  priority-flow-control watch-dog-interval on\n" not in running  # off replaced on


@pytest.mark.parametrize("bad", [
    "priority-flow-control watch-dog-interval 200",
    "priority-flow-control watch-dog-interval enable",
    "priority-flow-control watch-dog-interval",
    "priority-flow-control watch-dog-interval on 100",
])
@pytest.mark.parametrize("where", ["global", "interface"])
def test_watchdog_interval_wrong_argument_rejected(one, bad, where):
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    before = dev.running_config()
    lines = [bad] if where == "global" else ["interface Ethernet1/1", "  " + bad]
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(lines, error_pattern=r"% Invalid command")
    assert "watch-dog-interval" not in dev.running_config()
    assert dev.running_config().count("\n") == before.count("\n")


@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_pfc_mode_auto_on_off_accepted(one, mode):
    """``priority-flow-control mode {auto | on | off}`` (Cisco NX-API REST SDK guide 9.3(x), "Configuring
    Priority Flow Control"): each mode is taken and replaces the previous one on the port."""
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    conn.send_config_set(["interface Ethernet1/1", f"  priority-flow-control mode {mode}"],
                         error_pattern=r"% Invalid command")
    running = dev.running_config()
    assert f"interface Ethernet1/1\n  priority-flow-control mode {mode}\n" in running
    assert running.count("priority-flow-control mode ") == 1


@pytest.mark.parametrize("bad", [
    "priority-flow-control mode enable",
    "priority-flow-control mode",
    "priority-flow-control mode on 3",
    "priority-flow-control mode 3",
    "no priority-flow-control mode bogus",
])
def test_pfc_mode_wrong_argument_rejected(one, bad):
    fleet, conn = one("nxos", name="nx1")
    dev = fleet["nx1"]
    before = dev.running_config()
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(["interface Ethernet1/1", "  " + bad], error_pattern=r"% Invalid command")
    assert "priority-flow-control mode" not in dev.running_config()
    assert dev.running_config().count("\n") == before.count("\n")
