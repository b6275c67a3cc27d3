"""Judge one verify run against the plan: named findings with evidence and a fix (ANTA-style).

Pure: every check is a small function ``check_x(obs) -> CheckResult`` reading an
:class:`Observation` (the plan, the parsed nccl-tests run, counter deltas, NIC facts, and what the devices
were read back running before the run). A check that reasons from an ECN or DCQCN value takes it as found
(:meth:`Observation.seen`): the running value where the read-back found another than planned, "as planned"
only where the read-back confirmed it, else the plan's value said to be unconfirmed. A
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
from dataclasses import dataclass

from roce_tune.findings import Location, Severity
from roce_tune.plan import EcnProfile, Explained
from roce_tune.tuner.ecn import bdp_bytes
from roce_tune.verify.diagnose_hosts import check_gid, check_mtu, check_slow_host
from roce_tune.verify.observation import (
    AS_PLANNED,
    CNP_PER_PKT_MIN,
    ECN_FIELDS,
    LOSS_PER_MILLION_MAX,
    LOSSY_SHARE_MAX,
    MIN_PACKETS,
    PAUSE_SHARE_MAX,
    PAUSE_US_PER_FRAME,
    RUNNING,
    UNCONFIRMED,
    CheckResult,
    Diagnosis,
    Observation,
    Proposal,
    Seen,
    ecn_key,
    ecn_member,
    not_read,
)
from roce_tune.verify.observation import fail as _fail
from roce_tune.verify.observation import ok as _ok
from roce_tune.verify.observation import skip as _skip
from roce_tune.verify.signals import FabricSignals, HostSignals

__all__ = ["CHECKS", "MIN_PACKETS", "CheckResult", "Diagnosis", "Observation", "Proposal", "diagnose"]


def _paused_share(s: HostSignals, traffic_us: float | None) -> float | None:
    if not traffic_us:
        return None
    us = s.pause_us if s.pause_us is not None else s.pause_rx_frames * PAUSE_US_PER_FRAME
    return us / traffic_us


#: the most ECN ramps / NICs a message names (the evidence has them all)
NAMED_MAX = 3


@dataclass(frozen=True)
class _Ramp:
    """One ECN ramp as found: the planned ``profile`` and each :data:`ECN_FIELDS` value as :class:`Seen`."""

    profile: EcnProfile
    values: dict[str, Seen]

    @property
    def how(self) -> str:
        """:data:`RUNNING` when a value differs from the plan's, else :data:`UNCONFIRMED` when one was not
        read back, else :data:`AS_PLANNED`."""
        hows = {v.how for v in self.values.values()}
        return RUNNING if RUNNING in hows else UNCONFIRMED if UNCONFIRMED in hows else AS_PLANNED

    def evidence(self) -> dict[str, object]:
        """The values as found, the planned PFC trigger, how they are known and (when they differ) the
        plan's."""
        ev: dict[str, object] = {f: v.value for f, v in self.values.items()}
        ev["pfc_trigger_bytes"] = self.profile.pfc_trigger_bytes
        ev["running"] = self.how
        if self.how == RUNNING:
            ev["planned"] = {f: v.planned for f, v in self.values.items()}
        if unread := [f for f, v in self.values.items() if v.how == UNCONFIRMED]:
            ev["not_read_back"] = unread
        return ev

    def words(self) -> str:
        """e.g. ``Kmin/Kmax 20000/60000 B running (planned 3764000/7529000 B)``."""
        kmin, kmax = self.values["kmin_bytes"], self.values["kmax_bytes"]
        if RUNNING in (kmin.how, kmax.how):
            return f"Kmin/Kmax {kmin.value}/{kmax.value} B running (planned {kmin.planned}/{kmax.planned} B)"
        how = "as planned (read back)" if AS_PLANNED == kmin.how == kmax.how else f"({UNCONFIRMED})"
        return f"Kmin/Kmax {kmin.value}/{kmax.value} B {how}"


