"""Read-back of what is not roce-tune's own text: planted errors in rendered files, the emulators' running
configs (factory and after loading a rendering, in the emulator's own running-config format) and
hand-written running-config styles (other orderings, unrelated lines, other spellings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import SWITCH_PLATFORMS, get_platform
from roce_tune.qos import differences, expected_qos
from tests.emulators import EmulatorSpec
from tests.emulators.server import device_class
from tests.render.golden import pipeline_plan


def _switch(platform: str) -> tuple[Plan, SwitchPlan, str]:
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == platform)
    files = get_platform(platform).render(plan, sw)
    text = next(t for n, t in files.items() if not n.endswith(".nvue.yaml"))
    return plan, sw, text


def _diffs(platform: str, text: str, against_plan: bool = False) -> list[str]:
    plan, sw, _ = _switch(platform)
    mod = get_platform(platform)
    want = expected_qos(plan.classification, sw) if against_plan else mod.expressible_qos(plan, sw)
    return differences(want, mod.read_back(text))


def _sub(pattern: str, repl: Callable[[re.Match[str]], str] | str, text: str, flags: int = 0) -> str:
    """``re.sub`` of the first match; fails the test if the pattern is not in the rendered text."""
    out, n = re.subn(pattern, repl, text, count=1, flags=flags)
    assert n == 1, f"planting needs {pattern!r} in the rendered text"
    return out


def _kmax_up(m: re.Match[str]) -> str:
    return m.group(0).replace(m.group("v"), str(int(m.group("v")) + 7), 1)


#: platform -> planted error -> (mutation of the rendered text, word a difference must name)
PLANTS = {
    "sonic": {
        "kmax": (
            lambda t: re.sub(r'"green_max_threshold": "(?P<v>\d+)"', _kmax_up, t, count=1),
            "kmax_bytes",
        ),
        "pfc": (lambda t: _sub(r'"pfc_enable": "3"', '"pfc_enable": "4"', t), "pfc_priorities"),
        "dscp": (lambda t: _sub(r'\n\s+"26": "3",', "", t), "dscp_to_tc[26]"),
        "mtu": (lambda t: _sub(r'"mtu": "9216"', '"mtu": "9100"', t), "mtu"),
    },
    "eos": {
        "kmax": (lambda t: re.sub(r"maximum-threshold (?P<v>\d+) bytes", _kmax_up, t, count=1), "kmax_bytes"),
        "pfc": (
            lambda t: _sub(
                r"priority-flow-control priority 3 no-drop", "priority-flow-control priority 4 no-drop", t
            ),
            "pfc_priorities",
        ),
        "dscp": (lambda t: _sub(r"^qos map dscp 26 to traffic-class 3\n", "", t, re.M), "dscp_to_tc[26]"),
        "mtu": (lambda t: _sub(r"^   mtu 9214$", "   mtu 9000", t, re.M), "mtu"),
    },
    "nxos": {
        "kmax": (
            lambda t: re.sub(r"maximum-threshold (?P<v>\d+) kbytes", _kmax_up, t, count=1),
            "kmax_bytes",
        ),
        "pfc": (lambda t: _sub(r"pause pfc-cos 3", "pause pfc-cos 4", t), "pfc_priorities"),
        "dscp": (lambda t: _sub(r"^  match dscp 26\n", "", t, re.M), "dscp_to_queue[26]"),
        "mtu": (lambda t: _sub(r"^  mtu 9216$", "  mtu 9000", t, re.M), "mtu"),
    },
    "junos": {
        "kmax": (lambda t: _sub(r"(fill-level \[ \d+ )(\d+)( \])",
                                lambda m: f"{m.group(1)}{int(m.group(2)) + 1}{m.group(3)}",
                                t), "kmax_percent"),
        "pfc": (lambda t: _sub(r"pfc-priority 3", "pfc-priority 4", t), "pfc_priorities"),
        "dscp": (lambda t: _sub(r"code-points \[ 011010 \]", "code-points [ ]", t), "dscp_to_queue[26]"),
        "mtu": (lambda t: _sub(r" mtu 9216$", " mtu 9000", t, re.M), "mtu"),
    },
    "cumulus": {
        "kmax": (lambda t: re.sub(r"max-threshold (?P<v>\d+)", _kmax_up, t, count=1), "kmax_bytes"),
        "pfc": (lambda t: re.sub(r"(qos pfc \S+ switch-priority) 3", r"\1 4", t), "pfc_priorities"),
        "dscp": (
            lambda t: _sub(r"^nv set qos mapping default-global dscp 26 switch-priority 3\n", "", t, re.M),
            "dscp_to_tc[26]",
        ),
        # NVUE output sets no MTU (RT241): a running config's MTU is compared with the plan itself
        "mtu": (lambda t: t + "nv set interface swp1 link mtu 9000\n", "mtu"),
    },
}


@pytest.mark.parametrize("platform", SWITCH_PLATFORMS)
def test_rendered_text_reads_back_clean(platform: str) -> None:
    _, _, text = _switch(platform)
    assert _diffs(platform, text) == []


@pytest.mark.parametrize("kind", ["kmax", "pfc", "dscp", "mtu"])
@pytest.mark.parametrize("platform", SWITCH_PLATFORMS)
def test_planted_error_fails_the_read_back(platform: str, kind: str) -> None:
    _, _, text = _switch(platform)
    plant, word = PLANTS[platform][kind]
    bad = plant(text)
    assert bad != text
    diffs = _diffs(platform, bad, against_plan=(platform, kind) == ("cumulus", "mtu"))
    assert diffs, f"{platform}: planted {kind} error not seen"
    assert any(word in d for d in diffs), diffs


# --- emulators ---------------------------------------------------------------------------------------
def _device(platform: str, name: str, tmp: Path, initial: object = None):  # type: ignore[no-untyped-def]
    return device_class(platform)(EmulatorSpec(platform, name, initial_config=initial), tmp)


@pytest.mark.parametrize("platform", SWITCH_PLATFORMS)
def test_emulator_factory_running_config_reads_back(platform: str, tmp_path: Path) -> None:
    """The emulators' initial running configs parse without error, with what they state: their ports, no
    QoS maps, PFC off where the platform's default is off (SONiC whole CONFIG_DB, EOS, Cumulus named swp)."""
    text = _device(platform, "f1", tmp_path).running_config()
    qos = get_platform(platform).read_back(text)
    assert (
        qos.dscp_to_tc is None
        and qos.dscp_to_queue is None
        and qos.schedulers is None
        and qos.watchdog is None
    )
    expected_ports = {
        "sonic": {f"Ethernet{4 * i}" for i in range(4)},
        "eos": {"Ethernet1", "Ethernet2", "Ethernet3", "Ethernet4", "Management1"},
        "nxos": {"Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4", "mgmt0"},
        "junos": {"et-0/0/0", "et-0/0/1", "em0"},
        "cumulus": {"swp1", "swp2", "swp3", "swp4"},
    }[platform]
    assert set(qos.ports) == expected_ports
    if platform == "sonic":
        assert qos.buffer_model == "traditional"
        assert {p.mtu for p in qos.ports.values()} == {9100}
    if platform in ("sonic", "eos", "cumulus", "junos"):
        assert {tuple(p.pfc_priorities or ()) for p in qos.ports.values()} == {()}
        assert all(p.pfc_priorities == [] for p in qos.ports.values())
    if platform == "nxos":  # no "priority-flow-control mode": auto (DCBX) -> unknown
        assert all(p.pfc_priorities is None for p in qos.ports.values())


