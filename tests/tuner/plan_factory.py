"""A small, consistent :class:`~roce_tune.plan.Plan` built by hand (no tuner code involved).

Numbers follow the industry convention (DOMAIN.md §2-3, Oracle E): RoCE DSCP 26 -> TC/priority/queue/PG 3
lossless, CNP DSCP 48 -> TC/queue 6 strict, everything else -> TC 0 (DWRR 50/50 as NVIDIA RoCE mode),
TOS 106 = 26 << 2 | ECT(0), ECN ramp 150 KB..1500 KB (Onyx/Cumulus RoCE default) below a 2 MB PFC trigger,
PFC watchdog 200/200/200 ms drop (SONiC start_default), mlx5 DCQCN firmware defaults.

Topology: leaf1 (2 host ports, 1 uplink, 1 unused lossy port) - spine1; hosts gpu01/gpu02 with one
ConnectX-7 each. Use :func:`consistent_plan` and mutate one field at a time with ``model_copy(update=...)``
(helpers :func:`with_switch_port`, :func:`with_nic`, :func:`with_host`) to test a single rule.
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

ROCE_DSCP, CNP_DSCP, LOSSLESS, CNP_PRIO = 26, 48, 3, 6
ROCE_TOS = ROCE_DSCP << 2 | 0b10  # 106
DCQCN_DEFAULTS = {"rpg_time_reset_us": 300, "rpg_byte_reset_bytes": 32767, "rpg_threshold": 1,
                  "rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50, "rpg_gd": 11, "rpg_min_dec_fac_percent": 50,
                  "rpg_min_rate_mbps": 1, "dce_tcp_g": 1019, "initial_alpha_value": 1023}


def classification() -> Classification:
    """The convention: DSCP 26 -> 3 (lossless), 48 -> 6 (CNP, strict), rest -> 0; unscheduled TCs -> queue
    0."""
    dscp = {d: 0 for d in range(64)}
    dscp[ROCE_DSCP], dscp[CNP_DSCP] = LOSSLESS, CNP_PRIO
    ident = {i: i for i in range(8)}
    served = {0, LOSSLESS, CNP_PRIO}
    return Classification(
        trust="dscp", map_name="ROCE", dscp_to_tc=dscp, tc_to_pg={t: (t if t == LOSSLESS else 0)
                                                                  for t in range(8)},
        tc_to_queue={t: (t if t in served else 0) for t in range(8)}, pfc_priority_to_queue=dict(ident),
        pfc_priority_to_pg={LOSSLESS: LOSSLESS},
        dscp_to_priority=dict(dscp), lossless_priorities=[LOSSLESS], lossless_queues=[LOSSLESS],
        lossless_pgs=[LOSSLESS], roce_dscp=[ROCE_DSCP], roce_priority=LOSSLESS, cnp_dscp=CNP_DSCP,
        cnp_priority=CNP_PRIO, cnp_queue=CNP_PRIO, roce_tos=ROCE_TOS, cnp_tos=CNP_DSCP << 2,
        schedulers=[QueueScheduler(queue=0, mode="dwrr", weight_percent=50, name="LOSSY_DWRR"),
                    QueueScheduler(queue=3, mode="dwrr", weight_percent=50, name="ROCE_DWRR"),
                    QueueScheduler(queue=6, mode="strict", name="CNP_STRICT")])


def ecn_profile(kmin: int = 150_000, kmax: int = 1_500_000, trigger: int = 2_000_000) -> EcnProfile:
    fluid = FluidCheck(n_flows=16, p_star=0.01, q_star_bytes=300_000, on_ramp=True, below_pfc_trigger=True,
                       ok=True)
    return EcnProfile(name="ROCE_ECN_400G", speed_gbps=400, source_profile="nvidia-default", kmin_bytes=kmin,
                      kmax_bytes=kmax, pmax_percent=10.0, base_rtt_us=10.0, fan_in=3,
                      pfc_trigger_bytes=trigger,
                      fluid=fluid)


def headroom() -> Headroom:
    return Headroom(model="ieee", profile="pg_lossless_400G_5m", xon_bytes=19456, xoff_bytes=160_000,
                    size_bytes=179_456, size_cells=935, lanes=4)


def port(name: str, peer: str | None, kind: str, direction: str, lossless: bool) -> PortPlan:
    return PortPlan(name=name, speed_gbps=400, lanes=4, mtu=9216, cable_m=5.0, admin_up=True, peer=peer,
                    peer_kind=kind, direction=direction, lossless=lossless,
                    pfc_priorities=[LOSSLESS] if lossless else [],
                    headroom=headroom() if lossless else None,
                    ecn_profile="ROCE_ECN_400G" if lossless else None,
                    fan_in=3)


def switch(name: str, role: str, ports: list[PortPlan]) -> SwitchPlan:
    pools = [BufferPool(name="ingress_lossless_pool", type="ingress", size_bytes=60_000_000),
             BufferPool(name="egress_lossy_pool", type="egress", size_bytes=60_000_000)]
    lossless = sum(p.lossless for p in ports)
    return SwitchPlan(
        name=name, platform="sonic", role=role, model="SN4700", asic="spectrum-3", os_version=None,
        mgmt_host="127.0.0.1", mgmt_port=22, credentials={"username_env": "ROCE_TUNE_USERNAME"}, ports=ports,
        buffers=Buffers(pools=pools, profiles=[], headroom_total_bytes=179_456 * lossless),
        ecn_profiles=[ecn_profile()],
        watchdog=Watchdog(enabled=True, detection_ms=200, restoration_ms=200, poll_ms=200, action="drop",
                          pfc_ports=lossless))


def nic(netdev: str, rdma: str, switch_port: str) -> NicPlan:
    cls = classification()
    return NicPlan(model="connectx-7", netdev=netdev, rdma_device=rdma, rdma_port=1, pci_address=None,
                   speed_gbps=400,
                   rail=0, switch_port=switch_port, trust="dscp",
                   pfc_vector=[1 if p == LOSSLESS else 0 for p in range(8)],
                   dscp_to_priority=dict(cls.dscp_to_priority), cable_m=3.0, mtu=9000, roce_mtu=4096,
                   roce_tos=ROCE_TOS, cnp_dscp=CNP_DSCP, cnp_priority=CNP_PRIO, nic_xoff_bytes=180_000,
                   dcqcn=Dcqcn(enabled=True, enabled_priorities=[LOSSLESS], params=dict(DCQCN_DEFAULTS),
                               firmware_defaults=dict(DCQCN_DEFAULTS)))


def host(name: str, switch_port: str) -> HostPlan:
    env = {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_TC": str(ROCE_TOS), "NCCL_IB_FIFO_TC": str(ROCE_TOS),
           "NCCL_SOCKET_IFNAME": "=eno1"}
    return HostPlan(name=name, mgmt_host=None, mgmt_port=None, credentials={},
                    nics=[nic("ens1f0np0", "mlx5_0",
                    switch_port)], nccl_env=env)


def consistent_plan() -> Plan:
    """leaf1 + spine1 + gpu01/gpu02: every map, TOS, PFC vector, ECN ramp and NCCL value agrees."""
    leaf = switch("leaf1", "leaf", [
        port("Ethernet0", "gpu01:ens1f0np0", "host", "down", True),
        port("Ethernet4", "gpu02:ens1f0np0", "host", "down", True),
        port("Ethernet8", "spine1:Ethernet0", "switch", "up", True),
        port("Ethernet12", None, "none", "edge", False)])
    spine = switch("spine1", "spine", [port("Ethernet0", "leaf1:Ethernet8", "switch", "down", True)])
    hosts = [host("gpu01", "leaf1:Ethernet0"), host("gpu02", "leaf1:Ethernet4")]
    policy: dict[str, Any] = {"lossless_priorities": [LOSSLESS], "roce_dscp": [ROCE_DSCP],
                              "cnp_dscp": CNP_DSCP,
                              "cnp_priority": CNP_PRIO, "trust": "dscp"}
    return Plan(generator="test", site="factory", inventory_file="<factory>", inventory_sha256="",
                policy=policy,
                summary=PlanSummary(switches=2, hosts=2, nics=2, lossless_ports=4, tiers=2),
                classification=classification(), switches=[leaf, spine], hosts=hosts,
                deadlock=DeadlockReport(nodes=4, edges=4, scenarios_checked=1, cycles=[], flagged=[],
                                        notes=[]),
                findings=[], notes=[])


# --- one-field mutations ----------------------------------------------------------------------------------
def with_classification(plan: Plan, **update: Any) -> Plan:
    return plan.model_copy(update={"classification": plan.classification.model_copy(update=update)})


def with_switch_port(plan: Plan, sw: int, idx: int, **update: Any) -> Plan:
    switches = list(plan.switches)
    ports = list(switches[sw].ports)
    ports[idx] = ports[idx].model_copy(update=update)
    switches[sw] = switches[sw].model_copy(update={"ports": ports})
    return plan.model_copy(update={"switches": switches})


def with_ecn(plan: Plan, sw: int, **update: Any) -> Plan:
    switches = list(plan.switches)
    switches[sw] = switches[sw].model_copy(update={"ecn_profiles": [switches[sw].ecn_profiles[0].model_copy(
        update=update)]})
    return plan.model_copy(update={"switches": switches})


def with_nic(plan: Plan, h: int, **update: Any) -> Plan:
    hosts = list(plan.hosts)
    nics = [hosts[h].nics[0].model_copy(update=update)] + list(hosts[h].nics[1:])
    hosts[h] = hosts[h].model_copy(update={"nics": nics})
    return plan.model_copy(update={"hosts": hosts})


def with_host(plan: Plan, h: int, **update: Any) -> Plan:
    hosts = list(plan.hosts)
    hosts[h] = hosts[h].model_copy(update=update)
    return plan.model_copy(update={"hosts": hosts})
