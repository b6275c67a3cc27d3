"""Hand-built plans for the SONiC and Cumulus renderer tests (no tuner involved).

The numbers are plausible but arbitrary: renderer tests compare rendered output with *these* plan
values, never with hard-coded expectations, so they do not depend on the tuner's math. Shapes follow
the tuner's conventions (SONiC standard buffer pool/profile names, one headroom profile per
(speed, cable), one ECN profile per (speed, fan-in)).
"""

from __future__ import annotations

from dataclasses import dataclass

from roce_tune.plan import (
    BufferPool,
    BufferProfile,
    Buffers,
    Classification,
    DeadlockReport,
    EcnProfile,
    FluidCheck,
    Headroom,
    Plan,
    PlanSummary,
    PortPlan,
    QueueScheduler,
    SwitchPlan,
    Watchdog,
)

LOSSLESS = [3]
CNP_PRIO = 6


@dataclass(frozen=True)
class P:
    """A port spec: name, speed (Gb/s), cable (m), peer kind ('host'/'switch'/'none')."""

    name: str
    speed: int
    cable: float
    peer: str = "host"


def classification(lossless: list[int] = LOSSLESS, trust: str = "dscp") -> Classification:
    """DSCP 26 -> TC 3 (lossless), 48 -> TC 6 (CNP, strict), everything else TC 0; TCs without a scheduler
    -> queue 0 (the tuner's convention)."""
    dscp_to_tc = {d: 0 for d in range(64)}
    for p in lossless:
        dscp_to_tc[26 if p == 3 else 24 + p] = p
    dscp_to_tc[48] = CNP_PRIO
    tc_to_pg = {t: (t if t in lossless else 0) for t in range(8)}
    ident = {t: t for t in range(8)}
    scheds = [QueueScheduler(queue=0, mode="dwrr", weight_percent=50, name="LOSSY_DWRR")]
    scheds += [QueueScheduler(queue=q, mode="dwrr", weight_percent=50, name="ROCE_DWRR") for q in lossless]
    scheds.append(QueueScheduler(queue=CNP_PRIO, mode="strict", name="CNP_STRICT"))
    return Classification(
        trust=trust, map_name="ROCE", dscp_to_tc=dscp_to_tc, tc_to_pg=tc_to_pg,
        tc_to_queue={t: (t if t in {0, CNP_PRIO, *lossless} else 0) for t in range(8)},
        pfc_priority_to_queue=ident, pfc_priority_to_pg={p: p for p in lossless},
        dscp_to_priority=dscp_to_tc, lossless_priorities=lossless, lossless_queues=lossless,
        lossless_pgs=lossless, roce_dscp=[26], roce_priority=lossless[0], cnp_dscp=48,
        cnp_priority=CNP_PRIO, cnp_queue=CNP_PRIO, roce_tos=106, cnp_tos=192, schedulers=scheds)


