"""SONiC read-back of a queue's ECN marking follows ``WRED_PROFILE.ecn`` as SONiC's YANG model defines it.

``sonic-wred-profile.yang`` (sonic-net/sonic-buildimage ``src/sonic-yang-models/yang-models``, leaf ``ecn``):
the default is ``ecn_none`` ("Disable ECN marking for all colors"), and only ``ecn_green``,
``ecn_green_yellow``, ``ecn_green_red`` and ``ecn_all`` mark green packets; ``ecn_yellow``, ``ecn_red`` and
``ecn_yellow_red`` disable marking for green. RoCE traffic is not policed, so it is green: a lossless queue
whose profile does not mark green marks none of it, and verify/audit must say so instead of reading the
profile's thresholds as the queue's ECN.
"""

from __future__ import annotations

import json

import pytest

from roce_tune.platforms import get_platform
from roce_tune.qos import differences
from tests.render.golden import pipeline_plan


def _rendered() -> tuple[object, object, dict[str, object]]:
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == "sonic")
    text = next(iter(get_platform("sonic").render(plan, sw).values()))
    return plan, sw, json.loads(text)


def _ecn_diffs(db: dict[str, object]) -> list[str]:
    plan, sw, _ = _rendered()
    mod = get_platform("sonic")
    return [d for d in differences(mod.expressible_qos(plan, sw), mod.read_back(json.dumps(db)))
            if "ecn" in d]


def test_rendered_profiles_read_back_as_marking() -> None:
    assert _ecn_diffs(_rendered()[2]) == []


@pytest.mark.parametrize("ecn", [None, "ecn_none", "ecn_yellow", "ecn_red", "ecn_yellow_red"])
def test_a_profile_that_does_not_mark_green_is_no_ecn(ecn: str | None) -> None:
    db = _rendered()[2]
    for row in db["WRED_PROFILE"].values():  # type: ignore[attr-defined]
        row.pop("ecn")
        if ecn is not None:
            row["ecn"] = ecn
    assert _ecn_diffs(db), f"WRED_PROFILE ecn={ecn!r} read back as ECN marking on the lossless queue"


@pytest.mark.parametrize("ecn", ["ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all"])
def test_a_profile_that_marks_green_reads_back(ecn: str) -> None:
    db = _rendered()[2]
    for row in db["WRED_PROFILE"].values():  # type: ignore[attr-defined]
        row["ecn"] = ecn
    assert _ecn_diffs(db) == []


@pytest.mark.parametrize(("ecn", "marks"), [(None, False), ("ecn_yellow_red", False), ("ecn_green", True),
                                            ("ecn_all", True)])
def test_the_verify_stub_fabric_marks_green_traffic_as_the_profile_says(ecn: str | None, marks: bool) -> None:
    """The traffic model behind the verify emulators (tests/emulators/verify_stubs/model.py) reads the same
    CONFIG_DB: its lossless queue marks the (green) RoCE traffic only under a green-marking ``ecn`` mode."""
    from tests.emulators.verify_stubs.model import switch_state_from_db

    db = _rendered()[2]
    for row in db["WRED_PROFILE"].values():  # type: ignore[attr-defined]
        row.pop("ecn")
        if ecn is not None:
            row["ecn"] = ecn
    state = switch_state_from_db(db)  # type: ignore[arg-type]
    queues = [q for p in state["ports"].values() for q in p["queues"].values()]
    assert queues and {q["ecn"] for q in queues} == {marks}
