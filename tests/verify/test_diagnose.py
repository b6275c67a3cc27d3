"""Each diagnosis from a planted counter pattern (and the field captures), against the lab-2node plan.

The plan: SONiC SN4700, two hosts with one 400G ConnectX-7 each; lossless priority/queue 3, RoCE TOS
106. Line rate 400 Gb/s = 50 GB/s busbw, so the 90 % target is 45 GB/s (DOMAIN.md; nccl-tests
PERFORMANCE.md: busbw's ideal is the link rate).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import Override
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan
from roce_tune.platforms import sonic_counters as sc
from roce_tune.tuner.compose import build_plan
from roce_tune.verify import counters as c
from roce_tune.verify.as_found import AsFound, Difference, _Device
from roce_tune.verify.diagnose import Observation, Proposal, diagnose
from roce_tune.verify.hostfacts import GidEntry, NicFacts
from roce_tune.verify.nccl_parser import parse_nccl_output
from roce_tune.verify.observation import ecn_member
from tests.references import reference

REPO = Path(__file__).resolve().parents[2]
PKTS = 10_000_000


@pytest.fixture(scope="module")
def lab() -> Plan:
    return derive_plan(load_inventory(REPO / "inventories" / "lab-2node.yaml"))


def plan_with(overrides: list[Override]) -> Plan:
    inv = load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory
    plan = build_plan(inv.model_copy(update={"policy": inv.policy.model_copy(
        update={"overrides": overrides})}))
    assert not [f for f in plan.findings if f.severity is Severity.error]
    return plan


def nccl(peak_gbytes: float) -> str:
    """A 2-rank all_reduce table (current nccl-tests layout) rising to ``peak_gbytes`` at 1 GiB."""
    lines = ["# Collective test starting: all_reduce_perf", "# Using devices",
             "#  Rank  0 Group  0 Pid   1001 on      node1 device  0 [0000:18:00] NVIDIA H100",
             "#  Rank  1 Group  0 Pid   2002 on      node2 device  0 [0000:18:00] NVIDIA H100",
             ("#       size         count      type   redop    root     time   algbw   busbw #wrong     "
              "time   algbw   busbw #wrong")]
    for k in range(20, 31):
        size = 1 << k
        bw = peak_gbytes * size / (size + (2 << 20))
        t = size / (bw * 1e3)
        lines.append(f"{size:12d} {size // 4:12d}     float     sum      -1  {t:7.1f}  {bw:6.2f}  "
                     f"{bw:6.2f}      0  {t:7.1f}  {bw:6.2f}  {bw:6.2f}      0")
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 30.0", ""]
    return "\n".join(lines)


def host(name: str, ethtool: dict[str, int] | None = None, hw: dict[str, int] | None = None,
         netdev: str = "ens1f0np0") -> c.HostNicCounters:
    base = {"tx_prio3_packets": PKTS, "rx_prio3_packets": PKTS, "tx_prio0_packets": 300,
            "rx_prio0_packets": 300, "rx_prio3_pause": 0, "tx_prio3_pause": 0}
    return c.HostNicCounters(host=name, netdev=netdev, rdma_device="mlx5_0",
                             ethtool={**base, **(ethtool or {})},
                             hw={"np_ecn_marked_roce_packets": 100_000, "np_cnp_sent": 80_000,
                                 "rp_cnp_handled": 80_000, "out_of_sequence": 0, "packet_seq_err": 0,
                                 **(hw or {})})


def delta(hosts: list[c.HostNicCounters], ports: dict[str, dict[str,
                                                                int]] | None = None) -> c.CounterSnapshot:
    sw = c.SwitchCounters(switch="lab-leaf1", platform="sonic", ports=ports if ports is not None else {
        "Ethernet0": {"q3_ecn_marked_pkts": 100_000, "q3_tx_pkts": PKTS},
        "Ethernet8": {"q3_ecn_marked_pkts": 100_000, "q3_tx_pkts": PKTS}})
    return c.CounterSnapshot(taken_at=1.0, hosts=hosts, switches=[sw], is_delta=True, seconds=3.0)


def good_facts() -> list[NicFacts]:
    return [NicFacts(host=h, netdev="ens1f0np0", rdma_device="mlx5_0", netdev_mtu=9000, active_mtu=4096,
                     gids=[GidEntry(device="mlx5_0", port=1, index=3, gid="::ffff:c000:20b",
                                    ipv4=f"192.0.2.{i}",
                                    ver="v2", netdev="ens1f0np0")]) for i,
            h in ((11, "node1"), (27, "node2"))]


def observe(plan: Plan, busbw: float = 48.0, hosts: list[c.HostNicCounters] | None = None,
            ports: dict[str, dict[str, int]] | None = None, **kw) -> dict[str,
                                                                          list]:  # type: ignore[no-untyped-def]
    run = parse_nccl_output(nccl(busbw))[0]
    obs = Observation(plan=plan, hosts=["node1", "node2"], run=run,
                      delta=delta(hosts or [host("node1"), host("node2")], ports),
                      facts=kw.pop("facts", good_facts()), traffic_time_s=2.0, **kw)
    out: dict[str, list] = {}
    for check in diagnose(obs):
        for d in check.diagnoses:
            out.setdefault(d.rule, []).append(d)
    return out


def test_clean_run_has_no_findings(lab: Plan) -> None:
    assert observe(lab) == {}


@pytest.mark.parametrize("busbw,fails", [(40.0, True), (44.9, True), (45.2, False)])
def test_busbw_against_90_percent_of_400g(lab: Plan, busbw: float, fails: bool) -> None:
    found = observe(lab, busbw=busbw)
    assert ("RT310" in found) is fails
    if fails:
        assert found["RT310"][0].evidence["target_ratio"] == 0.9


def test_failed_run_is_reported_not_judged(lab: Plan) -> None:
    run = parse_nccl_output(nccl(48.0).replace("# Out of bounds values : 0 OK",
                                               "# Out of bounds values : 3 FAILED"))[0]
    obs = Observation(plan=lab, hosts=["node1", "node2"], run=run,
                      delta=delta([host("node1"), host("node2")]))
    rules = {d.rule for chk in diagnose(obs) for d in chk.diagnoses}
    assert "RT311" in rules and "RT310" not in rules


def test_roce_on_lossy_priority(lab: Plan) -> None:
    bad = host("node1", ethtool={"tx_prio0_packets": 9_000_000, "tx_prio3_packets": 1_000_000})
    found = observe(lab, hosts=[bad, host("node2")])
    d = found["RT312"][0]
    assert d.location.device == "node1" and d.evidence["lossy_share"] == 0.9
    assert "NCCL_IB_TC=106" in d.fix


def test_one_direction_from_the_field_capture(lab: Plan) -> None:
    path = reference("field-cases", "counters", "mlx5-ethtool-prio-delta-dscp-one-direction.txt")
    before, after = c.parse_side_by_side(path.read_text())
    eth = c.delta_counts(before, after, "node-a", [])
    # node-a sends 3.96 Mpps on prio 3 (and 51 Kpps of other traffic on prio 0) but receives 4.0 Mpps on prio
    # 0
    nic = c.HostNicCounters(host="node1", netdev="ens1f0np0", rdma_device="mlx5_0", ethtool=eth, hw={})
    found = observe(lab, hosts=[nic, host("node2")])
    assert [d.location.device for d in found["RT313"]] == ["node1"]
    assert "RT312" not in found  # what node1 sends is fine: 98.7 % on the lossless priority


def test_pfc_pauses_without_marks_proposes_lower_ecn(lab: Plan) -> None:
    paused = {"rx_prio3_pause": 10_000, "rx_prio3_pause_duration": 400_000}  # 0.4 s of a 2 s run
    hosts = [host(n, ethtool=paused, hw={"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0,
                                         "rp_cnp_handled": 0})
             for n in ("node1", "node2")]
    ports = {"Ethernet0": {"pfc_tx_prio3": 10_000, "q3_ecn_marked_pkts": 0},
             "Ethernet8": {"pfc_tx_prio3": 10_000}}
    found = observe(lab, busbw=30.0, hosts=hosts, ports=ports)
    d = found["RT314"][0]
    assert d.proposal == Proposal(knob="ecn", direction="down")
    assert d.evidence["paused_share_by_nic"] == {"node1:ens1f0np0": 0.2, "node2:ens1f0np0": 0.2}
    assert "RT315" not in found and "RT316" not in found


def test_pfc_pauses_with_marks_is_the_milder_finding(lab: Plan) -> None:
    hosts = [host(n, ethtool={"rx_prio3_pause_duration": 100_000}) for n in ("node1", "node2")]
    found = observe(lab, busbw=40.0, hosts=hosts)
    assert found["RT315"][0].proposal == Proposal(knob="ecn", direction="down")
    assert "RT314" not in found


def test_pauses_below_one_percent_are_ignored(lab: Plan) -> None:
    hosts = [host(n, ethtool={"rx_prio3_pause_duration": 10_000}) for n in ("node1", "node2")]  # 0.5 %
    assert "RT315" not in observe(lab, hosts=hosts)


def test_cnps_without_recovery_points_at_the_right_knob(lab: Plan) -> None:
    found = observe(lab, busbw=35.0)  # 80k CNPs per 10M packets, no PFC, derived thresholds
    assert found["RT316"][0].proposal == Proposal(knob="dcqcn_recovery", direction="up")
    short = plan_with([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000})])  # below BDP 247 KB
    d = observe(short, busbw=35.0)["RT316"][0]
    assert d.proposal == Proposal(knob="ecn", direction="up")
    assert d.evidence["kmax_below_bdp"]
    derived_ai = lab.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"]
    slow_ai = plan_with([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000}),
                         Override(role="host", set={"rpg_ai_rate_mbps": 1})])
    assert derived_ai > 1
    d = observe(slow_ai, busbw=35.0)["RT316"][0]
    assert d.proposal == Proposal(knob="dcqcn_recovery", direction="up")
    # no read-back in this observation: the plan's (pinned) value, said to be unconfirmed
    assert d.evidence["ai_rate_below_derived"]["node1:ens1f0np0"] == {
        "rpg_ai_rate_mbps": 1, "derived": derived_ai, "running": "planned, not read back"}


def test_cnps_without_recovery_move_a_ramp_pinned_below_the_tuners_first(lab: Plan) -> None:
    """A Kmax above one BDP but pinned below the tuner's (the ``bdp`` rule's 2-3 x BDP, where the throughput
    ramp reaches toward the PFC onset): ECN up toward the tuner's ramp, not AI above the firmware step."""
    prof = lab.switches[0].ecn_profiles[0]
    bdp = int(prof.speed_gbps * 1e9 / 8 * prof.base_rtt_us * 1e-6)
    kmax = 2 * bdp  # the bdp rule's Kmax, well below the derived half-onset ramp
    assert bdp < kmax < prof.kmax_bytes
    pinned = plan_with([Override(set={"kmin_bytes": 36_000, "kmax_bytes": kmax})])
    d = observe(pinned, busbw=35.0)["RT316"][0]
    assert d.proposal == Proposal(knob="ecn", direction="up")
    assert not d.evidence["kmax_below_bdp"]
    assert d.evidence["kmax_below_derived"]["lab-leaf1/" + pinned.switches[0].ecn_profiles[0].name] == {
        "kmax_bytes": kmax, "derived_kmax_bytes": prof.kmax_bytes, "running": "planned, not read back"}


