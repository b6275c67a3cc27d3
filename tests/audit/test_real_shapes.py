"""Running configurations in shapes real switches print and people paste, which roce-tune's own rendering
and the emulators do not produce: each test is a small fixture in one such shape (not a copy of a
published one) and names the misreading it guards against.

Shapes seen in public configurations: NX-OS 10.x ``priority-flow-control mode on send-tlv`` and
``bandwidth percent W`` queuing classes (Azure Local reference ToR configurations for Nexus 93180YC-FX,
github.com/Azure/AzureLocal-Supportability); SONiC CONFIG_DB printed on one line (``jq -c``,
``sonic-cfggen -d --print-data`` piped, JSON logged by SONiC daemons).
"""

from __future__ import annotations

from pathlib import Path

from roce_tune.audit import audit_dir
from roce_tune.platforms import platform

# ------------------------------------------------------------------------------------------------- NX-OS
NXOS = """\
leaf9# show running-config

!Command: show running-config
!Running configuration last done at: Mon Jun  2 10:00:00 2025

version 10.3(4a) Bios:version 05.47
hostname leaf9

class-map type qos match-any ROCE
  match dscp 26
class-map type qos match-any CNP
  match dscp 48
policy-map type qos ROCE_IN
  class ROCE
    set qos-group 3
  class CNP
    set qos-group 7
policy-map type network-qos ROCE_NQ
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
policy-map type queuing ROCE_OUT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 60
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q7
    priority level 1
  class type queuing c-out-8q-q-default
    bandwidth percent 40
system qos
  service-policy type queuing output ROCE_OUT
  service-policy type network-qos ROCE_NQ

interface Ethernet1/1
  description gpu01
  priority-flow-control mode on send-tlv
  mtu 9216
  service-policy type qos input ROCE_IN no-stats

interface Ethernet1/2
  description gpu02
  priority-flow-control mode on
  mtu 9216
  service-policy type qos input ROCE_IN
"""


def test_nxos_pfc_mode_on_send_tlv_is_pfc_on() -> None:
    """``priority-flow-control mode on send-tlv`` (NX-OS 10.x: PFC on, and its DCBX TLV sent) was read by
    its last word: neither on nor off, so the port's PFC was "automatic (DCBX): not checked" and its
    schedulers were dropped with it."""
    qos = platform("nxos").read_back(NXOS)
    assert qos.ports["Ethernet1/1"].pfc_priorities == [3]
    assert qos.ports["Ethernet1/2"].pfc_priorities == [3]
    off = platform("nxos").read_back(NXOS.replace("mode on send-tlv", "mode off"))
    assert off.ports["Ethernet1/1"].pfc_priorities == []
    auto = platform("nxos").read_back(NXOS.replace("mode on send-tlv", "mode auto"))
    assert auto.ports["Ethernet1/1"].pfc_priorities is None


def test_nxos_bandwidth_percent_is_a_dwrr_weight() -> None:
    """``bandwidth percent W`` (a queuing class's share without ``remaining``) was ignored: the queue read
    as unscheduled while the switch gives it W %."""
    qos = platform("nxos").read_back(NXOS)
    assert qos.schedulers is not None
    by_queue = {s.queue: (s.mode, s.weight_percent) for s in qos.schedulers}
    assert by_queue == {0: ("dwrr", 40), 3: ("dwrr", 60), 7: ("strict", None)}


def test_nxos_send_tlv_ports_are_audited(tmp_path: Path) -> None:
    """With every port ``on send-tlv`` the audit checked no PFC at all (RT420 not checked); PFC on the
    wrong priority went unreported."""
    text = NXOS.replace("priority-flow-control mode on\n", "priority-flow-control mode on send-tlv\n")
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "leaf9.txt").write_text(text, encoding="utf-8")
    r = audit_dir(tmp_path / "ok", None)
    assert not r.data.unparsed
    assert [f for f in r.findings if f.device == "leaf9"] == []
    assert not [s for s in r.not_checked if s.device == "leaf9" and s.rule == "RT420"]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "leaf9.txt").write_text(text.replace("pause pfc-cos 3", "pause pfc-cos 4"),
                                                encoding="utf-8")
    found = [f for f in audit_dir(tmp_path / "bad", None).findings if f.device == "leaf9"]
    assert {f.rule for f in found} >= {"RT420"}, found


