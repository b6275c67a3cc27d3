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


EOS_VERSION = ("{dev}#show version\nArista DCS-7060DX5-64S\nHardware version: 11.00\n\n"
               "Software image version: 4.32.1F\nArchitecture: x86_64\n")


def test_eos_show_lldp_neighbors_text_table() -> None:
    """EOS ``show lldp neighbors``: local ports abbreviated (``Et3/1`` is ``Ethernet3/1``, ``Ma1``
    ``Management1``), a Device ID that is a MAC (a neighbour without a system name), a port ID with a
    space read at the header's columns."""
    from roce_tune.platforms import eos

    text = (
        "Last table change time   : 0:01:02 ago\nNumber of table inserts  : 7\nNumber of table deletes  : 1\n"
        "Number of table drops    : 0\nNumber of table age-outs : 0\n \n"
        "Port          Neighbor Device ID            Neighbor Port ID       TTL\n"
        "---------- ---------------------------- ---------------------- ---\n"
        "Et1           spine1.dc.example            Ethernet7              120\n"
        "Et3/1         02aa.bbcc.dd01               swp3                   120\n"
        "Et4/1         oldsw                        Te 1/0/4               120\n"
        "Ma1           oob1                         ge-0/0/9               120\n"
    )
    got = [(n.local_port, n.remote_system, n.remote_port, n.index) for n in eos.parse_lldp_brief_text(text)]
    assert got == [
        ("Ethernet1", "spine1.dc.example", "Ethernet7", 8),
        ("Ethernet3/1", None, "swp3", 9),
        ("Ethernet4/1", "oldsw", "Te 1/0/4", 10),
        ("Management1", "oob1", "ge-0/0/9", 11),
    ]


EOS_DETAIL = """\
Interface Ethernet1 detected 0 LLDP neighbors:

Interface Ethernet31/1 detected 1 LLDP neighbors:

  Neighbor 02aa.bbcc.0001/02aa.bbcc.0002, age 15 seconds
  Discovered 0:26:45 ago; Last changed 0:26:45 ago
  - Chassis ID type: MAC address (4)
    Chassis ID     : 02aa.bbcc.0001
  - Port ID type: MAC address (3)
    Port ID     : 02aa.bbcc.0002
  - Time To Live: 120 seconds
  - Port Description: "ens1f0np0"
  - System Name: "gpu07"
  - IEEE802.1/IEEE802.3 Link Aggregation
    Link Aggregation Status: Capable, Enabled (0x03)
    Port ID                : 13

Interface Ethernet32/1 detected 2 LLDP neighbors:

  Neighbor 02aa.bbcc.0101/"etp9", age 1 seconds
  - Chassis ID type: MAC address (4)
    Chassis ID     : 02aa.bbcc.0101
  - Port ID type: Locally assigned (7)
    Port ID     : "etp9"
  - Time To Live: 120 seconds
  - Port Description: "Ethernet32"
  - System Name: "leaf9"

  Neighbor 02aa.bbcc.0201/"Ethernet2", age 1 seconds
  - Chassis ID type: MAC address (4)
    Chassis ID     : 02aa.bbcc.0201
  - Port ID type: Interface name (5)
    Port ID     : "Ethernet2"
  - Time To Live: 120 seconds
"""


def test_eos_show_lldp_neighbors_detail_text(tmp_path: Path) -> None:
    """EOS ``show lldp neighbors detail`` (text, abbreviated as typed: ``sh ll n d``): every neighbour of
    every interface, the host NIC by its port description, the link-aggregation TLV's second ``Port ID``
    not taken for the port."""
    from roce_tune.platforms import eos

    got = [(n.local_port, n.remote_system, n.remote_port, n.remote_is_nic)
           for n in eos.parse_lldp_detail_text(EOS_DETAIL)]
    assert got == [
        ("Ethernet31/1", "gpu07", "ens1f0np0", True),
        ("Ethernet32/1", "leaf9", "etp9", False),
        ("Ethernet32/1", None, "Ethernet2", False),
    ]
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "sw3.txt").write_text(EOS_VERSION.format(dev="sw3") + "sw3#sh ll n d\n" + EOS_DETAIL + "sw3#\n",
                                 encoding="utf-8")
    out = tmp_path / "f.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "platform: eos" in text and '"sw3:Ethernet32/1", b: "leaf9:etp9"' in text, text
    assert 'netdev: ens1f0np0' in text and 'switch_port: "sw3:Ethernet31/1"' in text, text


