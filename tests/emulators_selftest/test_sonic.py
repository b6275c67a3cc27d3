"""netmiko ``linux`` (LinuxSSH) against the SONiC emulator (GCU apply-patch/checkpoint/rollback, CONFIG_DB
writes with sonic-cfggen and sonic-db-cli)."""

from __future__ import annotations

import json

import paramiko
import pytest

from tests.emulators import NETMIKO_DROP_ERRORS

pytestmark = pytest.mark.emulator

PATCH = [
    {"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"pfc_enable": "3",
                                                                   "pfcwd_sw_enable": "3"}}},
    {"op": "add", "path": "/PFC_WD", "value": {"Ethernet0": {"action": "drop", "detection_time": "200",
                                                              "restoration_time": "200"}}},
    {"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9216"},
]


def _put(conn, path: str, doc, read_timeout: float = 10) -> str:
    """Upload a file with one here-document write, then wait for the shell prompt."""
    lines = [f"cat > {path} <<'EOF'"] + json.dumps(doc, indent=2).splitlines() + ["EOF"]
    conn.write_channel("\n".join(lines) + "\n")
    return conn.read_until_pattern(r"[$#] $", read_timeout=read_timeout)


def test_checkpoint_patch_rollback_byte_identical(one):
    fleet, conn = one("sonic", name="sonic1")
    dev = fleet["sonic1"]
    assert conn.base_prompt == "admin@sonic1:~"
    before = dev.running_config()
    assert json.loads(conn.send_command("show runningconfiguration all")) == dev.config_db
    assert "Root privileges are required" in conn.send_command("config checkpoint pre")
    assert "Checkpoint created successfully." in conn.send_command("sudo config checkpoint pre")
    assert json.loads(conn.send_command("sudo config list-checkpoints")) == ["pre"]
    _put(conn, "/tmp/roce.json", PATCH)
    out = conn.send_command("sudo config apply-patch -d -v /tmp/roce.json; echo rc=$?")
    assert "Patch applied successfully." in out and out.endswith("rc=0")
    assert dev.running_config() == before, "--dry-run must not change CONFIG_DB"
    assert "rc=0" in conn.send_command("sudo config apply-patch -v /tmp/roce.json; echo rc=$?")
    assert conn.send_command("sonic-db-cli CONFIG_DB hgetall 'PORT_QOS_MAP|Ethernet0'") == \
        "{'pfc_enable': '3', 'pfcwd_sw_enable': '3'}"
    assert "Ethernet0:3" in conn.send_command("show pfcwd stats --empty")  # no storm: printed with -e only
    assert "UC3" in conn.send_command("show queue counters Ethernet0")
    assert json.loads(conn.send_command("sonic-cfggen -d --print-data"))["PORT"]["Ethernet0"]["mtu"] == "9216"
    assert "Config rolled back successfully." in conn.send_command("sudo config rollback pre")
    assert dev.running_config() == before
    conn.send_command("sudo config save -y")
    assert json.loads(conn.send_command("cat /etc/sonic/config_db.json")) == dev.config_db


@pytest.mark.parametrize("patch, message", [
    ([{"op": "replace", "path": "/NO_SUCH_TABLE/x", "value": "1"}], "Error: JsonPointerException"),
    ([{"op": "remove", "path": "/FLEX_COUNTER_TABLE/PFCWD"}, {"op": "remove",
                                                              "path": "/FLEX_COUNTER_TABLE/QUEUE"}],
     "empty tables"),
    ({"not": "a list"}, "Error: patch must be a JSON array"),
])
def test_invalid_patches_are_refused(one, patch, message):
    fleet, conn = one("sonic", name="sonic1")
    before = fleet["sonic1"].running_config()
    _put(conn, "/tmp/bad.json", patch)
    out = conn.send_command("sudo config apply-patch /tmp/bad.json; echo rc=$?")
    assert message in out and out.endswith("rc=1")
    assert fleet["sonic1"].running_config() == before


def test_rejected_patch_and_dropped_upload(one):
    fleet, conn = one("sonic", name="sonic1")
    dev = fleet["sonic1"]
    before = dev.running_config()
    dev.set_fault(reject_pattern=r'"/PFC_WD"')
    _put(conn, "/tmp/roce.json", PATCH)
    out = conn.send_command("sudo config apply-patch /tmp/roce.json; echo rc=$?")
    assert out.startswith("Error: Given patch will produce invalid config") and out.endswith("rc=1")
    assert dev.running_config() == before
    dev.clear_faults()
    dev.set_fault(drop_after_config_lines=5)
    with pytest.raises(NETMIKO_DROP_ERRORS):
        _put(conn, "/tmp/roce2.json", PATCH, read_timeout=1)
    assert dev.running_config() == before