# ------------------------------------------------------------------------------------------------- SONiC
SONIC_DB = {
    "DEVICE_METADATA": {"localhost": {"hostname": "leaf5", "hwsku": "Mellanox-SN4600C-C64"}},
    "PORT": {p: {"mtu": "9100", "speed": "100000"} for p in ("Ethernet0", "Ethernet4")},
    "PORT_QOS_MAP": {p: {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "tc_to_queue_map": "AZURE",
                         "pfc_enable": "3"} for p in ("Ethernet0", "Ethernet4")},
    "DSCP_TO_TC_MAP": {"AZURE": {"26": "3", "48": "6"}},
    "TC_TO_QUEUE_MAP": {"AZURE": {"0": "0", "3": "3", "6": "6"}},
    "QUEUE": {f"{p}|3": {"wred_profile": "AZURE_LOSSLESS"} for p in ("Ethernet0", "Ethernet4")},
    "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "250000",
                                        "green_max_threshold": "2097152", "green_drop_probability": "5"}},
}


def test_sonic_config_db_on_one_line_is_a_running_config(tmp_path: Path) -> None:
    """CONFIG_DB printed compact (one line: ``… | jq -c``, a daemon's log of it) matched no capture format
    (the pattern wanted a table name at the start of a line): the block was "not understood" and the
    switch was not audited at all. PFC on the wrong priority must be found in it like in the indented
    form."""
    import json

    for name, db in (("ok", SONIC_DB), ("bad", {**SONIC_DB, "PORT_QOS_MAP": {
            p: {**r, "pfc_enable": "4"} for p, r in SONIC_DB["PORT_QOS_MAP"].items()}})):
        cap = tmp_path / name
        cap.mkdir()
        (cap / "leaf5.txt").write_text(f"admin@leaf5:~$ show runningconfiguration all | jq -c\n"
                                       f"{json.dumps(db, separators=(',', ':'))}\n", encoding="utf-8")
        r = audit_dir(cap, None)
        assert not r.data.unparsed, r.data.unparsed
        sw = r.data.switches["leaf5"]
        assert sw.platform == "sonic" and sw.running is not None
        rules = {f.rule for f in r.findings if f.device == "leaf5"}
        assert rules == (set() if name == "ok" else {"RT420"}), (name, r.findings)


def test_sonic_lossless_pg_without_a_headroom_profile_is_not_checked(tmp_path: Path) -> None:
    """The dynamic buffer model leaves the lossless PGs' headroom to buffermgrd (``BUFFER_PG`` row
    ``"profile": "NULL"``, or no row): the running configuration states no headroom, and the audit passed
    the plan's headroom (RT426) silently, as if it had been compared. It is listed as not checked."""
    import json

    from tests.audit.test_running_config import INVENTORY, _capture, _running

    device, running = _running("sonic", tmp_path)
    db = json.loads(running[running.find("{"):])
    lossless = sorted(k for k in db["BUFFER_PG"] if not k.endswith("|0"))
    assert lossless
    for key in lossless:
        db["BUFFER_PG"][key] = {"profile": "NULL"}
    db["DEVICE_METADATA"]["localhost"]["buffer_model"] = "dynamic"
    cap, _ = _capture(tmp_path, device, "sonic", json.dumps(db, indent=4))
    r = audit_dir(cap, INVENTORY)
    assert [f for f in r.findings if f.device == device and f.rule == "RT426"] == []
    skipped = [s for s in r.not_checked if s.device == device and s.rule == "RT426"]
    assert len(skipped) == 1, r.not_checked
    for key in lossless:
        assert key.split("|")[0] in skipped[0].needs