@pytest.mark.parametrize("platform", SWITCH_PLATFORMS)
def test_emulator_running_config_of_a_rendering_reads_back_equal(platform: str, tmp_path: Path) -> None:
    """A device started from roce-tune's rendering prints it in its own running-config format (merged modes,
    its own order, SONiC's 4-space JSON, factory lines around it); that reads back equal to the plan."""
    plan, sw, text = _switch(platform)
    initial: object = json.loads(text) if platform == "sonic" else text
    if platform == "sonic":
        initial = {**_device("sonic", "f", tmp_path / "f").config_db, **json.loads(text)}
    running = _device(platform, sw.name, tmp_path, initial).running_config()
    mod = get_platform(platform)
    seen = mod.read_back(running)
    assert differences(mod.expressible_qos(plan, sw), seen) == []
    assert {p.name for p in sw.ports} <= set(seen.ports)



def test_sonic_keys_naming_several_ports() -> None:
    """CONFIG_DB keys may name a comma list of ports (sonic-yang key-pattern ``QUEUE|({ifname},)*|{qindex}``;
    SONiC's YANG guide shows ``"Ethernet0,Ethernet4,Ethernet8|0"``; older qos/buffer templates wrote
    PORT_QOS_MAP and BUFFER_PG so). Such a key was read as one port named ``Ethernet0,Ethernet4`` and the
    real ports as having no PORT_QOS_MAP row: PFC off, no ECN."""
    db = {
        "DEVICE_METADATA": {"localhost": {"hostname": "s1"}},
        "PORT": {"Ethernet0": {"mtu": "9100"}, "Ethernet4": {"mtu": "9100"}, "Ethernet8": {"mtu": "9100"}},
        "PORT_QOS_MAP": {"Ethernet0,Ethernet4": {"pfc_enable": "3,4"}, "Ethernet8": {"pfc_enable": "3"}},
        "QUEUE": {"Ethernet0,Ethernet4,Ethernet8|3-4": {"wred_profile": "[WRED_PROFILE|AZURE_LOSSLESS]"}},
        "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "1048576",
                                            "green_max_threshold": "2097152", "green_drop_probability": "5"}},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"},
                   "Ethernet0,Ethernet4": {"action": "drop", "detection_time": "200",
                                           "restoration_time": "200"}},
    }
    qos = get_platform("sonic").read_back(json.dumps(db))
    assert sorted(qos.ports) == ["Ethernet0", "Ethernet4", "Ethernet8"]
    assert [qos.ports[p].pfc_priorities for p in sorted(qos.ports)] == [[3, 4], [3, 4], [3]]
    assert all(p.ecn and p.ecn[3].kmin_bytes == 1048576 for p in qos.ports.values())
    assert [qos.ports[p].watchdog for p in sorted(qos.ports)] == [True, True, False]
    assert qos.watchdog is not None and qos.watchdog.detection_ms == 200

