"""End-to-end consistency: a consistent hand-built plan passes; each single mutation fires its rule."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from roce_tune.plan import Plan, QueueScheduler
from roce_tune.tuner.consistency import check_consistency
from tests.tuner.plan_factory import (
    consistent_plan,
    with_classification,
    with_ecn,
    with_host,
    with_nic,
    with_switch_port,
)

BASE = consistent_plan()


def rules(plan: Plan) -> set[str]:
    found = check_consistency(plan)
    assert all(f.severity.value == "error" for f in found)
    return {f.rule for f in found}


def _dscp(**changes: int) -> dict[int, int]:
    m = dict(BASE.classification.dscp_to_tc)
    m.update({int(k[1:]): v for k, v in changes.items()})
    return m


def test_consistent_plan_passes() -> None:
    assert check_consistency(BASE) == []


MUTATIONS: list[tuple[str, Callable[[Plan], Plan], set[str]]] = [
    # switch maps
    ("roce dscp to lossy TC", lambda p: with_classification(p, dscp_to_tc=_dscp(d26=0)), {"RT230"}),
    ("dscp map not total", lambda p: with_classification(
        p, dscp_to_tc={d: t for d, t in p.classification.dscp_to_tc.items() if d < 60}), {"RT230"}),
    ("cnp dscp to TC 0", lambda p: with_classification(p, dscp_to_tc=_dscp(d48=0)), {"RT230"}),
    ("lossless TC to lossy PG", lambda p: with_classification(
        p, tc_to_pg={**p.classification.tc_to_pg, 3: 0}), {"RT230"}),
    ("lossy TC in lossless PG", lambda p: with_classification(
        p, tc_to_pg={**p.classification.tc_to_pg, 1: 3}), {"RT230"}),
    ("pfc priority to another queue", lambda p: with_classification(
        p, pfc_priority_to_queue={**p.classification.pfc_priority_to_queue, 3: 4}), {"RT230"}),
    # scheduled queues (RT239)
    ("unused TCs to their own unscheduled queues", lambda p: with_classification(
        p, tc_to_queue={t: t for t in range(8)}), {"RT239"}),
    ("lossy queue weight 0", lambda p: with_classification(p, schedulers=[
        s if s.queue != 0 else QueueScheduler(queue=0, mode="dwrr", weight_percent=0, name="LOSSY_DWRR")
        for s in p.classification.schedulers]), {"RT239"}),
    ("lossy queue without scheduler", lambda p: with_classification(
        p, schedulers=[s for s in p.classification.schedulers if s.queue != 0]), {"RT239"}),
    ("TC map missing an entry", lambda p: with_classification(
        p, tc_to_queue={t: q for t, q in p.classification.tc_to_queue.items() if t != 5}), {"RT239"}),
    # NIC PFC and maps
    ("nic pfc off", lambda p: with_nic(p, 0, pfc_vector=[0] * 8), {"RT231"}),
    ("nic pfc on extra priority", lambda p: with_nic(p, 0, pfc_vector=[0, 0, 0, 1, 1, 0, 0, 0]), {"RT231"}),
    ("nic pfc vector short", lambda p: with_nic(p, 0, pfc_vector=[0, 0, 0, 1]), {"RT231"}),
    ("nic dscp map differs",
     lambda p: with_nic(p, 1, dscp_to_priority={**p.classification.dscp_to_priority, 26: 0}),
     {"RT231", "RT232"}),
    ("nic dscp map differs off-path", lambda p: with_nic(
        p, 1, dscp_to_priority={**p.classification.dscp_to_priority, 10: 2}), {"RT232"}),
    ("nic trust pcp", lambda p: with_nic(p, 0, trust="pcp"), {"RT232"}),
    # TOS
    ("nic tos not ECT", lambda p: with_nic(p, 0, roce_tos=104), {"RT233", "RT234"}),
    ("nic tos CE", lambda p: with_nic(p, 0, roce_tos=107), {"RT233", "RT234"}),
    ("nic tos other dscp", lambda p: with_nic(p, 0, roce_tos=98), {"RT233", "RT234"}),
    # NCCL
    ("nccl tc differs", lambda p: with_host(p, 1, nccl_env={**p.hosts[1].nccl_env, "NCCL_IB_TC": "104"}),
     {"RT234"}),
    ("nccl tc missing", lambda p: with_host(p, 0, nccl_env={k: v for k, v in p.hosts[0].nccl_env.items()
                                                            if k != "NCCL_IB_TC"}), {"RT234"}),
    # CNP
    ("cnp queue dwrr", lambda p: with_classification(p, schedulers=[
        s if s.queue != 6 else QueueScheduler(queue=6, mode="dwrr", weight_percent=10, name="X")
        for s in p.classification.schedulers]), {"RT235"}),
    ("cnp priority lossless", lambda p: with_classification(p, lossless_priorities=[3, 6]),
     {"RT230", "RT231", "RT235", "RT236"}),
    ("nic pfc on cnp priority", lambda p: with_nic(p, 0, pfc_vector=[0, 0, 0, 1, 0, 0, 1, 0]),
     {"RT231", "RT235"}),
    # lossless ports
    ("port pfc on wrong priority", lambda p: with_switch_port(p, 0, 2, pfc_priorities=[4]), {"RT236"}),
    ("port pfc on cnp priority", lambda p: with_switch_port(p, 0, 0, pfc_priorities=[3, 6]),
     {"RT236", "RT235"}),
    ("port without headroom", lambda p: with_switch_port(p, 1, 0, headroom=None), {"RT236"}),
    ("port without ecn", lambda p: with_switch_port(p, 0, 1, ecn_profile=None), {"RT236"}),
    ("port with unknown ecn", lambda p: with_switch_port(p, 0, 1, ecn_profile="NOPE"), {"RT236"}),
    ("lossy port with pfc", lambda p: with_switch_port(p, 0, 3, pfc_priorities=[3]), {"RT236"}),
    # ECN
    ("kmax above pfc trigger", lambda p: with_ecn(p, 0, kmax_bytes=2_500_000), {"RT237"}),
    ("kmin equals kmax", lambda p: with_ecn(p, 1, kmin_bytes=1_500_000), {"RT237"}),
    # CNP marking on NICs
    ("nic cnp dscp", lambda p: with_nic(p, 0, cnp_dscp=46), {"RT238"}),
    ("nic cnp priority", lambda p: with_nic(p, 1, cnp_priority=5), {"RT238"}),
    ("site cnp differs", lambda p: p.model_copy(update={"policy": {**p.policy, "cnp_dscp": 4}}), {"RT238"}),
]


@pytest.mark.parametrize(("mutate", "expected"), [(m, e) for _, m, e in MUTATIONS],
                         ids=[n for n, _, _ in MUTATIONS])
def test_single_mutation_fires_its_rule(mutate: Callable[[Plan], Plan], expected: set[str]) -> None:
    assert rules(mutate(BASE)) == expected


def test_findings_point_at_the_mutated_object() -> None:
    found = check_consistency(with_switch_port(BASE, 1, 0, headroom=None))
    assert [(f.location.device, f.location.port) for f in found] == [("spine1", "Ethernet0")]
    found = check_consistency(with_nic(BASE, 1, cnp_priority=5))
    assert [(f.location.device, f.location.port) for f in found] == [("gpu02", "ens1f0np0")]


def test_derived_plan_is_consistent() -> None:
    """The whole pipeline on a small inventory: the tuner's own plan must pass (when it builds)."""
    from roce_tune.inventory.models import Site
    from roce_tune.tuner.compose import build_plan
    from tests.tuner.test_deadlock import clos

    plan = build_plan(clos().model_copy(update={"site": Site(name="t", nccl_version="2.23.4")}))
    assert check_consistency(plan) == []
    assert plan.deadlock.ok and plan.deadlock.edges > 0
    assert plan.hosts[0].nccl_env["NCCL_IB_TC"] == "106"