# ------------------------------------------------------------------------------------- repeated captures
#: ``show pfcwd stats`` run three times in one session (a storm, restored, then another), the way people
#: paste a watchdog they are watching
_PFCWD_HEAD = ("      QUEUE    STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP"
               "    TX LAST OK/DROP    RX LAST OK/DROP\n"
               "-----------  --------  -------------------------  ------------  ------------"
               "  -----------------  -----------------\n")
PFCWD_THRICE = "".join(
    f"admin@leaf6:~$ show pfcwd stats\n{_PFCWD_HEAD}{row}\n" for row in (
        "Ethernet8:3   stormed                        1/0      0/100000           0/0"
        "           0/100000                0/0",
        "Ethernet8:3  operational                     1/1      0/250000           0/0"
        "           0/250000                0/0",
        "Ethernet8:3   stormed                        2/1      0/260000           0/0"
        "            0/10000                0/0"))


def test_three_captures_of_a_counter_are_judged_first_to_last(tmp_path: Path) -> None:
    """A counter captured three times was judged over the last two captures only (each capture replaced
    the "before" snapshot): the watchdog above read "detected 1, restored 0; 10,000 dropped" although over
    the capture it stormed once more, restored once and dropped 160,000 packets. The interval "during the
    capture" is from the first capture to the last."""
    (tmp_path / "leaf6.txt").write_text(PFCWD_THRICE, encoding="utf-8")
    found = [f for f in audit_dir(tmp_path, None).findings if f.device == "leaf6" and f.rule == "RT423"]
    assert len(found) == 1, found
    assert "detected 1 time(s), restored 1" in found[0].message, found[0].message
    assert "160,000" in found[0].message, found[0].message


ETHTOOL = """\
[root@gpu03 ~]# ethtool -S eth2 | grep prio3
     rx_prio3_packets: {rx}
     tx_prio3_packets: {tx}
     rx_prio3_pause: 0
     tx_prio3_pause: {pause}
"""


def test_three_ethtool_captures_are_judged_first_to_last(tmp_path: Path) -> None:
    """The same for a host's ``ethtool -S``: the NIC paused between the first and the second capture
    (RT421), and the third capture, taken after, replaced the interval with a quiet one."""
    text = "".join(ETHTOOL.format(rx=rx, tx=tx, pause=p) for rx, tx, p in
                   ((1_000_000, 1_000_000, 0), (2_000_000, 2_000_000, 50_000),
                    (3_000_000, 3_000_000, 50_000)))
    (tmp_path / "gpu03.txt").write_text(text, encoding="utf-8")
    found = [f for f in audit_dir(tmp_path, None).findings if f.device == "gpu03" and f.rule == "RT421"]
    assert len(found) == 1, found
    assert "50,000" in found[0].message, found[0].message


# --------------------------------------------------------------------------------------------------- EOS
#: ``show running-config section priority-flow-control``: no header, no ``qos map``/``qos profile`` line,
#: only the blocks that state PFC (each interface block whole, as ``section`` prints it)
EOS_PFC_SECTION = """\
leaf2#show running-config section priority-flow-control
priority-flow-control pause watchdog action drop
interface Ethernet1/1
   description gpu01
   mtu 9214
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 20
interface Ethernet1/2
   description gpu02
   mtu 9214
   priority-flow-control on
   priority-flow-control priority 4 no-drop
   !
   tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 20
"""


def test_eos_running_config_section_without_qos_maps_is_read(tmp_path: Path) -> None:
    """An EOS ``show running-config section priority-flow-control`` (or any capture of interfaces without
    a header, ``qos map`` or ``qos profile`` line) matched no capture format: "not understood", so PFC on
    the wrong priority of Ethernet1/2 went unreported."""
    (tmp_path / "leaf2.txt").write_text(EOS_PFC_SECTION, encoding="utf-8")
    r = audit_dir(tmp_path, None)
    assert not r.data.unparsed, r.data.unparsed
    assert r.data.switches["leaf2"].platform == "eos"
    found = [(f.rule, f.port) for f in r.findings if f.device == "leaf2"]
    assert found == [("RT420", "Ethernet1/2")], r.findings


