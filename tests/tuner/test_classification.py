"""Classification maps against the published conventions (DOMAIN.md §2-3, Oracle E) and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roce_tune.inventory.models import Policy
from roce_tune.plan import Classification
from roce_tune.tuner.classification import derive_classification
from tests.tuner import plan_factory


def test_default_policy_is_nvidia_roce_mode() -> None:
    """Cumulus/Onyx RoCE mode: DSCP 26 -> 3 lossless, 48 -> 6 strict, rest -> 0; DWRR 50/50 (DOMAIN.md §2)."""
    c = derive_classification(Policy())
    assert len(c.dscp_to_tc) == 64
    assert {d: t for d, t in c.dscp_to_tc.items() if t} == {26: 3, 48: 6}
    assert c.lossless_priorities == c.lossless_queues == c.lossless_pgs == [3]
    assert (c.cnp_priority, c.cnp_queue, c.roce_priority) == (6, 6, 3)
    assert c.pfc_priority_to_pg == {3: 3}  # qos_config.j2 lists lossless priorities only
    # RoCE mode: "other switch priority to traffic class 0" -- no TC lands in a queue without a scheduler
    assert c.tc_to_queue == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert c.pfc_priority_to_queue == {i: i for i in range(8)}
    assert c.tc_to_pg == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 0, 7: 0}
    assert c.dscp_to_priority == c.dscp_to_tc
    sched = {s.queue: (s.mode, s.weight_percent) for s in c.schedulers}
    assert sched == {0: ("dwrr", 50), 3: ("dwrr", 50), 6: ("strict", None)}
    assert c.map_name == "ROCE" and c.trust == "dscp"


def test_default_equals_hand_built_convention() -> None:
    """The tuner reproduces the convention the renderers' hand-built plan encodes."""
    want = plan_factory.classification()
    got = derive_classification(Policy())
    for field in Classification.model_fields:
        if field not in ("rationale", "schedulers"):
            assert getattr(got, field) == getattr(want, field), field
    assert [(s.queue, s.mode, s.weight_percent) for s in got.schedulers] == \
        [(s.queue, s.mode, s.weight_percent) for s in want.schedulers]


@pytest.mark.parametrize(("roce", "cnp", "roce_tos", "cnp_tos"), [
    (26, 48, 106, 192),  # Oracle E: TOS 106 = DSCP 26 + ECT(0); CNP DSCP 48 = TOS 192
    (24, 48, 98, 192),   # Oracle E: TOS 98 = DSCP 24 + ECT(0)
    (26, 4, 106, 16),    # nic-configuration-operator roceOptimized: CNP_DSCP 4 (VENDORS.md §7a)
])
def test_tos_bytes(roce: int, cnp: int, roce_tos: int, cnp_tos: int) -> None:
    c = derive_classification(Policy(roce_dscp=[roce], cnp_dscp=cnp))
    assert (c.roce_tos, c.cnp_tos) == (roce_tos, cnp_tos)
    assert c.roce_tos & 3 == 0b10  # ECT(0), RFC 3168


def test_two_lossless_classes_like_sonic_azure() -> None:
    """SONiC AZURE: DSCP 3 -> TC 3, DSCP 4 -> TC 4, both lossless, TC -> PG 3 -> 3, 4 -> 4 (DOMAIN.md §3)."""
    c = derive_classification(Policy(lossless_priorities=[3, 4], roce_dscp=[3, 4]))
    assert (c.dscp_to_tc[3], c.dscp_to_tc[4]) == (3, 4)
    assert c.pfc_priority_to_pg == {3: 3, 4: 4} and c.lossless_pgs == [3, 4]
    sched = {s.queue: s.weight_percent for s in c.schedulers if s.mode == "dwrr"}
    assert sched == {0: 50, 3: 25, 4: 25}
    assert {s.name for s in c.schedulers if s.queue in (3, 4)} == {"ROCE_DWRR"}


def test_more_roce_dscps_than_lossless_priorities_share_the_first() -> None:
    c = derive_classification(Policy(lossless_priorities=[3], roce_dscp=[26, 24]))
    assert (c.dscp_to_tc[26], c.dscp_to_tc[24]) == (3, 3)
    assert c.roce_tos == 106


def test_lossless_weight_option() -> None:
    c = derive_classification(Policy(), lossless_weight_percent=70)
    assert {s.queue: s.weight_percent for s in c.schedulers if s.mode == "dwrr"} == {0: 30, 3: 70}
    with pytest.raises(ValueError):
        derive_classification(Policy(), lossless_weight_percent=100)


@pytest.mark.parametrize("policy", [
    Policy(lossless_priorities=[3, 6]),              # CNP priority lossless
    Policy(roce_dscp=[26, 48]),                      # CNP DSCP collides with a RoCE DSCP
    Policy(roce_dscp=[26, 26]),                      # duplicate DSCP
    Policy(lossless_priorities=[3, 3]),              # duplicate priority
    Policy(lossless_priorities=[0]),                 # every unknown DSCP would become lossless
    Policy(cnp_priority=0),                          # CNPs in the best-effort queue
])
def test_impossible_policies_raise(policy: Policy) -> None:
    with pytest.raises(ValueError, match="impossible RoCE policy"):
        derive_classification(policy)


def test_every_field_has_a_rationale_with_source() -> None:
    c = derive_classification(Policy())
    fields = set(Classification.model_fields) - {"rationale"}
    assert fields <= set(c.rationale)
    assert all(r.source for r in c.rationale.values())
    assert "3168" in c.rationale["roce_tos"].source


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_maps_are_total_and_consistent(data: st.DataObject) -> None:
    lossless = data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=3, unique=True))
    cnp_prio = data.draw(st.integers(1, 7).filter(lambda p: p not in lossless))
    roce = data.draw(st.lists(st.integers(0, 63), min_size=1, max_size=3, unique=True))
    cnp_dscp = data.draw(st.integers(0, 63).filter(lambda d: d not in roce))
    c = derive_classification(Policy(lossless_priorities=lossless, roce_dscp=roce, cnp_dscp=cnp_dscp,
                                     cnp_priority=cnp_prio))
    assert sorted(c.dscp_to_tc) == list(range(64))
    assert all(c.dscp_to_tc[d] in c.lossless_priorities for d in roce)
    assert c.dscp_to_tc[cnp_dscp] == cnp_prio
    assert all(t == 0 for d, t in c.dscp_to_tc.items() if d not in roce and d != cnp_dscp)
    assert c.roce_tos >> 2 == roce[0] and c.cnp_tos >> 2 == cnp_dscp
    assert sum(s.weight_percent or 0 for s in c.schedulers) == 100
    assert [s.queue for s in c.schedulers if s.mode == "strict"] == [cnp_prio]
    assert all(c.tc_to_pg[t] == 0 for t in range(8) if t not in lossless)
    served = {s.queue for s in c.schedulers if s.mode == "strict" or (s.weight_percent or 0) > 0}
    assert {c.tc_to_queue[t] for t in range(8)} <= served
    assert {c.tc_to_queue[t] for t in c.dscp_to_tc.values()} <= served