def _ramps(obs: Observation) -> dict[str, _Ramp]:
    """Every lossless ECN ramp as the read-back before the run found it (:meth:`Observation.seen`), each
    lossless queue of each port on its own: keyed ``switch/profile`` when every port and queue of the profile
    runs alike, else per port (:func:`~roce_tune.verify.observation.ecn_key`: ``switch/port``, or
    ``switch/port queue Q`` with more than one lossless queue)."""
    out: dict[str, _Ramp] = {}
    queues = obs.plan.classification.lossless_queues
    for sw in obs.plan.switches:
        by_profile: dict[str, list[tuple[str, _Ramp]]] = {}
        for port, prof in sw.lossless_ecn_ports():
            for q in queues:
                ramp = _Ramp(prof, {f: obs.seen(sw.name, ecn_member(port.name, q), f, getattr(prof, f))
                                    for f in ECN_FIELDS})
                by_profile.setdefault(prof.name, []).append((ecn_key(sw.name, port.name, q, queues), ramp))
        for name, members in by_profile.items():
            if all(r == members[0][1] for _, r in members):
                out[f"{sw.name}/{name}"] = members[0][1]
            else:
                out.update(dict(members))
    return out


def _named(items: list[str]) -> str:
    """At most :data:`NAMED_MAX` of ``items`` joined, ``(+N more)`` after."""
    more = f" (+{len(items) - NAMED_MAX} more)" if len(items) > NAMED_MAX else ""
    return "; ".join(items[:NAMED_MAX]) + more


def _ramps_words(ramps: dict[str, _Ramp]) -> str:
    """The ramps a PFC/ECN message names, those running other values than planned first, e.g.
    ``lab-leaf1/ROCE: Kmin/Kmax 20000/60000 B running (planned 3764000/7529000 B), planned PFC trigger
    15060000 B``."""
    order = sorted(ramps, key=lambda k: ramps[k].how != RUNNING)
    return _named([f"{k}: {ramps[k].words()}, planned PFC trigger {ramps[k].profile.pfc_trigger_bytes} B"
                   for k in order])

#: most launcher output lines, and characters per line, an RT311 finding quotes
TAIL_LINES, TAIL_LINE_CHARS = 8, 200


def _escaped(line: str) -> str:
    """``line`` with control and other non-printable characters (ANSI escapes, U+2028 …) as escapes."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)


def launcher_tail(outputs: dict[str, str]) -> list[str]:
    """The last non-empty lines the launch printed (``host: line`` when several hosts ran it), each
    escaped and cut to :data:`TAIL_LINE_CHARS`, at most :data:`TAIL_LINES` in all."""
    lines = [(f"{host}: " if len(outputs) > 1 else "") + ln.rstrip("\r")
             for host, text in outputs.items() for ln in text.split("\n") if ln.strip()]
    escaped = [_escaped(ln) for ln in lines[-TAIL_LINES:]]
    return [e if len(e) <= TAIL_LINE_CHARS else e[: TAIL_LINE_CHARS - 1] + "…" for e in escaped]


# ----------------------------------------------------------------------------------------- checks
def check_busbw(obs: Observation) -> CheckResult:
    """RT310/RT311: largest-message busbw ≥ line rate × target ratio, and the run itself succeeded
    (RT311 quotes the tail of what the launcher printed when no usable run came out of it)."""
    name = "busbw vs line rate"
    tail = launcher_tail(obs.launcher_output)
    said = ("; the launcher printed: " + " | ".join(tail)) if tail else ""
    if obs.run is None:
        return _fail(name, Diagnosis(rule="RT311", name="no nccl-tests result", severity=Severity.error,
                                     message="the launch printed no nccl-tests table" + said,
                                     evidence={"launcher_output_tail": tail},
                                     fix="check the launcher output saved with the report (binary path, MPI, "
                                     "hosts)"))
    if obs.run.status in ("failed", "incomplete"):
        what = "failed" if obs.run.status == "failed" else "incomplete (its output ends before the summary)"
        return _fail(name, Diagnosis(rule="RT311", name=f"nccl-tests run {obs.run.status}",
                                     severity=Severity.error,
                                     message=("; ".join(obs.run.problems) or f"the run {what}") + said,
                                     evidence={"problems": list(obs.run.problems),
                                               "launcher_output_tail": tail},
                                     fix="fix the run first (MPI build, wrong results, hung ranks, "
                                         "--run-timeout); no bandwidth figure is judged from a run that "
                                         f"{what.split(' (')[0]}"))
    if not obs.fabric_run:
        return _skip(name,
                     "ssh launcher: each host ran alone, no fabric traffic to compare with the line rate")
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
        message=f"busbw {big.busbw_gbps} GB/s at {big.size_bytes} B is {frac:.1%} of {obs.line_rate_gbps:g} "
                f"Gb/s (target {obs.target_ratio:.0%})",
        fix="see the other findings for the cause; with none, check NIC/GPU placement, PCIe and NCCL_IB_HCA"))


def _prio_unread(obs: Observation, name: str) -> CheckResult:
    """Pass, or skip naming the NICs of the run whose per-priority packet counters were not read (an NIC not
    read is not an NIC that sent nothing on a lossy priority)."""
    blind = [f"{s.host}:{s.netdev}" for s in obs.host_sigs() if not s.prio_counted]
    if blind or obs.delta is None:
        return _skip(name, not_read("ethtool -S per-priority packet counters", blind or ["any host"]))
    return _ok(name)


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
                fix=f"set NCCL_IB_TC={obs.plan.classification.roce_tos} (the plan's nccl.env), trust dscp "
                    "and the DSCP→priority map on the NIC (re-run the host script); check the switch DSCP→TC "
                    "map"))
    return _fail(name, *out) if out else _prio_unread(obs, name)


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
            message=f"{s.host}:{s.netdev} {'sends' if tx_ok else 'receives'} RoCE on a lossless priority but "
                    f"the packets it {'receives' if tx_ok else 'sends'} travel on priority {wrong}, which "
                    "has no PFC",
            fix="the peer side uses a different TOS or trust/DSCP map (or a switch re-marks): make "
                "NCCL_IB_TC, mlnx_qos --trust dscp and the switch DSCP→TC map equal on every host and "
                "switch"))
    return _fail(name, *out) if out else _prio_unread(obs, name)


def _traffic_us(obs: Observation) -> float | None:
    """The run's traffic time in µs (None when unknown)."""
    return obs.traffic_time_s * 1e6 if obs.traffic_time_s else None