def test_cnps_sent_but_not_handled(lab: Plan) -> None:
    hosts = [host(n, hw={"np_cnp_sent": 50_000, "rp_cnp_handled": 0, "rp_cnp_ignored": 50_000})
             for n in ("node1", "node2")]
    d = observe(lab, hosts=hosts)["RT317"][0]
    assert d.evidence == {"np_cnp_sent": 100_000, "rp_cnp_handled": 0, "rp_cnp_ignored": 100_000}


def test_loss_from_the_hang_capture_stops_the_loop(lab: Plan) -> None:
    path = reference("field-cases", "counters", "mlx5-hw-counters-nccl-hang-high-out-of-sequence.txt")
    hw = c.parse_hw_counters(path.read_text())
    found = observe(lab, hosts=[host("node1", hw=hw), host("node2")])
    d = found["RT318"][0]
    assert d.stops_loop and d.location.device == "node1"
    assert d.evidence["out_of_sequence"] == 6140236


def test_lossless_queue_drops_on_the_switch(lab: Plan) -> None:
    ports = {"Ethernet0": {"q3_drop_pkts": 42}, "Ethernet8": {}}
    assert observe(lab, ports=ports)["RT318"][0].evidence["switch_lossless_drops_by_port"] == {
        "lab-leaf1:Ethernet0": 42}


