"""netmiko ``juniper_junos`` (JuniperSSH) against the Junos emulator."""

from __future__ import annotations

import time

import pytest

from tests.emulators import NETMIKO_DROP_ERRORS
from tests.emulators.junos import value_error

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


def test_refuse_private_confirm_and_exclusive_lock(one):
    """Fault ``refuse_private_confirm``: `commit confirmed` in `configure private` gets the device's refusal
    and commits nothing; `configure exclusive` accepts it and locks the shared candidate (another session's
    `configure exclusive` is refused naming the holder; Junos asks to discard on leaving with changes)."""
    from netmiko import ConnectHandler

    from tests.emulators import Faults

    fleet, conn = one("junos", name="qfx1", faults=Faults(refuse_private_confirm=True))
    dev = fleet["qfx1"]
    before = len(dev.history)
    _candidate(conn)
    out = conn.send_command("commit confirmed 5 comment t1", expect_string=r"#")
    assert "error: commit confirmed not supported for private configuration" in out
    assert len(dev.history) == before and not dev.confirm_pending
    conn.send_command("rollback 0", expect_string=r"#")
    conn.exit_config_mode()
    assert "Entering configuration mode" in conn.send_command("configure exclusive", expect_string=r"#")
    other = ConnectHandler(**fleet.netmiko_params("qfx1"))
    try:
        refused = other.send_command("configure exclusive", expect_string=r"[>#]\s*$")
        assert "error: configuration database locked by:" in refused and "(pid " in refused, refused
        assert not other.check_config_mode()
    finally:
        other.disconnect()
    conn.send_config_set(ROCE, exit_config_mode=False)
    out = conn.send_command("commit confirmed 5 comment t1", expect_string=r"#")
    assert "rolled back in 5 minutes" in out
    conn.send_config_set(["set system location b2"], exit_config_mode=False)
    asked = conn.send_command("exit configuration-mode", expect_string=r"\(yes\)\s*$")
    assert "Auto rollback on exiting 'configure exclusive'" in asked and "Discard uncommitted" in asked
    conn.send_command("yes", expect_string=r">")
    assert dev.exclusive_owner is None and "system location b2" not in dev.running_config()
    with dev.lock:  # someone's uncommitted change in the shared candidate: exclusive refused as well
        from tests.emulators.junos import _Db

        dev.shared = _Db([*dev.active, "system location b3"])
    assert "error: configuration database modified" in conn.send_command("configure exclusive",
                                                                         expect_string=r"[>#]\s*$")


# Juniper's YANG: fill-level decimal64 (fraction-digits 9, 0 .. 100) on Junos OS Evolved 24.4R1+, uint32
# (0 .. 100) on earlier Evolved releases and on Junos OS; drop-probability uint32 everywhere
@pytest.mark.parametrize("line, release, refused", [
    ("class-of-service drop-profiles D interpolate fill-level 7.5", "24.4R1-EVO", False),
    ("class-of-service drop-profiles D interpolate fill-level 7.123456789", "25.2R1-EVO", False),
    ("class-of-service drop-profiles D interpolate fill-level 7.1234567891", "24.4R1-EVO", True),  # 10 digits
    ("class-of-service drop-profiles D interpolate fill-level 100.5", "24.4R1-EVO", True),  # range 0 .. 100
    ("class-of-service drop-profiles D interpolate fill-level 1e1", "24.4R1-EVO", True),  # not decimal64 text
    ("class-of-service drop-profiles D interpolate fill-level 7.5", "24.2R1-EVO", True),  # uint32 there
    ("class-of-service drop-profiles D interpolate fill-level 7.5", "21.4R3-S2.3", True),  # Junos OS: uint32
    ("class-of-service drop-profiles D interpolate fill-level 7", "21.4R3-S2.3", False),
    ("class-of-service drop-profiles D fill-level 7.5 drop-probability 10", "24.4R1-EVO", False),
    ("class-of-service drop-profiles D interpolate drop-probability 2.5", "24.4R1-EVO", True),  # uint32
    ("class-of-service schedulers S transmit-rate percent 50", "24.4R1-EVO", False),  # not type-checked
])
def test_fill_level_values_typed_per_release(line: str, release: str, refused: bool) -> None:
    assert (value_error(line, release) is not None) is refused


def test_refused_value_over_ssh_set_and_load(one):
    """A decimal fill level on a Junos OS release (uint32) is refused in ``set`` and in ``load set
    terminal`` with an ``error:`` line, and stays out of the candidate; 24.4R1-EVO takes it."""
    fleet, conn = one("junos", name="qfx1")
    dev = fleet["qfx1"]
    line = "set class-of-service drop-profiles D interpolate fill-level [ 7.5 75 ]"
    conn.config_mode("configure private")
    out = conn.send_command_timing(line)
    assert "error: fill-level '7.5' is not a uint32" in out
    conn.write_channel("load set terminal\n")
    conn.read_until_pattern(r"Type \^D")
    conn.write_channel(line + "\n")
    conn.write_channel("\x04")
    out = conn.read_until_pattern(r"load complete.*")
    assert "error: fill-level '7.5'" in out and "load complete (1 errors)" in out
    conn.find_prompt()
    assert "drop-profiles" not in conn.send_command("show | compare")
    dev.version = "24.4R1-EVO"
    assert "error" not in conn.send_command_timing(line)
    assert "+               7.5;" in conn.send_command("show | compare").splitlines()

