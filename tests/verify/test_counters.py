"""Counter and NIC-fact parsers: own fixtures in the field shapes, plus the field captures when present.

Oracles are the numbers printed in the captures themselves (including the ``DIFF:`` column the
field engineer's own awk computed) and the kernel's RoCE MTU rule.
"""

from __future__ import annotations

import re

import pytest

from roce_tune.platforms import eos_counters as ec
from roce_tune.platforms import sonic_counters as sc
from roce_tune.verify import counters as c
from roce_tune.verify.hostfacts import parse_ibv_devinfo, parse_show_gids, roce_active_mtu
from tests.references import reference


def field(name: str) -> str:
    """A counter capture of the ``field-cases`` reference set (skips the test when absent)."""
    return reference("field-cases", "counters", name).read_text()


# ---------------------------------------------------------------------------------------- host
def test_ethtool_field_capture_keeps_every_priority_counter() -> None:
    stats = c.parse_ethtool_stats(field("mlx5-ethtool-prio-and-hw-counters-2to1.txt"))
    assert stats["rx_prio0_bytes"] == 88178050405854
    assert stats["tx_prio0_packets"] == 40316741528
    assert {f"{d}_prio{p}_{w}" for d in ("rx", "tx") for p in range(8) for w in ("bytes",
                                                                                 "packets")} <= set(stats)
    assert not any("/" in k for k in stats)  # the hw_counters lines in the same capture are not ethtool


def test_hw_counters_from_grep_lines_in_a_mixed_capture() -> None:
    hw = c.parse_hw_counters(field("mlx5-ethtool-prio-and-hw-counters-2to1.txt"))
    assert hw == {"duplicate_request": 0, "implied_nak_seq_err": 0, "lifespan": 12,
                  "local_ack_timeout_err": 2705,
                  "np_cnp_sent": 1333, "np_ecn_marked_roce_packets": 0}


def test_hw_counters_hang_capture() -> None:
    hw = c.parse_hw_counters(field("mlx5-hw-counters-nccl-hang-high-out-of-sequence.txt"))
    assert hw["out_of_sequence"] == 6140236
    assert hw["packet_seq_err"] == 929974
    assert hw["np_cnp_sent"] == 17269947
    assert hw["resp_cqe_error"] == 20540


def test_hw_counters_other_shapes() -> None:
    assert c.parse_hw_counters("link mlx5_0/1 np_cnp_sent 12 rp_cnp_handled 10 out_of_sequence 3\n") == {
        "np_cnp_sent": 12, "rp_cnp_handled": 10, "out_of_sequence": 3}
    assert c.parse_hw_counters("np_cnp_sent: 5\nrp_cnp_handled 7\n") == {"np_cnp_sent": 5,
                                                                         "rp_cnp_handled": 7}


def test_side_by_side_delta_equals_the_capture_diff_column() -> None:
    text = field("mlx5-ethtool-prio-delta-dscp-one-direction.txt")
    before, after = c.parse_side_by_side(text)
    resets: list[str] = []
    delta = c.delta_counts(before, after, "node-a", resets)
    printed = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+_packets):.*DIFF: (\d+)", text)}
    assert printed  # three lines in the capture
    assert delta == printed
    assert resets == []


def test_delta_notes_counters_that_went_backwards() -> None:
    resets: list[str] = []
    unread: list[str] = []
    d = c.delta_counts({"a": 10, "b": 5}, {"a": 25, "b": 2, "new": 4}, "h", resets, unread)
    assert d == {"a": 15, "b": 2}  # "new" had no value before: unknown, not counted from 0
    assert resets == ["h:b"]
    assert unread == ["h: 1 counter not read before the run, no delta (new)"]