def _rt314_no_marks(ev: dict[str, object], ramps: str) -> Diagnosis:
    """RT314: PFC paused senders and nothing was ECN-marked; ``ramps`` names the ramps as found."""
    return Diagnosis(
        rule="RT314", name="PFC pauses with no ECN marks", severity=Severity.error, evidence=ev,
        proposal=Proposal(knob="ecn", direction="down"),
        message="the lossless queue reached the PFC trigger and paused senders, but no packet was "
                "ECN-marked: marking starts above the point where PFC fires, so DCQCN never slows the "
                f"senders{ramps}",
        fix="lower Kmin/Kmax below the PFC trigger (ECN before PFC); check ECN is on for the lossless queue "
            "and NCCL_IB_TC carries ECT (TOS 106 = DSCP 26 | ECT(0))")


def _rt315_pauses_despite_marks(ev: dict[str, object], ramps: str) -> Diagnosis:
    """RT315: senders paused more than :data:`PAUSE_SHARE_MAX` of the time although packets were marked;
    ``ramps`` names the ramps as found."""
    return Diagnosis(
        rule="RT315", name="PFC pauses despite ECN marking", severity=Severity.warning, evidence=ev,
        proposal=Proposal(knob="ecn", direction="down"),
        message=f"senders were paused more than {PAUSE_SHARE_MAX:.0%} of the traffic time although packets "
                f"were marked: the marking ramp ends too close to the PFC trigger{ramps}",
        fix="lower Kmax (and Kmin) so DCQCN reacts before the ingress queue reaches the PFC trigger")


def _paused_nics(sigs: list[HostSignals], traffic_us: float | None) -> dict[str, float]:
    """``host:netdev`` → share of the traffic time paused by PFC, for NICs above :data:`PAUSE_SHARE_MAX`."""
    return {f"{s.host}:{s.netdev}": round(sh, 4) for s in sigs
            if (sh := _paused_share(s, traffic_us)) is not None and sh > PAUSE_SHARE_MAX}


def _pfc_evidence(sigs: list[HostSignals], fab: FabricSignals, paused: dict[str, float],
                  ramps: dict[str, _Ramp]) -> dict[str, object]:
    """Evidence of RT314/RT315: pause shares, PFC frames per switch port and host, ECN marks, the ramps as
    found (:meth:`_Ramp.evidence`)."""
    return {"paused_share_by_nic": paused, "switch_pfc_tx_frames_by_port": fab.pfc_tx_by_port,
            "host_pfc_rx_frames": {f"{s.host}:{s.netdev}": s.pause_rx_frames for s in sigs
                                   if s.pause_rx_frames},
            "ecn_marked_switch": fab.ecn_marked, "ecn_marked_hosts": sum(s.ecn_marked for s in sigs),
            "ecn_profiles": {k: r.evidence() for k, r in ramps.items()}}