def test_watchdog_storm_from_the_field_capture(lab: Plan) -> None:
    path = reference("field-cases", "counters", "sonic-show-pfcwd-stats-and-pfc-tx-counters.txt")
    ports = c.merge_ports(sc.parse_sonic_pfcwd_stats(path.read_text()))
    d = observe(lab, ports=ports)["RT319"][0]
    assert d.stops_loop
    assert d.evidence["storms_by_port"] == {"lab-leaf1:Ethernet4": 2, "lab-leaf1:Ethernet6": 2}


def test_one_slow_host_in_every_slow_pair(lab: Plan) -> None:
    found = observe(lab, pair_fractions={("node1", "node2"): 0.95, ("node1", "node3"): 0.5,
                                         ("node2", "node3"): 0.52})
    assert [d.location.device for d in found["RT320"]] == ["node3"]
    spread = observe(lab, pair_fractions={("a", "b"): 0.5, ("c", "d"): 0.5, ("a", "c"): 0.95,
                                          ("b", "d"): 0.95})
    assert "RT320" not in spread


def test_mtu_mismatch(lab: Plan) -> None:
    facts = good_facts()
    facts[1] = facts[1].model_copy(update={"netdev_mtu": 1500, "active_mtu": 1024})
    found = observe(lab, facts=facts)
    assert [d.location.device for d in found["RT321"]] == ["node2"]
    assert "mtu 9000" in found["RT321"][0].fix


def test_gid_missing_or_pinned_to_the_wrong_index(lab: Plan) -> None:
    facts = good_facts()
    facts[1] = facts[1].model_copy(update={"gids": [], "gid_table_read": True})
    assert [d.location.device for d in observe(lab, facts=facts)["RT322"]] == ["node2"]
    facts = good_facts()
    facts[1] = facts[1].model_copy(update={"gids": [facts[1].gids[0].model_copy(update={"index": 5})]})
    pinned = lab.model_copy(update={"hosts": [h.model_copy(update={"nccl_env": {**h.nccl_env,
                                                                                "NCCL_IB_GID_INDEX": "3"}})
                                              for h in lab.hosts]})
    found = observe(pinned, facts=facts)
    assert [d.location.device for d in found["RT322"]] == ["node2"]
    assert "NCCL_IB_GID_INDEX" in found["RT322"][0].fix


def test_cnp_finding_is_not_blamed_when_loss_or_mtu_explain_the_rate(lab: Plan) -> None:
    lossy = [host("node1", hw={"out_of_sequence": 400}), host("node2")]
    found = observe(lab, busbw=35.0, hosts=lossy)
    assert "RT318" in found and "RT316" not in found
    facts = good_facts()
    facts[1] = facts[1].model_copy(update={"netdev_mtu": 1500, "active_mtu": 1024})
    found = observe(lab, busbw=35.0, facts=facts)
    assert "RT321" in found and "RT316" not in found