# ------------------------------------------------------------------------------------------------- Junos
JUNOS_PCP_PFC = """\
root@qfx1> show configuration class-of-service | display set
set class-of-service classifiers dscp roce-dscp forwarding-class lossless loss-priority low code-points 011010
set class-of-service classifiers dscp roce-dscp forwarding-class cnp loss-priority low code-points 110000
set class-of-service forwarding-classes class lossless queue-num 3
set class-of-service forwarding-classes class lossless no-loss
set class-of-service forwarding-classes class cnp queue-num 6
set class-of-service congestion-notification-profile p3 input ieee-802.1 code-point {pcp} pfc
set class-of-service congestion-notification-profile p3 output ieee-802.1 code-point 011 flow-control-queue 3
set class-of-service interfaces et-0/0/4 congestion-notification-profile p3
set class-of-service interfaces et-0/0/4 unit 0 classifiers dscp roce-dscp
"""


def test_junos_pfc_by_ieee_802_1_code_point_is_read() -> None:
    """A congestion-notification profile enabling PFC on an IEEE 802.1p code point (``input ieee-802.1
    code-point 011 pfc``, Junos's classic PFC form) was not read: the port read "PFC off" and the audit
    reported "no port has PFC on RoCE priority 3" (RT420 error) on a switch that pauses priority 3."""
    qos = platform("junos").read_back(JUNOS_PCP_PFC.format(pcp="011"))
    assert qos.ports["et-0/0/4"].pfc_priorities == [3]
    for pcp, prio in (("ef1", 3), ("100", 4)):
        assert platform("junos").read_back(JUNOS_PCP_PFC.format(pcp=pcp)).ports["et-0/0/4"].pfc_priorities \
            == [prio]
    own = "set class-of-service code-point-aliases ieee-802.1 roce 011\n" + JUNOS_PCP_PFC.format(pcp="roce")
    assert platform("junos").read_back(own).ports["et-0/0/4"].pfc_priorities == [3]


#: a Nexus 3000/5000-style configuration: the no-drop class is named by ``pause no-drop`` in a
#: network-qos class matching a qos-group, whose CoS the type-qos policy classifies (Microsoft's converged
#: NIC switch examples for Nexus 3132 have this shape); ``pfc-cos`` may follow ``no-drop``
NXOS_NO_DROP = """\
class-map type qos match-all RDMA
  match cos 3
class-map type queuing RDMA
  match qos-group 3
policy-map type qos QOS_MARKING
  class RDMA
    set qos-group 3
  class class-default
policy-map type queuing QOS_QUEUEING
  class type queuing RDMA
    bandwidth percent 50
  class type queuing class-default
    bandwidth percent 50
class-map type network-qos RDMA
  match qos-group 3
policy-map type network-qos QOS_NETWORK
  class type network-qos RDMA
    mtu 2240
    pause no-drop
  class type network-qos class-default
    mtu 9216
system qos
  service-policy type qos input QOS_MARKING
  service-policy type queuing output QOS_QUEUEING
  service-policy type network-qos QOS_NETWORK

interface Ethernet1/5
  switchport mode trunk
  priority-flow-control mode on
"""


def test_nxos_pause_no_drop_class_gives_pfc_on_its_cos() -> None:
    """``pause no-drop`` (Nexus 3000/5000 network-qos) named no ``pfc-cos``: the port's PFC read as on no
    priority, and the audit reported "no port has PFC on priority 3" (RT420 error). Its CoS is the one the
    type-qos policy classifies into the class's qos-group; ``pause no-drop pfc-cos N`` names it."""
    nxos = platform("nxos")
    assert nxos.read_back(NXOS_NO_DROP).ports["Ethernet1/5"].pfc_priorities == [3]
    named = NXOS_NO_DROP.replace("pause no-drop\n", "pause no-drop pfc-cos 4\n")
    assert nxos.read_back(named).ports["Ethernet1/5"].pfc_priorities == [4]
    # a class whose CoS the configuration does not say (no match cos for the qos-group): unknown, not "off"
    unknown = NXOS_NO_DROP.replace("  match cos 3\n", "  match dscp 26\n")
    assert nxos.read_back(unknown).ports["Ethernet1/5"].pfc_priorities is None