def _no_marks_unknown(sigs: list[HostSignals], fab: FabricSignals) -> str:
    """Why zero ECN marks cannot be told from marks not read ('' when it can): "no mark" needs every
    receiver NIC's ECN-marked counter, or every switch port's."""
    if (sigs and all(s.ecn_counted for s in sigs)) or (fab.ecn_counted and not fab.ecn_unread_ports):
        return ""
    unread = ", ".join(fab.ecn_unread_ports[:6]) if fab.ecn_counted else "any switch port"
    return ("not checked: PFC paused senders but the ECN-marked counters were not read on every receiver "
            f"NIC (np_ecn_marked_roce_packets) nor on {unread} (the switch's ECN-marked queue counters)")


def _no_pause_unknown(sigs: list[HostSignals], fab: FabricSignals, obs: Observation) -> str:
    """Why "nothing paused" cannot be told from pauses not read ('' when it can): it needs every NIC's
    received-pause counter on a lossless priority, or every switch port's PFC counter."""
    if (sigs and all(s.pause_counted for s in sigs)) or (obs.delta is not None and obs.delta.switches
                                                         and not fab.pfc_unread):
        return ""
    blind = [f"{s.host}:{s.netdev}" for s in sigs if not s.pause_counted] + fab.pfc_unread
    return not_read("PFC pause counters (rx_prioN_pause on the NICs, the switch's PFC counters)",
                    blind or ["any host"])


def check_pfc_without_ecn(obs: Observation) -> CheckResult:
    """RT314 (PFC pauses, no ECN marks: thresholds above the PFC trigger) and RT315 (PFC pauses a
    significant share of the run even though marking works: Kmax too close to the trigger)."""
    name = "ECN before PFC"
    traffic_us = _traffic_us(obs)
    sigs = [s for s in obs.host_sigs() if s.tx_total >= MIN_PACKETS]
    fab = obs.fabric_sigs()
    paused = _paused_nics(sigs, traffic_us)
    # without a traffic time any pause counts (no share to compare with PAUSE_SHARE_MAX)
    any_pause = bool(fab.pfc_tx_frames or any(s.pause_rx_frames for s in sigs))
    if not paused and not (traffic_us is None and any_pause):
        unknown = "" if any_pause else _no_pause_unknown(sigs, fab, obs)
        return _skip(name, unknown) if unknown else _ok(name)
    marks = fab.ecn_marked + sum(s.ecn_marked for s in sigs)
    if marks == 0 and (unknown := _no_marks_unknown(sigs, fab)):
        return _skip(name, unknown)
    ramps = _ramps(obs)
    ev, said = _pfc_evidence(sigs, fab, paused, ramps), (f" ({w})" if (w := _ramps_words(ramps)) else "")
    return _fail(name, _rt314_no_marks(ev, said) if marks == 0 else _rt315_pauses_despite_marks(ev, said))


def _rate_explained_elsewhere(obs: Observation, sigs: list[HostSignals]) -> str | None:
    """Why a low rate with many CNPs is another check's finding (PFC, loss or a lossy priority, a small RoCE
    MTU), None when DCQCN recovery is the suspect."""
    traffic_us = _traffic_us(obs)
    if any((sh := _paused_share(s, traffic_us)) is not None and sh > PAUSE_SHARE_MAX for s in sigs):
        return "PFC dominates: see RT314/RT315"
    if any(s.loss_events or s.discards or (s.tx_total - s.tx_lossless) / s.tx_total > LOSSY_SHARE_MAX
           for s in sigs):
        return "loss or RoCE on a lossy priority explains the rate: see RT312/RT318"
    roce_mtu = {h.name: min(n.roce_mtu for n in h.nics) for h in obs.plan.hosts if h.nics}
    if any(f.active_mtu is not None and f.active_mtu < roce_mtu.get(f.host, 0) for f in obs.facts):
        return "a RoCE MTU below the plan's explains the rate: see RT321"
    return None


def _tuner_value(section: Explained, key: str, planned: object) -> int | None:
    """The tuner's own value of ``key``: its derived value when the user pinned it (None when the pin has no
    derived value to compare with), else the plan's ``planned`` (the tuner's)."""
    r = section.rationale.get(key)
    if r is not None and r.pinned_by_user:
        return int(r.derived_value) if isinstance(r.derived_value, (int, float)) else None
    return int(planned) if isinstance(planned, (int, float)) else None