NXOS_VERSION = (
    "{dev}# show version\nCisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n\n"
    "Software\n  BIOS: version 05.47\n  NXOS: version 10.3(4a)\n  BIOS compile time:  04/06/2022\n"
    "  NXOS image file is: bootflash:///nxos64-cs.10.3.4a.M.bin\n\nHardware\n"
    "  cisco Nexus9000 C9364D-GX2A Chassis\n  Processor Board ID FDO00000001\n\n  Device name: {dev}\n\n"
    "Kernel uptime is 1 day(s), 2 hour(s), 3 minute(s), 4 second(s)\n\nLast reset\n  Reason: Unknown\n"
)
NXOS_LEGEND = (
    "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n"
    "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n"
    "Device ID            Local Intf      Hold-time  Capability  Port ID\n"
)


def test_nxos_show_lldp_neighbors_text_with_wrapped_device_ids() -> None:
    """NX-OS ``show lldp neighbors``: a Device ID over 20 characters alone on its line with the row below,
    a Device ID with a space, an empty Capability, ``Total entries displayed`` checked against the rows."""
    from roce_tune.platforms import lldp, nxos

    text = NXOS_LEGEND + (
        "superspine-01.pod7.example.net\n"
        "                     Eth1/1          120        BR          Ethernet1/49\n"
        "spine2               Eth1/2          120        BR          Ethernet1/1\n"
        "Lab Server 3         Eth1/3          120                    eno1\n"
        "oob1                 mgmt0           120        B           Gi1/0/37\n"
        "Total entries displayed: 4\n"
    )
    got = [(n.local_port, n.remote_system, n.remote_port, n.index) for n in nxos.parse_lldp_brief_text(text)]
    assert got == [
        ("Ethernet1/1", "superspine-01.pod7.example.net", "Ethernet1/49", 4),
        ("Ethernet1/2", "spine2", "Ethernet1/1", 6),
        ("Ethernet1/3", "Lab Server 3", "eno1", 7),
        ("mgmt0", "oob1", "Gi1/0/37", 8),
    ]
    cut = text.replace("spine2               Eth1/2          120        BR          Ethernet1/1\n", "")
    try:
        nxos.parse_lldp_brief_text(cut)
    except lldp.LldpParseError as exc:
        assert "Total entries displayed: 4" in str(exc) and exc.index == 8
    else:
        raise AssertionError("a table with fewer rows than its total was read")


NXOS_DETAIL = NXOS_LEGEND + """\

Chassis id: 02aa.bbcc.0001
Port id: Ethernet1
Local Port id: Eth1/1
Port Description: to nx1
System Name: spine1
System Description: Arista Networks EOS version 4.32.1F running on an Arista DCS-7060DX5-64S
Time remaining: 97 seconds
System Capabilities: B, R
Enabled Capabilities: B, R
Management Address: 10.0.0.1
Management Address IPV6: not advertised
Vlan ID: not advertised


Chassis id: 02aa.bbcc.0101
Port id: 02aa.bbcc.0102
Local Port id: Eth1/7
Port Description: ens2f0np0
System Name: gpu07
System Description: Ubuntu 22.04.4 LTS Linux 5.15.0
Vlan ID: not advertised


Total entries displayed: 2
"""


def test_nxos_show_lldp_neighbors_detail_text(tmp_path: Path) -> None:
    """NX-OS ``show lldp neighbors detail`` (text): an entry per ``Chassis id:``, the local port as
    ``Ethernet1/7``, a host NIC named by its port description; the NX-OS switch and its host import."""
    from roce_tune.platforms import nxos

    got = [(n.local_port, n.remote_system, n.remote_port, n.remote_is_nic)
           for n in nxos.parse_lldp_detail_text(NXOS_DETAIL)]
    assert got == [("Ethernet1/1", "spine1", "Ethernet1", False), ("Ethernet1/7", "gpu07", "ens2f0np0", True)]
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "nx1.txt").write_text(NXOS_VERSION.format(dev="nx1") + "nx1# show lldp neighbors detail\n"
                                 + NXOS_DETAIL + "nx1#\n", encoding="utf-8")
    out = tmp_path / "f.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "platform: nxos" in text and 'switch_port: "nx1:Ethernet1/7"' in text, text


