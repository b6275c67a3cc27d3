"""Cumulus (NVUE), NX-OS and Junos counter parsers on own fixtures in the published output shapes,
and RT314 (PFC pauses, no ECN marks) planted through each platform's parsed counter deltas.

Fixture shapes: NVUE command reference (CumulusNetworks/docs: ``nv show interface <if> counters qos``
tables, CL 5.5+) and the CL RoCE page (``qos roce counters`` tree); NX-OS ``show interface
priority-flow-control`` / ``show queuing interface`` / ``show queuing pfc-queue … detail``
(VENDORS.md §4b); Junos ``show interfaces … extensive`` (MAC Priority Flow Control Statistics) and
``show interfaces queue`` (VENDORS.md §5b). Devices and numbers are this project's own; oracles are
the numbers printed in the fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import cumulus_counters, junos_counters, nxos_counters
from roce_tune.verify import counters as c
from roce_tune.verify.collect import parse_switch_counters, switch_commands
from tests.verify.test_diagnose import host, lab, observe  # noqa: F401 — lab is a fixture

FIX = Path(__file__).parent / "fixtures" / "switch"


def fx(name: str) -> str:
    return (FIX / name).read_text()


# ---------------------------------------------------------------------------------------- Cumulus
def test_cumulus_counters_qos_tables() -> None:
    ports = cumulus_counters.parse_cumulus_counters_qos(fx("cumulus-nv-show-interface-swp3-counters-qos.txt"),
                                                        "swp3", ecn_queue=3)
    s = ports["swp3"]
    assert s["pfc_rx_prio3"] == 17 and s["pfc_tx_prio3"] == 48213 and s["pfc_tx_prio0"] == 0
    assert s["q3_tx_pkts"] == 90412733 and s["q6_tx_pkts"] == 1203384
    assert s["q3_drop_bytes"] == 0 and s["q3_wred_drop_pkts"] == 0
    assert "q3_tx_bytes" not in s and "q0_tx_bytes" not in s  # "367.18 GB": scaled, not an exact count
    assert s["q3_ecn_marked_pkts"] == 0  # port-wide Transmit figure, on the lossless class
    assert not any("rx_frames" in k or "pause_duration" in k for k in s)


def test_cumulus_counters_qos_without_ecn_queue_and_odd_widths() -> None:
    text = ("switch-priority  rx-pause-frames   rx-pause-duration  tx-pause-frames tx-pause-duration\n"
            "---------------  ---------------   -----------------  --------------- -----------------\n"
            "3                  5                 9                12  40\n\n"
            "    Counter             Receive  Transmit\n    ------------------  -------  --------\n"
            "    ECN Marked Packets  n/a      77\n")
    assert cumulus_counters.parse_cumulus_counters_qos(text, "swp9") == {"swp9": {"pfc_rx_prio3": 5,
                                                                                  "pfc_tx_prio3": 12}}
    assert cumulus_counters.parse_cumulus_counters_qos(text, "swp9", 3)["swp9"]["q3_ecn_marked_pkts"] == 77


def test_cumulus_roce_counters_tree() -> None:
    got = cumulus_counters.parse_cumulus_roce_counters(
        fx("cumulus-nv-show-interface-swp3-qos-roce-counters.txt"), "swp3", 3, 3)
    # rx-non-roce / tx-cnp no-buffer-discard and roce-packets lines are not RoCE PFC/ECN/drops and are not
    # kept; RoCE no-buffer discards are (tx unicast on the lossless queue, rx per port)
    assert got == {"swp3": {"pfc_rx_prio3": 17, "pfc_tx_prio3": 48213, "q3_ecn_marked_pkts": 0,
                            "q3_drop_pkts": 0, "roce_rx_no_buffer_discard": 0}}
    dropped = fx("cumulus-nv-show-interface-swp3-qos-roce-counters.txt").replace(
        "    unicast-no-buffer-discard  0                      Tx buffer discards for RoCE traffic",
        "    unicast-no-buffer-discard  5120                   Tx buffer discards for RoCE traffic")
    assert cumulus_counters.parse_cumulus_roce_counters(dropped, "swp3", 3, 3)["swp3"]["q3_drop_pkts"] == 5120


def test_cumulus_pfc_watchdog_column_by_name() -> None:
    text = ("traffic-class  status  deadlock-count\n-------------  ------  --------------\n"
            "3              OK      4\n")
    assert cumulus_counters.parse_cumulus_pfc_watchdog(text, "swp3") == {"swp3": {"q3_wd_storm_detected": 4}}
    assert cumulus_counters.parse_cumulus_pfc_watchdog("Error: object not found\n", "swp3") == {}


# ---------------------------------------------------------------------------------------- NX-OS
def test_nxos_pfc_interfaces_rxppp_txppp() -> None:
    got = nxos_counters.parse_nxos_pfc_interfaces(fx("nxos-show-interface-priority-flow-control.txt"))
    assert got == {"Ethernet1/1": {"pfc_rx_all": 0, "pfc_tx_all": 0},
                   "Ethernet1/7": {"pfc_rx_all": 131, "pfc_tx_all": 52904},
                   "Ethernet1/8": {"pfc_rx_all": 9, "pfc_tx_all": 1288}}


def test_nxos_queuing_interface_groups_and_pfc_cos() -> None:
    s = nxos_counters.parse_nxos_queuing_interface(fx("nxos-show-queuing-interface-e1-7.txt"),
                                                   "Ethernet1/7")["Ethernet1/7"]
    assert s["q3_tx_pkts"] == 614220981 and s["q3_tx_bytes"] == 2520395837126
    assert s["q0_tx_pkts"] == 73310  # unicast column, not multicast 1022
    assert s["q3_drop_pkts"] == 0 and s["q3_wd_tx_drop"] == 0 and s["q3_ecn_marked_pkts"] == 0
    assert "q0_ecn_marked_pkts" not in s  # group 0 prints no ECN row
    assert s["pfc_tx_prio3"] == 52904 and s["pfc_rx_prio3"] == 131 and s["pfc_tx_prio7"] == 0


def test_nxos_pfc_queue_detail_watchdog() -> None:
    got = nxos_counters.parse_nxos_pfc_queue_detail(fx("nxos-show-queuing-pfc-queue-e1-7-detail.txt"))
    assert got == {"Ethernet1/7": {"q3_wd_storm_detected": 3, "q3_wd_storm_restored": 3,
                                   "q3_wd_tx_drop": 880231,
                                   "q3_wd_rx_drop": 4410}}


# ---------------------------------------------------------------------------------------- Junos
def test_junos_extensive_pfc_per_priority() -> None:
    got = junos_counters.parse_junos_extensive_pfc(
        fx("junos-show-interfaces-et-0-0-12-extensive.txt"))["et-0/0/12"]
    assert got["pfc_rx_prio3"] == 2291 and got["pfc_tx_prio3"] == 61377
    assert len(got) == 16 and sum(got.values()) == 2291 + 61377


def test_junos_interfaces_queue_transmitted_section() -> None:
    q = junos_counters.parse_junos_interfaces_queue(
        fx("junos-show-interfaces-queue-et-0-0-12.txt"))["et-0/0/12"]
    assert q["q3_tx_pkts"] == 678840115 and q["q3_tx_bytes"] == 2793101448212
    assert q["q3_ecn_marked_pkts"] == 0 and q["q3_wred_drop_pkts"] == 0
    assert q["q0_drop_pkts"] == 7  # Tail-dropped "Not Available": Total-dropped 7 − RED-dropped 0
    assert q["q6_drop_pkts"] == 0 and q["q6_tx_pkts"] == 121127
    assert "q0_ecn_marked_pkts" not in q


# ---------------------------------------------------------------------------------------- assembly
PLATFORM_CASES = {
    "cumulus": ("swp3",
                {"nv show interface swp3 counters qos": "cumulus-nv-show-interface-swp3-counters-qos.txt",
                         "nv show interface swp3 qos roce counters":
                             "cumulus-nv-show-interface-swp3-qos-roce-counters.txt",
                         "nv show interface swp3 qos pfc-watchdog": None},
                ("48213", "58213")),
    "nxos": ("Ethernet1/7",
             {"show interface priority-flow-control": "nxos-show-interface-priority-flow-control.txt",
                             "show queuing interface ethernet1/7": "nxos-show-queuing-interface-e1-7.txt",
                             "show queuing pfc-queue interface ethernet1/7 detail":
                                 "nxos-show-queuing-pfc-queue-e1-7-detail.txt"},
             ("52904", "62904")),
    "junos": ("et-0/0/12",
              {"show interfaces et-0/0/12 extensive": "junos-show-interfaces-et-0-0-12-extensive.txt",
                            "show interfaces queue et-0/0/12": "junos-show-interfaces-queue-et-0-0-12.txt"},
              ("61377", "71377")),
}


def vendor_switch(plan: Plan, platform: str, port: str) -> SwitchPlan:
    sw = plan.switches[0]
    ports = [sw.ports[0].model_copy(update={"name": port}),
             sw.ports[1].model_copy(update={"lossless": False})]
    return sw.model_copy(update={"platform": platform, "ports": ports})


def outputs_for(platform: str, bump: tuple[str, str] | None = None, ecn_marks: int = 0) -> dict[str, str]:
    _port, files, _ = PLATFORM_CASES[platform]
    out = {}
    for cmd, name in files.items():
        text = fx(name) if name else ""
        if bump:
            text = text.replace(bump[0], bump[1])
        if ecn_marks:
            text = _plant_ecn(platform, text, ecn_marks)
        out[cmd] = text
    return out


def _plant_ecn(platform: str, text: str, n: int) -> str:
    if platform == "cumulus":
        return (text.replace("ecn-marked-packets         0 ", f"ecn-marked-packets         {n} ")
                .replace("ecn-marked-packets  n/a      0", f"ecn-marked-packets  n/a      {n}"))
    if platform == "nxos":
        return text.replace("ECN Marked Pkts |               0|", f"ECN Marked Pkts |{n:16d}|")
    return text.replace("ECN-CE packets       :                     0",
                        f"ECN-CE packets       :{n:22d}")


@pytest.mark.parametrize("platform", sorted(PLATFORM_CASES))
def test_commands_match_what_the_parser_reads(lab: Plan, platform: str) -> None:  # noqa: F811
    port, files, _ = PLATFORM_CASES[platform]
    sw = vendor_switch(lab, platform, port)
    assert switch_commands(sw) == list(files)
    snap = parse_switch_counters(sw, outputs_for(platform))
    assert snap.platform == platform and not snap.errors
    assert set(snap.ports) == {port}
    assert "pfc_tx_all" not in snap.ports[port]  # per-priority counters present: no double count
    assert "ECN-marked counters" not in snap.unsupported


@pytest.mark.parametrize("platform", sorted(PLATFORM_CASES))
@pytest.mark.parametrize("marks,rule", [(0, "RT314"), (150_000, "RT315")])
def test_pfc_without_ecn_through_each_platform(lab: Plan, platform: str, marks: int,  # noqa: F811
                                               rule: str) -> None:
    port, _files, bump = PLATFORM_CASES[platform]
    sw = vendor_switch(lab, platform, port)
    before = c.CounterSnapshot(taken_at=100.0, switches=[parse_switch_counters(sw, outputs_for(platform))])
    after = c.CounterSnapshot(taken_at=103.0, switches=[parse_switch_counters(
        sw, outputs_for(platform, bump=bump, ecn_marks=marks))])
    d = c.delta_snapshot(before, after)
    ports = d.switches[0].ports
    assert ports[port]["pfc_tx_prio3"] == 10_000  # the planted 10 000 PFC frames, not the totals
    assert ports[port]["q3_ecn_marked_pkts"] == marks
    paused = {"rx_prio3_pause": 10_000, "rx_prio3_pause_duration": 400_000}  # 0.4 s of a 2 s run
    hosts = [host(n, ethtool=paused, hw={"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0,
                                         "rp_cnp_handled": 0})
             for n in ("node1", "node2")]
    found = observe(lab, busbw=30.0, hosts=hosts, ports=ports)
    assert rule in found and ({"RT314", "RT315"} - {rule}).isdisjoint(found)
    ev = found[rule][0].evidence
    assert ev["switch_pfc_tx_frames_by_port"] == {f"lab-leaf1:{port}": 10_000}
    assert ev["ecn_marked_switch"] == marks


def test_nxos_watchdog_storm_delta_reaches_rt319(lab: Plan) -> None:  # noqa: F811
    port, _files, _ = PLATFORM_CASES["nxos"]
    sw = vendor_switch(lab, "nxos", port)
    before = c.CounterSnapshot(taken_at=1.0, switches=[parse_switch_counters(sw, outputs_for("nxos"))])
    after = c.CounterSnapshot(taken_at=2.0, switches=[parse_switch_counters(sw, outputs_for(
        "nxos", bump=("Shutdown|                 3|", "Shutdown|                 5|")))])
    ports = c.delta_snapshot(before, after).switches[0].ports
    d = observe(lab, ports=ports)["RT319"][0]
    assert d.evidence["storms_by_port"] == {f"lab-leaf1:{port}": 2}
