"""Judge one verify run against the plan: named findings with evidence and a fix (ANTA-style).

Pure: every check is a small function ``check_x(obs) -> CheckResult`` reading an
:class:`Observation` (the plan, the parsed nccl-tests run, counter deltas, NIC facts). A failed
check carries :class:`Diagnosis` objects: rule, what was seen (``evidence`` with the counter
deltas), what to change (``fix``) and, where the closed loop can act on it, a :class:`Proposal`
(which knob, which direction). Rule IDs RT310–RT322; thresholds are module constants.

Thresholds [D] (chosen here, not from a vendor; each is a ratio so it holds at any run length):

* :data:`MIN_PACKETS` — below this many RoCE packets a host's counters are too thin to judge.
* :data:`LOSSY_SHARE_MAX` — share of a NIC's packets allowed on non-lossless priorities (bootstrap
  TCP, ssh and LLDP are small next to an nccl-tests run: the field capture shows 1.3 %).
* :data:`PAUSE_SHARE_MAX` — share of traffic time a NIC may spend paused by PFC before it counts.
* :data:`CNP_PER_PKT_MIN` — CNPs handled per RoCE packet above which DCQCN is actively cutting rates.
* :data:`LOSS_PER_MILLION_MAX` — loss-recovery events per million RoCE packets on a lossless class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Plan
from roce_tune.verify.counters import CounterSnapshot
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.nccl_parser import NcclRun, busbw_fraction_of_line_rate
from roce_tune.verify.signals import FabricSignals, HostSignals, fabric_signals, host_signals

MIN_PACKETS = 10_000
LOSSY_SHARE_MAX = 0.10
PAUSE_SHARE_MAX = 0.01
#: When a NIC gives PFC frame counts but no pause duration: one XOFF refresh per this many µs of pause
#: (a switch re-sends XOFF at about half the 65535-quanta pause time; 83.9 µs at 400G, DOMAIN.md Oracle E).
PAUSE_US_PER_FRAME = 40.0
CNP_PER_PKT_MIN = 1e-4
LOSS_PER_MILLION_MAX = 1.0

__all__ = ["CHECKS", "MIN_PACKETS", "CheckResult", "Diagnosis", "Observation", "Proposal", "diagnose"]


class Proposal(BaseModel):
    """What the closed loop may change for a diagnosis: ``knob`` in a ``direction``.

    ``ecn``: Kmin/Kmax of every lossless queue (``down`` = mark earlier); ``dcqcn_recovery``:
    ``rpg_ai_rate_mbps``/``rpg_hai_rate_mbps`` of every host (``up`` = recover faster).
    """

    model_config = ConfigDict(frozen=True)

    knob: Literal["ecn", "dcqcn_recovery"]
    direction: Literal["up", "down"]


class Diagnosis(BaseModel):
    """One named finding with the evidence that raised it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    name: str
    severity: Severity
    message: str
    fix: str
    evidence: dict[str, object] = Field(default_factory=dict)
    location: Location = Location()
    proposal: Proposal | None = None
    stops_loop: bool = False

    def finding(self) -> Finding:
        """As a project-wide :class:`~roce_tune.findings.Finding`."""
        return Finding(rule=self.rule, severity=self.severity, message=f"{self.name}: {self.message}",
                       fix=self.fix, location=self.location)


