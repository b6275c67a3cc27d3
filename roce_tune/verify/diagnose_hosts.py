"""Host-side checks: one slow host in every slow pair (RT320), MTU (RT321) and GID (RT322) consistency.

Pure functions over an :class:`~roce_tune.verify.observation.Observation` (NIC facts and the
pairwise matrix), in the style of :mod:`roce_tune.verify.diagnose`.
"""

from __future__ import annotations

from typing import TypeGuard

from roce_tune.findings import Location, Severity
from roce_tune.plan import NicPlan
from roce_tune.verify.hostfacts import NicFacts
from roce_tune.verify.observation import CheckResult, Diagnosis, Observation, not_read
from roce_tune.verify.observation import fail as _fail
from roce_tune.verify.observation import ok as _ok
from roce_tune.verify.observation import skip as _skip

__all__ = ["check_gid", "check_mtu", "check_slow_host"]


Pairs = dict[tuple[str, str], float]


def _slow_host_suspects(pairs: Pairs, target: float, slow: list[tuple[str, str]]) -> set[str]:
    """Hosts in every slow pair that reach the ``target`` fraction in some pair without them (with more than
    two hosts measured, every host common to the slow pairs when none does)."""
    common = set(slow[0]).intersection(*map(set, slow))
    hosts = {h for pair in pairs for h in pair}
    return {h for h in common if any(f >= target for p, f in pairs.items() if h not in p)} or (
        common if len(hosts) > 2 else set())


def _rt320_slow_host(obs: Observation, pairs: Pairs, slow: list[tuple[str, str]], host: str) -> Diagnosis:
    """RT320 on ``host`` with the slow pairs and the pairs without it as evidence."""
    return Diagnosis(
        rule="RT320", name="one slow host in every slow pair", severity=Severity.error,
        location=Location(device=host),
        evidence={"slow_pairs": {f"{a}+{b}": round(f, 4) for (a, b), f in pairs.items() if (a, b) in slow},
                  "pairs_without_it": {f"{a}+{b}": round(f, 4) for (a, b), f in pairs.items()
                                       if host not in (a, b)}},
        message=f"every pair below {obs.target_ratio:.0%} of line rate includes {host}; pairs without it "
                "reach the target",
        fix=f"inspect {host}: NIC link speed/FEC and cable, PCIe width, GPU↔NIC affinity, firmware; compare "
            "its counters with a good host")


def check_slow_host(obs: Observation) -> CheckResult:
    """RT320: one host in every slow pair (pairwise busbw matrix, ``--pairwise``)."""
    name = "no slow host"
    if not obs.pair_fractions:
        return _skip(name, "pairwise matrix not requested")
    slow = [pair for pair, f in obs.pair_fractions.items() if f < obs.target_ratio]
    if not slow:
        return _ok(name)
    pairs = obs.pair_fractions
    suspects = _slow_host_suspects(pairs, obs.target_ratio, slow)
    out = [_rt320_slow_host(obs, pairs, slow, h) for h in sorted(suspects)]
    return _fail(name, *out) if out else _ok(name, f"{len(slow)} slow pair(s) share no single host")


def _below(value: int | None, reference: int | None) -> bool:
    """``value`` and ``reference`` both known and ``value`` smaller."""
    return value is not None and reference is not None and value < reference


def _mtu_short(f: NicFacts, n: NicPlan | None, top_active: int | None, top_netdev: int | None) -> bool:
    """The NIC's netdev or RoCE active MTU is below the plan's or below the largest seen on any host."""
    below_plan = n is not None and (_below(f.netdev_mtu, n.mtu) or _below(f.active_mtu, n.roce_mtu))
    return below_plan or _below(f.active_mtu, top_active) or _below(f.netdev_mtu, top_netdev)


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
        if not _mtu_short(f, n, top_active, top_netdev):
            continue
        out.append(_rt321_mtu(f, n, {"netdev_mtu": netdev, "active_mtu": active}, top_netdev))
    return _fail(name, *out) if out else _mtu_unread(name, facts)


def _mtu_unread(name: str, facts: list[NicFacts]) -> CheckResult:
    """No MTU below another's: pass, or skip naming the NICs whose netdev or active MTU was not read (a NIC
    not read cannot count as consistent)."""
    blind = [f"{f.host}:{f.netdev}" for f in facts if f.netdev_mtu is None or f.active_mtu is None]
    return _skip(name, not_read("netdev MTU / RoCE active MTU", blind)) if blind else _ok(name)


