"""EOS, NX-OS and Cumulus/NVUE running configurations as real switches print them (not as roce-tune renders
them), audited from files: ``tests/audit/fixtures/running/`` holds a ``show running-config`` of an Arista
7060 (header, banner ending in ``EOF``, ``!!`` comments, interfaces with description/addresses before their
QoS lines, the DSCP map left at EOS's default for DSCP 26), of a Nexus 9000 (Cisco's 8q templates, only the
global PFC watchdog statement, AFD ECN marking on the RoCE queue) and an ``nv config show -o commands``
(port ranges, DSCP 26 left at the default mapping). Each test names the misreport it guards against.
"""

from __future__ import annotations

from pathlib import Path

from roce_tune.audit import audit_dir
from roce_tune.audit.run import AuditResult
from roce_tune.platforms import platform
from tests.audit.test_running_config import INVENTORY

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "running"


def _audit(tmp: Path, device: str, fixture: str, source: Path | None, edit: tuple[str, str] | None = None,
           ) -> tuple[AuditResult, list[str]]:
    text = (FIXTURES / fixture).read_text()
    if edit is not None:
        assert edit[0] in text
        text = text.replace(*edit)
    cap = tmp / "captures"
    cap.mkdir(parents=True, exist_ok=True)
    (cap / f"{device}.txt").write_text(text)
    return audit_dir(cap, source), text.splitlines()


def _mine(r: AuditResult, device: str, rule: str) -> list:  # type: ignore[type-arg]
    return [f for f in r.findings if f.device == device and f.rule == rule]


def _skipped(r: AuditResult, device: str, rule: str) -> list:  # type: ignore[type-arg]
    return [s for s in r.not_checked if s.device == device and s.rule == rule]


# ------------------------------------------------------------------------------------------------- NX-OS
def test_nxos_interfaces_follow_the_global_pfc_watchdog(tmp_path: Path) -> None:
    """Only ``priority-flow-control watch-dog-interval on`` at the top (Cisco's global form): every port
    was read "watchdog off" and, with a plan, RT427 "PFC watchdog is off" fired on all 16 ports, its
    evidence the very line that turns it on. A port's own ``… off`` still wins."""
    qos = platform("nxos").read_back((FIXTURES / "spine1-nxos-n9k.txt").read_text())
    assert {qos.ports[f"Ethernet1/{i}"].watchdog for i in range(1, 17)} == {True}
    r, _ = _audit(tmp_path, "spine1", "spine1-nxos-n9k.txt", INVENTORY)
    assert _mine(r, "spine1", "RT427") == []
    head = "interface Ethernet1/16\n  description leaf-uplink-16\n"
    off = (head, head + "  priority-flow-control watch-dog-interval off\n")
    r, lines = _audit(tmp_path / "off", "spine1", "spine1-nxos-n9k.txt", INVENTORY, off)
    found = _mine(r, "spine1", "RT427")
    assert [(f.port, "is off" in f.message) for f in found] == [("Ethernet1/16", True)]
    assert "watch-dog-interval off" in lines[found[0].evidence[0].line - 1]
    text = (FIXTURES / "spine1-nxos-n9k.txt").read_text()
    glob_off = platform("nxos").read_back(text.replace("watch-dog-interval on", "watch-dog-interval off"))
    assert {p.watchdog for p in glob_off.ports.values()} == {False}


def test_nxos_afd_ecn_marks_the_queue(tmp_path: Path) -> None:
    """``afd queue-desired 150 kbytes ecn`` (Approximate Fair Drop marking ECN) on the RoCE queue was read
    as no ECN: "WRED/ECN is not bound to lossless queue 3" (RT431, error) on every PFC port. ECN is on;
    its thresholds are no Kmin/Kmax ramp: with a plan RT434 is listed as not checked, not passed."""
    r, _ = _audit(tmp_path, "spine1", "spine1-nxos-n9k.txt", None)
    assert _mine(r, "spine1", "RT431") == [] and [f for f in r.findings if f.device == "spine1"] == []
    r, _ = _audit(tmp_path / "plan", "spine1", "spine1-nxos-n9k.txt", INVENTORY)
    assert _mine(r, "spine1", "RT431") == [] and _mine(r, "spine1", "RT434") == []
    skipped = _skipped(r, "spine1", "RT434")
    assert len(skipped) == 1 and "Ethernet1/1," in skipped[0].needs and "queue-desired" in skipped[0].needs
    burst = ("afd queue-desired 150 kbytes ecn", "random-detect threshold burst-optimized ecn")
    r, _ = _audit(tmp_path / "burst", "spine1", "spine1-nxos-n9k.txt", None, burst)
    assert _mine(r, "spine1", "RT431") == []
    # AFD without `ecn` drops, it does not mark: still no ECN on the lossless queue
    r, _ = _audit(tmp_path / "drop", "spine1", "spine1-nxos-n9k.txt", None,
                  ("afd queue-desired 150 kbytes ecn", "afd queue-desired 150 kbytes"))
    assert len(_mine(r, "spine1", "RT431")) == 16