# --- running-config styles ---------------------------------------------------------------------------
def test_sonic_legacy_references_ranges_and_other_tables() -> None:
    db = {
        "DEVICE_METADATA": {"localhost": {"hostname": "s1", "buffer_model": "dynamic"}},
        "PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"}, "Ethernet8": {"mtu": "9216"}},
        "DSCP_TO_TC_MAP": {
            "AZURE": {str(d): "3" if d == 26 else "0" for d in range(64)},
            "OTHER": {"0": "1"},
        },
        "TC_TO_QUEUE_MAP": {"AZURE": {str(t): str(t) for t in range(8)}},
        "PORT_QOS_MAP": {
            "Ethernet0": {
                "dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]",
                "pfc_enable": "3,4",
                "tc_to_queue_map": "[TC_TO_QUEUE_MAP|AZURE]",
            },
            "Ethernet8": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]"},
        },
        "QUEUE": {
            "Ethernet0|3-4": {
                "wred_profile": "[WRED_PROFILE|AZURE_LOSSLESS]",
                "scheduler": "[SCHEDULER|scheduler.1]",
            }
        },
        "SCHEDULER": {"scheduler.1": {"type": "DWRR", "weight": "15"}},
        "WRED_PROFILE": {
            "AZURE_LOSSLESS": {
                "ecn": "ecn_all",
                "green_min_threshold": "1048576",
                "green_max_threshold": "2097152",
                "green_drop_probability": "5",
            }
        },
        "BUFFER_PG": {
            "Ethernet0|3-4": {"profile": "[BUFFER_PROFILE|pg_lossless_400000_5m_profile]"},
            "Ethernet8|3-4": {"profile": "NULL"},
        },
        "BUFFER_PROFILE": {
            "pg_lossless_400000_5m_profile": {
                "xon": "18432",
                "xoff": "58368",
                "size": "76800",
                "pool": "[BUFFER_POOL|ingress_lossless_pool]",
            }
        },
        "CABLE_LENGTH": {"AZURE": {"Ethernet0": "5m", "Ethernet8": "40m"}},
        "PFC_WD": {
            "GLOBAL": {"POLL_INTERVAL": "200"},
            "Ethernet0": {"action": "forward", "detection_time": "400", "restoration_time": "600"},
        },
        "VLAN": {"Vlan1000": {"vlanid": "1000"}},
    }
    qos = get_platform("sonic").read_back(
        "admin@s1:~$ show runningconfiguration all\n" + json.dumps(db, indent=4)
    )
    e0, e8 = qos.ports["Ethernet0"], qos.ports["Ethernet8"]
    assert qos.buffer_model == "dynamic" and qos.dscp_to_tc is not None and qos.dscp_to_tc[26] == 3
    assert (e0.mtu, e0.pfc_priorities, e0.cable_m, e8.pfc_priorities, e8.cable_m) == (
        9100,
        [3, 4],
        5.0,
        [],
        40.0,
    )
    assert e0.ecn is not None and set(e0.ecn) == {3, 4} and e0.ecn[4].kmax_bytes == 2097152
    assert e0.headroom is not None and (e0.headroom.xon_bytes, e0.headroom.xoff_bytes) == (18432, 58368)
    assert e8.headroom is None  # dynamic model, headroom calculated by the switch
    assert qos.watchdog is not None and (qos.watchdog.action, qos.watchdog.poll_ms) == ("forward", 200)
    assert e0.watchdog is True and e8.watchdog is False
    assert [(s.queue, s.weight_percent) for s in qos.schedulers or []] == [(3, 15), (4, 15)]
    with pytest.raises(ValueError, match="line 1 column"):
        get_platform("sonic").read_back("{not json")