def _rt321_mtu(f: NicFacts, n: NicPlan | None, seen: dict[str, dict[str, int | None]],
               top_netdev: int | None) -> Diagnosis:
    """RT321 for one NIC; ``seen`` = the netdev and active MTUs of every NIC (evidence)."""
    want = f"; the plan wants {n.mtu} / {n.roce_mtu}" if n is not None else ""
    return Diagnosis(
        rule="RT321", name="MTU mismatch", severity=Severity.error,
        location=Location(device=f.host, port=f.netdev),
        evidence={**seen, "plan_mtu": n.mtu if n else None, "plan_roce_mtu": n.roce_mtu if n else None},
        message=f"{f.host}:{f.netdev} netdev MTU {f.netdev_mtu}, RoCE active MTU {f.active_mtu}{want}; a "
                "RoCE connection runs at the smaller active MTU of its two ends",
        fix=f"ip link set dev {f.netdev} mtu {n.mtu if n else top_netdev} on {f.host} (re-run its host "
            "script); the RoCE active MTU follows the netdev MTU minus 96 B")


def _gid_pinned(pin: str | None) -> TypeGuard[str]:
    """NCCL_IB_GID_INDEX set to an index (not unset, empty or -1 = auto)."""
    return pin not in (None, "", "-1")


def _gid_problem(f: NicFacts, idx: dict[str, list[int]], pin: str | None) -> Diagnosis | None:
    """RT322 for one NIC: no RoCE v2 IPv4 GID, or NCCL_IB_GID_INDEX pinned to an index it does not have."""
    where = f"{f.host}:{f.rdma_device}"
    if not idx[where]:
        return Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.error,
                         location=Location(device=f.host, port=f.netdev), evidence={"roce_v2_ipv4_gids": idx},
                         message=f"{where} has no RoCE v2 GID with an IPv4 address",
                         fix="give the RoCE netdev an IPv4 address and set RoCE v2 (cma_roce_mode -m 2)")
    if _gid_pinned(pin) and int(pin) not in idx[where]:
        return Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.error,
                         location=Location(device=f.host, port=f.netdev),
                         evidence={"roce_v2_ipv4_gids": idx, "NCCL_IB_GID_INDEX": pin},
                         message=f"NCCL_IB_GID_INDEX={pin} on {f.host} but its RoCE v2 IPv4 GID is at "
                                 f"{', '.join(map(str, idx[where]))}",
                         fix="unset NCCL_IB_GID_INDEX (NCCL >= 2.21 selects the RoCE v2 GID with "
                             "NCCL_IB_ROCE_VERSION_NUM=2) or set it per host")
    return None


def check_gid(obs: Observation) -> CheckResult:
    """RT322: no RoCE v2 IPv4 GID, or its index differs across hosts while NCCL_IB_GID_INDEX is pinned."""
    name = "RoCE v2 GID usable"
    facts = [f for f in obs.facts if f.host in obs.hosts and not f.errors and f.gids_known]
    if not facts:
        return _skip(name, "not checked: needs show_gids (no GID table was read)")
    idx = {f"{f.host}:{f.rdma_device}": f.roce_v2_ipv4_gid_indexes for f in facts}
    pinned = {h.name: h.nccl_env.get("NCCL_IB_GID_INDEX") for h in obs.plan.hosts if h.name in obs.hosts}
    out = [d for f in facts if (d := _gid_problem(f, idx, pinned.get(f.host))) is not None]
    if not out and _gid_spread(idx, pinned):
        out.append(Diagnosis(rule="RT322", name="GID mismatch", severity=Severity.warning,
                             evidence={"gids": idx},
                             message="RoCE v2 GID indexes differ across hosts while NCCL_IB_GID_INDEX is "
                             "pinned",
                             fix="unset NCCL_IB_GID_INDEX or pin it per host"))
    return _fail(name, *out) if out else _ok(name)


def _gid_spread(idx: dict[str, list[int]], pinned: dict[str, str | None]) -> bool:
    """The RoCE v2 GID indexes differ across NICs while some host pins NCCL_IB_GID_INDEX."""
    return len({tuple(v) for v in idx.values()}) > 1 and any(_gid_pinned(p) for p in pinned.values())