class CheckResult(BaseModel):
    """Outcome of one check: ``pass``, ``fail`` (with diagnoses) or ``skip`` (``note`` says why)."""

    model_config = ConfigDict(frozen=True)

    check: str
    status: Literal["pass", "fail", "skip"]
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Observation:
    """Everything one measurement saw.

    Attributes:
        plan: the plan in force during the run.
        hosts: hosts that took part.
        run: the parsed nccl-tests run (None = no parsable output).
        delta: counter deltas over the run.
        facts: NIC facts (MTU, GIDs) per host NIC.
        traffic_time_s: time the collective moved data (Σ row time × iterations), s.
        line_rate_gbps: NIC line rate (Gb/s) busbw is compared with; target_ratio: e.g. 0.9.
        pair_fractions: pairwise busbw as a fraction of line rate, ``{(a, b): f}`` (None = not run).
        fabric_run: False for the ``ssh`` launcher (each host ran alone: no fabric figure).
    """

    plan: Plan
    hosts: list[str]
    run: NcclRun | None
    delta: CounterSnapshot | None
    facts: list[NicFacts] = field(default_factory=list)
    traffic_time_s: float | None = None
    line_rate_gbps: float = 400.0
    target_ratio: float = 0.9
    pair_fractions: dict[tuple[str, str], float] | None = None
    fabric_run: bool = True

    @property
    def lossless(self) -> list[int]:
        """The plan's lossless priorities."""
        return list(self.plan.classification.lossless_priorities)

    def host_sigs(self) -> list[HostSignals]:
        """Per-NIC signals of the hosts in the run."""
        if self.delta is None:
            return []
        return [host_signals(c, self.lossless) for c in self.delta.hosts if c.host in self.hosts]

    def fabric_sigs(self) -> FabricSignals:
        """Switch-side sums on the lossless priorities/queues."""
        if self.delta is None:
            return FabricSignals()
        cls = self.plan.classification
        return fabric_signals(self.delta, list(cls.lossless_priorities), list(cls.lossless_queues))

    def busbw_fraction(self) -> float | None:
        """Largest-message busbw / line rate (None without a usable run)."""
        if self.run is None or self.run.status == "failed":
            return None
        return busbw_fraction_of_line_rate(self.run, self.line_rate_gbps).largest_message


def _fail(check: str, *diags: Diagnosis) -> CheckResult:
    return CheckResult(check=check, status="fail", diagnoses=list(diags))


def _ok(check: str, note: str = "") -> CheckResult:
    return CheckResult(check=check, status="pass", note=note)


def _skip(check: str, note: str) -> CheckResult:
    return CheckResult(check=check, status="skip", note=note)


def _paused_share(s: HostSignals, traffic_us: float | None) -> float | None:
    if not traffic_us:
        return None
    us = s.pause_us if s.pause_us is not None else s.pause_rx_frames * PAUSE_US_PER_FRAME
    return us / traffic_us


def _bdp_bytes(plan: Plan) -> dict[str, int]:
    return {p.name: int(p.speed_gbps * 1e9 / 8 * p.base_rtt_us * 1e-6) for s in plan.switches for p in s.ecn_profiles}


def _ecn_values(plan: Plan) -> dict[str, dict[str, object]]:
    return {f"{s.name}/{p.name}": {"kmin_bytes": p.kmin_bytes, "kmax_bytes": p.kmax_bytes, "pmax_percent":
                                   p.pmax_percent, "pfc_trigger_bytes": p.pfc_trigger_bytes}
            for s in plan.switches for p in s.ecn_profiles}


# ----------------------------------------------------------------------------------------- checks
def check_busbw(obs: Observation) -> CheckResult:
    """RT310/RT311: largest-message busbw ≥ line rate × target ratio, and the run itself succeeded."""
    name = "busbw vs line rate"
    if obs.run is None:
        return _fail(name, Diagnosis(rule="RT311", name="no nccl-tests result", severity=Severity.error,
                                     message="the launch printed no nccl-tests table",
                                     fix="check the launcher output saved with the report (binary path, MPI, hosts)"))
    if obs.run.status == "failed":
        return _fail(name, Diagnosis(rule="RT311", name="nccl-tests run failed", severity=Severity.error,
                                     message="; ".join(obs.run.problems) or "the run failed",
                                     evidence={"problems": list(obs.run.problems)},
                                     fix="fix the run first (MPI build, wrong results, hung ranks); no bandwidth "
                                         "figure is judged from a failed run"))
    if not obs.fabric_run:
        return _skip(name, "ssh launcher: each host ran alone, no fabric traffic to compare with the line rate")
    frac = obs.busbw_fraction()
    big = obs.run.largest_message_row
    if frac is None or big is None:
        return _skip(name, "no busbw figure (single rank or no rows)")
    ev: dict[str, object] = {"largest_message_bytes": big.size_bytes, "busbw_gbytes_per_s": big.busbw_gbps,
          "line_rate_gbps": obs.line_rate_gbps, "fraction": round(frac, 4), "target_ratio": obs.target_ratio}
    if frac >= obs.target_ratio:
        return _ok(name, f"{frac:.1%} of line rate at {big.size_bytes} B")
    return _fail(name, Diagnosis(
        rule="RT310", name="busbw below target", severity=Severity.warning, evidence=ev,
        message=f"busbw {big.busbw_gbps} GB/s at {big.size_bytes} B is {frac:.1%} of {obs.line_rate_gbps:g} Gb/s "
                f"(target {obs.target_ratio:.0%})",
        fix="see the other findings for the cause; with none, check NIC/GPU placement, PCIe and NCCL_IB_HCA"))