def _below(seen: Seen, reference: int | None) -> bool:
    """``seen``'s value is a number below ``reference`` (False when either is unknown)."""
    return reference is not None and isinstance(seen.value, (int, float)) and seen.value < reference


Found = dict[str, dict[str, object]]  # key -> the value as found, the reference, how it is known


def _tuners(seen: Seen, derived: int | None, unit: str) -> str:
    """``, below the tuner's N unit`` after a value below the tuner's, '' when the value is running and the
    tuner's is the planned value its words already name."""
    return "" if seen.how == RUNNING and seen.planned == derived else f", below the tuner's {derived} {unit}"


def _short_kmax(ramps: dict[str, _Ramp]) -> tuple[Found, Found, list[str]]:
    """The ramps of :func:`_ramps` whose Kmax as found is below one BDP, and those below the tuner's derived
    Kmax (pinned below it in the plan, or running below the plan's): ``{key: {"kmax_bytes": as found,
    "bdp_bytes" | "derived_kmax_bytes": reference, "running": how it is known}}`` (+ ``planned_kmax_bytes``
    when it runs another value than planned); and each in words for the message."""
    below_bdp: Found = {}
    below_derived: Found = {}
    said: list[str] = []
    for key, ramp in ramps.items():
        kmax, prof = ramp.values["kmax_bytes"], ramp.profile
        how = {"running": kmax.how} | ({"planned_kmax_bytes": kmax.planned} if kmax.how == RUNNING else {})
        bdp = int(bdp_bytes(prof.speed_gbps, prof.base_rtt_us))
        if _below(kmax, bdp):
            below_bdp[key] = {"kmax_bytes": kmax.value, "bdp_bytes": bdp} | how
            said.append(f"{key} Kmax {kmax.words('B')}, below one BDP ({bdp} B)")
        # the tuner's ramp reaches toward the PFC onset (objective throughput): a Kmax below it is the ECN
        # knob to move back before raising the increase steps past the firmware's
        if _below(kmax, derived := _tuner_value(prof, "kmax_bytes", prof.kmax_bytes)):
            below_derived[key] = {"kmax_bytes": kmax.value, "derived_kmax_bytes": derived} | how
            if key not in below_bdp:
                said.append(f"{key} Kmax {kmax.words('B')}" + _tuners(kmax, derived, "B"))
    return below_bdp, below_derived, said


def _ai_below_derived(obs: Observation) -> tuple[Found, list[str]]:
    """NICs of the run (``host:netdev``) whose rpg_ai_rate_mbps as found is below the tuner's derived value
    (pinned below it in the plan, or running below the plan's): ``{"rpg_ai_rate_mbps": as found, "derived":
    the tuner's, "running": how it is known}`` (+ ``planned`` when it runs another value than planned); and
    each in words for the message."""
    out: Found = {}
    said: list[str] = []
    for h in obs.plan.hosts:
        for n in h.nics if h.name in obs.hosts else []:
            planned = n.dcqcn.params.get("rpg_ai_rate_mbps")
            ai = obs.seen(h.name, n.netdev, "rpg_ai_rate_mbps", planned)
            if _below(ai, derived := _tuner_value(n.dcqcn, "rpg_ai_rate_mbps", planned)):
                key = f"{h.name}:{n.netdev}"
                out[key] = {"rpg_ai_rate_mbps": ai.value, "derived": derived, "running": ai.how} | (
                    {"planned": planned} if ai.how == RUNNING else {})
                said.append(f"{key} rpg_ai_rate {ai.words('Mb/s')}" + _tuners(ai, derived, "Mb/s"))
    return out, said


def _recovery_step(short_kmax: bool, slow_ai: bool) -> tuple[Proposal, str]:
    """RT316's proposal and fix: ECN up when a Kmax is short and AI is not pinned low, else AI/HAI up."""
    if short_kmax and not slow_ai:
        return Proposal(knob="ecn", direction="up"), \
            ("raise Kmin/Kmax toward the tuner's derived values (objective throughput: Kmax = half the "
             "egress PFC onset, docs/derivation.md#kmax-first-rtt-burst): marking starts before the queue "
             "can keep the link busy")
    return Proposal(knob="dcqcn_recovery", direction="up"), \
        ("raise rpg_ai_rate_mbps / rpg_hai_rate_mbps toward the tuner's values (the firmware 5/50 Mb/s: with "
         "the byte counter the recovery time does not depend on link speed, "
         "docs/derivation.md#dcqcn-increase-steps)")


