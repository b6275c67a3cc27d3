"""LLDP and version captures in the text forms engineers paste (lldpd's text, SONiC ``show lldp neighbors``,
EOS / NX-OS / Junos ``show lldp neighbors [detail]``, Cumulus ``net show lldp``): each was RT010 'not a
capture roce-tune reads'. Fixtures are our own, in the shapes those commands print."""

from __future__ import annotations

from pathlib import Path

from tests.inventory.cabling_helpers import run

SONIC_VERSION = (
    "admin@{dev}:~$ show version\n\nSONiC Software Version: SONiC.202311.1\nHwSKU: Mellanox-SN4700-O8C48\n"
    "ASIC: mellanox\nASIC Count: 1\n"
)

LLDPD_TEXT = """\
2025-01-07T10:00:00 [WARN/lldpctl] unknown command from argument 5: `Ethernet99`
-------------------------------------------------------------------------------
LLDP neighbors:
-------------------------------------------------------------------------------
Interface:    Ethernet0, via: LLDP, RID: 3, Time: 0 day, 02:00:01
  Chassis:
    ChassisID:    mac 02:00:00:00:01:01
    SysName:      spine7
    SysDescr:     Cisco Nexus Operating System (NX-OS) Software 10.3(4a)
                  TAC support: http://www.cisco.com/tac
    Capability:   Bridge, on
  Port:
    PortID:       ifname Ethernet1/5
    PortDescr:    leaf7 uplink
    TTL:          120
-------------------------------------------------------------------------------
Interface:    Ethernet8, via: LLDP, RID: 4, Time: 0 day, 02:00:01
  Chassis:
    ChassisID:    mac 02:00:00:00:02:01
    SysName:      gpu07
  Port:
    PortID:       mac 02:00:00:00:02:02
    PortDescr:    ens1f0np0
    TTL:          120
-------------------------------------------------------------------------------
Interface:    Ethernet8, via: LLDP, RID: 6, Time: 0 day, 00:00:41
  Chassis:
    ChassisID:    mac 02:00:00:00:02:01
    SysName:      gpu07
  Port:
    PortID:       mac 02:00:00:00:02:03
    PortDescr:    ens1f1np1
-------------------------------------------------------------------------------
Interface:    Ethernet12, via: LLDP, RID: 5, Time: 0 day, 02:00:01
  Chassis:
    ChassisID:    mac 02:00:00:00:03:01
    SysName:      leaf8
  Port:
    PortID:       local etp4
    PortDescr:    Ethernet12
    TTL:          120
    Port is aggregated. PortAggregID: 1000001
-------------------------------------------------------------------------------
"""


def test_lldpd_text_form_reads_every_neighbour() -> None:
    """``lldpctl`` / ``lldpcli show neighbors`` text: one ``Interface:`` line per neighbour (two on one port
    when a port sees two), its ``SysName``, ``PortID: <subtype> <id>`` and ``PortDescr``; lldpctl's log lines
    and a system description over two lines are not neighbours."""
    from roce_tune.platforms.lldp import parse_lldpctl_text

    got = [(n.local_port, n.remote_system, n.remote_port, n.remote_is_nic, n.index)
           for n in parse_lldpctl_text(LLDPD_TEXT)]
    assert got == [
        ("Ethernet0", "spine7", "Ethernet1/5", False, 4),
        ("Ethernet8", "gpu07", "ens1f0np0", True, 16),
        ("Ethernet8", "gpu07", "ens1f1np1", True, 25),
        ("Ethernet12", "leaf8", "etp4", False, 33),
    ]


def test_sonic_show_lldp_neighbors_and_lldpcli_via_docker_import(tmp_path: Path) -> None:
    """SONiC's ``show lldp neighbors`` and ``docker exec -i lldp lldpcli show neighbors details`` (the
    ``-i`` of sonic-utilities' lldpshow, and ``lldpcli`` for ``lldpctl``) were RT010; each imports the
    cables, the host NIC and the SONiC switch."""
    for i, command in enumerate(("show lldp neighbors", "docker exec -i lldp lldpcli show neighbors details",
                                 "sudo lldpctl")):
        cap = tmp_path / f"cap{i}"
        cap.mkdir()
        (cap / "leaf7.txt").write_text(f"admin@leaf7:~$ {command}\n{LLDPD_TEXT}"
                                       + SONIC_VERSION.format(dev="leaf7"), encoding="utf-8")
        out = tmp_path / f"fabric{i}.yaml"
        r = run("import", "lldp", str(cap), "--out", str(out))
        assert r.returncode == 0, (command, r.stderr)
        text = out.read_text(encoding="utf-8")
        assert "platform: sonic" in text and '"leaf7:Ethernet0", b: "spine7:Ethernet1/5"' in text, text
        assert "netdev: ens1f0np0" in text and "netdev: ens1f1np1" in text, text


def test_lldpcli_json_forms_through_docker_exec_i(tmp_path: Path) -> None:
    """``lldpcli -f json show neighbors`` and ``docker exec -i lldp lldpctl -f json`` were RT010 (the command
    pattern knew only ``lldpctl`` and ``docker exec <container>``)."""
    body = ('{\n  "lldp": {\n    "interface": {\n      "ens1f0np0": {\n        "via": "LLDP",\n'
            '        "chassis": {"leaf7": {"id": {"type": "mac", "value": "02:00:00:00:00:07"}}},\n'
            '        "port": {"id": {"type": "ifname", "value": "Ethernet8"}, "descr": "Ethernet8"}\n'
            "      }\n    }\n  }\n}\n")
    for i, command in enumerate(("lldpcli -f json show neighbors", "docker exec -i lldp lldpctl -f json")):
        cap = tmp_path / f"cap{i}"
        cap.mkdir()
        (cap / "gpu07.txt").write_text(f"root@gpu07:~# {command}\n{body}", encoding="utf-8")
        r = run("import", "lldp", str(cap), "--out", str(tmp_path / f"f{i}.yaml"))
        assert r.returncode == 0, (command, r.stderr)