# ---- unknown is not zero: a counter or table that was not read never fires a check (issue 14)
def test_rt322_not_fired_when_show_gids_was_not_read(lab: Plan) -> None:
    facts = [f.model_copy(update={"gids": [], "gid_table_read": False}) for f in good_facts()]
    assert "RT322" not in observe(lab, facts=facts)


def test_rt317_not_fired_when_senders_cnp_handled_was_not_read(lab: Plan) -> None:
    hosts = [host(n) for n in ("node1", "node2")]
    hosts = [h.model_copy(update={"hw": {k: v for k, v in h.hw.items() if k != "rp_cnp_handled"}})
             for h in hosts]
    assert "RT317" not in observe(lab, hosts=hosts)
    # read and zero: fires
    zero = [h.model_copy(update={"hw": {**h.hw, "rp_cnp_handled": 0}}) for h in hosts]
    assert "RT317" in observe(lab, hosts=zero)


def test_rt314_not_fired_when_no_ecn_counter_was_read(lab: Plan) -> None:
    paused = {"rx_prio3_pause": 50_000, "rx_prio3_pause_duration": 400_000}
    hosts = [host(n, ethtool=paused) for n in ("node1", "node2")]
    hosts = [h.model_copy(update={"hw": {k: v for k, v in h.hw.items() if k != "np_ecn_marked_roce_packets"}})
             for h in hosts]
    no_ecn_ports = {"Ethernet0": {"q3_tx_pkts": PKTS}, "Ethernet8": {"q3_tx_pkts": PKTS}}
    assert "RT314" not in observe(lab, hosts=hosts, ports=no_ecn_ports)
    zero = [h.model_copy(update={"hw": {**h.hw, "np_ecn_marked_roce_packets": 0}}) for h in hosts]
    assert "RT314" in observe(lab, hosts=zero, ports=no_ecn_ports)


def test_rt314_not_fired_when_a_port_s_ecn_counter_was_not_read(lab: Plan) -> None:
    """No host counts ECN marks and one switch port's ECN counter was not read (its command failed, N/A):
    the marks there are unknown, so "no packet was ECN-marked" (and the ECN-down step) cannot be claimed."""
    paused = {"rx_prio3_pause": 50_000, "rx_prio3_pause_duration": 400_000}
    hosts = [host(n, ethtool=paused) for n in ("node1", "node2")]
    hosts = [h.model_copy(update={"hw": {k: v for k, v in h.hw.items() if k != "np_ecn_marked_roce_packets"}})
             for h in hosts]
    ports = {"Ethernet0": {"q3_tx_pkts": PKTS, "q3_ecn_marked_pkts": 0},
             "Ethernet8": {"q3_tx_pkts": PKTS, "pfc_tx_prio3": 50_000}}
    assert "RT314" not in observe(lab, hosts=hosts, ports=ports)
    ports["Ethernet8"]["q3_ecn_marked_pkts"] = 0
    assert "RT314" in observe(lab, hosts=hosts, ports=ports)


def test_rt318_gives_no_rate_without_ethtool_counters(lab: Plan) -> None:
    bare = [c.HostNicCounters(host=n, netdev="ens1f0np0", rdma_device="mlx5_0",
                              hw={"out_of_sequence": 7_200, "rp_cnp_handled": 0}) for n in ("node1", "node2")]
    found = observe(lab, hosts=bare)
    msgs = [d.message for d in found.get("RT318", [])]
    assert msgs and all("per million" not in m and "no rate" in m for m in msgs)
    assert all(d.severity.value == "warning" for d in found["RT318"])


def test_no_run_shows_the_launchers_own_error_escaped_and_bounded(lab: Plan) -> None:
    said = "".join(f"noise line {i}\n" for i in range(30)) + "bash: mpirun: command not found\x1b[0m\u2028x\n"
    obs = Observation(plan=lab, hosts=["node1", "node2"], run=None,
                      delta=delta([host("node1"), host("node2")]),
                      launcher_output={"node1": said + "y" * 5000 + "\n"})
    [d] = [d for chk in diagnose(obs) for d in chk.diagnoses if d.rule == "RT311"]
    assert "bash: mpirun: command not found\\x1b[0m\\u2028x" in d.message
    assert "\x1b" not in d.message and "\u2028" not in d.message
    assert "noise line 21" not in d.message and len(d.message) < 2000
    assert (len(d.evidence["launcher_output_tail"]) == 8
            and d.evidence["launcher_output_tail"][-1].endswith("…"))


def test_an_incomplete_run_is_reported_not_judged(lab: Plan) -> None:
    text = nccl(48.0)
    run = parse_nccl_output(text[: text.index("# Out of bounds values")])[0]
    obs = Observation(plan=lab, hosts=["node1", "node2"], run=run,
                      delta=delta([host("node1"), host("node2")]),
                      launcher_output={"node1": text[: text.index("# Out of bounds")] + "Killed\n"})
    found = {d.rule: d for chk in diagnose(obs) for d in chk.diagnoses}
    assert "RT311" in found and "RT310" not in found
    assert found["RT311"].name == "nccl-tests run incomplete" and "Killed" in found["RT311"].message
    # its rows reach 96 % of line rate, but a run killed before its summary is no figure: the adjust loop
    # took it for "target reached" (and could keep it as its best iteration)
    assert obs.busbw_fraction() is None