def test_junos_show_lldp_neighbors_text(tmp_path: Path) -> None:
    """Junos ``show lldp neighbors``: with and without the Parent Interface column, a logical unit on the
    local port (older EX: ``xe-0/0/5.0``) read as the physical port, a host by its netdev in Port info."""
    from roce_tune.platforms import junos

    with_parent = (
        "Local Interface    Parent Interface    Chassis Id          Port info          System Name\n"
        "et-0/0/1           ae7                 02:aa:bb:cc:00:01   Ethernet3/1        spine1.dc\n"
        "xe-0/0/5.0         -                   02:aa:bb:cc:00:02   ens1f0np0          gpu07\n"
    )
    without = (
        "Local Interface    Chassis Id          Port info          System Name\n"
        "et-0/0/2           02:aa:bb:cc:00:03   Ethernet3/2        spine1.dc\n"
    )
    got = [(n.local_port, n.remote_system, n.remote_port)
           for t in (with_parent, without) for n in junos.parse_lldp_brief_text(t)]
    assert got == [("et-0/0/1", "spine1.dc", "Ethernet3/1"), ("xe-0/0/5", "gpu07", "ens1f0np0"),
                   ("et-0/0/2", "spine1.dc", "Ethernet3/2")]
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "qfx1.txt").write_text(
        "admin@qfx1> show version\nHostname: qfx1\nModel: qfx5130-32cd\nJunos: 23.4R2-S2.1\n\n{master:0}\n"
        f"admin@qfx1> show lldp neighbors\n{with_parent}\n{{master:0}}\nadmin@qfx1> \n", encoding="utf-8")
    out = tmp_path / "f.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert 'switch_port: "qfx1:xe-0/0/5"' in out.read_text(encoding="utf-8")


def _sonic_table(rows: str, total: int) -> str:
    return ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
            "LocalPort      RemoteDevice    RemotePortID       Capability    RemotePortDescr\n"
            "-------------  --------------  -----------------  ------------  -----------------\n"
            f"{rows}--------------------------------------------------\nTotal entries displayed:  {total}\n")


def test_sonic_backplane_ports_unnamed_neighbours_and_cut_tables(tmp_path: Path) -> None:
    """A multi-ASIC SONiC's backplane/inband ports (``Ethernet-BP0``, ``Ethernet-IB0``: its own ASICs) were
    imported as fabric ports linked to external devices; a neighbour without a system name was dropped
    without a word; a table with fewer rows than its ``Total entries displayed`` was read as complete."""
    rows = ("Ethernet0      spine7          Ethernet1/5        BR            leaf7:Ethernet0\n"
            "Ethernet4                      Ethernet1/6                      to leaf7\n"
            "Ethernet-BP0   ASIC1           Ethernet-BP256     BR            Ethernet-BP256\n"
            "Ethernet-IB0   LC4.0           Eth4/0/2250        BR            Ethernet2250\n")
    cap = tmp_path / "cap"
    cap.mkdir()
    f = cap / "leaf7.txt"
    version = SONIC_VERSION.format(dev="leaf7")
    f.write_text(f"admin@leaf7:~$ show lldp table\n{_sonic_table(rows, 4)}{version}", encoding="utf-8")
    out = tmp_path / "f.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "Ethernet-BP0" not in text and "Ethernet-IB0" not in text and "ASIC1" not in text, text
    assert "no system name" in r.stderr and f"leaf7:Ethernet4 ({f}:6)" in r.stderr, r.stderr
    f.write_text(f"admin@leaf7:~$ show lldp table\n{_sonic_table(rows, 5)}{version}", encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 1 and f"{f}:10: error RT010" in r.stderr, r.stderr
    assert "Total entries displayed: 5" in r.stderr


def test_a_neighbour_port_known_only_by_a_number_or_a_mac_names_the_detail_form(tmp_path: Path) -> None:
    """A Junos neighbour's SNMP-index port ID in a table without descriptions was 'the port name '513',
    which an inventory cannot hold' (advice: rename it); it is a port ID without a name, and the fix names
    the capture that has it."""
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "sw3.txt").write_text(
        EOS_VERSION.format(dev="sw3") + "sw3#show lldp neighbors\n"
        "Port          Neighbor Device ID            Neighbor Port ID       TTL\n"
        "---------- ---------------------------- ---------------------- ---\n"
        "Et1           qfx9                          513                    120\n", encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "f.yaml"))
    assert r.returncode == 1, r.stderr
    assert "sends a number (513: an interface index) as port ID" in r.stderr, r.stderr
    assert "detail" in r.stderr