def check_roce_priority(obs: Observation) -> CheckResult:
    """RT312: RoCE leaving a NIC on a priority that is not lossless (per-priority tx packet deltas)."""
    name = "RoCE on a lossless priority"
    out = []
    for s in obs.host_sigs():
        if s.tx_total < MIN_PACKETS:
            continue
        lossy = {p: n for p, n in s.tx_by_prio.items() if p not in obs.lossless and n}
        share = sum(lossy.values()) / s.tx_total
        if share > LOSSY_SHARE_MAX:
            out.append(Diagnosis(
                rule="RT312", name="RoCE on a lossy priority", severity=Severity.error,
                location=Location(device=s.host, port=s.netdev),
                evidence={"tx_packets_by_priority": {p: n for p, n in s.tx_by_prio.items() if n},
                          "lossless_priorities": obs.lossless, "lossy_share": round(share, 4)},
                message=f"{share:.0%} of the packets {s.host}:{s.netdev} sent left on priority "
                        f"{', '.join(map(str, sorted(lossy)))}, which has no PFC",
                fix=f"set NCCL_IB_TC={obs.plan.classification.roce_tos} (the plan's nccl.env), trust dscp and the "
                    "DSCP→priority map on the NIC (re-run the host script); check the switch DSCP→TC map"))
    return _fail(name, *out) if out else _ok(name)


def check_one_direction(obs: Observation) -> CheckResult:
    """RT313: a NIC sends RoCE on the lossless priority but receives it on another (or the reverse):
    the two directions are classified differently (field capture: tx_prio3 3.9 Mpps, rx_prio0 4.0 Mpps)."""
    name = "both directions classified alike"
    out = []
    for s in obs.host_sigs():
        if s.tx_total < MIN_PACKETS or s.rx_total < MIN_PACKETS:
            continue
        tx_ok = s.tx_lossless / s.tx_total >= 1 - LOSSY_SHARE_MAX
        rx_ok = s.rx_lossless / s.rx_total >= 1 - LOSSY_SHARE_MAX
        if tx_ok == rx_ok:
            continue
        other = s.rx_by_prio if tx_ok else s.tx_by_prio
        wrong = max((p for p in range(8) if p not in obs.lossless), key=lambda p: other[p])
        out.append(Diagnosis(
            rule="RT313", name="traffic marked in one direction only", severity=Severity.error,
            location=Location(device=s.host, port=s.netdev),
            evidence={"tx_packets_by_priority": {p: n for p, n in s.tx_by_prio.items() if n},
                      "rx_packets_by_priority": {p: n for p, n in s.rx_by_prio.items() if n},
                      "lossless_priorities": obs.lossless},
            message=f"{s.host}:{s.netdev} {'sends' if tx_ok else 'receives'} RoCE on a lossless priority but the "
                    f"packets it {'receives' if tx_ok else 'sends'} travel on priority {wrong}, which has no PFC",
            fix="the peer side uses a different TOS or trust/DSCP map (or a switch re-marks): make NCCL_IB_TC, "
                "mlnx_qos --trust dscp and the switch DSCP→TC map equal on every host and switch"))
    return _fail(name, *out) if out else _ok(name)