def _headroom(speed: int, cable: float) -> Headroom:
    xoff = 20_000 + speed * 120 + int(cable * speed * 10)
    xon = 19_456
    return Headroom(model="ieee", profile=f"ROCE_HDRM_{speed}G_{int(cable)}M", xon_bytes=xon, xoff_bytes=xoff,
                    size_bytes=xon + xoff, size_cells=(xon + xoff) // 144, lanes=max(1, speed // 100))


def _ecn(speed: int, fan_in: int, separate: bool) -> EcnProfile:
    kmin, kmax = speed * 400, speed * 4000
    return EcnProfile(
        name=f"ROCE_LOSSLESS_{speed}G_N{fan_in}", speed_gbps=speed, source_profile="derived",
        kmin_bytes=kmin, kmax_bytes=kmax, pmax_percent=20.0,
        drop_min_bytes=kmax if separate else None, drop_max_bytes=2 * kmax if separate else None,
        drop_probability_percent=20.0 if separate else None, base_rtt_us=8.0, fan_in=fan_in,
        pfc_trigger_bytes=kmax * 2,
        fluid=FluidCheck(n_flows=fan_in, p_star=0.01, q_star_bytes=kmin, on_ramp=True, below_pfc_trigger=True,
                         ok=True))


def switch(name: str, platform: str, asic: str, ports: list[P], *, watchdog: bool = True,
           separate_ecn: bool = False, lossless: list[int] = LOSSLESS) -> SwitchPlan:
    """A switch plan: ports with a peer are lossless (headroom + ECN profile), others lossy."""
    port_plans, headrooms, ecns = [], {}, {}
    connected = [p for p in ports if p.peer != "none"]
    for p in ports:
        hr = ecn_name = None
        if p.peer != "none":
            hr = headrooms.setdefault((p.speed, p.cable), _headroom(p.speed, p.cable))
            fan_in = max(1, len(connected) - 1)
            ecn = ecns.setdefault((p.speed, fan_in), _ecn(p.speed, fan_in, separate_ecn))
            ecn_name = ecn.name
        port_plans.append(PortPlan(
            name=p.name, speed_gbps=p.speed, lanes=max(1, p.speed // 100), mtu=9216, cable_m=p.cable,
            admin_up=p.peer != "none", peer=None if p.peer == "none" else f"{p.peer}-x:p1",
            peer_kind=p.peer if p.peer in ("host", "switch") else "none",
            direction="down" if p.peer == "host" else ("up" if p.peer == "switch" else "edge"),
            lossless=p.peer != "none", pfc_priorities=lossless if p.peer != "none" else [], headroom=hr,
            ecn_profile=ecn_name, fan_in=max(1, len(connected) - 1)))
    pools = [
        BufferPool(name="ingress_lossless_pool", type="ingress", size_bytes=60_000_000, xoff_bytes=4_000_000),
        BufferPool(name="ingress_lossy_pool", type="ingress", size_bytes=40_000_000),
        BufferPool(name="egress_lossless_pool", type="egress", size_bytes=150_000_000),
        BufferPool(name="egress_lossy_pool", type="egress", size_bytes=40_000_000),
    ]
    profiles = [
        BufferProfile(name="ingress_lossless_profile", pool="ingress_lossless_pool", size_bytes=0,
                      dynamic_th=7),
        BufferProfile(name="ingress_lossy_profile", pool="ingress_lossy_pool", size_bytes=0, dynamic_th=3),
        BufferProfile(name="egress_lossless_profile", pool="egress_lossless_pool", size_bytes=0,
                      dynamic_th=7),
        BufferProfile(name="egress_lossy_profile", pool="egress_lossy_pool", size_bytes=9216, dynamic_th=7),
        BufferProfile(name="q_lossy_profile", pool="egress_lossy_pool", size_bytes=0, dynamic_th=3),
    ] + [BufferProfile(name=h.profile, pool="ingress_lossless_pool", size_bytes=h.size_bytes, dynamic_th=0,
                       xon_bytes=h.xon_bytes, xoff_bytes=h.xoff_bytes) for h in headrooms.values()]
    return SwitchPlan(
        name=name, platform=platform, role="leaf", model="SN5600", asic=asic, os_version=None, mgmt_host=None,
        mgmt_port=None, credentials={"username_env": "ROCE_TUNE_USERNAME"}, ports=port_plans,
        buffers=Buffers(pools=pools, profiles=profiles, shared_headroom_pool_bytes=4_000_000,
                        headroom_total_bytes=sum(h.size_bytes for h in headrooms.values())),
        ecn_profiles=sorted(ecns.values(), key=lambda e: e.name),
        watchdog=Watchdog(enabled=watchdog, detection_ms=400, restoration_ms=400, poll_ms=200, action="drop",
                          pfc_ports=len(connected)))


def plan(switches: list[SwitchPlan], cls: Classification | None = None) -> Plan:
    """A plan holding ``switches`` (no hosts, no deadlock cycles)."""
    return Plan(
        generator="roce-tune test", site="render-test", inventory_file="<hand-built>", inventory_sha256="",
        policy={}, summary=PlanSummary(switches=len(switches), hosts=0, nics=0,
                                       lossless_ports=sum(p.lossless for s in switches for p in s.ports),
                                       tiers=2),
        classification=cls or classification(), switches=switches, hosts=[],
        deadlock=DeadlockReport(nodes=0, edges=0, scenarios_checked=0, cycles=[], flagged=[], notes=[]),
        findings=[], notes=[])
