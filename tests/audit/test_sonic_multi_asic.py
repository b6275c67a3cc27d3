"""A multi-ASIC SONiC box: ``show runningconfiguration all`` prints ``sonic-cfggen -d --print-data``, which
on a multi-ASIC box is one CONFIG_DB per namespace, ``{"localhost": {...}, "asic0": {...}, "asic1": {...}}``
(sonic-utilities ``show/main.py``: the command adds ``bgpraw`` only when ``not multi_asic.is_multi_asic()``);
the front-panel ports' PORT/PORT_QOS_MAP/QUEUE/BUFFER_PG rows live in the asicN namespaces, next to the
ASIC's internal (backplane) ports, PORT ``role`` ``Int`` (sonic-port.yang ``role``: Ext, Int, Inb, Rec, Dpc).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from roce_tune.audit import audit_dir
from roce_tune.platforms import platform
from tests.audit.test_running_config import INVENTORY, _capture, _running

#: front-panel ports of asic1 (the others are asic0's)
ASIC1 = {"Ethernet32", "Ethernet40", "Ethernet48", "Ethernet56"}
_BY_PORT = ("PORT", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD")


def _asic(db: dict[str, Any], n: int, ports: set[str]) -> dict[str, Any]:
    """The namespace of ASIC ``n``: its front-panel ports' rows, every shared table, two backplane ports
    (no PFC: lossy fabric links, as a misread would show)."""
    out: dict[str, Any] = {}
    for table, rows in db.items():
        if table in _BY_PORT:
            out[table] = {k: v for k, v in rows.items() if k.split("|")[0] in ports or k == "GLOBAL"}
        elif table == "CABLE_LENGTH":
            out[table] = {k: {p: m for p, m in v.items() if p in ports} for k, v in rows.items()}
        else:
            out[table] = rows
    out["DEVICE_METADATA"] = {"localhost": {**db["DEVICE_METADATA"]["localhost"], "asic_name": f"asic{n}",
                                            "sub_role": "FrontEnd", "hostname": "leaf5"}}
    for bp in (f"Ethernet-BP{256 * n}", f"Ethernet-BP{256 * n + 4}"):
        out["PORT"][bp] = {"role": "Int", "mtu": "9100", "speed": "400000", "admin_status": "up"}
        out["PORT_QOS_MAP"][bp] = {"dscp_to_tc_map": "AZURE"}
    return out


def _multi_asic(running: str) -> str:
    db = json.loads(running[running.find("{"):])
    fronts = set(db["PORT"])
    return json.dumps({
        "localhost": {"DEVICE_METADATA": {"localhost": {"hostname": "leaf5", "platform": "x86_64-8800-rp-r0",
                                                        "buffer_model": "traditional"}}},
        "asic0": _asic(db, 0, fronts - ASIC1),
        "asic1": _asic(db, 1, ASIC1),
    }, indent=4, sort_keys=True) + "\n"


def test_multi_asic_running_config_reads_per_front_panel_port(tmp_path: Path) -> None:
    device, running = _running("sonic", tmp_path)
    want = platform("sonic").read_back(running)
    got = platform("sonic").read_back(_multi_asic(running))
    assert set(got.ports) == set(want.ports)  # backplane (role Int) ports are not front-panel ports
    for name, port in want.ports.items():
        assert got.ports[name].model_copy(update={"scope": None}) == port, name
        assert got.ports[name].scope == ("asic1" if name in ASIC1 else "asic0")
    assert got.dscp_to_tc == want.dscp_to_tc and got.schedulers == want.schedulers
    assert got.watchdog == want.watchdog and got.buffer_model == want.buffer_model
    cap, _ = _capture(tmp_path, device, "sonic", _multi_asic(running))
    for source in (INVENTORY, None):
        r = audit_dir(cap, source)
        assert not r.data.unparsed
        found = [f for f in r.findings if f.device == device]
        assert found == [], [(f.rule, f.port, f.message) for f in found]


def test_a_finding_names_the_namespace_of_its_port(tmp_path: Path) -> None:
    device, running = _running("sonic", tmp_path)
    db = json.loads(_multi_asic(running))
    db["asic1"]["PORT_QOS_MAP"]["Ethernet40"]["pfc_enable"] = "4"
    text = json.dumps(db, indent=4, sort_keys=True) + "\n"
    cap, path = _capture(tmp_path, device, "sonic", text)
    for source in (INVENTORY, None):
        f = next(f for f in audit_dir(cap, source).findings if f.rule == "RT420")
        assert f.port == "Ethernet40" and "namespace asic1" in f.message, f.message
        lines = path.read_text().splitlines()
        at = f.evidence[0].line
        assert '"pfc_enable": "4"' in lines[at - 1]
        assert max(i for i, t in enumerate(lines[:at], 1) if t.startswith('    "asic')) == \
            next(i for i, t in enumerate(lines, 1) if t == '    "asic1": {')


def test_namespaces_that_disagree_on_a_shared_profile_are_not_merged_silently(tmp_path: Path) -> None:
    _, running = _running("sonic", tmp_path)
    db = json.loads(_multi_asic(running))
    name = next(iter(db["asic1"]["WRED_PROFILE"]))
    db["asic1"]["WRED_PROFILE"][name]["green_max_threshold"] = "1"
    with pytest.raises(ValueError, match=rf"/asic1/WRED_PROFILE/{name}/green_max_threshold.*/asic0/"):
        platform("sonic").read_back(json.dumps(db))


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_live_reads_a_multi_asic_box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``audit --live`` sends the same ``show runningconfiguration all``; a multi-ASIC box answers with
    its namespaces (the emulator holds them so) and the audit reads every front-panel port."""
    from roce_tune.audit import LiveOptions, audit_live
    from roce_tune.deploy.runner import ApplyOptions, SessionTiming
    from tests.deploy.conftest import PASSWORD, USER, emulated_inventory

    monkeypatch.setenv("ROCE_TUNE_USERNAME", USER)
    monkeypatch.setenv("ROCE_TUNE_PASSWORD", PASSWORD)
    device, running = _running("sonic", tmp_path)
    db = json.loads(_multi_asic(running))
    db["asic1"]["PORT_QOS_MAP"]["Ethernet48"]["pfc_enable"] = "4"
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path, hosts=True)  # the plan of INVENTORY
    with fleet:
        dev = next(d for d in fleet if d.spec.name == device)
        dev.config_db = db
        r = audit_live(inv, LiveOptions(apply=ApplyOptions(known_hosts=str(known), timing=SessionTiming(
            fast_cli=True, global_delay_factor=0.1)), concurrency=4))
    assert r.data.switches[device].running is not None
    found = [(f.rule, f.port, f.message) for f in r.findings
             if f.device == device and f.family == "switch config"]
    assert [(rule, port) for rule, port, _ in found] == [("RT420", "Ethernet48")], found
    assert found[0][2].endswith("(namespace asic1)")


