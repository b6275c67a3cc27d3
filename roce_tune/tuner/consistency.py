"""End-to-end consistency of a derived plan: switch maps, NIC maps, TOS and NCCL must agree.

A RoCE fabric is only lossless when every hop agrees on the class of a packet: the TOS byte NCCL
puts on the wire (``NCCL_IB_TC``) must carry a RoCE DSCP with ECT set, that DSCP must land in a TC
with PFC on every switch port and in a PFC-enabled priority on every NIC, the CNP class must never
be paused and must be served strictly, and every ECN ramp must reach Pmax before the PFC trigger
(DCQCN: "ECN must fire before PFC", docs/derivation.md#ecn). Any disagreement is an error: ``roce-tune plan``
refuses to write a plan for which :func:`check_consistency` returns errors.

Rules (all ``error``):

* RT230 switch maps: RoCE DSCP -> lossless TC; CNP DSCP -> CNP TC; 64 DSCPs mapped; lossless
  TC/priority -> the lossless queue and PG (TC, PFC-priority and queue/PG maps agree).
* RT231 NIC PFC: every RoCE DSCP -> a priority with PFC on (``pfc_vector``); PFC on exactly the
  lossless priorities.
* RT232 NIC map: NIC ``dscp_to_priority`` and ``trust`` equal the classification's.
* RT233 TOS: NIC ``roce_tos`` equals the classification's, ``roce_tos >> 2`` is a RoCE DSCP and its
  ECN bits are ECT(0) or ECT(1) (RFC 3168 §5).
* RT234 NCCL: ``NCCL_IB_TC`` equals the RoCE TOS on every host with RDMA NICs.
* RT235 CNP: CNP priority never lossless (classification, switch ports, NIC PFC vector); CNP queue
  strict.
* RT236 lossless ports: PFC on exactly the lossless priorities, a headroom, an ECN profile that exists
  on the switch; lossy ports have no PFC.
* RT237 ECN: ``Kmin < Kmax <= pfc_onset_bytes`` (the egress queue at which all fan-in PGs send XOFF;
  ``pfc_trigger_bytes`` when the onset is not recorded) for every ECN profile.
* RT238 CNP marking: NIC ``cnp_dscp``/``cnp_priority`` equal the site's (policy and classification).
* RT239 scheduled queues: every TC 0..7 and every DSCP reaches (through ``tc_to_queue``) a queue that the
  plan's scheduler serves: strict, or DWRR with a weight above 0. A queue without one gets no bandwidth
  share under load (docs/derivation.md#classification).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Classification, NicPlan, Plan, PortPlan, QueueScheduler, SwitchPlan
from roce_tune.tuner.ecn import ramp_pin_path

ECT_BITS = (0b01, 0b10)  # ECT(1), ECT(0); RFC 3168 §5


def _f(rule: str, message: str, fix: str, *, device: str | None = None, port: str | None = None,
       path: str | None = None) -> Finding:
    return Finding(rule=rule, severity=Severity.error, message=message, fix=fix,
                   location=Location(device=device, port=port, path=path))


def _switch_maps(plan: Plan) -> list[Finding]:
    c = plan.classification
    out: list[Finding] = []
    lossless = set(c.lossless_priorities)
    path = "classification"
    fix = "re-derive the plan; do not edit classification maps by hand"
    if sorted(c.dscp_to_tc) != list(range(64)):
        out.append(_f("RT230", f"dscp_to_tc covers {len(c.dscp_to_tc)} DSCPs, not all 64", fix,
                      path=f"{path}.dscp_to_tc"))
    for d in c.roce_dscp:
        tc = c.dscp_to_tc.get(d)
        if tc not in lossless:
            out.append(_f("RT230", f"RoCE DSCP {d} maps to TC {tc} on the switches, which is not lossless "
                          f"(lossless: {sorted(lossless)})", fix, path=f"{path}.dscp_to_tc[{d}]"))
    if c.dscp_to_tc.get(c.cnp_dscp) != c.cnp_priority:
        out.append(_f("RT230",
                      f"CNP DSCP {c.cnp_dscp} maps to TC {c.dscp_to_tc.get(c.cnp_dscp)}, not the CNP "
                      f"priority {c.cnp_priority}", fix, path=f"{path}.dscp_to_tc[{c.cnp_dscp}]"))
    for p in sorted(lossless):
        q, pg = c.tc_to_queue.get(p), c.tc_to_pg.get(p)
        if q not in c.lossless_queues or c.pfc_priority_to_queue.get(p) != q:
            out.append(_f("RT230", f"lossless TC {p}: tc_to_queue {q}, pfc_priority_to_queue "
                          f"{c.pfc_priority_to_queue.get(p)}, lossless queues {c.lossless_queues} "
                          "disagree", fix,
                          path=f"{path}.tc_to_queue[{p}]"))
        if pg not in c.lossless_pgs or c.pfc_priority_to_pg.get(p) != pg:
            out.append(_f("RT230", f"lossless TC {p}: tc_to_pg {pg}, pfc_priority_to_pg "
                          f"{c.pfc_priority_to_pg.get(p)}, lossless PGs {c.lossless_pgs} disagree", fix,
                          path=f"{path}.tc_to_pg[{p}]"))
    for tc in set(range(8)) - lossless:
        if c.tc_to_pg.get(tc) in c.lossless_pgs:
            out.append(_f("RT230",
                          f"lossy TC {tc} shares lossless PG {c.tc_to_pg.get(tc)}: its packets would be "
                          "paused with the RoCE traffic", fix, path=f"{path}.tc_to_pg[{tc}]"))
    return out


def _cnp(plan: Plan) -> list[Finding]:
    c = plan.classification
    out: list[Finding] = []
    if c.cnp_priority in c.lossless_priorities:
        out.append(_f("RT235",
                      f"CNP priority {c.cnp_priority} is lossless: a paused CNP cannot slow the sender",
                      "give CNPs their own lossy strict-priority class",
                      path="classification.lossless_priorities"))
    strict = [s for s in c.schedulers if s.queue == c.cnp_queue]
    if not strict or any(s.mode != "strict" for s in strict):
        out.append(_f("RT235", f"CNP queue {c.cnp_queue} is not scheduled strict priority "
                      f"({[s.mode for s in strict] or 'no scheduler'})", "schedule the CNP queue strict",
                      path="classification.schedulers"))
    if c.tc_to_queue.get(c.cnp_priority) != c.cnp_queue:
        out.append(_f("RT235",
                      f"CNP TC {c.cnp_priority} goes to queue {c.tc_to_queue.get(c.cnp_priority)}, not the "
                      f"CNP queue {c.cnp_queue}", "re-derive the plan", path="classification.tc_to_queue"))
    return out


def _ports(plan: Plan) -> list[Finding]:
    c = plan.classification
    want = sorted(c.lossless_priorities)
    out: list[Finding] = []
    for sw in plan.switches:
        profiles = {e.name for e in sw.ecn_profiles}
        good = [want]  # PFC lists checked equal to ``want`` (ports of a switch share one: a cheap ``is``)
        for p in sw.ports:
            if not p.lossless:
                if p.pfc_priorities:
                    out += _lossy_port(sw.name, p)
            elif (p.headroom is None or p.ecn_profile not in profiles
                  or (p.pfc_priorities is not good[-1] and not _pfc_ok(p.pfc_priorities, want, c, good))):
                out += _lossless_port(sw.name, p, want, c, profiles)
        out += _ecn_profiles(sw)
    return out


def _pfc_ok(prios: list[int], want: list[int], c: Classification, good: list[list[int]]) -> bool:
    """Whether a lossless port's PFC priorities are exactly the lossless ones and spare the CNP priority
    (a list found good is appended to ``good``)."""
    ok = sorted(prios) == want and c.cnp_priority not in prios
    if ok:
        good.append(prios)
    return ok


def _lossy_port(switch: str, p: PortPlan) -> list[Finding]:
    return [_f("RT236", f"lossy port has PFC on {p.pfc_priorities}", "remove PFC from lossy ports",
               device=switch, port=p.name)]


def _lossless_port(switch: str, p: PortPlan, want: list[int], c: Classification,
                   profiles: set[str]) -> list[Finding]:
    """RT236/RT235 findings of one lossless port (PFC priorities, headroom, ECN profile)."""
    loc: dict[str, str] = {"device": switch, "port": p.name}
    out: list[Finding] = []
    if sorted(p.pfc_priorities) != want:
        out.append(_f("RT236",
                      f"PFC on {sorted(p.pfc_priorities)}, the lossless priorities are {want}",
                      f"enable PFC on exactly {want}", **loc))
    if c.cnp_priority in p.pfc_priorities:
        out.append(_f("RT235", f"PFC enabled on the CNP priority {c.cnp_priority}", "remove it",
                      **loc))
    if p.headroom is None:
        out.append(_f("RT236", "lossless port without a PFC headroom profile: it will drop at XOFF",
                      "derive a headroom for it", **loc))
    if p.ecn_profile is None:
        out.append(_f("RT236",
                      "lossless port without an ECN profile: PFC becomes the only congestion "
                      "signal", "attach an ECN/WRED profile to its lossless queue", **loc))
    elif p.ecn_profile not in profiles:
        out.append(_f("RT236", f"ECN profile {p.ecn_profile!r} is not defined on {switch}",
                      "re-derive the plan", **loc))
    return out


def _ecn_profiles(sw: SwitchPlan) -> list[Finding]:
    """RT237: Kmin < Kmax <= the egress PFC onset for every ECN profile of ``sw``."""
    out: list[Finding] = []
    for e in sw.ecn_profiles:
        onset = e.pfc_onset_bytes if e.pfc_onset_bytes is not None else e.pfc_trigger_bytes
        if not e.kmin_bytes < e.kmax_bytes <= onset:
            out.append(_f("RT237", f"ECN profile {e.name}: need Kmin {e.kmin_bytes} < Kmax "
                          f"{e.kmax_bytes} <= egress PFC onset {onset} bytes (fan-in {e.fan_in} x PG "
                          f"trigger {e.pfc_trigger_bytes}, at most the egress queue buffer; ECN must "
                          "reach Pmax before PFC XOFF)",
                          "lower Kmax below the PFC trigger or raise the lossless pool / alpha",
                          device=sw.name, path=ramp_pin_path(e) or f"ecn_profiles[{e.name}]"))
    return out


def _nic_pfc(vec: list[int], n_dscp_to_priority: dict[int, int], c: Classification,
             loc: dict[str, str]) -> list[Finding]:
    """RT231/RT235: the NIC's PFC vector covers the RoCE DSCPs' priorities, equals the lossless set and
    leaves the CNP priority alone."""
    if len(vec) != 8:
        return [_f("RT231", f"pfc_vector has {len(vec)} entries, not 8", "re-derive the plan", **loc)]
    on = {p for p, v in enumerate(vec) if v}
    lossless = set(c.lossless_priorities)
    out: list[Finding] = []
    for d in c.roce_dscp:
        prio = n_dscp_to_priority.get(d)
        if prio not in on:
            out.append(_f("RT231", f"RoCE DSCP {d} maps to priority {prio} on the NIC, which has no PFC "
                          f"(PFC on {sorted(on)})", "mlnx_qos --pfc on the lossless priorities", **loc))
    if on != lossless:
        out.append(_f("RT231", f"NIC PFC on {sorted(on)}, the lossless priorities are {sorted(lossless)}",
                      "set the PFC vector from the plan", **loc))
    if c.cnp_priority in on:
        out.append(_f("RT235", f"NIC has PFC on the CNP priority {c.cnp_priority}", "remove it", **loc))
    return out


def _nic_classes(n: NicPlan, c: Classification, site_cnp: tuple[object, object],
                 loc: dict[str, str]) -> list[Finding]:
    """RT232 (DSCP map, trust), RT233 (RoCE TOS) and RT238 (CNP class) of one NIC against the site."""
    out: list[Finding] = []
    if n.dscp_to_priority != c.dscp_to_priority:
        diff = sorted(d for d in set(n.dscp_to_priority) | set(c.dscp_to_priority)
                      if n.dscp_to_priority.get(d) != c.dscp_to_priority.get(d))
        out.append(_f("RT232", f"NIC dscp_to_priority differs from the site map at DSCP {diff[:8]}",
                      "apply the plan's dscp2prio map", **loc))
    if n.trust != c.trust:
        out.append(_f("RT232", f"NIC trust {n.trust} but the site trusts {c.trust}",
                      f"mlnx_qos --trust {c.trust}", **loc))
    if n.roce_tos != c.roce_tos or (n.roce_tos >> 2) not in c.roce_dscp or (n.roce_tos & 3) not in ECT_BITS:
        out.append(_f("RT233",
                      f"RoCE TOS {n.roce_tos} (DSCP {n.roce_tos >> 2}, ECN {n.roce_tos & 3:02b}) must be "
                      f"{c.roce_tos}: a RoCE DSCP {c.roce_dscp} with ECT set", "use the classification's TOS",
                      **loc))
    if (n.cnp_dscp, n.cnp_priority) != site_cnp or (n.cnp_dscp, n.cnp_priority) != (c.cnp_dscp,
                                                                                    c.cnp_priority):
        out.append(_f("RT238", f"NIC CNP DSCP/priority {n.cnp_dscp}/{n.cnp_priority}, site "
                      f"{site_cnp[0]}/{site_cnp[1]}", "set np cnp_dscp / cnp_802p_prio from the site policy",
                      **loc))
    return out


class HostNics(NamedTuple):
    """What :func:`check_consistency` reads of one host: its name, its NICs as (netdev, the NIC's plan)
    and its NCCL environment. The NIC's plan may be any NIC plan with the same values (the tuner's lint path
    passes its NIC class's first NIC: only the netdev, given here, names the NIC in a finding)."""

    name: str
    nics: Sequence[tuple[str, NicPlan]]
    nccl_env: Mapping[str, str]


def _host_nics(plan: Plan) -> Iterator[HostNics]:
    for h in plan.hosts:
        yield HostNics(h.name, [(n.netdev, n) for n in h.nics], h.nccl_env)


def _hosts(plan: Plan, hosts: Iterable[HostNics]) -> list[Finding]:
    c = plan.classification
    site_cnp = (plan.policy.get("cnp_dscp", c.cnp_dscp), plan.policy.get("cnp_priority", c.cnp_priority))
    out: list[Finding] = []
    # NICs with the site's DSCP map are consistent or not by (PFC vector, trust, TOS, CNP class) alone:
    # each such class is checked once (32k NICs at 4,096 hosts, a handful of classes)
    fine: set[tuple[object, ...]] = set()
    for name, nics, nccl_env in hosts:
        for netdev, n in nics:
            site_map = n.dscp_to_priority is c.dscp_to_priority or n.dscp_to_priority == c.dscp_to_priority
            key = (tuple(n.pfc_vector), n.trust, n.roce_tos, n.cnp_dscp, n.cnp_priority)
            if site_map and key in fine:
                continue
            loc: dict[str, str] = {"device": name, "port": netdev}
            found = _nic_pfc(n.pfc_vector, n.dscp_to_priority, c, loc) + _nic_classes(n, c, site_cnp, loc)
            if site_map and not found:
                fine.add(key)
            out += found
        if nics:
            tc = nccl_env.get("NCCL_IB_TC")
            tos = {n.roce_tos for _, n in nics} | {c.roce_tos}
            if tc is None or not tc.isdigit() or {int(tc)} != tos:
                out.append(_f("RT234",
                              f"NCCL_IB_TC={tc} but the RoCE TOS is {sorted(tos)}: NCCL traffic would "
                              "leave on another class", f"NCCL_IB_TC={c.roce_tos}", device=name,
                              path="nccl_env.NCCL_IB_TC"))
    return out


def _served(s: QueueScheduler) -> bool:
    return s.mode == "strict" or (s.weight_percent or 0) > 0


def _scheduled_queues(plan: Plan) -> list[Finding]:
    """RT239: one finding per unserved queue (or missing queue entry), naming the TCs and DSCPs it gets."""
    c = plan.classification
    served = {s.queue for s in c.schedulers if _served(s)}
    reach: dict[int | None, tuple[set[int], set[int]]] = {}
    for tc in range(8):
        reach.setdefault(c.tc_to_queue.get(tc), (set(), set()))[0].add(tc)
    for dscp, tc in c.dscp_to_tc.items():
        reach.setdefault(c.tc_to_queue.get(tc), (set(), set()))[1].add(dscp)
    out: list[Finding] = []
    for queue, (tcs, dscps) in sorted(reach.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        if queue in served:
            continue
        what = f"queue {queue} has no scheduler weight" if queue is not None else "no queue in tc_to_queue"
        ds = sorted(dscps)
        dscp_text = f"{len(ds)} DSCPs {ds[:8]}{' ...' if len(ds) > 8 else ''}" if ds else "no DSCP"
        out.append(_f("RT239", f"{what}, yet TCs {sorted(tcs)} and {dscp_text} map to it: its packets get no "
                      "bandwidth share under load",
                      f"map those TCs to a scheduled queue (served: {sorted(served)}) or give queue {queue} "
                      "a scheduler entry", path="classification.tc_to_queue"))
    return out


def check_consistency(plan: Plan, hosts: Iterable[HostNics] | None = None) -> list[Finding]:
    """Check that switch maps, NIC maps, TOS, NCCL and ECN/PFC settings of ``plan`` agree.

    Args:
        plan: a derived (or hand-edited) plan.
        hosts: the hosts to check instead of ``plan.hosts``, in inventory order (the tuner's findings-only
            path for ``roce-tune lint``, whose plan holds no hosts: :class:`HostNics`).

    Returns:
        Error findings RT230..RT239 (empty when consistent), in a stable order: classification,
        CNP, scheduled queues, switch ports and ECN profiles (inventory order), hosts and NICs (inventory
        order).
    """
    return (_switch_maps(plan) + _cnp(plan) + _scheduled_queues(plan) + _ports(plan)
            + _hosts(plan, _host_nics(plan) if hosts is None else hosts))