# --------------------------------------------------------------------------------------------------- EOS
def test_eos_dscp_left_to_the_default_map_is_not_checked(tmp_path: Path) -> None:
    """EOS's ``qos map dscp 48 to traffic-class 6`` changes one entry of EOS's default DSCP map; DSCP 26
    keeps its default class. Without a plan it was "DSCP 26 → TC 0 (not in the map: default)"; with one,
    62 RT415 warnings "dscp_to_tc[N] … missing". Now: RT414/RT415 not checked, naming the DSCPs."""
    for source in (None, INVENTORY):
        r, _ = _audit(tmp_path / str(bool(source)), "leaf1", "leaf1-eos-7060.txt", source)
        assert _mine(r, "leaf1", "RT414") == [] and _mine(r, "leaf1", "RT415") == [], source
        skipped = [s for s in _skipped(r, "leaf1", "RT414") if "trust mode" not in s.needs]
        assert len(skipped) == 1 and "DSCP 26" in skipped[0].needs and "show qos maps" in skipped[0].needs
        # its interfaces state no `qos trust` either: whether the DSCP map applies at all is not checked
        assert len(_skipped(r, "leaf1", "RT414")) == 2
        assert "nv show" not in skipped[0].needs  # the switch's own platform's command, no other vendor's
    others = _skipped(r, "leaf1", "RT415")
    assert len(others) == 1 and "DSCP 0-25,27-47,49-63," in others[0].needs
    # a DSCP the map does name is judged: 26 stated into TC 0 is RoCE in a lossy queue
    r, _ = _audit(tmp_path / "stated", "leaf1", "leaf1-eos-7060.txt", None,
                  ("qos map dscp 48 to traffic-class 6", "qos map dscp 26 to traffic-class 0\n"
                                                         "qos map dscp 48 to traffic-class 6"))
    found = _mine(r, "leaf1", "RT414")
    assert len(found) == 1 and "DSCP 26 → TC 0 → queue 0" in found[0].message


def test_eos_evidence_is_the_ports_own_line_in_a_long_interface_block(tmp_path: Path) -> None:
    """A ``show running-config`` interface states description, speed and addresses before its QoS lines:
    the ECN line of Ethernet2/1 is 10 lines below ``interface Ethernet2/1``. Its RT434 evidence was the
    interface line plus the ECN line of Ethernet1/1 (another port)."""
    r, lines = _audit(tmp_path, "leaf1", "leaf1-eos-7060.txt", INVENTORY)
    found = [f for f in _mine(r, "leaf1", "RT434") if "Kmin" in f.message]
    assert len(found) == 8
    for f in found:
        assert len(f.evidence) == 1, f
        no = f.evidence[0].line
        assert "random-detect ecn minimum-threshold" in lines[no - 1]
        header = max(i for i in range(no) if lines[i].startswith("interface "))
        assert lines[header] == f"interface {f.port}", (f.port, no)


# ---------------------------------------------------------------------------------------------- Cumulus
def test_nvue_dscp_left_to_the_default_mapping_is_not_checked(tmp_path: Path) -> None:
    """``nv set qos mapping default-global dscp 48 switch-priority 6`` changes one entry of NVUE's default
    mapping (``nv config show`` prints only what was set): DSCP 26 was "TC 0 (not in the map: default)"
    (RT414 error without a plan)."""
    for source in (None, INVENTORY):
        r, _ = _audit(tmp_path / str(bool(source)), "leaf7", "leaf7-nvue-commands.txt", source)
        assert _mine(r, "leaf7", "RT414") == [] and _mine(r, "leaf7", "RT415") == [], source
        assert len(_skipped(r, "leaf7", "RT414")) == 1
    r, _ = _audit(tmp_path / "stated", "leaf7", "leaf7-nvue-commands.txt", None,
                  ("dscp 48 switch-priority 6",
                   "dscp 26 switch-priority 0\nnv set qos mapping default-global dscp 48 switch-priority 6"))
    found = _mine(r, "leaf7", "RT414")
    assert len(found) == 1 and "DSCP 26 → TC 0 → queue 0" in found[0].message
    qos = platform("cumulus").read_back((FIXTURES / "leaf7-nvue-commands.txt").read_text())
    assert qos.dscp_to_tc == {48: 6} and [p.pfc_priorities for p in qos.ports.values()] == [[3]] * 8