def test_a_running_config_without_a_dscp_classification_lists_rt414_not_checked(tmp_path: Path) -> None:
    """A configuration that classifies by CoS (``match cos 3``, as the Nexus 3000/5000 example above and
    Azure Local's Nexus 9000 ToRs do) or states no DSCP map at all gave no RT414 and no "not checked":
    where the RoCE DSCP lands was silently passed. It is listed as not checked."""
    (tmp_path / "tor1.txt").write_text(NXOS_NO_DROP, encoding="utf-8")
    r = audit_dir(tmp_path, None)
    assert r.data.switches["tor1"].running is not None
    assert [f for f in r.findings if f.device == "tor1" and f.rule == "RT414"] == []
    skipped = [s for s in r.not_checked if s.device == "tor1" and s.rule == "RT414"]
    assert len(skipped) == 1 and "DSCP" in skipped[0].needs, r.not_checked


def test_nxos_interfaces_only_capture_leaves_pfc_ecn_and_watchdog_unknown(tmp_path: Path) -> None:
    """``show running-config interface Ethernet1/1-2`` (a header, the interfaces, no ``system qos`` and no
    policies): ports with ``priority-flow-control mode on`` read "PFC on no priority" (the network-qos
    policy is not in the capture) and the audit reported RT420 "no port has PFC" — an error made of
    absent data. Their PFC priorities, ECN and watchdog are unknown."""
    head, _, rest = NXOS.partition("class-map type qos match-any ROCE\n")
    head = head.replace("show running-config", "show running-config interface Ethernet1/1-2")
    interfaces = head.replace("hostname leaf9\n", "") + rest[rest.index("interface Ethernet1/1"):]
    qos = platform("nxos").read_back(interfaces)
    for port in ("Ethernet1/1", "Ethernet1/2"):
        p = qos.ports[port]
        assert (p.pfc_priorities, p.ecn, p.watchdog, p.mtu) == (None, None, None, 9216), p
    (tmp_path / "leaf9.txt").write_text(interfaces, encoding="utf-8")
    r = audit_dir(tmp_path, None)
    assert [f for f in r.findings if f.device == "leaf9"] == []
    assert [s.rule for s in r.not_checked if s.device == "leaf9" and s.rule == "RT420"] == ["RT420"]


def test_junos_capture_without_class_of_service_leaves_pfc_unknown(tmp_path: Path) -> None:
    """``show configuration interfaces | display set`` (no ``class-of-service``, no ``version``/``system``:
    a part of the configuration) read every port as "PFC off, no ECN" and the audit reported RT420 "no
    port has PFC". In a whole configuration (``set version …``) no CoS still means none."""
    part = ("root@qfx1> show configuration interfaces | display set\n"
            "set interfaces et-0/0/0 mtu 9216\n"
            "set interfaces et-0/0/0 unit 0 family inet address 10.0.0.1/31\n")
    p = platform("junos").read_back(part).ports["et-0/0/0"]
    assert (p.mtu, p.pfc_priorities, p.ecn, p.watchdog) == (9216, None, None, None)
    (tmp_path / "qfx1.txt").write_text(part, encoding="utf-8")
    r = audit_dir(tmp_path, None)
    assert [f for f in r.findings if f.device == "qfx1"] == []
    whole = part.replace("set interfaces et-0/0/0 mtu", "set version 23.4R2.13\nset interfaces et-0/0/0 mtu")
    assert platform("junos").read_back(whole).ports["et-0/0/0"].pfc_priorities == []