def test_device_unreachable_before_the_run_gives_no_delta_not_its_totals() -> None:
    """A switch that timed out at the first snapshot and a port that printed N/A (SONiC) before the run:
    their totals since boot must not become the run's PFC frames / watchdog storms."""
    nic = {"host": "h1", "netdev": "eth0", "rdma_device": "mlx5_0"}
    before = c.CounterSnapshot(taken_at=100.0, hosts=[c.HostNicCounters(
        **nic, ethtool={"rx_prio3_pause": 5}, errors=["mlx5_0 hw_counters: none read"])], switches=[
        c.SwitchCounters(switch="leaf1", platform="sonic", errors=["NetmikoTimeoutException: leaf1"]),
        c.SwitchCounters(switch="leaf2", platform="sonic", ports={"Ethernet0": {"pfc_tx_prio4": 1}})])
    after = c.CounterSnapshot(taken_at=130.0, hosts=[c.HostNicCounters(
        **nic, ethtool={"rx_prio3_pause": 9}, hw={"np_cnp_sent": 912345})], switches=[
        c.SwitchCounters(switch="leaf1", platform="sonic", ports={"Ethernet0": {
            "pfc_tx_prio3": 48_000_000, "q3_wd_storm_detected": 2}}),
        c.SwitchCounters(switch="leaf2", platform="sonic", ports={"Ethernet0": {
            "pfc_tx_prio3": 7_000_000, "pfc_tx_prio4": 3}})])
    d = c.delta_snapshot(before, after)
    assert d.hosts[0].ethtool == {"rx_prio3_pause": 4} and d.hosts[0].hw == {}
    assert d.switches[0].ports == {"Ethernet0": {}}
    assert d.switches[0].errors == ["NetmikoTimeoutException: leaf1"]
    assert d.switches[1].ports == {"Ethernet0": {"pfc_tx_prio4": 2}}
    assert d.unread == ["h1/mlx5_0: 1 counter not read before the run, no delta (np_cnp_sent)",
                        "leaf1:Ethernet0: 2 counters not read before the run, no delta (pfc_tx_prio3, "
                        "q3_wd_storm_detected)",
                        "leaf2:Ethernet0: 1 counter not read before the run, no delta (pfc_tx_prio3)"]


def test_snapshot_delta_keeps_devices_and_seconds() -> None:
    nic = {"host": "h1", "netdev": "eth0", "rdma_device": "mlx5_0"}
    before = c.CounterSnapshot(taken_at=100.0, hosts=[c.HostNicCounters(**nic,
                                                                        ethtool={"tx_prio3_packets": 10},
                                                                        hw={"np_cnp_sent": 1})],
                               switches=[c.SwitchCounters(switch="s", platform="sonic",
                                                          ports={"Ethernet0": {"pfc_tx_prio3": 7}})])
    after = c.CounterSnapshot(taken_at=102.5, hosts=[c.HostNicCounters(**nic,
                                                                       ethtool={"tx_prio3_packets": 110},
                                                                       hw={"np_cnp_sent": 31})],
                              switches=[c.SwitchCounters(switch="s", platform="sonic",
                                                         ports={"Ethernet0": {"pfc_tx_prio3": 9}})])
    d = c.delta_snapshot(before, after)
    assert d.is_delta and d.seconds == 2.5
    assert d.hosts[0].ethtool == {"tx_prio3_packets": 100} and d.hosts[0].hw == {"np_cnp_sent": 30}
    assert d.switches[0].ports == {"Ethernet0": {"pfc_tx_prio3": 2}}


# ---------------------------------------------------------------------------------------- SONiC
SONIC_PFC = """\
  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0   1,200       0       0       0       0
Ethernet8     N/A       0       0      12       0       0       0       0

  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7
---------  ------  ------  ------  ------  ------  ------  ------  ------
Ethernet0       0       0       0      40       0       0       0       0
Ethernet8       0       0       0  15,437       0       0       0       0
"""


def test_sonic_pfc_counters_rx_and_tx_tables() -> None:
    ports = sc.parse_sonic_pfc_counters(SONIC_PFC)
    assert ports["Ethernet0"]["pfc_rx_prio3"] == 1200
    assert ports["Ethernet8"]["pfc_tx_prio3"] == 15437
    assert "pfc_rx_prio0" not in ports["Ethernet8"]  # N/A is not a zero
    assert ports["Ethernet0"]["pfc_tx_prio3"] == 40


def test_sonic_pfc_counters_field_capture_tx_only() -> None:
    ports = sc.parse_sonic_pfc_counters(field("sonic-show-pfcwd-stats-and-pfc-tx-counters.txt"))
    assert ports["Ethernet6"]["pfc_tx_prio3"] == 15437
    assert sum(v for p in ports.values() for v in p.values()) == 15437
    assert not any(k.startswith("pfc_rx") for p in ports.values() for k in p)