EOS_RUNNING = """! Command: show running-config
! device: leaf9 (DCS-7060DX5-64S, EOS-4.32.1F)
!
hostname leaf9
!
qos map dscp 0 1 2 3 4 5 6 7 to traffic-class 0
qos map dscp 26 to traffic-class 3
qos map traffic-class 3 to tx-queue 3
!
priority-flow-control pause watchdog default timeout 0.4
priority-flow-control pause watchdog default polling-interval 0.2
!
qos profile OTHER
   qos trust cos
!
qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   priority-flow-control pause watchdog
   priority-flow-control pause watchdog port action notify-only
   !
   tx-queue 3
      no priority
      bandwidth percent 60
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 3 mbytes max-mark-probability \
10 weight 0
      random-detect ecn count
!
interface Ethernet1/1
   description gpu01
   mtu 9214
   no switchport
   service-profile ROCE
!
interface Ethernet2/1
   mtu 9214
   priority-flow-control on
   priority-flow-control priority 4 no-drop
!
interface Management1
   ip address 192.0.2.9/24
!
end
"""


def test_eos_running_config_style() -> None:
    qos = get_platform("eos").read_back(EOS_RUNNING)
    e1, e2 = qos.ports["Ethernet1/1"], qos.ports["Ethernet2/1"]
    assert qos.dscp_to_tc == {**{d: 0 for d in range(8)}, 26: 3} and qos.tc_to_queue == {3: 3, 7: 7}
    assert (e1.mtu, e1.pfc_priorities, e1.watchdog, e2.pfc_priorities) == (9214, [3], True, [4])
    assert (
        e1.ecn is not None and e1.ecn[3].kmin_bytes == 150 * 1024 and e1.ecn[3].kmax_bytes == 3 * 1024 * 1024
    )
    assert qos.watchdog is not None and (
        qos.watchdog.detection_ms,
        qos.watchdog.poll_ms,
        qos.watchdog.action,
        qos.watchdog.restoration_ms,
    ) == (400, 200, "alert", None)
    assert qos.schedulers is not None and [(s.queue, s.mode, s.weight_percent) for s in qos.schedulers] == [
        (3, "dwrr", 60)
    ]
    assert qos.ports["Management1"].pfc_priorities == []


NXOS_RUNNING = """!Command: show running-config
version 10.3(4a) Bios:version 05.47
hostname spine9
class-map type qos match-any ROCE
  match dscp 24-26,af41
class-map type qos match-all VOICE
  match dscp ef
policy-map type qos QOS_IN
  class ROCE
    set qos-group 3
  class VOICE
    set qos-group 5
policy-map type queuing default-8q-out-policy
  class type queuing c-out-8q-q3
    bandwidth remaining percent 70
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q-default
    bandwidth remaining percent 30
  class type queuing c-out-8q-q6
    priority level 1
policy-map type network-qos ROCE_NQ
  class type network-qos c-8q-nq3
    pause pfc-cos 3
    mtu 9216
system qos
  service-policy type network-qos ROCE_NQ
  service-policy type queuing output default-8q-out-policy
interface Ethernet1/1
  description leaf1
  mtu 9216
  priority-flow-control mode on
  service-policy type qos input QOS_IN
  no shutdown
interface Ethernet1/2
  priority-flow-control mode off
interface Ethernet1/3
"""