def test_cumulus_nvue_and_nclu_text_tables_and_nv_show_system_text(tmp_path: Path) -> None:
    """Cumulus ``nv show interface lldp`` / ``net show lldp`` (text tables: an interface without a neighbour
    has empty remote cells), ``nv show interface lldp-detail`` (lldpd's text with ``Interface: swp1`` alone)
    and ``nv show system`` / ``nv show platform`` without ``-o json`` were RT010."""
    from roce_tune.platforms import cumulus

    nvue = ("Interface  Speed  Type  Remote Host      Remote Port      \n"
            "---------  -----  ----  ---------------  -----------------\n"
            "eth0       1G     eth   oob7             swp10            \n"
            "swp2       400G   swp                                     \n"
            "swp51      400G   swp   spine7           swp3             \n")
    nclu = ("LocalPort  Speed  Mode        RemoteHost  RemotePort\n"
            "---------  -----  ----------  ----------  ----------\n"
            "swp51      400G   Default     spine7      swp3\n")
    got = [(n.local_port, n.remote_system, n.remote_port)
           for t in (nvue, nclu) for n in cumulus.parse_lldp_table(t)]
    assert got == [("eth0", "oob7", "swp10"), ("swp51", "spine7", "swp3"), ("swp51", "spine7", "swp3")]
    detail = ("-------------------------------------------------------------------------------\n"
              "LLDP neighbors:\n"
              "-------------------------------------------------------------------------------\n\n"
              "Interface:    swp1\n"
              "-------------------------------------------------------------------------------\n"
              "  Chassis:\n    ChassisID:    mac 02:00:00:00:07:01\n    SysName:      gpu07\n"
              "  Port:\n    PortID:       mac 02:00:00:00:07:02\n    PortDescr:    ens1f0np0\n")
    system = ("                operational          applied\n"
              "--------------  -------------------  -------\n"
              "hostname        leaf7                leaf7\nbuild           Cumulus Linux 5.9.1\n")
    platform = ("                operational\n--------------  -------------\n"
                "part-number     MSN4700-WS2FO\nproduct-name    SN4700\n")
    p = "cumulus@leaf7:mgmt:~$ "
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "leaf7.txt").write_text(
        f"{p}nv show system\n{system}{p}nv show platform\n{platform}"
        f"{p}nv show interface lldp\n{nvue}{p}nv show interface lldp-detail\n{detail}", encoding="utf-8")
    out = tmp_path / "f.yaml"
    r = run("import", "lldp", str(cap), "--out", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert "platform: cumulus" in text and "model: SN4700" in text and 'os_version: "5.9.1"' in text, text
    assert '"leaf7:swp51", b: "spine7:swp3"' in text and 'switch_port: "leaf7:swp1"' in text, text


def test_sonic_show_version_of_every_vendors_hwsku_names_the_catalog_model() -> None:
    """SONiC HwSKUs as the builds name them: NVIDIA's ``ACS-MSN2700`` (read as the ``Model Number`` part
    number ``MSN2700-CS2FO``), Arista's ``Arista-7060X6-64PE-B-C512S2`` with an empty Model Number (read as
    the whole SKU) and Dell's ``DellEMC-Z9332f-O32`` with ``Model Number: N/A`` (read as 'N/A') are the
    catalog models SN2700, 7060X6-64PE and DellEMC-Z9332f."""
    from roce_tune.platforms import sonic

    def model(sku: str, number: str) -> str | None:
        return sonic.parse_show_version(f"SONiC Software Version: SONiC.202311.1\nHwSKU: {sku}\n"
                                        f"ASIC: broadcom\nModel Number: {number}\n").model

    assert model("ACS-MSN2700", "MSN2700-CS2FO") == "SN2700"
    assert model("Arista-7060X6-64PE-B-C512S2", "") == "7060X6-64PE"
    assert model("DellEMC-Z9332f-O32", "N/A") == "DellEMC-Z9332f"
    assert model("Mellanox-SN4700-O8C48", "MSN4700-WS2FO") == "SN4700"


def test_eos_airflow_suffix_and_nxos_release_label_in_show_version() -> None:
    """EOS ``Arista DCS-7060DX5-64S-F`` (the airflow variant) was model '7060DX5-64S-F', no catalog model;
    NX-OS 10.x ``NXOS: version 10.4(2) [Feature Release]`` was os_version '10.4.2[Feature Release]'."""
    from roce_tune.platforms import eos, nxos

    facts = eos.parse_show_version(
        "Arista DCS-7060DX5-64S-F\nHardware version: 11.01\nSerial number: JPE00000002\n"
        "System MAC address: 0200.0000.0002\n\nSoftware image version: 4.30.2F\nArchitecture: x86_64\n")
    assert (facts.model, facts.os_version) == ("7060DX5-64S", "4.30.2F")
    facts = nxos.parse_show_version(NXOS_VERSION.format(dev="nx1").split("\n", 1)[1].replace(
        "NXOS: version 10.3(4a)", "NXOS: version 10.4(2) [Feature Release]"))
    assert (facts.model, facts.os_version) == ("N9K-C9364D-GX2A", "10.4.2")


def test_nxos_show_lldp_neighbors_json_brief_table() -> None:
    """NX-OS ``show lldp neighbors | json`` (the brief table: ``TABLE_nbor.ROW_nbor``, the Device ID in
    ``chassis_id``) was RT010 'not a capture roce-tune reads' (only the detail JSON was)."""
    from roce_tune.platforms import nxos

    text = ('{\n  "neigh_hdr": "neigh_hdr",\n  "TABLE_nbor": {\n    "ROW_nbor": [\n'
            '      {"chassis_id": "spine1", "l_port_id": "Eth1/1", "hold_time": 120,\n'
            '       "enabled_capability": "BR", "port_id": "Ethernet1/49"},\n'
            '      {"chassis_id": "02aa.bbcc.0001", "l_port_id": "Eth1/2", "hold_time": 120,\n'
            '       "port_id": "swp9"}\n    ]\n  },\n  "neigh_count": 2\n}\n')
    got = [(n.local_port, n.remote_system, n.remote_port) for n in nxos.parse_lldp_json(text)]
    assert got == [("Ethernet1/1", "spine1", "Ethernet1/49"), ("Ethernet1/2", None, "swp9")]
    (fmt,) = [f for f in nxos.LLDP_FORMATS if f.detect(text)]
    assert fmt.parse is nxos.parse_lldp_json


def test_eos_show_lldp_neighbors_json_brief_table() -> None:
    """EOS ``show lldp neighbors | json`` (``lldpNeighbors`` a list of ``{port, neighborDevice,
    neighborPort}``) was RT010 'no lldpNeighbors object' (only the detail JSON, keyed by port, was read)."""
    from roce_tune.platforms import eos

    text = ('{\n  "tablesLastChangeTime": 1700000000.0,\n  "lldpNeighbors": [\n'
            '    {"port": "Ethernet1", "neighborDevice": "spine1", "neighborPort": "Ethernet7",\n'
            '     "ttl": 120},\n'
            '    {"port": "Et3/1", "neighborDevice": "02aa.bbcc.0001", "neighborPort": "swp9", "ttl": 120}\n'
            "  ]\n}\n")
    got = [(n.local_port, n.remote_system, n.remote_port, n.index) for n in eos.parse_lldp_json(text)]
    assert got == [("Ethernet1", "spine1", "Ethernet7", 3), ("Ethernet3/1", None, "swp9", 5)]


def test_junos_evolved_and_json_show_version_and_nxos_json_show_version() -> None:
    """Junos OS Evolved's ``show version`` (``Yocto:``, ``Linux Kernel:`` lines: the QFX5130/5220/5240) was
    RT010 'ntc-templates … cannot read the output'; ``show version | display json`` (Junos) and ``show
    version | json`` (NX-OS) were RT010 'not a capture roce-tune reads'."""
    from roce_tune.platforms import junos, nxos

    evo = ("Hostname: qfx9\nModel: qfx5240-64od\nJunos: 24.2R1-S1.4-EVO\nYocto: 3.0.2\n"
           "Linux Kernel: 5.2.60-yocto-standard-g0a1b2c3\n"
           "JUNOS-EVO OS 64-bit [junos-evo-install-qfx-ms-x86-64-24.2R1-S1.4-EVO]\n")
    facts = junos.parse_show_version(evo)
    assert (facts.model, facts.os_version, facts.hostname) == ("QFX5240-64OD", "24.2R1-S1.4-EVO", "qfx9")
    jj = ('{\n  "software-information": [{\n    "host-name": [{"data": "qfx8"}],\n'
          '    "product-model": [{"data": "qfx5220-32cd"}],\n    "junos-version": [{"data": "23.2R1.14"}]\n'
          "  }]\n}\n")
    (fmt,) = [f for f in junos.VERSION_FORMATS if f.detect(jj)]
    facts = fmt.parse(jj)
    assert (facts.model, facts.os_version, facts.hostname) == ("QFX5220-32CD", "23.2R1.14", "qfx8")
    nj = ('{\n  "header_str": "Cisco Nexus Operating System (NX-OS) Software",\n'
          '  "nxos_ver_str": "10.4(2) [Feature Release]",\n'
          '  "chassis_id": "Nexus9000 C9364D-GX2A Chassis",\n  "host_name": "nx7"\n}\n')
    (fmt,) = [f for f in nxos.VERSION_FORMATS if f.detect(nj)]
    facts = fmt.parse(nj)
    assert (facts.model, facts.os_version, facts.hostname) == ("N9K-C9364D-GX2A", "10.4.2", "nx7")


def test_sonic_emulator_show_version_is_the_shape_sonic_prints(tmp_path: Path) -> None:
    """The SONiC emulator's ``show version`` printed three lines (release, Debian, HwSKU): no Platform, ASIC
    or Model Number as sonic-utilities prints them, and its platform summary named an MSN4700 part on an
    MSN2700 platform. It prints the real layout now, and roce-tune's reader gets the model from it."""
    from roce_tune.platforms import sonic
    from tests.emulators.core import EmulatorSpec
    from tests.emulators.sonic import SonicDevice

    dev = SonicDevice(EmulatorSpec("sonic", "leaf7"), tmp_path)
    out, rc = dev.new_session("admin", False).show(["version"])
    assert rc == 0 and out.startswith("\nSONiC Software Version: SONiC.")
    for line in ("Platform: x86_64-mlnx_msn2700-r0", "HwSKU: ACS-MSN2700", "ASIC: mellanox", "ASIC Count: 1",
                 "Model Number: MSN2700-", "Docker images:"):
        assert f"\n{line}" in out, (line, out)
    facts = sonic.parse_show_version(out)
    assert (facts.model, facts.os_version) == ("SN2700", dev.release)


def test_error_lines_an_lldp_command_printed_are_named_in_a_note(tmp_path: Path) -> None:
    """SONiC's lldpshow prints docker's 'Error response from daemon: …' when an ASIC's lldp container is not
    running, and lldpctl '[WARN/lldpctl] unknown command …' for a port it does not know; the neighbours
    behind them are missing from the output, and the import said nothing."""
    cap = tmp_path / "cap"
    cap.mkdir()
    rows = "Ethernet0      spine7          Ethernet1/5        BR            leaf7:Ethernet0\n"
    f = cap / "leaf7.txt"
    f.write_text("admin@leaf7:~$ show lldp table\n"
                 "Error response from daemon: Container 0a1b2c is not running\n"
                 + _sonic_table(rows, 1) + SONIC_VERSION.format(dev="leaf7"), encoding="utf-8")
    (cap / "leaf8.txt").write_text(f"admin@leaf8:~$ show lldp neighbors\n{LLDPD_TEXT}"
                                   + SONIC_VERSION.format(dev="leaf8"), encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "f.yaml"))
    assert r.returncode == 0, r.stderr
    assert f"{f}:2: Error response from daemon: Container 0a1b2c is not running" in r.stderr, r.stderr
    assert "leaf8.txt:2: 2025-01-07T10:00:00 [WARN/lldpctl] unknown command" in r.stderr, r.stderr