def test_counter_tables_printed_per_namespace_are_read_as_one(tmp_path: Path) -> None:
    """queuestat/pfcstat on a multi-ASIC box print a ``For namespace asicN:`` line and a table per namespace
    (sonic-utilities tests/queuestat_input: ``For namespace :`` before the table)."""
    (tmp_path / "leaf5.txt").write_text(
        "admin@leaf5:~$ show queue counters\nFor namespace asic0:\n"
        "     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
        "---------  -----  --------------  ---------------  -----------  ------------\n"
        "Ethernet0    UC3          900000         90000000            0             0\n\n"
        "For namespace asic1:\n"
        "      Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes\n"
        "----------  -----  --------------  ---------------  -----------  ------------\n"
        "Ethernet32    UC3          400000         40000000           12          1200\n"
        "admin@leaf5:~$ show pfc counters\nFor namespace asic1:\n"
        "   Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
        "----------  ------  ------  ------  ------  ------  ------  ------  ------\n"
        "Ethernet32       0       0       0       7       0       0       0       0\n", encoding="utf-8")
    r = audit_dir(tmp_path)
    assert not r.data.unparsed
    ports = r.data.switches["leaf5"].ports
    assert ports["Ethernet0"]["q3_tx_pkts"].value == 900000
    assert ports["Ethernet32"]["q3_drop_pkts"].value == 12 and ports["Ethernet32"]["pfc_rx_prio3"].value == 7
    assert ports["Ethernet32"]["q3_drop_pkts"].ev.line == 10