def test_cfggen_write_merges_and_db_cli_deletes(one):
    """``sonic-cfggen -j FILE --write-to-db`` sets the file's fields and keeps the others (rows created, an
    empty row deleted), ``sonic-db-cli CONFIG_DB DEL/HDEL`` print redis's count; the ``fail_db_write`` fault
    fails a write with nothing written."""
    fleet, conn = one("sonic", name="sonic1")
    dev = fleet["sonic1"]
    lanes = dev.config_db["PORT"]["Ethernet0"]["lanes"]
    _put(conn, "/tmp/w.json", {"PORT": {"Ethernet0": {"mtu": "9216"}},
                               "WRED_PROFILE": {"ROCE": {"ecn": "ecn_all", "wred_green_enable": "true"}},
                               "BUFFER_POOL": {"egress_lossy_pool": {}}})
    assert "Permission denied" in conn.send_command("sonic-cfggen -j /tmp/w.json --write-to-db; echo rc=$?")
    out = conn.send_command("sudo sonic-cfggen -j /tmp/w.json --write-to-db; echo rc=$?")
    assert out.strip() == "rc=0", out
    port = dev.config_db["PORT"]["Ethernet0"]
    assert (port["mtu"], port["lanes"], port["speed"]) == ("9216", lanes, "100000")
    assert dev.config_db["WRED_PROFILE"]["ROCE"]["ecn"] == "ecn_all"
    assert "egress_lossy_pool" not in dev.config_db["BUFFER_POOL"]
    out = conn.send_command("sudo sonic-db-cli CONFIG_DB HDEL 'WRED_PROFILE|ROCE' ecn nosuch; echo rc=$?")
    assert out.split() == ["1", "rc=0"], out
    assert conn.send_command("sudo sonic-db-cli CONFIG_DB DEL 'WRED_PROFILE|ROCE'").strip() == "1"
    assert "WRED_PROFILE" not in dev.config_db  # its last key is gone, so is the table
    assert conn.send_command("sudo sonic-db-cli CONFIG_DB DEL 'WRED_PROFILE|ROCE'").strip() == "0"
    dev.set_fault(fail_db_write=1)
    before = dev.running_config()
    out = conn.send_command("sudo sonic-cfggen -j /tmp/w.json --write-to-db; echo rc=$?")
    assert "ConnectionError" in out and out.endswith("rc=1"), out
    assert dev.running_config() == before


def test_exec_channel_commands_are_recorded(one):
    """``ssh sonic1 'cmd'`` (Ansible ``raw``, netmiko-less readers) lands in ``commands_seen`` as an
    interactive line does, here-document writes by their first line; tests assert on what was run."""
    fleet, conn = one("sonic", name="sonic1")
    dev = fleet["sonic1"]
    conn.send_command("show version")
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect("127.0.0.1", fleet.port("sonic1"), dev.spec.username, dev.spec.password,
                   allow_agent=False, look_for_keys=False)
    try:
        _, out, _ = client.exec_command("sudo config checkpoint --help\necho done")
        assert out.read().decode().rstrip().endswith("done") and out.channel.recv_exit_status() == 0
        _, out, _ = client.exec_command("cat > /tmp/x.json <<'EOF'\n{\"a\": 1}\nEOF")
        assert out.channel.recv_exit_status() == 0
    finally:
        client.close()
    seen = dev.commands_seen
    assert seen.index("show version") < seen.index("sudo config checkpoint --help") < seen.index("echo done")
    assert "cat > /tmp/x.json <<'EOF'" in seen and '{"a": 1}' not in seen
    assert json.loads((dev.sandbox / "tmp" / "x.json").read_text()) == {"a": 1}