def check_cnp_recovery(obs: Observation) -> CheckResult:
    """RT316: many CNPs, busbw below target, little PFC — DCQCN cuts rates and does not recover.

    Proposal: AI/HAI up when the NICs run them below the tuner's; else ECN up when a Kmax is below one BDP
    or below the tuner's derived Kmax (the throughput ramp reaches toward the PFC onset); else AI/HAI up.
    "Run" is what the read-back before the run found (a value pinned below the tuner's in the plan, or a
    device running another value than planned); where it was not read, the plan's value, said unconfirmed
    (:meth:`~roce_tune.verify.observation.Observation.seen`).
    """
    name = "DCQCN recovers"
    sigs = [s for s in obs.host_sigs() if s.tx_total >= MIN_PACKETS]
    frac = obs.busbw_fraction()
    handled = sum(s.cnp_handled for s in sigs)
    packets = sum(s.tx_lossless for s in sigs)
    if (not sigs or frac is None or frac >= obs.target_ratio or not packets
            or handled / packets < CNP_PER_PKT_MIN):
        return _ok(name)
    elsewhere = _rate_explained_elsewhere(obs, sigs)
    if elsewhere is not None:
        return _ok(name, elsewhere)
    below_bdp, below_derived, short_said = _short_kmax(_ramps(obs))
    slow_ai, slow_said = _ai_below_derived(obs)
    said = short_said + slow_said
    ev = {"cnp_handled": handled, "roce_packets": packets, "cnp_per_packet": round(handled / packets, 6),
          "busbw_fraction": round(frac, 4), "ecn_marked_hosts": sum(s.ecn_marked for s in sigs),
          "kmax_below_bdp": below_bdp, "kmax_below_derived": below_derived,
          "ai_rate_below_derived": slow_ai}
    prop, fix = _recovery_step(bool(below_derived or below_bdp), bool(slow_ai))
    return _fail(name, Diagnosis(
        rule="RT316", name="CNPs without rate recovery", severity=Severity.warning, evidence=ev,
        proposal=prop,
        message=f"{handled} CNPs handled ({handled / packets:.2e} per packet) while busbw stays at "
                f"{frac:.0%} of line rate and PFC is quiet: DCQCN is too aggressive for this fabric"
                + (f"; {_named(said)}" if said else ""), fix=fix))


def check_cnp_handled(obs: Observation) -> CheckResult:
    """RT317: receivers send CNPs but no sender reacts (reaction point off on the RoCE priority)."""
    name = "CNPs reach a reaction point"
    sigs = obs.host_sigs()
    sent, handled, ignored = (sum(s.cnp_sent for s in sigs), sum(s.cnp_handled for s in sigs),
                              sum(s.cnp_ignored for s in sigs))
    blind = sorted(f"{s.host}:{s.netdev}" for s in sigs if not s.cnp_handled_counted)
    if sent >= 100 and blind:
        return _skip(name, f"not checked: needs rp_cnp_handled (hw_counters) from every sender; not read on "
                           f"{', '.join(blind)}")
    if sent >= 100 and handled < 0.01 * sent:
        return _fail(name, Diagnosis(
            rule="RT317", name="CNPs not handled", severity=Severity.error,
            evidence={"np_cnp_sent": sent, "rp_cnp_handled": handled, "rp_cnp_ignored": ignored},
            message=f"{sent} CNPs were sent but senders handled {handled} (ignored {ignored})",
            fix="enable the DCQCN reaction point on the RoCE priority (roce_rp/enable/<prio> = 1; re-run the "
                "host script) and check CNPs travel on the CNP priority"))
    return _ok(name)