def check_pfc_without_ecn(obs: Observation) -> CheckResult:
    """RT314 (PFC pauses, no ECN marks: thresholds above the PFC trigger) and RT315 (PFC pauses a
    significant share of the run even though marking works: Kmax too close to the trigger)."""
    name = "ECN before PFC"
    traffic_us = obs.traffic_time_s * 1e6 if obs.traffic_time_s else None
    sigs = [s for s in obs.host_sigs() if s.tx_total >= MIN_PACKETS]
    fab = obs.fabric_sigs()
    paused = {f"{s.host}:{s.netdev}": round(sh, 4) for s in sigs
              if (sh := _paused_share(s, traffic_us)) is not None and sh > PAUSE_SHARE_MAX}
    if not paused and not (traffic_us is None and (fab.pfc_tx_frames or any(s.pause_rx_frames for s in sigs))):
        return _ok(name)
    marks = fab.ecn_marked + sum(s.ecn_marked for s in sigs)
    ev = {"paused_share_by_nic": paused, "switch_pfc_tx_frames_by_port": fab.pfc_tx_by_port,
          "host_pfc_rx_frames": {f"{s.host}:{s.netdev}": s.pause_rx_frames for s in sigs if s.pause_rx_frames},
          "ecn_marked_switch": fab.ecn_marked, "ecn_marked_hosts": sum(s.ecn_marked for s in sigs),
          "ecn_profiles": _ecn_values(obs.plan)}
    if marks == 0:
        return _fail(name, Diagnosis(
            rule="RT314", name="PFC pauses with no ECN marks", severity=Severity.error, evidence=ev,
            proposal=Proposal(knob="ecn", direction="down"),
            message="the lossless queue reached the PFC trigger and paused senders, but no packet was ECN-marked: "
                    "marking starts above the point where PFC fires, so DCQCN never slows the senders",
            fix="lower Kmin/Kmax below the PFC trigger (ECN before PFC); check ECN is on for the lossless queue "
                "and NCCL_IB_TC carries ECT (TOS 106 = DSCP 26 | ECT(0))"))
    return _fail(name, Diagnosis(
        rule="RT315", name="PFC pauses despite ECN marking", severity=Severity.warning, evidence=ev,
        proposal=Proposal(knob="ecn", direction="down"),
        message=f"senders were paused more than {PAUSE_SHARE_MAX:.0%} of the traffic time although packets were "
                "marked: the marking ramp ends too close to the PFC trigger",
        fix="lower Kmax (and Kmin) so DCQCN reacts before the ingress queue reaches the PFC trigger"))