def test_eos_interface_bound_to_a_profile_not_captured_is_unknown(tmp_path: Path) -> None:
    """``show running-config interfaces Ethernet1/1-2``: the ports bind ``service-profile ROCE``, which
    is not in the capture; they read "PFC off, no ECN, no watchdog" and the audit reported RT420 "no port
    has PFC". What the profile gives is unknown; with the profile captured it is read."""
    part = ("leaf2#show running-config interfaces Ethernet1/1-2\n"
            "interface Ethernet1/1\n   description gpu01\n   mtu 9214\n   service-profile ROCE\n"
            "interface Ethernet1/2\n   description gpu02\n   mtu 9214\n   service-profile ROCE\n")
    p = platform("eos").read_back(part).ports["Ethernet1/1"]
    assert (p.mtu, p.pfc_priorities, p.ecn, p.watchdog) == (9214, None, None, None)
    (tmp_path / "leaf2.txt").write_text(part, encoding="utf-8")
    assert [f for f in audit_dir(tmp_path, None).findings if f.device == "leaf2"] == []
    profile = ("qos profile ROCE\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n"
               "   priority-flow-control pause watchdog\n")
    p = platform("eos").read_back(profile + part).ports["Ethernet1/1"]
    assert (p.pfc_priorities, p.ecn, p.watchdog) == ([3], {}, True)


def test_nvue_port_bound_to_a_profile_not_captured_is_unknown(tmp_path: Path) -> None:
    """``nv config show -o commands | grep interface``: the ports bind the PFC and congestion-control
    profiles ``my_pfc``/``my_cc``, which the filtered capture left out (NVUE refuses a binding to a profile
    that does not exist); they read "PFC off, no ECN" and the audit reported RT420 "no port has PFC"."""
    part = ("cumulus@leaf3:mgmt:~$ nv config show -o commands | grep interface\n"
            "nv set interface swp1-2 link mtu 9216\n"
            "nv set interface swp1-2 qos pfc profile my_pfc\n"
            "nv set interface swp1-2 qos congestion-control profile my_cc\n")
    p = platform("cumulus").read_back(part).ports["swp1"]
    assert (p.mtu, p.pfc_priorities, p.ecn) == (9216, None, None)
    (tmp_path / "leaf3.txt").write_text(part, encoding="utf-8")
    assert [f for f in audit_dir(tmp_path, None).findings if f.device == "leaf3"] == []
    whole = part + ("nv set qos pfc my_pfc switch-priority 3\n"
                    "nv set qos congestion-control my_cc traffic-class 3 ecn enable\n")
    p = platform("cumulus").read_back(whole).ports["swp1"]
    assert (p.pfc_priorities, sorted(p.ecn or {})) == ([3], [3])


def test_ecn_of_a_profile_not_in_the_capture_is_unknown_not_none(tmp_path: Path) -> None:
    """A part of the configuration that binds an ECN profile without holding it (a SONiC ``jq`` selection
    of PORT_QOS_MAP and QUEUE whose ``wred_profile`` is in WRED_PROFILE, left out; an NVUE capture filtered
    to PFC whose ports bind a congestion-control profile) gave RT431 "WRED/ECN is not bound to lossless
    queue 3": the binding was read as no ECN. It is listed as not checked; a whole SONiC CONFIG_DB whose
    PFC port has no QUEUE row still has no ECN."""
    import json

    sonic = {"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}},
             "QUEUE": {"Ethernet0|3": {"wred_profile": "AZURE_LOSSLESS"}}}
    nvue = ("nv set interface swp1 qos pfc profile my_pfc\n"
            "nv set interface swp1 qos congestion-control profile my_cc\n"
            "nv set qos pfc my_pfc switch-priority 3\n")
    jq = "admin@leaf5:~$ show runningconfiguration all | jq '{PORT_QOS_MAP, QUEUE}'\n"
    for device, text in (("leaf5", jq + json.dumps(sonic, indent=2) + "\n"),
                         ("leaf3", "cumulus@leaf3:mgmt:~$ nv config show -o commands | grep pfc\n" + nvue)):
        cap = tmp_path / device
        cap.mkdir()
        (cap / f"{device}.txt").write_text(text, encoding="utf-8")
        r = audit_dir(cap, None)
        assert r.data.switches[device].running is not None
        assert [f.rule for f in r.findings if f.device == device] == [], (device, r.findings)
        assert [s for s in r.not_checked if s.device == device and s.rule == "RT431"], (device, r.not_checked)
    whole = {**SONIC_DB, "QUEUE": {"Ethernet0|3": SONIC_DB["QUEUE"]["Ethernet0|3"]}}
    assert platform("sonic").read_back(json.dumps(whole)).ports["Ethernet4"].ecn == {}