def test_sonic_pfcwd_stats_field_capture() -> None:
    wd = sc.parse_sonic_pfcwd_stats(field("sonic-show-pfcwd-stats-and-pfc-tx-counters.txt"))
    assert wd["Ethernet4"] == {"q3_wd_storm_detected": 2, "q3_wd_storm_restored": 2, "q3_wd_tx_ok": 0,
                               "q3_wd_tx_drop": 56035, "q3_wd_rx_ok": 14053, "q3_wd_rx_drop": 371184}
    assert wd["Ethernet6"]["q3_wd_tx_drop"] == 46416


def test_sonic_queue_counters_field_capture_unicast_only() -> None:
    q = sc.parse_sonic_queue_counters(field("sonic-show-queue-counters-ethernet196.txt"))["Ethernet196"]
    assert q["q1_drop_pkts"] == 6841131615
    assert q["q3_tx_bytes"] == 16254949855200
    assert not any(k.startswith(("q8_", "q13_")) for k in q)  # MC8..MC13 rows are multicast


@pytest.mark.parametrize("text,expect", [
    ("""\
     Port    TxQ    WredDrp/pkts    WredDrp/bytes    EcnMarked/pkts    EcnMarked/bytes
---------  -----  --------------  ---------------  ----------------  -----------------
Ethernet0    UC0             N/A              N/A                 0                  0
Ethernet0    UC3             N/A              N/A         3,454,820      5,182,230,000
""", {"q0_ecn_marked_pkts": 0, "q0_ecn_marked_bytes": 0, "q3_ecn_marked_pkts": 3454820,
      "q3_ecn_marked_bytes": 5182230000}),
    ("""\
      Port    TxQ    EcnMarked/pkts    EcnMarked/bytes
----------  -----  ----------------  -----------------
Ethernet0    UC3         160510586       295336835072
""", {"q3_ecn_marked_pkts": 160510586, "q3_ecn_marked_bytes": 295336835072}),
])
def test_sonic_wred_counters_columns_by_name(text: str, expect: dict[str, int]) -> None:
    assert sc.parse_sonic_wred_counters(text)["Ethernet0"] == expect


# ---------------------------------------------------------------------------------------- EOS
def test_eos_pfc_json_and_ecn_table() -> None:
    js = '{"interfaceCounters": {"Ethernet1": {"rxFrames": 3, "txFrames": 17}}}'
    assert ec.parse_eos_pfc_counters_json("leaf1# \n" + js) == {"Ethernet1": {"pfc_rx_all": 3,
                                                                              "pfc_tx_all": 17}}
    ecn = ("Ethernet1:\n   Tx-Queue  ECN Marked Packets\n   --------  ------------------\n   0         0\n   "
           "3         421\n")
    assert ec.parse_eos_ecn_counters(ecn, "Ethernet1") == {"q0_ecn_marked_pkts": 0, "q3_ecn_marked_pkts": 421}
    with pytest.raises(ValueError):
        ec.parse_eos_pfc_counters_json("% Invalid input")


def test_eos_pfc_json_figure_missing_on_one_port_is_not_zero() -> None:
    """A port whose entry lacks ``txFrames`` (or prints no number) has no such counter; it was read as 0."""
    js = ('{"interfaceCounters": {"Ethernet1": {"rxFrames": 3, "txFrames": 17}, "Ethernet2": {"rxFrames": 5},'
          ' "Ethernet3": {"rxFrames": null, "txFrames": "n/a"}}}')
    assert ec.parse_eos_pfc_counters_json(js) == {"Ethernet1": {"pfc_rx_all": 3, "pfc_tx_all": 17},
                                                  "Ethernet2": {"pfc_rx_all": 5}, "Ethernet3": {}}


# ---------------------------------------------------------------------------------------- facts
GIDS = """\
DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV
---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---
mlx5_0\t1\t0\tfe80:0000:0000:0000:bace:f6ff:fe00:0000\t\t\tv1\tens1f0np0
mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:c000:020b\t192.0.2.11  \tv2\tens1f0np0
n_gids_found=2
"""


def test_show_gids_with_and_without_ipv4() -> None:
    gids = parse_show_gids(GIDS)
    assert [(g.index, g.ipv4, g.ver, g.netdev) for g in gids] == [(0, None, "v1", "ens1f0np0"),
                                                                  (3, "192.0.2.11", "v2", "ens1f0np0")]