def check_cnp_recovery(obs: Observation) -> CheckResult:
    """RT316: many CNPs, busbw below target, little PFC — DCQCN cuts rates and does not recover."""
    name = "DCQCN recovers"
    sigs = [s for s in obs.host_sigs() if s.tx_total >= MIN_PACKETS]
    frac = obs.busbw_fraction()
    handled = sum(s.cnp_handled for s in sigs)
    packets = sum(s.tx_lossless for s in sigs)
    if not sigs or frac is None or frac >= obs.target_ratio or not packets or handled / packets < CNP_PER_PKT_MIN:
        return _ok(name)
    traffic_us = obs.traffic_time_s * 1e6 if obs.traffic_time_s else None
    if any((sh := _paused_share(s, traffic_us)) is not None and sh > PAUSE_SHARE_MAX for s in sigs):
        return _ok(name, "PFC dominates: see RT314/RT315")
    bdp = _bdp_bytes(obs.plan)
    short = {f"{s.name}/{p.name}": {"kmax_bytes": p.kmax_bytes, "bdp_bytes": bdp[p.name]}
             for s in obs.plan.switches for p in s.ecn_profiles if p.kmax_bytes < bdp[p.name]}
    ai = {h.name: {"rpg_ai_rate_mbps": n.dcqcn.params.get("rpg_ai_rate_mbps"),
                   "derived": getattr(n.dcqcn.rationale.get("rpg_ai_rate_mbps"), "derived_value", None)}
          for h in obs.plan.hosts if h.name in obs.hosts for n in h.nics}
    slow_ai = {h: v for h, v in ai.items() if v["derived"] is not None and v["rpg_ai_rate_mbps"] is not None
               and v["rpg_ai_rate_mbps"] < v["derived"]}
    ev = {"cnp_handled": handled, "roce_packets": packets, "cnp_per_packet": round(handled / packets, 6),
          "busbw_fraction": round(frac, 4), "ecn_marked_hosts": sum(s.ecn_marked for s in sigs),
          "kmax_below_bdp": short, "ai_rate_pinned_below_derived": slow_ai}
    if short and not slow_ai:
        prop, fix = Proposal(knob="ecn", direction="up"), \
            "raise Kmin/Kmax toward the tuner's derived values (Kmax ≈ 2–3 × BDP): marking starts too early"
    else:
        prop, fix = Proposal(knob="dcqcn_recovery", direction="up"), \
            "raise rpg_ai_rate_mbps / rpg_hai_rate_mbps (the tuner scales them with link speed: 5/50 Mb/s × C/25G)"
    return _fail(name, Diagnosis(
        rule="RT316", name="CNPs without rate recovery", severity=Severity.warning, evidence=ev, proposal=prop,
        message=f"{handled} CNPs handled ({handled / packets:.2e} per packet) while busbw stays at {frac:.0%} of line "
                "rate and PFC is quiet: DCQCN is too aggressive for this fabric", fix=fix))


def check_cnp_handled(obs: Observation) -> CheckResult:
    """RT317: receivers send CNPs but no sender reacts (reaction point off on the RoCE priority)."""
    name = "CNPs reach a reaction point"
    sigs = obs.host_sigs()
    sent, handled, ignored = (sum(s.cnp_sent for s in sigs), sum(s.cnp_handled for s in sigs),
                              sum(s.cnp_ignored for s in sigs))
    if sent >= 100 and handled < 0.01 * sent:
        return _fail(name, Diagnosis(
            rule="RT317", name="CNPs not handled", severity=Severity.error,
            evidence={"np_cnp_sent": sent, "rp_cnp_handled": handled, "rp_cnp_ignored": ignored},
            message=f"{sent} CNPs were sent but senders handled {handled} (ignored {ignored})",
            fix="enable the DCQCN reaction point on the RoCE priority (roce_rp/enable/<prio> = 1; re-run the host "
                "script) and check CNPs travel on the CNP priority"))
    return _ok(name)


def check_loss(obs: Observation) -> CheckResult:
    """RT318: out_of_sequence / packet_seq_err / timeouts / discards rising on a lossless class."""
    name = "no loss on the lossless class"
    out = []
    fab = obs.fabric_sigs()
    for s in obs.host_sigs():
        pkts = max(1, s.rx_total)
        per_m = s.loss_events / pkts * 1e6
        if per_m > LOSS_PER_MILLION_MAX or s.discards:
            out.append(Diagnosis(
                rule="RT318", name="loss on a lossless class", severity=Severity.error, stops_loop=True,
                location=Location(device=s.host, port=s.netdev),
                evidence={**s.loss_detail, "rx_discards_phy": s.discards, "rx_packets": s.rx_total,
                          "per_million": round(per_m, 3), "switch_lossless_drops_by_port": fab.drops_by_port},
                message=f"{s.host}:{s.netdev} recovered from loss {s.loss_events} times ({per_m:.1f} per million "
                        "packets): packets are being dropped although the class should be lossless",
                fix="make PFC cover the RoCE priority end to end (NIC --pfc, switch pfc_enable, DSCP maps), check "
                    "headroom (xoff) and that RoCE is not on a lossy priority (RT312/RT313)"))
    if not out and fab.lossless_drops:
        out.append(Diagnosis(
            rule="RT318", name="loss on a lossless class", severity=Severity.error, stops_loop=True,
            evidence={"switch_lossless_drops_by_port": fab.drops_by_port},
            message=f"switches dropped {fab.lossless_drops} packets on lossless queues",
            fix="check headroom (xoff) and pfc_enable on those ports, and the PFC watchdog (RT319)"))
    return _fail(name, *out) if out else _ok(name)


