"""A hand-built :class:`~roce_tune.plan.Plan` for renderer tests (independent of the tuner).

Numbers are the industry convention the renderers must carry through unchanged (DOMAIN.md §2–4,
VENDORS.md "convention used in every snippet"): RoCE DSCP 26 -> TC/priority/queue 3 lossless,
CNP DSCP 48 -> TC/queue 6 strict, TOS 106 = 26 << 2 | ECT(0); ECN 400G ramp 150 KB..1500 KB
(Onyx/Cumulus RoCE default), a second 100G profile with its own thresholds; PFC watchdog
200/200/100 ms drop (SONiC/Juniper default detection and restoration). Each switch mixes port speeds
and has a lossy edge port, so per-speed ECN profiles and lossy handling are exercised.
"""

from __future__ import annotations

from typing import Any

from roce_tune.plan import (
    BufferPool,
    Buffers,
    Classification,
    Dcqcn,
    DeadlockReport,
    EcnProfile,
    FluidCheck,
    Headroom,
    HostPlan,
    NicPlan,
    Plan,
    PlanSummary,
    PortPlan,
    QueueScheduler,
    SwitchPlan,
    Watchdog,
)
from roce_tune.tuner.headroom import static_pg_thresholds

ROCE_DSCP, CNP_DSCP, LOSSLESS_PRIO, CNP_QUEUE = 26, 48, 3, 6

#: DCQCN firmware defaults (DOMAIN.md §3, NVIDIA DOCA "DCQCN CC Parameters").
DCQCN_DEFAULTS = {
    "rpg_time_reset_us": 300, "rpg_byte_reset_bytes": 32767, "rpg_threshold": 1, "rpg_ai_rate_mbps": 5,
    "rpg_hai_rate_mbps": 50, "rpg_gd": 11, "rpg_min_dec_fac_percent": 50, "rpg_min_rate_mbps": 1,
    "rate_to_set_on_first_cnp_mbps": 0, "dce_tcp_g": 1019, "dce_tcp_rtt_us": 1,
    "rate_reduce_monitor_period_us": 4, "initial_alpha_value": 1023, "min_time_between_cnps_us": 4,
}


def classification(cnp_dscp: int = CNP_DSCP, nic_map: dict[int, int] | None = None) -> Classification:
    """DSCP 26 -> TC 3, ``cnp_dscp`` -> TC 6, everything else -> TC 0; identity TC -> PG; TC -> queue
    identity for the scheduled TCs (0, 3, 6), every other TC -> queue 0 (the tuner's convention)."""
    dscp_to_tc = {d: 0 for d in range(64)}
    dscp_to_tc[ROCE_DSCP], dscp_to_tc[cnp_dscp] = LOSSLESS_PRIO, CNP_QUEUE
    ident = {i: i for i in range(8)}
    return Classification(
        trust="dscp", map_name="ROCE", dscp_to_tc=dscp_to_tc, tc_to_pg=ident,
        tc_to_queue={t: (t if t in (0, LOSSLESS_PRIO, CNP_QUEUE) else 0) for t in range(8)},
        pfc_priority_to_queue=ident, pfc_priority_to_pg=ident,
        dscp_to_priority=nic_map if nic_map is not None else dict(dscp_to_tc),
        lossless_priorities=[LOSSLESS_PRIO], lossless_queues=[LOSSLESS_PRIO], lossless_pgs=[LOSSLESS_PRIO],
        roce_dscp=[ROCE_DSCP], roce_priority=LOSSLESS_PRIO, cnp_dscp=cnp_dscp, cnp_priority=CNP_QUEUE,
        cnp_queue=CNP_QUEUE, roce_tos=ROCE_DSCP << 2 | 2, cnp_tos=cnp_dscp << 2,
        schedulers=[
            QueueScheduler(queue=0, mode="dwrr", weight_percent=50, name="LOSSY_DWRR"),
            QueueScheduler(queue=3, mode="dwrr", weight_percent=50, name="ROCE_DWRR"),
            QueueScheduler(queue=6, mode="strict", name="CNP_STRICT"),
        ],
    )