# ---- a check whose counters were not read is "not checked" (skip, naming where), never "pass"
def statuses(plan: Plan, hosts: list[c.HostNicCounters], switch: c.SwitchCounters,
             facts: list[NicFacts] | None = None) -> dict[str, tuple[str, str]]:
    run = parse_nccl_output(nccl(48.0))[0]
    snap = c.CounterSnapshot(taken_at=1.0, hosts=hosts, switches=[switch], is_delta=True, seconds=3.0)
    obs = Observation(plan=plan, hosts=["node1", "node2"], run=run, delta=snap,
                      facts=good_facts() if facts is None else facts, traffic_time_s=2.0)
    return {r.check: (r.status, r.note) for r in diagnose(obs)}


WD = {"q3_wd_storm_detected": 0, "q3_wd_tx_drop": 0, "q3_drop_pkts": 0, "q3_ecn_marked_pkts": 10,
      "q3_tx_pkts": PKTS}
READ_SWITCH = c.SwitchCounters(switch="lab-leaf1", platform="sonic", ports={"Ethernet0": WD, "Ethernet8": WD})


def test_every_check_passes_when_every_counter_was_read(lab: Plan) -> None:
    st = statuses(lab, [host("node1"), host("node2")], READ_SWITCH)
    assert {k: v for k, v in st.items() if v[0] != "pass"} == {"no slow host": (
        "skip", "pairwise matrix not requested")}


def test_an_unreachable_switch_is_no_evidence_of_no_watchdog_storm(lab: Plan) -> None:
    """Switch unreachable during the run (field: mgmt ACL, wrong port): "no PFC watchdog storm" was pass."""
    down = c.SwitchCounters(switch="lab-leaf1", platform="sonic",
                            errors=["PushError: connect: lab-leaf1 (127.0.0.1:2201): Connection refused"])
    st = statuses(lab, [host("node1"), host("node2")], down)
    assert st["no PFC watchdog storm"] == (
        "skip",
        "not checked: PFC watchdog storm counters (the switch's show pfcwd stats) not read on lab-leaf1")
    # the hosts' loss-recovery counters were read: no loss end to end, the switch drops are named as unread
    status, note = st["no loss on the lossless class"]
    assert status == "pass" and "lossless-queue drop counters not read on lab-leaf1" in note
    # one port of two without the watchdog table: not checked there
    half = READ_SWITCH.model_copy(update={"ports": {"Ethernet0": WD, "Ethernet8": {"q3_tx_pkts": PKTS}}})
    assert statuses(lab, [host("node1"), host("node2")], half)["no PFC watchdog storm"][0] == "skip"


def test_a_nic_whose_counters_were_not_read_is_not_checked(lab: Plan) -> None:
    """node2's NIC name is wrong in the inventory (``Cannot find device``): loss and priority checks were pass
    on node1's counters alone, and MTU consistency was pass without node2's MTU."""
    blind = c.HostNicCounters(host="node2", netdev="ens1f1np1", rdma_device="mlx5_1",
                              errors=["ethtool -S ens1f1np1: no statistics", "mlx5_1 hw_counters: none read"])
    facts = good_facts()
    facts[1] = NicFacts(host="node2", netdev="ens1f1np1", rdma_device="mlx5_1",
                        errors=["netdev MTU of ens1f1np1 not read",
                                "ibv_devinfo -d mlx5_1: port 1 not found"])
    st = statuses(lab, [host("node1"), blind], READ_SWITCH, facts)
    assert st["no loss on the lossless class"] == (
        "skip", "not checked: loss-recovery hw_counters (out_of_sequence, packet_seq_err, …) not read on "
        "node2:ens1f1np1")
    assert st["RoCE on a lossless priority"] == (
        "skip", "not checked: ethtool -S per-priority packet counters not read on node2:ens1f1np1")
    assert st["both directions classified alike"][0] == "skip"
    assert st["MTU consistent"] == ("skip", "not checked: netdev MTU / RoCE active MTU not read on "
                                            "node2:ens1f1np1")
    # a finding on the NIC that was read still fires
    bad = host("node1", ethtool={"tx_prio0_packets": 9_000_000, "tx_prio3_packets": 1_000_000})
    assert statuses(lab, [bad, blind], READ_SWITCH, facts)["RoCE on a lossless priority"][0] == "fail"