def test_a_section_capture_without_interfaces_is_not_a_config_without_ports(tmp_path: Path) -> None:
    """``show running-config | section qos`` (CRLF, a ``--More--`` erased with backspaces) names no
    interface. Without a plan nothing was said (0 not checked: the per-port checks silently passed); with
    one, RT480 "port … of the plan is not in leaf1's running configuration" on all 8 ports."""
    text = ("leaf1#show running-config | section qos\r\nqos map dscp 26 to traffic-class 3\r\n"
            "qos map dscp 48 to traffic-class 6\r\n!\r\nqos profile ROCE\r\n   priority-flow-control on\r\n"
            "   priority-flow-control priority 3 no-drop\r\n --More-- " + "\b" * 10 + " " * 10 + "\b" * 10 +
            "   uc-tx-queue 3\r\n      random-detect ecn minimum-threshold 500 kbytes maximum-threshold 1500 "
            "kbytes max-mark-probability 20\r\nleaf1#\r\n")
    cap = tmp_path / "captures"
    cap.mkdir()
    (cap / "leaf1.txt").write_bytes(text.encode())
    r = audit_dir(cap)
    assert r.data.switches["leaf1"].running is not None and not r.data.unparsed
    assert [s.needs for s in _skipped(r, "leaf1", "RT420")] and "names no interface" in \
        _skipped(r, "leaf1", "RT420")[0].needs
    r = audit_dir(cap, INVENTORY)
    assert _mine(r, "leaf1", "RT480") == [] and _skipped(r, "leaf1", "RT480")
    assert [f for f in r.findings if f.device == "leaf1"] == []


def test_eos_schedulers_are_compared_queue_by_queue(tmp_path: Path) -> None:
    """The running configuration schedules only queue 6 (``priority strict``, as planned); queues 0 and 3
    keep EOS's default. The lists were compared by position: "schedulers: plan 3 entries, running config 1",
    "schedulers[0].queue: plan 0, running config 6", "schedulers[0].mode: plan 'dwrr', running config
    'strict'" — three RT416 warnings, none true. Now: queue 6 matches, 0 and 3 are not checked."""
    q6 = ("      random-detect ecn count\n!", "      random-detect ecn count\n   !\n   uc-tx-queue 6\n"
          "      priority strict\n!")
    r, _ = _audit(tmp_path, "leaf1", "leaf1-eos-7060.txt", INVENTORY, q6)
    assert _mine(r, "leaf1", "RT416") == []
    skipped = _skipped(r, "leaf1", "RT416")
    assert len(skipped) == 1 and "queue 0,3" in skipped[0].needs
    dwrr = (q6[0], q6[1].replace("priority strict", "no priority\n      bandwidth percent 30"))
    r, lines = _audit(tmp_path / "dwrr", "leaf1", "leaf1-eos-7060.txt", INVENTORY, dwrr)
    assert [f.message for f in _mine(r, "leaf1", "RT416")] == [
        "scheduler of queue 6 on leaf1: plan strict, running config DWRR 30 %"]


def test_eos_interface_pfc_statements_override_the_profile_and_all_off_wins(tmp_path: Path) -> None:
    """The forms pyavd's eos_cli_config_gen prints: ``no priority-flow-control`` on an interface whose
    service-profile turns PFC on, ``priority-flow-control priority 3 drop`` undoing a profile's ``no-drop``,
    and the global ``priority-flow-control all off`` ("Disable PFC on all interfaces"). All three were read
    as PFC on priority 3 and the audit was clean on a fabric without PFC."""
    profile = ("qos map dscp 48 to traffic-class 6\n!\n",
               "qos map dscp 48 to traffic-class 6\n!\nqos profile ROCE\n   priority-flow-control on\n"
               "   priority-flow-control priority 3 no-drop\n!\n")
    text = (FIXTURES / "leaf1-eos-7060.txt").read_text().replace(*profile)
    own = "   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n"
    drop = "   priority-flow-control on\n   priority-flow-control priority 3 drop\n"
    for port, instead in (("Ethernet1/1", "   no priority-flow-control\n"), ("Ethernet2/1", drop)):
        head = f"interface {port}\n"
        i = text.index(head)
        j = text.index(own, i)
        text = (text[:i] + head + "   service-profile ROCE\n" + text[i + len(head):j] + instead
                + text[j + len(own):])
    qos = platform("eos").read_back(text)
    assert qos.ports["Ethernet1/1"].pfc_priorities == [] and qos.ports["Ethernet2/1"].pfc_priorities == []
    assert qos.ports["Ethernet3/1"].pfc_priorities == [3]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "leaf1.txt").write_text(text)
    found = _mine(audit_dir(tmp_path / "one", INVENTORY), "leaf1", "RT420")
    assert sorted(f.port for f in found) == ["Ethernet1/1", "Ethernet2/1"]  # type: ignore[type-var]
    r, _ = _audit(tmp_path, "leaf1", "leaf1-eos-7060.txt", None,
                  ("hostname leaf1\n", "hostname leaf1\n!\npriority-flow-control all off\n"))
    found = _mine(r, "leaf1", "RT420")
    assert len(found) == 1 and "no port of leaf1 has PFC" in found[0].message


