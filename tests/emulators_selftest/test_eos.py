"""netmiko ``arista_eos`` (AristaSSH) against the EOS emulator."""

from __future__ import annotations

import time

import pytest
from netmiko.exceptions import ConfigInvalidException

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

ROCE = [
    "qos map dscp 26 to traffic-class 3",
    "interface Ethernet1",
    "   mtu 9214",
    "   service-profile ROCE_LOSSLESS",
    "qos profile ROCE_LOSSLESS",
    "   qos trust dscp",
    "   tx-queue 3",
    "      no priority",
    "      bandwidth percent 50",
    "   priority-flow-control on",
    "   priority-flow-control priority 3 no-drop",
]


def _session(conn, name: str, lines: list[str], **kw) -> str:
    return conn.send_config_set(lines, config_mode_command=f"configure session {name}",
                                exit_config_mode=False,
                                **kw)


def test_show_commands_and_prompts(one):
    fleet, conn = one("eos", name="leaf1")
    assert conn.base_prompt == "leaf1"
    assert "Software image version: 4.30.1F" in conn.send_command("show version")
    fleet["leaf1"].counters["Ethernet1"] = {"rx": 7, "tx": 3}
    pfc = conn.send_command("show priority-flow-control counters")
    assert any(line.split() == ["Et1", "7", "3"] for line in pfc.splitlines())
    assert "ECN Marked Packets" in conn.send_command("show qos interfaces ethernet 1 ecn counters queue")
    assert "% Invalid input" in conn.send_command("show nonsense")


def test_session_diff_then_commit(one):
    fleet, conn = one("eos", name="leaf1")
    before = fleet["leaf1"].running_config()
    _session(conn, "roce1", ROCE)
    assert conn.find_prompt() == "leaf1(config-s-roce1-qos-profile-ROCE_LOSSLESS)#"
    assert conn.check_config_mode()
    diff = conn.send_command("show session-config diffs")
    assert diff.startswith("--- system:/running-config\n+++ session:/roce1-session-config")
    assert "+   mtu 9214" in diff and "+      bandwidth percent 50" in diff
    assert fleet["leaf1"].running_config() == before, "session must not touch running-config"
    assert conn.send_command("show session-config named roce1 diffs") == diff
    conn.send_command("commit", expect_string=r"#")
    assert conn.find_prompt() == "leaf1#"
    running = conn.send_command("show running-config")
    assert "   mtu 9214" in running and "      no priority" in running
    assert fleet["leaf1"].running_config().strip() == running.strip()
    assert "Copy completed successfully." in conn.send_command("write memory")
    assert "% Cannot enter session roce1" in conn.send_command("configure session roce1")


def test_commit_timer_confirmed_survives(one):
    fleet, conn = one("eos", name="leaf1", time_scale=0.002)  # 00:02:00 -> 0.24 s
    _session(conn, "ct1", ROCE)
    conn.send_command("commit timer 00:02:00", expect_string=r"#")
    assert fleet["leaf1"].confirm_pending
    assert "pendingCommitTimer" in conn.send_command("show configuration sessions detail")
    committed = fleet["leaf1"].running_config()
    conn.send_command("configure session ct1 commit")
    time.sleep(0.4)
    assert not fleet["leaf1"].confirm_pending
    assert fleet["leaf1"].running_config() == committed


@pytest.mark.parametrize("lose", [False, True], ids=["no-confirm", "confirm-lost"])
def test_commit_timer_expiry_reverts_byte_identical(one, lose):
    fleet, conn = one("eos", name="leaf1", time_scale=0.002)
    before = fleet["leaf1"].running_config()
    fleet["leaf1"].set_fault(lose_confirm=lose)
    _session(conn, "ct2", ROCE)
    conn.send_command("commit timer 00:02:00", expect_string=r"#")
    assert "mtu 9214" in fleet["leaf1"].running_config()
    if lose:
        conn.send_command("configure session ct2 commit")
    time.sleep(0.5)
    assert fleet["leaf1"].running_config() == before
    assert conn.send_command("show running-config").strip() == before.strip()


def test_abort_and_negation(one):
    fleet, conn = one("eos", name="leaf1")
    before = fleet["leaf1"].running_config()
    _session(conn, "ab1", ROCE)
    conn.send_command("abort", expect_string=r"#")
    assert fleet["leaf1"].running_config() == before
    conn.send_config_set(["interface Ethernet2", "mtu 9000", "mtu 9214"])
    assert "   mtu 9214" in conn.send_command("show running-config") and "mtu 9000" not in before
    conn.send_config_set(["interface Ethernet2", "no mtu"])
    assert fleet["leaf1"].running_config() == before


def test_rejected_command_is_reported(one):
    fleet, conn = one("eos", name="leaf1", )
    fleet["leaf1"].set_fault(reject_pattern=r"^qos trust")
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(ROCE, config_mode_command="configure session rj1", exit_config_mode=False,
                             error_pattern=r"% Invalid input")
    conn.send_command("abort", expect_string=r"#")


def test_dropped_connection_leaves_running_unchanged(one):
    fleet, conn = one("eos", name="leaf1")
    before = fleet["leaf1"].running_config()
    fleet["leaf1"].set_fault(drop_after_config_lines=4)
    with pytest.raises(NETMIKO_DROP_ERRORS):  # netmiko sees a silent channel: ReadTimeout / OSError
        _session(conn, "drop1", ROCE, read_timeout=1)
    assert not conn.is_alive()
    again = fleet.connect("leaf1")
    try:
        assert "drop1" in again.send_command("show configuration sessions")
        again.send_command("configure session drop1 abort")
        assert fleet["leaf1"].running_config() == before
    finally:
        again.disconnect()


def test_exec_mode_enable_with_secret(one):
    fleet, conn = one("eos", name="leaf1", secret="en4ble", options={"start_mode": "exec"})
    assert conn.find_prompt() == "leaf1>"
    assert "% Invalid input" in conn.send_command("configure terminal", expect_string=r"[>#]")
    conn.enable()
    assert conn.find_prompt() == "leaf1#"
    conn.send_config_set(["interface Ethernet4", "description to-gpu01"])
    assert "interface Ethernet4\n   description to-gpu01\n" in fleet["leaf1"].running_config()