def ecn_profile(name: str, speed: int, kmin: int, kmax: int, pmax: float,
                queue_buffer: int | None) -> EcnProfile:
    """An ECN profile with a passing fluid check (values only need to be carried, not checked)."""
    extra: dict[str, Any] = {}
    if queue_buffer is not None and "queue_buffer_bytes" in EcnProfile.model_fields:
        extra["queue_buffer_bytes"] = queue_buffer
    return EcnProfile(
        name=name, speed_gbps=speed, source_profile="derived", kmin_bytes=kmin, kmax_bytes=kmax,
        pmax_percent=pmax,
        base_rtt_us=10.0, fan_in=8, pfc_trigger_bytes=kmax * 2,
        fluid=FluidCheck(n_flows=8, p_star=0.01, q_star_bytes=kmin, on_ramp=True, below_pfc_trigger=True,
                         ok=True),
        **extra,
    )


def port(name: str, speed: int, *, lossless: bool = True, cable_m: float = 3.0, ecn: str | None = None,
         peer: str | None = None, kind: str = "host", direction: str = "down", mtu: int = 9216) -> PortPlan:
    """A port; lossless ports get a headroom (SONiC-style xon/xoff/size) and PFC on priority 3."""
    hr = None
    if lossless:
        xoff = 20_000 + int(cable_m * 1000) * speed // 100
        hr = static_pg_thresholds(Headroom(
            model="ieee", profile=f"pg_lossless_{speed}g_{int(cable_m)}m", xon_bytes=18_432, xoff_bytes=xoff,
            size_bytes=18_432 + xoff, size_cells=(18_432 + xoff) // 256, lanes=speed // 100), mtu, 256)
    return PortPlan(name=name, speed_gbps=speed, lanes=max(1, speed // 100), mtu=mtu, cable_m=cable_m,
                    admin_up=True,
                    peer=peer, peer_kind=kind if peer else "none", direction=direction,
                    lossless=lossless,  # type: ignore[arg-type]
                    pfc_priorities=[LOSSLESS_PRIO] if lossless else [], headroom=hr,
                    ecn_profile=ecn if lossless else None, fan_in=8)


def switch(name: str, platform: str, asic: str, ports: list[PortPlan], *,
           queue_buffer: int | None = 2_000_000,
           action: str = "drop") -> SwitchPlan:
    """A switch with a 400G and a 100G ECN profile and a 200/200/100 ms watchdog."""
    profiles = [ecn_profile("ecn-400g", 400, 150_000, 1_500_000, 100.0, queue_buffer),
                ecn_profile("ecn-100g", 100, 50_000, 400_000, 20.0, queue_buffer)]
    used = {p.ecn_profile for p in ports if p.ecn_profile}
    return SwitchPlan(
        name=name, platform=platform, role="leaf", model="test-model", asic=asic, os_version=None,
        mgmt_host="127.0.0.1", mgmt_port=22, credentials={"username_env": "ROCE_TUNE_USERNAME"}, ports=ports,
        buffers=Buffers(pools=[BufferPool(name="ingress_lossless_pool", type="ingress",
                                          size_bytes=50_000_000)],
                        profiles=[], headroom_total_bytes=sum(p.headroom.size_bytes for p in ports
                                                              if p.headroom)),
        ecn_profiles=[e for e in profiles if e.name in used],
        watchdog=Watchdog(enabled=True, detection_ms=200, restoration_ms=200, poll_ms=100,
                          action=action,  # type: ignore[arg-type]
                          pfc_ports=sum(p.lossless for p in ports)),
    )


EOS_PORTS = [
    port("Ethernet1/1", 400, ecn="ecn-400g", peer="node1:ens1f0np0"),
    port("Ethernet2/1", 400, ecn="ecn-400g", peer="node2:ens1f0np0"),
    port("Ethernet5/1", 100, ecn="ecn-100g", cable_m=20.0, peer="spine1:Ethernet1/1", kind="switch",
         direction="up"),
    port("Ethernet9/1", 100, lossless=False, peer="wan1:xe-0/0/0", kind="external", direction="edge",
         mtu=1500),
]
NXOS_PORTS = [
    port("Ethernet1/1", 100, ecn="ecn-100g", cable_m=20.0, peer="leaf1:Ethernet5/1", kind="switch"),
    port("Ethernet1/2", 400, ecn="ecn-400g", cable_m=150.0, peer="leaf2:Ethernet5/1", kind="switch"),
    port("Ethernet1/3", 400, ecn="ecn-400g", cable_m=150.0, peer="leaf3:et-0/0/4", kind="switch"),
    port("Ethernet1/64", 100, lossless=False, peer="wan1:xe-0/0/1", kind="external", direction="edge"),
]
JUNOS_PORTS = [
    port("et-0/0/0", 400, ecn="ecn-400g", peer="node3:ens1f0np0"),
    port("et-0/0/1", 400, ecn="ecn-400g", peer="node4:ens1f0np0"),
    port("et-0/0/4", 100, ecn="ecn-100g", cable_m=20.0, peer="spine1:Ethernet1/3", kind="switch",
         direction="up"),
    port("et-0/0/31", 100, lossless=False, peer="wan1:xe-0/0/2", kind="external", direction="edge"),
]


def nic(netdev: str, rdma: str, cls: Classification, *, cable_m: float = 2.0, dcqcn: bool = True) -> NicPlan:
    """A ConnectX-7 port at 400G with PFC on priority 3 and DCQCN on priority 3."""
    params = dict(DCQCN_DEFAULTS, rpg_ai_rate_mbps=80, rpg_hai_rate_mbps=800)
    return NicPlan(
        model="connectx-7", netdev=netdev, rdma_device=rdma, rdma_port=1, pci_address="0000:3b:00.0",
        speed_gbps=400, rail=0, switch_port="leaf1:Ethernet1/1", trust="dscp",
        pfc_vector=[1 if p == LOSSLESS_PRIO else 0 for p in range(8)],
        dscp_to_priority=dict(cls.dscp_to_priority),  # all 64 DSCPs, as the tuner gives a NIC
        cable_m=cable_m, mtu=9000, roce_mtu=4096, roce_tos=cls.roce_tos, cnp_dscp=cls.cnp_dscp,
        cnp_priority=cls.cnp_priority, nic_xoff_bytes=30_000,
        dcqcn=Dcqcn(enabled=dcqcn, enabled_priorities=[LOSSLESS_PRIO] if dcqcn else [], params=params,
                    firmware_defaults=dict(DCQCN_DEFAULTS), relies_on="" if dcqcn else "PFC only"),
    )


def host(name: str, cls: Classification, **kw: Any) -> HostPlan:
    """A host with two NIC ports and a typical NCCL environment."""
    return HostPlan(
        name=name, mgmt_host="127.0.0.1", mgmt_port=22, credentials={"username_env": "ROCE_TUNE_USERNAME"},
        nics=[nic("ens1f0np0", "mlx5_0", cls, **kw), nic("ens1f1np1", "mlx5_1", cls, **kw)],
        nccl_env={"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_TC": str(cls.roce_tos),
                  "NCCL_IB_GID_INDEX": "3",
                  "NCCL_SOCKET_IFNAME": "eno1", "NCCL_IB_FIFO_TC": str(cls.roce_tos), "NCCL_DEBUG": "INFO"},
        # (NCCL_IB_FIFO_TC: the data class, as the tuner gives it without a second lossless RoCE class;
        # never the CNP class, which is strict and lossy: roce_tune/tuner/nccl.py)
    )


def build_plan(*, cnp_dscp: int = CNP_DSCP, nic_map: dict[int, int] | None = None,
               queue_buffer: int | None = 2_000_000,
               action: str = "drop", dcqcn: bool = True) -> Plan:
    """The whole hand-built plan: leaf1 (EOS, Tomahawk-4), spine1 (NX-OS), leaf3 (Junos, Trident-4), node1."""
    cls = classification(cnp_dscp, nic_map)
    switches = [
        switch("leaf1", "eos", "tomahawk-4", EOS_PORTS, queue_buffer=queue_buffer, action=action),
        switch("spine1", "nxos", "cloudscale-gx2", NXOS_PORTS, queue_buffer=queue_buffer, action=action),
        switch("leaf3", "junos", "trident-4", JUNOS_PORTS, queue_buffer=queue_buffer, action=action),
    ]
    hosts = [host("node1", cls, dcqcn=dcqcn)]
    return Plan(
        generator="roce-tune test", site="handbuilt", inventory_file="handbuilt.yaml",
        inventory_sha256="0" * 64,
        policy={}, summary=PlanSummary(switches=3, hosts=1, nics=2, lossless_ports=9, tiers=2),
        classification=cls, switches=switches, hosts=hosts,
        deadlock=DeadlockReport(nodes=0, edges=0, scenarios_checked=0, cycles=[], flagged=[], notes=[]),
        findings=[], notes=[],
    )