def test_eos_port_watchdog_timers_replace_the_defaults(tmp_path: Path) -> None:
    """``priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 recovery-time 0.2
    forced`` on every PFC port (pyavd's form) with a leftover global ``default timeout 3``: the ports run
    the plan's 200/100/200 ms, but RT427 said "watchdog detection (ms) on leaf1: plan 200, running config
    3000" from the default the ports do not use."""
    port = ("   priority-flow-control priority 3 no-drop\n",
            "   priority-flow-control priority 3 no-drop\n   priority-flow-control pause watchdog\n"
            "   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 "
            "recovery-time 0.2 forced\n   priority-flow-control pause watchdog port action drop\n")
    text = (FIXTURES / "leaf1-eos-7060.txt").read_text().replace(*port).replace(
        "hostname leaf1\n", "hostname leaf1\n!\npriority-flow-control pause watchdog default timeout 3\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "leaf1.txt").write_text(text)
    assert _mine(audit_dir(tmp_path / "c", INVENTORY), "leaf1", "RT427") == []
    wd = platform("eos").read_back(text).watchdog
    assert wd is not None and (wd.detection_ms, wd.poll_ms, wd.restoration_ms) == (200, 100, 200)


def test_nxos_service_policy_name_is_not_a_trailing_keyword(tmp_path: Path) -> None:
    """``service-policy type queuing output custom-8q-out-policy no-stats``: the last word was taken as
    the policy name, no such policy exists, and every PFC port read "no ECN" (RT431 error) and lost the
    plan's scheduler comparison."""
    edit = ("service-policy type queuing output custom-8q-out-policy",
            "service-policy type queuing output custom-8q-out-policy no-stats")
    r, _ = _audit(tmp_path, "spine1", "spine1-nxos-n9k.txt", None, edit)
    assert _mine(r, "spine1", "RT431") == []
    qos_in = "service-policy type qos input QOS_CLASSIFICATION"
    text = (FIXTURES / "spine1-nxos-n9k.txt").read_text().replace(*edit).replace(qos_in, qos_in + " no-stats")
    qos = platform("nxos").read_back(text)
    assert qos.ports["Ethernet1/1"].ecn and qos.schedulers
    assert qos.dscp_to_queue is not None and qos.dscp_to_queue[26] == 3


def test_nxos_pfc_without_any_classification_policy_is_roce_in_queue_0(tmp_path: Path) -> None:
    """PFC on and a no-drop class, but no ``service-policy type qos input`` on the ports or under ``system
    qos`` (the class-map and policy exist, unattached): nothing classifies DSCP 26, RoCE rides qos-group 0.
    The audit was clean (no finding, nothing listed as not checked) with and without a plan."""
    text = "".join(ln for ln in (FIXTURES / "spine1-nxos-n9k.txt").read_text().splitlines(keepends=True)
                   if "service-policy type qos input" not in ln)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "spine1.txt").write_text(text)
    for source in (None, INVENTORY):
        found = _mine(audit_dir(tmp_path / "c", source), "spine1", "RT414")
        assert len(found) == 1 and "DSCP 26 → queue 0" in found[0].message, source
    # a policy attached but not in the capture (a partial `show running-config interface`) stays unknown
    partial = text.replace("  priority-flow-control mode on\n",
                           "  priority-flow-control mode on\n  service-policy type qos input ELSEWHERE\n")
    assert platform("nxos").read_back(partial).dscp_to_queue is None