def test_pause_counters_not_read_are_not_no_pause(lab: Plan) -> None:
    """mlx5 prints rx_prioN_pause only for the priorities with PFC on at the NIC (en_stats.c, per-prio PFC
    group), and a switch may give no PFC counters: "ECN before PFC" was pass with neither read."""
    def no_pause(name: str) -> c.HostNicCounters:
        h = host(name)
        return h.model_copy(update={"ethtool": {k: v for k, v in h.ethtool.items() if "pause" not in k}})

    st = statuses(lab, [no_pause("node1"), no_pause("node2")], READ_SWITCH)
    assert st["ECN before PFC"] == (
        "skip", "not checked: PFC pause counters (rx_prioN_pause on the NICs, the switch's PFC counters) not "
        "read on node1:ens1f0np0, node2:ens1f0np0, lab-leaf1:Ethernet0, lab-leaf1:Ethernet8")
    # either side read in full is enough to say nothing paused
    assert statuses(lab, [host("node1"), host("node2")], READ_SWITCH)["ECN before PFC"][0] == "pass"
    pfc = {**WD, "pfc_tx_prio3": 0, "pfc_rx_prio3": 0}
    switch = READ_SWITCH.model_copy(update={"ports": {"Ethernet0": pfc, "Ethernet8": pfc}})
    assert statuses(lab, [no_pause("node1"), no_pause("node2")], switch)["ECN before PFC"][0] == "pass"


# ------------------------------------------------------------- the values the devices were read back running
def found_running(plan: Plan, ecn: dict[str, object] | None = None, ai_mbps: dict[str, int] | None = None,
                  not_read: tuple[str, ...] = ()) -> AsFound:
    """The as-found read of the lab: lab-leaf1's lossless ports running ``ecn`` (as its read-back states it;
    None: as planned), hosts whose NIC runs rpg_ai_rate ``ai_mbps[host]`` (as ``--check`` MISMATCH lines
    give it), devices in ``not_read`` that could not be read."""
    sw = plan.switches[0]
    devs = {sw.name: _Device(sw.name)}
    if ecn is not None:
        devs[sw.name] = _Device(sw.name, values={ecn_member(p.name, q): dict(ecn) for p, _ in
                                                 sw.lossless_ecn_ports()
                                                 for q in plan.classification.lossless_queues},
                                differences=[Difference(sw.name, "Ethernet0 queue 3 kmax_bytes", "x", "y")])
    for h in plan.hosts:
        ai = (ai_mbps or {}).get(h.name)
        devs[h.name] = _Device(h.name) if ai is None else _Device(
            h.name, values={"ens1f0np0": {"rpg_ai_rate_mbps": ai}},
            differences=[Difference(h.name, "ens1f0np0 ecn/roce_rp/rpg_ai_rate", "x", str(ai))])
    for name in not_read:
        devs[name] = _Device(name, error="TimeoutError: no answer")
    return AsFound(devs)


def test_rt316_blames_the_ramp_the_switch_runs_not_the_plans(lab: Plan) -> None:
    """The plan holds the tuner's ramp (Kmax far above one BDP) but lab-leaf1 was read back running
    20000/60000 B: RT316 said nothing of the ramp (it looked at the plan's) and proposed AI/HAI up. Now it
    names the running Kmax and the planned one, and moves the ECN knob."""
    prof = lab.switches[0].ecn_profiles[0]
    found = found_running(lab, ecn={"kmin_bytes": 20_000, "kmax_bytes": 60_000, "pmax_percent": 1.0})
    d = observe(lab, busbw=35.0, as_found=found)["RT316"][0]
    key, bdp = f"lab-leaf1/{prof.name}", int(prof.speed_gbps * 1e9 / 8 * prof.base_rtt_us * 1e-6)
    assert d.evidence["kmax_below_bdp"] == {key: {
        "kmax_bytes": 60_000, "bdp_bytes": bdp, "running": "running", "planned_kmax_bytes": prof.kmax_bytes}}
    assert (f"{key} Kmax 60000 B running (planned {prof.kmax_bytes} B), below one BDP ({bdp} B)"
            in d.message)
    assert d.proposal == Proposal(knob="ecn", direction="up")
    assert not d.evidence["ai_rate_below_derived"]  # the hosts were read back as planned


def test_rt316_does_not_blame_a_pinned_ramp_the_switch_does_not_run(lab: Plan) -> None:
    """The plan pins a ramp below one BDP, but the switch was read back running the tuner's ramp: the pinned
    Kmax is not what the fabric measured, so it is not blamed (it was: kmax_below_bdp, ECN up)."""
    short = plan_with([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000})])
    derived = lab.switches[0].ecn_profiles[0]
    found = found_running(short, ecn={"kmin_bytes": derived.kmin_bytes, "kmax_bytes": derived.kmax_bytes,
                                      "pmax_percent": derived.pmax_percent})
    d = observe(short, busbw=35.0, as_found=found)["RT316"][0]
    assert d.evidence["kmax_below_bdp"] == {} and d.evidence["kmax_below_derived"] == {}
    assert d.proposal == Proposal(knob="dcqcn_recovery", direction="up")
    assert "100000" not in d.message


def test_rt316_names_the_increase_step_a_nic_runs(lab: Plan) -> None:
    """node1 was read back running rpg_ai_rate 1 Mb/s where the plan has the tuner's: the AI/HAI step is
    proposed because of the running value, which the message names with the planned one."""
    planned = lab.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"]
    d = observe(lab, busbw=35.0, as_found=found_running(lab, ai_mbps={"node1": 1}))["RT316"][0]
    assert d.evidence["ai_rate_below_derived"] == {"node1:ens1f0np0": {
        "rpg_ai_rate_mbps": 1, "derived": planned, "running": "running", "planned": planned}}
    assert f"node1:ens1f0np0 rpg_ai_rate 1 Mb/s running (planned {planned} Mb/s)" in d.message
    assert "below the tuner's" not in d.message  # the planned value it names is the tuner's
    assert d.proposal == Proposal(knob="dcqcn_recovery", direction="up")