# lldpd's `lldpcli show interfaces` (src/client/display.c display_local_interfaces: the "LLDP interfaces"
# title) prints this device's own ports as `Interface: <port>` alone, with its own chassis and port under them
LLDPD_OWN_PORTS = """\
-------------------------------------------------------------------------------
LLDP interfaces:
-------------------------------------------------------------------------------
Interface:    ens1f0np0
  Administrative status: RX and TX
  Chassis:
    ChassisID:    mac 02:00:00:00:07:01
    SysName:      gpu07
  Port:
    PortID:       mac 02:00:00:00:07:02
    PortDescr:    ens1f0np0
-------------------------------------------------------------------------------
"""


def test_lldpcli_show_interfaces_is_not_read_as_neighbours(tmp_path: Path) -> None:
    """``lldpcli show interfaces`` lists the device's own ports: each was read as a neighbour named after the
    device itself (gpu07:ens1f0np0 seeing gpu07 port ens1f0np0) and the import exited 0 with a host without
    NICs. It is named as not a neighbour list; the same ports under ``LLDP neighbors:`` are read."""
    import pytest

    from roce_tune.platforms.lldp import LldpParseError, parse_lldpctl_text

    with pytest.raises(LldpParseError, match="LLDP interfaces.*own port.*show neighbors"):
        parse_lldpctl_text(LLDPD_OWN_PORTS)
    as_neighbours = LLDPD_OWN_PORTS.replace("LLDP interfaces:", "LLDP neighbors:")
    assert [(n.local_port, n.remote_system) for n in parse_lldpctl_text(as_neighbours)] == [
        ("ens1f0np0", "gpu07")]
    cap = tmp_path / "cap"
    cap.mkdir()
    (cap / "gpu07.txt").write_text(f"root@gpu07:~# lldpcli show interfaces\n{LLDPD_OWN_PORTS}",
                                   encoding="utf-8")
    r = run("import", "lldp", str(cap), "--out", str(tmp_path / "f.yaml"))
    assert r.returncode != 0 and "gpu07.txt:5" in r.stderr and "show neighbors" in r.stderr, r.stderr


def test_cumulus_text_table_cells_with_a_space_are_cut_at_the_columns() -> None:
    """``nv show interface lldp`` / ``net show lldp``: a remote port ID with a space (Force10/Dell
    ``GigabitEthernet 0/2``) or a remote host with one (``PowerEdge R750``) was cut at the last space: the
    neighbour read as a device ``GigabitEthernet`` with port ``0/2``. Cells are cut at the header's
    columns."""
    from roce_tune.platforms import cumulus

    nvue = ("Interface  Speed  Type  Remote Host      Remote Port\n"
            "---------  -----  ----  ---------------  -------------------\n"
            "eth0       1G     eth   oob7             GigabitEthernet 0/2\n"
            "swp7       400G   swp   PowerEdge R750   ens1f0np0\n"
            "swp51      400G   swp   spine7           swp3\n")
    got = [(n.local_port, n.remote_system, n.remote_port) for n in cumulus.parse_lldp_table(nvue)]
    assert got == [("eth0", "oob7", "GigabitEthernet 0/2"), ("swp7", "PowerEdge R750", "ens1f0np0"),
                   ("swp51", "spine7", "swp3")]