def check_watchdog(obs: Observation) -> CheckResult:
    """RT319: PFC watchdog storms detected during the run."""
    name = "no PFC watchdog storm"
    fab = obs.fabric_sigs()
    if not fab.wd_storms:
        return _ok(name)
    return _fail(name, Diagnosis(
        rule="RT319", name="PFC watchdog storm", severity=Severity.error, stops_loop=True,
        evidence={"storms_by_port": fab.storms_by_port, "watchdog_drops_by_port": fab.wd_drops_by_port,
                  "pfc_rx_frames": fab.pfc_rx_frames},
        message=f"{fab.wd_storms} PFC storms detected on {', '.join(sorted(fab.storms_by_port))}: a device kept "
                "the lossless queue paused for the whole detection time and the watchdog dropped its traffic",
        fix="find the device pausing those ports (NIC RX stall, a host with PFC on but a full buffer); do not tune "
            "ECN/DCQCN until it is fixed"))


def check_slow_host(obs: Observation) -> CheckResult:
    """RT320: one host in every slow pair (pairwise busbw matrix, ``--pairwise``)."""
    name = "no slow host"
    if not obs.pair_fractions:
        return _skip(name, "pairwise matrix not requested")
    slow = [pair for pair, f in obs.pair_fractions.items() if f < obs.target_ratio]
    if not slow:
        return _ok(name)
    common = set(slow[0]).intersection(*map(set, slow))
    hosts = {h for pair in obs.pair_fractions for h in pair}
    fast_without = {h for h in common if any(f >= obs.target_ratio for p, f in obs.pair_fractions.items()
                                             if h not in p)} or (common if len(hosts) > 2 else set())
    out = [Diagnosis(
        rule="RT320", name="one slow host in every slow pair", severity=Severity.error,
        location=Location(device=h),
        evidence={"slow_pairs": {f"{a}+{b}": round(f, 4) for (a, b), f in obs.pair_fractions.items()
                                 if (a, b) in slow},
                  "pairs_without_it": {f"{a}+{b}": round(f, 4) for (a, b), f in obs.pair_fractions.items()
                                       if h not in (a, b)}},
        message=f"every pair below {obs.target_ratio:.0%} of line rate includes {h}; pairs without it reach the target",
        fix=f"inspect {h}: NIC link speed/FEC and cable, PCIe width, GPU↔NIC affinity, firmware; compare its "
            "counters with a good host") for h in sorted(fast_without)]
    return _fail(name, *out) if out else _ok(name, f"{len(slow)} slow pair(s) share no single host")


