"""Host-side checks: one slow host in every slow pair (RT320), MTU (RT321) and GID (RT322) consistency.

Pure functions over an :class:`~roce_tune.verify.observation.Observation` (NIC facts and the
pairwise matrix), in the style of :mod:`roce_tune.verify.diagnose`.
"""

from __future__ import annotations

from roce_tune.findings import Location, Severity
from roce_tune.verify.observation import CheckResult, Diagnosis, Observation
from roce_tune.verify.observation import fail as _fail
from roce_tune.verify.observation import ok as _ok
from roce_tune.verify.observation import skip as _skip

__all__ = ["check_gid", "check_mtu", "check_slow_host"]


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
    facts = [f for f in obs.facts if f.host in obs.hosts and not f.errors and f.gids_known]
    if not facts:
        return _skip(name, "not checked: needs show_gids (no GID table was read)")
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
