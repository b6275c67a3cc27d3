"""netmiko ``cumulus_linux`` (CumulusLinuxSSH) against the Cumulus NVUE emulator."""

from __future__ import annotations

import time

import pytest

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

NV = ["nv set qos roce mode lossless", "nv set qos pfc default-global cable-length 10",
      "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000"]
PATCH = """- set:
    qos:
      roce:
        mode: lossless
      pfc-watchdog:
        polling-interval: 100
"""


def _heredoc(conn, path: str, text, read_timeout: float = 10) -> str:
    """Upload a file with one here-document write, then wait for the shell prompt."""
    lines = [f"cat > {path} <<'EOF'"] + text.splitlines() + ["EOF"]
    conn.write_channel("\n".join(lines) + "\n")
    return conn.read_until_pattern(r"[$#] $", read_timeout=read_timeout)


def test_set_diff_apply_and_show(one):
    fleet, conn = one("cumulus", name="leaf9", username="cumulus", password="CumulusLinux!")
    dev = fleet["leaf9"]
    assert conn.base_prompt == "cumulus@leaf9:mgmt:~"
    before = dev.running_config()
    conn.send_config_set(NV, enter_config_mode=False, exit_config_mode=False)
    assert conn.send_command("nv config diff").splitlines() == NV
    assert dev.running_config() == before
    assert "applied [rev_id: 2]" in conn.send_command("nv config apply -y")
    assert conn.send_command("nv config diff") == ""
    assert "nv set qos roce mode lossless" in conn.send_command("nv config show -o commands")
    assert dev.running_config().strip() == conn.send_command("nv config show -o commands").strip()
    roce = conn.send_command("nv show qos roce")
    assert any(ln.split() == ["mode", "lossless", "lossless"] for ln in roce.splitlines())
    conn.send_command("nv unset qos roce")
    assert "nv unset qos roce mode lossless" in conn.send_command("nv config diff")
    conn.send_command("nv config detach")
    assert conn.send_command("nv config diff") == ""


def test_heredoc_patch_and_sudo_config_mode(one):
    _, conn = one("cumulus", name="leaf9", username="cumulus", password="pw")
    _heredoc(conn, "/tmp/roce.yaml", PATCH)
    assert conn.send_command("cat /tmp/roce.yaml") == PATCH.rstrip("\n")
    conn.send_command("nv config patch /tmp/roce.yaml")
    assert conn.send_command("nv config diff").splitlines() == [
        "nv set qos roce mode lossless", "nv set qos pfc-watchdog polling-interval 100"]
    conn.config_mode()  # sudo -s with the [sudo] password prompt
    assert conn.base_prompt == "root@leaf9:mgmt:/home/cumulus"
    assert conn.send_command("whoami") == "root"
    conn.exit_config_mode()
    assert conn.base_prompt == "cumulus@leaf9:mgmt:~"


def test_confirm_yes_keeps_and_timeout_reverts(one):
    fleet, conn = one("cumulus", name="leaf9", username="cumulus", password="pw", time_scale=0.005)
    dev = fleet["leaf9"]
    before = dev.running_config()
    conn.send_config_set(NV, enter_config_mode=False, exit_config_mode=False)
    conn.send_command("nv config apply -y --confirm 60s")  # 60 s x 0.005 = 0.3 s
    applied = dev.running_config()
    assert applied != before and dev.confirm_pending
    assert "Confirm time left" in conn.send_command("nv config apply --confirm-status")
    conn.send_command("nv config apply --confirm-yes")
    time.sleep(0.4)
    assert dev.running_config() == applied
    conn.send_command("nv set qos roce mode lossy")
    conn.send_command("nv config apply -y --confirm 60s")
    time.sleep(0.4)
    assert dev.running_config() == applied, "not confirmed: reverted to the previous revision"
    assert "confirm_failed" in conn.send_command("nv config history")


def test_lost_confirm_rejected_command_and_drop(one):
    fleet, conn = one("cumulus", name="leaf9", username="cumulus", password="pw", time_scale=0.005)
    dev = fleet["leaf9"]
    before = dev.running_config()
    dev.set_fault(lose_confirm=True, reject_pattern=r"min-threshold")
    out = conn.send_config_set(NV, enter_config_mode=False, exit_config_mode=False)
    assert "Error: Invalid Command: nv set qos congestion-control" in out
    conn.send_command("nv config apply -y --confirm 60s")
    conn.send_command("nv config apply --confirm-yes")
    time.sleep(0.4)
    assert dev.running_config() == before
    dev.clear_faults()
    conn.send_command("nv config detach")
    dev.set_fault(drop_after_config_lines=3)
    with pytest.raises(NETMIKO_DROP_ERRORS):
        _heredoc(conn, "/tmp/roce.yaml", PATCH, read_timeout=1)
    assert dev.running_config() == before and dev.pending is None


def test_nv_set_outside_the_nvue_grammar_is_refused(one):
    """``nv set`` and ``nv config patch`` check QoS values against NVUE's grammar (nvue_grammar.py): a
    polling interval below NVUE's 100-5000 ms or CL 5.16's watchdog word on a 5.9 switch is an error and
    changes nothing."""
    fleet, conn = one("cumulus", name="leaf9", username="cumulus", password="pw")
    out = conn.send_command("nv set qos pfc-watchdog polling-interval 50")
    assert out.startswith("Error: Invalid value 50 for qos pfc-watchdog polling-interval")
    assert conn.send_command("nv set interface swp1 qos pfc-watchdog state enabled").startswith("Error:")
    assert conn.send_command("nv config diff") == "" and fleet["leaf9"].pending is None
    _heredoc(conn, "/tmp/bad.yaml", PATCH.replace("polling-interval: 100", "polling-interval: 6000"))
    assert "Error: Invalid config: nv set qos pfc-watchdog polling-interval 6000" in conn.send_command(
        "nv config patch /tmp/bad.yaml")
    assert conn.send_command("nv config diff") == ""
