"""netmiko ``juniper_junos`` (JuniperSSH) against the Junos emulator."""

from __future__ import annotations

import time

import pytest

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

ROCE = [
    "set class-of-service forwarding-classes class ROCE queue-num 3 no-loss pfc-priority 3",
    "set class-of-service forwarding-classes class CNP queue-num 6",
    "set class-of-service schedulers S_ROCE transmit-rate percent 50",
    "set class-of-service schedulers S_ROCE explicit-congestion-notification",
    "set class-of-service interfaces et-0/0/0 scheduler-map SM_ROCE",
]


def _candidate(conn, lines=ROCE, **kw):
    return conn.send_config_set(lines, config_mode_command="configure private", exit_config_mode=False, **kw)


def test_private_candidate_compare_and_commit(one):
    fleet, conn = one("junos", name="qfx1")
    dev = fleet["qfx1"]
    assert conn.base_prompt == "admin@qfx1"
    assert "Model: qfx5120-48y" in conn.send_command("show version")
    before = dev.running_config()
    _candidate(conn)
    assert conn.check_config_mode()
    diff = conn.send_command("show | compare")
    assert "[edit]\n+   class-of-service {" in diff
    assert "+               transmit-rate percent 50;" in diff.splitlines()
    assert "+           class ROCE queue-num 3 no-loss pfc-priority 3;" in diff.splitlines()
    assert "configuration check succeeds" in conn.commit(check=True)
    assert dev.running_config() == before
    conn.commit(comment="roce-tune")
    assert "set class-of-service schedulers S_ROCE transmit-rate percent 50\n" in dev.running_config()
    conn.send_config_set(["set class-of-service schedulers S_ROCE transmit-rate percent 40"],
                         exit_config_mode=False)
    diff = conn.send_command("show | compare")
    assert diff.splitlines()[:3] == ["[edit class-of-service schedulers S_ROCE]",
                                     "-   transmit-rate percent 50;", "+   transmit-rate percent 40;"]
    conn.exit_config_mode()  # answers "Exit with uncommitted changes?" with yes
    assert not conn.check_config_mode()
    show = conn.send_command("show configuration | display set")
    assert show.strip() == dev.running_config().strip()
    assert "roce-tune" in conn.send_command("show system commit")


def test_commit_confirmed_confirmed_in_time(one):
    fleet, conn = one("junos", name="qfx1", time_scale=0.005)  # 1 min -> 0.3 s
    _candidate(conn)
    out = conn.commit(confirm=True, confirm_delay=1)
    assert "rolled back in 1 minutes" in out and fleet["qfx1"].confirm_pending
    committed = fleet["qfx1"].running_config()
    conn.commit()
    time.sleep(0.45)
    assert fleet["qfx1"].running_config() == committed and not fleet["qfx1"].confirm_pending


@pytest.mark.parametrize("lose", [False, True], ids=["no-confirm", "confirm-lost"])
def test_commit_confirmed_expiry_rolls_back(one, lose):
    fleet, conn = one("junos", name="qfx1", time_scale=0.005)
    dev = fleet["qfx1"]
    before = dev.running_config()
    dev.set_fault(lose_confirm=lose)
    _candidate(conn)
    conn.commit(confirm=True, confirm_delay=1)
    if lose:
        assert "commit complete" in conn.commit()
    time.sleep(0.5)
    assert dev.running_config() == before
    assert "auto-rollback" in conn.send_command("run show system commit")


def test_load_set_terminal_and_rejected_line(one):
    fleet, conn = one("junos", name="qfx1")
    dev = fleet["qfx1"]
    dev.set_fault(reject_pattern=r"explicit-congestion")
    conn.config_mode("configure private")
    conn.write_channel("load set terminal\n")
    conn.read_until_pattern(r"Type \^D")
    for line in ROCE:
        conn.write_channel(line + "\n")
    conn.write_channel("\x04")
    out = conn.read_until_pattern(r"load complete.*")
    assert "syntax error" in out and "load complete (1 errors)" in out
    conn.find_prompt()
    assert "explicit-congestion" not in conn.send_command("show | compare")
    assert "syntax error." in conn.send_command(ROCE[3])


def test_drop_discards_private_candidate(one):
    fleet, conn = one("junos", name="qfx1")
    dev = fleet["qfx1"]
    before = dev.running_config()
    dev.set_fault(drop_after_config_lines=3)
    with pytest.raises(NETMIKO_DROP_ERRORS):
        _candidate(conn, read_timeout=1)
    again = fleet.connect("qfx1")
    try:
        again.config_mode("configure private")
        assert again.send_command("show | compare").strip() == ""
        assert dev.running_config() == before
    finally:
        again.disconnect()