def test_ibv_devinfo_port_fields() -> None:
    text = ("hca_id:\tmlx5_0\n\tfw_ver:\t\t\t\t28.41.1000\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n"
            "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t1024 (3)\n"
            "\t\t\tlink_layer:\t\tEthernet\n")
    assert parse_ibv_devinfo(text) == {1: {"state": "PORT_ACTIVE", "max_mtu": 4096, "active_mtu": 1024,
                                           "link_layer": "Ethernet"}}


@pytest.mark.parametrize("netdev,active", [(9000, 4096), (4200, 4096), (4192, 4096), (4191, 2048),
                                           (2144, 2048),
                                           (2143, 1024), (1500, 1024), (1120, 1024), (1119, 512)])
def test_roce_active_mtu_kernel_rule(netdev: int, active: int) -> None:
    # iboe_get_mtu: largest IB MTU <= netdev MTU - (GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4)
    assert roce_active_mtu(netdev) == active


def test_rdma_statistic_wrapped_continuation_lines() -> None:
    """`rdma statistic show` wraps a long record onto indented lines; every pair belongs to the link above."""
    text = ("link mlx5_0/1 rx_write_requests 0 rx_read_requests 0 rx_atomic_requests 0 out_of_buffer 0\n"
            "    out_of_sequence 6140236 duplicate_request 0 rnr_nak_retry_err 0 packet_seq_err 929974\n"
            "    np_cnp_sent 17269947 rp_cnp_handled 0\n")
    got = c.parse_hw_counters(text)
    assert (got["out_of_sequence"] == 6140236 and got["packet_seq_err"] == 929974
            and got["rp_cnp_handled"] == 0)
    assert got["out_of_buffer"] == 0 and len(got) == 10


# queuestat (sonic-utilities scripts/queuestat) names a queue by its SAI type and index: UC<n>, MC<n>, VOQ<n>
# or ALL<n> (SAI_QUEUE_TYPE_ALL: one queue for unicast and multicast, the platforms whose SAI does not split
# them); newer releases print one table per port, each after a "For namespace …:" or "… Last cached time …"
# line, numbers with thousands separators and N/A where the SAI has no such counter.
SONIC_QUEUE_ALL_TYPE = """\
For namespace asic0:
     Port    TxQ    Counter/pkts      Counter/bytes    Drop/pkts    Drop/bytes
---------  -----  --------------  -----------------  -----------  ------------
Ethernet0   ALL0   1,452,458,737  1,423,409,562,260            0           N/A
Ethernet0   ALL3          45,050         44,149,000          512           N/A
Ethernet0   ALL7           1,669            210,732            0           N/A

Ethernet8 Last cached time for asic0 was 2025-01-08T18:31:12.681983
     Port    TxQ    Counter/pkts    Counter/bytes    Drop/pkts    Drop/bytes
---------  -----  --------------  ---------------  -----------  ------------
Ethernet8    UC3           1,035           82,926            7             0
Ethernet8    MC8              10              900            0             0
"""


def test_sonic_queue_counters_all_type_queues_are_read() -> None:
    q = sc.parse_sonic_queue_counters(SONIC_QUEUE_ALL_TYPE)
    assert q["Ethernet0"] == {"q0_tx_pkts": 1452458737, "q0_tx_bytes": 1423409562260, "q0_drop_pkts": 0,
                              "q3_tx_pkts": 45050, "q3_tx_bytes": 44149000, "q3_drop_pkts": 512,
                              "q7_tx_pkts": 1669, "q7_tx_bytes": 210732, "q7_drop_pkts": 0}
    assert q["Ethernet8"] == {"q3_tx_pkts": 1035, "q3_tx_bytes": 82926, "q3_drop_pkts": 7, "q3_drop_bytes": 0}


# pfcwd (sonic-utilities pfcwd/main.py, show_stats) leaves out a queue whose counters are all 0/0 unless
# asked with -e/--empty, and prints STATUS N/A for a queue the watchdog does not run on (its 0/0 is no
# reading: no watchdog, no storm counted).
SONIC_PFCWD_EMPTY = (
    "      QUEUE      STATUS  STORM DETECTED/RESTORED  TX OK/DROP  RX OK/DROP  TX LAST OK/DROP  "
    "RX LAST OK/DROP\n"
    "-----------  ----------  -----------------------  ----------  ----------  ---------------  "
    "---------------\n"
    "Ethernet0:3 operational                      0/0         0/0         0/0              0/0  "
    "            0/0\n"
    "Ethernet0:4     stormed                      1/0    0/12,004         0/0         0/12,004  "
    "            0/0\n"
    "Ethernet0:0         N/A                      0/0         0/0         0/0              0/0  "
    "            0/0\n")