def check_loss(obs: Observation) -> CheckResult:
    """RT318: out_of_sequence / packet_seq_err / timeouts / discards rising on a lossless class."""
    name = "no loss on the lossless class"
    out = []
    fab = obs.fabric_sigs()
    buffers = f"; switch headroom and PFC priorities: {said}" if (said := obs.buffer_words()) else ""
    for s in obs.host_sigs():
        if not s.rx_total and s.loss_events and not s.discards:
            # no packet count (ethtool -S not read, or nothing received): report the events, not a rate
            no_count = "ethtool -S per-priority counters not read" if not s.prio_counted else "none received"
            out.append(Diagnosis(
                rule="RT318", name="loss on a lossless class", severity=Severity.warning,
                location=Location(device=s.host, port=s.netdev),
                evidence={**s.loss_detail, "rx_packets": None if not s.prio_counted else 0},
                message=f"{s.host}:{s.netdev} recovered from loss {s.loss_events} times; no received-packet "
                        f"count ({no_count})"
                        ", so no rate per packet",
                fix="read ethtool -S with the hw_counters to judge the loss rate; check PFC covers the RoCE "
                    "priority"))
            continue
        if not s.rx_total:
            continue
        per_m = s.loss_events / s.rx_total * 1e6
        if per_m > LOSS_PER_MILLION_MAX or s.discards:
            out.append(Diagnosis(
                rule="RT318", name="loss on a lossless class", severity=Severity.error, stops_loop=True,
                location=Location(device=s.host, port=s.netdev),
                evidence={**s.loss_detail, "rx_discards_phy": s.discards, "rx_packets": s.rx_total,
                          "per_million": round(per_m, 3), "switch_lossless_drops_by_port": fab.drops_by_port},
                message=f"{s.host}:{s.netdev} recovered from loss {s.loss_events} times ({per_m:.1f} per "
                        "million packets): packets are being dropped although the class should be lossless",
                fix="make PFC cover the RoCE priority end to end (NIC --pfc, switch pfc_enable, DSCP maps), "
                    "check headroom (xoff) and that RoCE is not on a lossy priority (RT312/RT313)" + buffers))
    if not out and fab.lossless_drops:
        out.append(Diagnosis(
            rule="RT318", name="loss on a lossless class", severity=Severity.error, stops_loop=True,
            evidence={"switch_lossless_drops_by_port": fab.drops_by_port},
            message=f"switches dropped {fab.lossless_drops} packets on lossless queues",
            fix="check headroom (xoff) and pfc_enable on those ports, and the PFC watchdog (RT319)"
                + buffers))
    return _fail(name, *out) if out else _loss_unread(obs, name, fab)


def _loss_unread(obs: Observation, name: str, fab: FabricSignals) -> CheckResult:
    """No loss seen: pass when every NIC of the run had its loss-recovery counters read (they see a drop
    anywhere on the path; switch queues whose drop counters were not read are named in the note), else skip
    naming the NICs not read."""
    blind = [f"{s.host}:{s.netdev}" for s in obs.host_sigs() if not s.loss_counted]
    if blind or obs.delta is None:
        return _skip(name, not_read("loss-recovery hw_counters (out_of_sequence, packet_seq_err, …)",
                                    blind or ["any host"]))
    note = not_read("lossless-queue drop counters", fab.drops_unread)[len("not checked: "):] \
        if fab.drops_unread else ""
    return _ok(name, note)


def check_watchdog(obs: Observation) -> CheckResult:
    """RT319: PFC watchdog storms detected during the run."""
    name = "no PFC watchdog storm"
    fab = obs.fabric_sigs()
    if not fab.wd_storms:
        if obs.delta is None or not obs.delta.switches:
            return _skip(name, "not checked: no switch counters were collected")
        if fab.wd_unread:
            return _skip(name, not_read("PFC watchdog storm counters (the switch's show pfcwd stats)",
                                        fab.wd_unread))
        return _ok(name)
    return _fail(name, Diagnosis(
        rule="RT319", name="PFC watchdog storm", severity=Severity.error, stops_loop=True,
        evidence={"storms_by_port": fab.storms_by_port, "watchdog_drops_by_port": fab.wd_drops_by_port,
                  "pfc_rx_frames": fab.pfc_rx_frames},
        message=f"{fab.wd_storms} PFC storms detected on {', '.join(sorted(fab.storms_by_port))}: a device "
                "kept the lossless queue paused for the whole detection time and the watchdog dropped its "
                "traffic",
        fix="find the device pausing those ports (NIC RX stall, a host with PFC on but a full buffer); do "
            "not tune ECN/DCQCN until it is fixed"))

CHECKS: tuple[Callable[[Observation], CheckResult], ...] = (
    check_busbw, check_roce_priority, check_one_direction, check_pfc_without_ecn, check_cnp_recovery,
    check_cnp_handled, check_loss, check_watchdog, check_slow_host, check_mtu, check_gid)


def diagnose(obs: Observation) -> list[CheckResult]:
    """Run every check in :data:`CHECKS` (order = report order)."""
    return [check(obs) for check in CHECKS]