def test_sonic_fragment_without_pfc_wd_has_unknown_watchdog() -> None:
    """A part of CONFIG_DB without the PFC_WD table (``sonic-cfggen -d --var-json PORT_QOS_MAP``, a ``jq``
    selection) read every PFC port "watchdog off" (RT427 with a plan that turns it on). In a whole CONFIG_DB
    (DEVICE_METADATA present) no PFC_WD row is still "off"."""
    import json

    part = {"PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "3"}}}
    assert platform("sonic").read_back(json.dumps(part)).ports["Ethernet0"].watchdog is None
    whole = {**part, "DEVICE_METADATA": {"localhost": {"hostname": "leaf5"}}}
    assert platform("sonic").read_back(json.dumps(whole)).ports["Ethernet0"].watchdog is False


def test_pfcwd_config_with_history_column_and_na_cells(tmp_path: Path) -> None:
    """Current sonic-utilities prints ``show pfcwd config`` with a HISTORY column and ``N/A`` where a port's
    entry has no detection time (its CONFIG_DESCRIPTION default): the ``N/A`` was compared with the plan
    ("detection (ms): plan 200, running N/A", RT427) although nothing was read."""
    from tests.audit.test_pfcwd_config import LAB

    lines = ["admin@lab-leaf1:~$ show pfcwd config", "Changed polling interval to 200ms",
             "BIG_RED_SWITCH status is disable",
             "     PORT    ACTION    DETECTION TIME    RESTORATION TIME    HISTORY",
             "---------  --------  ----------------  ------------------  ---------",
             "Ethernet0      drop               N/A                 200    disable",
             "Ethernet8      drop               200                 200    disable"]
    (tmp_path / "lab-leaf1.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = audit_dir(tmp_path, LAB)
    assert [f.message for f in r.findings if f.rule == "RT427"] == []


def test_eos_qos_map_with_a_range_is_recognised(tmp_path: Path) -> None:
    """``show running-config | include qos map`` whose DSCP list has a range or commas (``qos map dscp
    24-27,30 to traffic-class 3``) matched no capture format (the pattern allowed digits and spaces)."""
    (tmp_path / "leaf2.txt").write_text("leaf2#show running-config | include qos map\n"
                                        "qos map dscp 24-27,30 to traffic-class 3\n", encoding="utf-8")
    r = audit_dir(tmp_path, None)
    assert not r.data.unparsed and r.data.switches["leaf2"].platform == "eos"
    assert r.data.switches["leaf2"].running.value.dscp_to_tc == {24: 3, 25: 3, 26: 3, 27: 3, 30: 3}


def test_nxos_system_defined_default_policies_are_known_empty() -> None:
    """NX-OS's system-defined policies (``default-8q-nq-policy``, ``default-8q-out-policy`` …) are not
    printed in the running configuration: attached by name, they pause nothing and mark no ECN — known, not
    unknown (a policy of another name that the capture lacks is unknown)."""
    sys_nq = "  service-policy type network-qos "
    text = NXOS.replace("queuing output ROCE_OUT", "queuing output default-8q-out-policy").replace(
        sys_nq + "ROCE_NQ", sys_nq + "default-8q-nq-policy")
    p = platform("nxos").read_back(text).ports["Ethernet1/1"]
    assert (p.pfc_priorities, p.ecn) == ([], {})
    missing = NXOS.replace(sys_nq + "ROCE_NQ", sys_nq + "OTHER")
    assert platform("nxos").read_back(missing).ports["Ethernet1/1"].pfc_priorities is None