def _paused_no_marks() -> tuple[list[c.HostNicCounters], dict[str, dict[str, int]]]:
    paused = {"rx_prio3_pause": 10_000, "rx_prio3_pause_duration": 400_000}
    hosts = [host(n, ethtool=paused, hw={"np_ecn_marked_roce_packets": 0, "np_cnp_sent": 0,
                                         "rp_cnp_handled": 0}) for n in ("node1", "node2")]
    return hosts, {"Ethernet0": {"pfc_tx_prio3": 10_000, "q3_ecn_marked_pkts": 0},
                   "Ethernet8": {"pfc_tx_prio3": 10_000, "q3_ecn_marked_pkts": 0}}


def test_rt314_names_the_ramp_running_above_the_trigger(lab: Plan) -> None:
    """PFC paused with no marks while lab-leaf1 runs a ramp above the PFC trigger: the evidence gave the
    plan's Kmin/Kmax (below the trigger, so it contradicted the diagnosis); it gives the running ones, the
    plan's beside them, and the message names both."""
    prof = lab.switches[0].ecn_profiles[0]
    kmin, kmax = prof.pfc_trigger_bytes + 1_000_000, prof.pfc_trigger_bytes + 2_000_000
    hosts, ports = _paused_no_marks()
    found = found_running(lab, ecn={"kmin_bytes": kmin, "kmax_bytes": kmax, "pmax_percent": None})
    d = observe(lab, busbw=30.0, hosts=hosts, ports=ports, as_found=found)["RT314"][0]
    key = f"lab-leaf1/{prof.name}"
    assert d.evidence["ecn_profiles"] == {key: {
        "kmin_bytes": kmin, "kmax_bytes": kmax, "pmax_percent": prof.pmax_percent,
        "pfc_trigger_bytes": prof.pfc_trigger_bytes, "running": "running",
        "planned": {"kmin_bytes": prof.kmin_bytes, "kmax_bytes": prof.kmax_bytes,
                    "pmax_percent": prof.pmax_percent},
        "not_read_back": ["pmax_percent"]}}
    assert (f"{key}: Kmin/Kmax {kmin}/{kmax} B running (planned {prof.kmin_bytes}/{prof.kmax_bytes} B), "
            f"planned PFC trigger {prof.pfc_trigger_bytes} B") in d.message


@pytest.mark.parametrize("found,said", [
    ("confirmed", "as planned (read back)"), ("not read", "(planned, not read back)"),
    (None, "(planned, not read back)")])
def test_rt314_says_as_planned_only_where_the_read_back_confirmed_it(lab: Plan, found: str | None,
                                                                     said: str) -> None:
    """A switch read back running the plan: "as planned (read back)"; one not read (or no read-back at all):
    the plan's values, said to be unconfirmed."""
    prof = lab.switches[0].ecn_profiles[0]
    hosts, ports = _paused_no_marks()
    af = None if found is None else found_running(lab, not_read=("lab-leaf1",) if found == "not read" else ())
    d = observe(lab, busbw=30.0, hosts=hosts, ports=ports, as_found=af)["RT314"][0]
    assert f"Kmin/Kmax {prof.kmin_bytes}/{prof.kmax_bytes} B {said}" in d.message
    ev = d.evidence["ecn_profiles"][f"lab-leaf1/{prof.name}"]
    assert ev["running"] == ("as planned" if found == "confirmed" else "planned, not read back")
    assert "planned" not in ev


def test_ports_running_different_ramps_are_named_per_port(lab: Plan) -> None:
    """One port of a profile runs another ramp than the rest: the evidence splits that profile per port."""
    prof = lab.switches[0].ecn_profiles[0]
    found = found_running(lab, ecn={"kmin_bytes": prof.kmin_bytes, "kmax_bytes": prof.kmax_bytes,
                                    "pmax_percent": prof.pmax_percent})
    leaf = found.devices["lab-leaf1"]
    first = next(iter(leaf.values))
    leaf.values[first] = {"kmin_bytes": 20_000, "kmax_bytes": 60_000, "pmax_percent": prof.pmax_percent}
    hosts, ports = _paused_no_marks()
    ev = observe(lab, busbw=30.0, hosts=hosts, ports=ports, as_found=found)["RT314"][0].evidence
    got = {k: v["running"] for k, v in ev["ecn_profiles"].items()}
    port = first.removesuffix(" queue 3")  # one lossless queue: keyed by port
    assert got[f"lab-leaf1/{port}"] == "running" and len(got) == len(leaf.values)
    assert {v for k, v in got.items() if k != f"lab-leaf1/{port}"} == {"as planned"}