def test_nxos_running_config_style() -> None:
    qos = get_platform("nxos").read_back(NXOS_RUNNING)
    assert qos.dscp_to_queue == {24: 3, 25: 3, 26: 3, 34: 3, 46: 5}  # no class-default: the rest unknown
    e1, e2, e3 = (qos.ports[f"Ethernet1/{i}"] for i in (1, 2, 3))
    assert (e1.mtu, e1.pfc_priorities, e2.pfc_priorities, e3.pfc_priorities) == (9216, [3], [], None)
    assert e1.ecn is not None and e1.ecn[3].kmax_bytes == 3000 * 1024 and e1.ecn[3].pmax_percent == 7
    assert e3.ecn is not None and 3 in e3.ecn  # the system queuing policy applies to every port
    assert qos.schedulers is not None and [(s.queue, s.mode, s.weight_percent) for s in qos.schedulers] == [
        (0, "dwrr", 30),
        (3, "dwrr", 70),
        (6, "strict", None),
    ]


JUNOS_RUNNING = """set version 23.4R2-S2.1
set system host-name leaf9
set interfaces et-0/0/1 description gpu01
set interfaces et-0/0/1 mtu 9192
set interfaces et-0/0/2 unit 0 family inet
set class-of-service interfaces et-0/0/1 unit 0 classifiers dscp CL
set class-of-service interfaces et-0/0/1 scheduler-map SM
set class-of-service interfaces et-0/0/1 congestion-notification-profile CNP
set class-of-service classifiers dscp CL forwarding-class ROCE loss-priority low code-points [ af31 011010 ]
set class-of-service classifiers dscp CL forwarding-class CNP_FC loss-priority low code-points nc1
set class-of-service classifiers dscp CL forwarding-class BE loss-priority high code-points be
set class-of-service forwarding-classes queue 0 BE
set class-of-service forwarding-classes class ROCE queue-num 3
set class-of-service forwarding-classes class ROCE pfc-priority 3
set class-of-service forwarding-classes class CNP_FC queue-num 6
set class-of-service drop-profiles DP fill-level 10 drop-probability 0
set class-of-service drop-profiles DP fill-level 40 drop-probability 20
set class-of-service schedulers S3 explicit-congestion-notification
set class-of-service schedulers S3 drop-profile-map loss-priority any protocol any drop-profile DP
set class-of-service schedulers S3 transmit-rate percent 60
set class-of-service schedulers S6 priority strict-high
set class-of-service scheduler-maps SM forwarding-class ROCE scheduler S3
set class-of-service scheduler-maps SM forwarding-class CNP_FC scheduler S6
set class-of-service congestion-notification-profile CNP input dscp code-point 011010 pfc
set class-of-service congestion-notification-profile CNP input cable-length 40
set class-of-service congestion-notification-profile CNP pfc-watchdog poll-interval 100
set class-of-service congestion-notification-profile CNP pfc-watchdog detection 3
"""


def test_junos_running_config_style() -> None:
    qos = get_platform("junos").read_back(JUNOS_RUNNING)
    assert qos.dscp_to_queue == {0: 0, 26: 3, 48: 6}
    e1, e2 = qos.ports["et-0/0/1"], qos.ports["et-0/0/2"]
    assert (e1.mtu, e1.pfc_priorities, e1.cable_m, e1.watchdog) == (9192, [3], 40.0, True)
    assert (e2.mtu, e2.pfc_priorities, e2.watchdog) == (None, [], False)
    assert e1.ecn is not None and (
        e1.ecn[3].kmin_percent,
        e1.ecn[3].kmax_percent,
        e1.ecn[3].pmax_percent,
    ) == (10, 40, 20)
    assert qos.watchdog is not None and (
        qos.watchdog.detection_ms,
        qos.watchdog.restoration_ms,
        qos.watchdog.action,
    ) == (300, None, None)
    assert qos.schedulers is not None and [(s.queue, s.mode) for s in qos.schedulers] == [
        (3, "dwrr"),
        (6, "strict"),
    ]


CUMULUS_RUNNING = """nv set system hostname leaf9
nv set interface swp1-3,swp5 link state up
nv set interface swp1-2 link mtu 9216
nv set qos roce mode lossless
nv set qos mapping default-global dscp 26 switch-priority 3
nv set qos mapping default-global dscp 0-25,27-63 switch-priority 0
nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3
nv set qos pfc default-global switch-priority 3
nv set qos pfc default-global tx enabled
nv set qos pfc default-global cable-length 10
nv set qos pfc edge switch-priority 4
nv set qos pfc edge rx enabled
nv set interface swp5 qos pfc profile edge
nv set qos congestion-control default-global traffic-class 3 ecn enabled
nv set qos congestion-control default-global traffic-class 3 min-threshold 150000
nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000
nv set qos egress-scheduler default-global traffic-class 0,3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0,3 bw-percent 50
nv set qos pfc-watchdog polling-interval 100
nv set qos pfc-watchdog robustness 3
nv set interface swp1 qos pfc-watchdog state enabled
"""