def test_sonic_pfcwd_stats_queue_without_watchdog_is_not_read() -> None:
    wd = sc.parse_sonic_pfcwd_stats(SONIC_PFCWD_EMPTY)["Ethernet0"]
    assert wd["q3_wd_storm_detected"] == 0 and wd["q4_wd_storm_detected"] == 1
    assert wd["q4_wd_tx_drop"] == 12004
    assert not any(k.startswith("q0_") for k in wd)


def test_sonic_counter_commands_print_queues_without_storms() -> None:
    """Without -e a queue that had no storm is not printed: read before a run and stormed during it, it
    would have no 'before' and its storm no delta."""
    assert any(re.fullmatch(r"show pfcwd stats (-e|--empty)", cmd) for cmd in sc.COMMANDS)


# queuestat / wredstat -j (sonic-utilities scripts/queuestat, wredstat build_json): port -> queue name ->
# counters as strings; N/A where the SAI has no such counter, thousands separators after a clear (ns_diff)
SONIC_QUEUE_JSON = """\
{
    "Ethernet0": {
        "time": "2025-01-08T18:31:12.675517",
        "UC3": {
            "totalpacket": "1,452,458,737",
            "totalbytes": "1423409562260",
            "droppacket": "12",
            "dropbytes": "N/A"
        },
        "MC8": {
            "totalpacket": "5",
            "totalbytes": "500",
            "droppacket": "0",
            "dropbytes": "0"
        }
    }
}
"""
SONIC_WRED_JSON = """\
{
    "Ethernet8": {
        "cached_time": "2025-01-08T18:00:00.000000",
        "time": "2025-01-08T18:31:12.675517",
        "ALL3": {
            "wreddroppacket": "N/A",
            "wreddropbytes": "N/A",
            "ecnmarkedpacket": "41,002",
            "ecnmarkedbytes": "42000000"
        }
    }
}
"""


def test_sonic_queue_and_wred_counters_json() -> None:
    assert sc.parse_sonic_queue_table(SONIC_QUEUE_JSON) == ("queue", {"Ethernet0": {
        "q3_tx_pkts": 1452458737, "q3_tx_bytes": 1423409562260, "q3_drop_pkts": 12}})
    assert sc.parse_sonic_queue_table(SONIC_WRED_JSON) == ("wred", {"Ethernet8": {
        "q3_ecn_marked_pkts": 41002, "q3_ecn_marked_bytes": 42000000}})


def test_sonic_queue_tables_locate_their_rows_in_the_platform_module() -> None:
    """queuestat's queue names (UC<n>/ALL<n>, a -j queue key under its port's) were known to the generic
    audit reader; the SONiC module answers which line a queue counter was read from
    (CaptureFormat.evidence)."""
    from roce_tune.platforms import sonic

    formats = [f for f in sonic.CAPTURE_FORMATS if f.kind == "queue_table"]
    assert formats and all(f.evidence is sc.queue_evidence_line for f in formats)
    lines = SONIC_QUEUE_ALL_TYPE.splitlines()
    i = sc.queue_evidence_line(SONIC_QUEUE_ALL_TYPE, "Ethernet0", "q3_drop_pkts")
    assert i is not None and lines[i].split()[:2] == ["Ethernet0", "ALL3"]
    i = sc.queue_evidence_line(SONIC_QUEUE_ALL_TYPE, "Ethernet8", "q3_tx_pkts")
    assert i is not None and lines[i].split()[:2] == ["Ethernet8", "UC3"]
    assert sc.queue_evidence_line(SONIC_QUEUE_ALL_TYPE, "Ethernet8", "q8_tx_pkts") is None  # MC8: not read
    i = sc.queue_evidence_line(SONIC_WRED_JSON, "Ethernet8", "q3_ecn_marked_pkts")
    assert i is not None and SONIC_WRED_JSON.splitlines()[i].strip() == '"ALL3": {'