def test_rt318_names_the_headroom_the_switch_runs(lab: Plan) -> None:
    """Switch drops on the lossless queue: RT318 said "check headroom (xoff)" whatever the switch runs; it
    names the xoff the read-back found beside the planned one, "as planned (read back)" where it matched, and
    the plan's values as unconfirmed where nothing was read."""
    ports = {"Ethernet0": {"q3_ecn_marked_pkts": 100_000, "q3_tx_pkts": PKTS, "q3_drop_pkts": 5_000},
             "Ethernet8": {"q3_ecn_marked_pkts": 100_000, "q3_tx_pkts": PKTS}}
    found = found_running(lab)
    found.devices["lab-leaf1"] = _Device("lab-leaf1", differences=[
        Difference("lab-leaf1", "ports[Ethernet0].headroom.xoff_bytes", "34816", "4096")])
    d = observe(lab, ports=ports, as_found=found)["RT318"][0]
    assert d.fix.endswith("; switch headroom and PFC priorities: lab-leaf1 "
                          "ports[Ethernet0].headroom.xoff_bytes: planned 34816, running 4096")
    d = observe(lab, ports=ports, as_found=found_running(lab))["RT318"][0]
    assert d.fix.endswith("; switch headroom and PFC priorities: as planned on lab-leaf1 (read back)")
    d = observe(lab, ports=ports)["RT318"][0]
    assert d.fix.endswith("; switch headroom and PFC priorities: on lab-leaf1 the plan's values "
                          "(planned, not read back)")


def test_rt314_without_an_ecn_ramp_names_none(lab: Plan) -> None:
    """No lossless port has an ECN profile (ECN off in the plan): nothing to name, no empty brackets."""
    sw = lab.switches[0]
    no_ecn = lab.model_copy(update={"switches": [sw.model_copy(update={
        "ports": [p.model_copy(update={"ecn_profile": None}) for p in sw.ports]})]})
    hosts, ports = _paused_no_marks()
    d = observe(no_ecn, busbw=30.0, hosts=hosts, ports=ports)["RT314"][0]
    assert d.message.endswith("so DCQCN never slows the senders") and d.evidence["ecn_profiles"] == {}


def test_two_lossless_queues_running_different_ramps_are_each_compared(tmp_path: Path) -> None:
    """lab-2node with a second lossless priority (4, DSCP 34): lab-leaf1 runs the plan's ramp on queue 3 and a
    shallow one on queue 4. The read-back kept only the first lossless queue's values per port, so the
    settings and RT314's evidence said "as planned" for the whole profile; now each queue is read back,
    labelled and named on its own."""
    import json

    from roce_tune.deploy.runner import targets_from_files
    from roce_tune.pipeline import render
    from roce_tune.verify.adjust import plan_settings
    from roce_tune.verify.as_found import _read_switch

    text = (REPO / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    inv = tmp_path / "two-class.yaml"
    inv.write_text(text.replace("lossless_priorities: [3]", "lossless_priorities: [3, 4]")
                   .replace("roce_dscp: [26]", "roce_dscp: [26, 34]"), encoding="utf-8")
    plan = derive_plan(load_inventory(inv))
    assert plan.classification.lossless_queues == [3, 4]
    [t] = [t for t in targets_from_files(plan, render(plan)[1]) if t.name == "lab-leaf1"]
    db = json.loads(t.desired)
    [planned_wred] = db["WRED_PROFILE"].values()
    shallow = {f"{c}_{m}_threshold": v for c in ("green", "yellow", "red")
               for m, v in (("min", "20000"), ("max", "60000"))}
    db["WRED_PROFILE"]["SHALLOW"] = {**planned_wred, **shallow}
    for key, queue in db["QUEUE"].items():
        if key.endswith("|4") and "wred_profile" in queue:
            queue["wred_profile"] = "SHALLOW"

    class Pool:
        def with_driver(self, name, what, fn):  # type: ignore[no-untyped-def]
            return json.dumps(db, indent=2)

    leaf = _read_switch(Pool(), plan, t)  # type: ignore[arg-type]
    prof = plan.switches[0].ecn_profiles[0]
    ports = [p.name for p, _ in plan.switches[0].lossless_ecn_ports()]
    assert {leaf.values[ecn_member(p, 3)]["kmax_bytes"] for p in ports} == {prof.kmax_bytes}
    assert {leaf.values[ecn_member(p, 4)]["kmax_bytes"] for p in ports} == {60_000}
    found = AsFound({"lab-leaf1": leaf, "node1": _Device("node1"), "node2": _Device("node2")})
    ecn = found.settings(plan, plan_settings(plan))["ecn"]
    assert {k: v["running"] for k, v in ecn.items()} == {
        **{f"lab-leaf1/{p} queue 3": "as planned" for p in ports},
        **{f"lab-leaf1/{p} queue 4": "differs from the plan" for p in ports}}
    hosts, counters = _paused_no_marks()
    d = observe(plan, busbw=30.0, hosts=hosts, ports=counters, as_found=found)["RT314"][0]
    ev = d.evidence["ecn_profiles"]
    assert {k: (v["kmax_bytes"], v["running"]) for k, v in ev.items()} == {
        **{f"lab-leaf1/{p} queue 3": (prof.kmax_bytes, "as planned") for p in ports},
        **{f"lab-leaf1/{p} queue 4": (60_000, "running") for p in ports}}
    assert f"Kmin/Kmax 20000/60000 B running (planned {prof.kmin_bytes}/{prof.kmax_bytes} B)" in d.message