def test_cumulus_running_config_style() -> None:
    qos = get_platform("cumulus").read_back(CUMULUS_RUNNING)
    assert qos.dscp_to_tc is not None and len(qos.dscp_to_tc) == 64 and qos.dscp_to_tc[26] == 3
    assert set(qos.ports) == {"swp1", "swp2", "swp3", "swp5"}
    s1, s3, s5 = qos.ports["swp1"], qos.ports["swp3"], qos.ports["swp5"]
    assert (s1.mtu, s1.pfc_priorities, s1.cable_m, s1.watchdog) == (9216, [3], 10.0, True)
    assert (s3.mtu, s3.watchdog, s5.pfc_priorities, s5.cable_m) == (None, False, [4], None)
    assert s1.ecn is not None and s1.ecn[3].kmax_bytes == 1500000 and s1.ecn[3].pmax_percent is None
    assert qos.watchdog is not None and (qos.watchdog.detection_ms, qos.watchdog.poll_ms) == (300, 100)
    assert qos.schedulers is not None and [(s.queue, s.weight_percent) for s in qos.schedulers] == [
        (0, 50),
        (3, 50),
    ]



def test_cumulus_compressed_interface_lists_of_the_switch() -> None:
    """``nv config show -o commands`` joins interfaces into one list (a public CL 5 dump: ``nv set interface
    swp1,6-9,26-47,49 link state up``, ``swp6s0-1,swp7s0-1 qos pfc-watchdog state enable``, ``vlan200,300``):
    a part without a prefix continues the one before, ``swpNsA-B`` is a range of breakout ports. ``6-9`` and
    ``swp1s0-1`` were kept as port names, so those ports read as having no PFC (or were missing)."""
    from roce_tune.platforms.cumulus_readback import ports_of

    assert ports_of("swp1,6-8,26") == ["swp1", "swp6", "swp7", "swp8", "swp26"]
    assert ports_of("swp1s0-1,swp2s0-3") == ["swp1s0", "swp1s1", "swp2s0", "swp2s1", "swp2s2", "swp2s3"]
    assert ports_of("swp1s0-swp1s1,vlan200,300") == ["swp1s0", "swp1s1", "vlan200", "vlan300"]
    qos = get_platform("cumulus").read_back(
        "nv set qos roce mode lossless\nnv set qos pfc default-global switch-priority 3\n"
        "nv set interface swp1,3-4,swp5s0-1 link mtu 9216\n"
        "nv set interface swp1,3-4,swp5s0-1 qos pfc profile default-global\n")
    assert sorted(qos.ports) == ["swp1", "swp3", "swp4", "swp5s0", "swp5s1"]
    assert all(p.pfc_priorities == [3] and p.mtu == 9216 for p in qos.ports.values())

def test_cumulus_pfc_switch_priorities_add_up_line_by_line() -> None:
    """A PFC profile's ``switch-priority`` is an NVUE collection ("[switch-priority] ... Collection of switch
    priorities", ``nv show qos pfc default-global`` in the CL 5.14 QoS page; YAML ``'3': {}`` per id), so
    each ``nv set qos pfc <p> switch-priority N`` adds N. ``nv config show`` YAML (one key per priority)
    turns into one such line per priority; all of them must be read, not only the last."""
    from roce_tune.platforms.cumulus import nvue_yaml_to_commands

    yaml_text = """- set:
    qos:
      pfc:
        default-global:
          switch-priority:
            '3': {}
            '4': {}
          tx: enable
    interface:
      swp1:
        link:
          mtu: 9216
"""
    qos = get_platform("cumulus").read_back(nvue_yaml_to_commands(yaml_text))
    assert qos.ports["swp1"].pfc_priorities == [3, 4]
    lines = "nv set qos pfc edge switch-priority 4\nnv set qos pfc edge switch-priority 2,3\n" \
            "nv set interface swp7 qos pfc profile edge\n"
    assert get_platform("cumulus").read_back(lines).ports["swp7"].pfc_priorities == [2, 3, 4]