def test_pfcwd_stats_hides_quiet_queues_unless_empty(tmp_path):
    """pfcwd (sonic-utilities pfcwd/main.py, show_stats) prints a queue only when one of its counters is not
    0/0, unless -e/--empty; then every queue, STATUS N/A where the watchdog does not run; 7 columns."""
    from roce_tune.platforms.sonic_counters import parse_sonic_pfcwd_stats
    from tests.emulators.core import EmulatorSpec
    from tests.emulators.sonic import SonicDevice, factory_db

    db = factory_db("sonic1", 2)
    db["PORT_QOS_MAP"] = {"Ethernet0": {"pfc_enable": "3,4", "pfcwd_sw_enable": "3,4"}}
    dev = SonicDevice(EmulatorSpec(platform="sonic", name="sonic1", initial_config=db), tmp_path)
    dev.pfcwd_stats["Ethernet0:4"] = {"detected": 2, "restored": 1}
    session = dev.new_session("admin", False)
    quiet, _ = session.show(["pfcwd", "stats"])
    assert "RX LAST OK/DROP" in quiet.splitlines()[0]
    assert parse_sonic_pfcwd_stats(quiet) == {"Ethernet0": {
        "q4_wd_storm_detected": 2, "q4_wd_storm_restored": 1, "q4_wd_tx_ok": 0, "q4_wd_tx_drop": 0,
        "q4_wd_rx_ok": 0, "q4_wd_rx_drop": 0}}
    every, _ = session.show(["pfcwd", "stats", "--empty"])
    assert "Ethernet4:0" in every and "Ethernet0:7" in every
    got = parse_sonic_pfcwd_stats(every)
    assert set(got) == {"Ethernet0"} and got["Ethernet0"]["q3_wd_storm_detected"] == 0
    assert {k[:2] for k in got["Ethernet0"]} == {"q3", "q4"}


def test_pfc_counters_print_pfcstat_tables(tmp_path):
    """``show pfc counters`` (sonic-utilities scripts/pfcstat) prints a ``Port Rx`` and a ``Port Tx`` table,
    every port, thousands separators; it printed nothing."""
    from roce_tune.platforms.sonic_counters import parse_sonic_pfc_counters
    from tests.emulators.core import EmulatorSpec
    from tests.emulators.sonic import SonicDevice

    dev = SonicDevice(EmulatorSpec(platform="sonic", name="sonic1", options={"ports": 2}), tmp_path)
    dev.pfc_counters[("Ethernet4", "tx", 3)] = 15437
    out, rc = dev.new_session("admin", False).show(["pfc", "counters"])
    assert rc == 0 and "15,437" in out
    assert [t.split()[:2] for t in out.splitlines() if t.strip().startswith("Port")] == [["Port", "Rx"],
                                                                                        ["Port", "Tx"]]
    got = parse_sonic_pfc_counters(out)
    assert set(got) == {"Ethernet0", "Ethernet4"} and got["Ethernet4"]["pfc_tx_prio3"] == 15437
    assert len(got["Ethernet0"]) == 16 and not any(got["Ethernet0"].values())


def test_multi_asic_counters_cover_every_namespace_front_panel_only(tmp_path):
    """On a multi-ASIC box pfcstat and pfcwd run in every namespace and show the front-panel ports only
    (utilities_common multi_asic, display 'frontend'); the emulator printed no port there."""
    from roce_tune.platforms.sonic_counters import (
        parse_sonic_pfc_counters,
        parse_sonic_pfcwd_stats,
        parse_sonic_queue_counters,
    )
    from tests.emulators.core import EmulatorSpec
    from tests.emulators.sonic import SonicDevice, factory_db

    asic0, asic1 = factory_db("sonic1", 1), factory_db("sonic1", 1)
    asic1["PORT"] = {"Ethernet64": {"admin_status": "up", "role": "Ext"},
                     "Ethernet-BP256": {"admin_status": "up", "role": "Int"}}
    asic1["PORT_QOS_MAP"] = {"Ethernet64": {"pfc_enable": "3", "pfcwd_sw_enable": "3"}}
    db = {"localhost": factory_db("sonic1", 0), "asic0": asic0, "asic1": asic1}
    dev = SonicDevice(EmulatorSpec(platform="sonic", name="sonic1", initial_config=db), tmp_path)
    session = dev.new_session("admin", False)
    front = {"Ethernet0", "Ethernet64"}
    assert set(parse_sonic_pfc_counters(session.show(["pfc", "counters"])[0])) == front
    assert set(parse_sonic_queue_counters(session.show(["queue", "counters"])[0])) == front
    wd = parse_sonic_pfcwd_stats(session.show(["pfcwd", "stats", "--empty"])[0])
    assert wd == {"Ethernet64": {f"q3_wd_{k}": 0 for k in ("storm_detected", "storm_restored", "tx_ok",
                                                             "tx_drop", "rx_ok", "rx_drop")}}