def check_mtu(obs: Observation) -> CheckResult:
    """RT321: netdev MTU or RoCE active MTU differs across hosts, or is below the plan's."""
    name = "MTU consistent"
    facts = [f for f in obs.facts if f.host in obs.hosts]
    if not facts:
        return _skip(name, "no NIC facts collected")
    plan_nics = {(h.name, n.netdev): n for h in obs.plan.hosts for n in h.nics}
    active = {f"{f.host}:{f.netdev}": f.active_mtu for f in facts}
    netdev = {f"{f.host}:{f.netdev}": f.netdev_mtu for f in facts}
    top_active = max((v for v in active.values() if v), default=None)
    top_netdev = max((v for v in netdev.values() if v), default=None)
    out = []
    for f in facts:
        n = plan_nics.get((f.host, f.netdev))
        below_plan = n is not None and ((f.netdev_mtu is not None and f.netdev_mtu < n.mtu) or
                                        (f.active_mtu is not None and f.active_mtu < n.roce_mtu))
        below_peers = (f.active_mtu is not None and top_active is not None and f.active_mtu < top_active) or \
                      (f.netdev_mtu is not None and top_netdev is not None and f.netdev_mtu < top_netdev)
        if not (below_plan or below_peers):
            continue
        want = f"; the plan wants {n.mtu} / {n.roce_mtu}" if n is not None else ""
        out.append(Diagnosis(
            rule="RT321", name="MTU mismatch", severity=Severity.error, location=Location(device=f.host, port=f.netdev),
            evidence={"netdev_mtu": netdev, "active_mtu": active, "plan_mtu": n.mtu if n else None,
                      "plan_roce_mtu": n.roce_mtu if n else None},
            message=f"{f.host}:{f.netdev} netdev MTU {f.netdev_mtu}, RoCE active MTU {f.active_mtu}{want}; a RoCE "
                    "connection runs at the smaller active MTU of its two ends",
            fix=f"ip link set dev {f.netdev} mtu {n.mtu if n else top_netdev} on {f.host} (re-run its host script); "
                "the RoCE active MTU follows the netdev MTU minus 96 B"))
    return _fail(name, *out) if out else _ok(name)


def check_gid(obs: Observation) -> CheckResult:
    """RT322: no RoCE v2 IPv4 GID, or its index differs across hosts while NCCL_IB_GID_INDEX is pinned."""
    name = "RoCE v2 GID usable"
    facts = [f for f in obs.facts if f.host in obs.hosts and not f.errors]
    if not facts:
        return _skip(name, "no GID tables collected")
    idx = {f"{f.host}:{f.rdma_device}": f.roce_v2_ipv4_gid_indexes for f in facts}
    pinned = {h.name: h.nccl_env.get("NCCL_IB_GID_INDEX") for h in obs.plan.hosts if h.name in obs.hosts}
    out = []
    for f in facts:
        where = f"{f.host}:{f.rdma_device}"
        pin = pinned.get(f.host)
        if not idx[where]:
            out.append(Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.error,
                                 location=Location(device=f.host, port=f.netdev), evidence={"roce_v2_ipv4_gids": idx},
                                 message=f"{where} has no RoCE v2 GID with an IPv4 address",
                                 fix="give the RoCE netdev an IPv4 address and set RoCE v2 (cma_roce_mode -m 2)"))
        elif pin not in (None, "", "-1") and int(pin) not in idx[where]:
            out.append(Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.error,
                                 location=Location(device=f.host, port=f.netdev),
                                 evidence={"roce_v2_ipv4_gids": idx, "NCCL_IB_GID_INDEX": pin},
                                 message=f"NCCL_IB_GID_INDEX={pin} on {f.host} but its RoCE v2 IPv4 GID is at "
                                         f"{', '.join(map(str, idx[where]))}",
                                 fix="unset NCCL_IB_GID_INDEX (NCCL >= 2.21 selects the RoCE v2 GID with "
                                     "NCCL_IB_ROCE_VERSION_NUM=2) or set it per host"))
    if not out and len({tuple(v) for v in idx.values()}) > 1 and any(p not in (None, "", "-1") for p in pinned.values()):
        out.append(Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.warning, evidence={"gids": idx},
                             message="RoCE v2 GID indexes differ across hosts while NCCL_IB_GID_INDEX is pinned",
                             fix="unset NCCL_IB_GID_INDEX or pin it per host"))
    return _fail(name, *out) if out else _ok(name)


CHECKS: tuple[Callable[[Observation], CheckResult], ...] = (
    check_busbw, check_roce_priority, check_one_direction, check_pfc_without_ecn, check_cnp_recovery,
    check_cnp_handled, check_loss, check_watchdog, check_slow_host, check_mtu, check_gid)


def diagnose(obs: Observation) -> list[CheckResult]:
    """Run every check in :data:`CHECKS` (order = report order)."""
    return [check(obs) for check in CHECKS]
