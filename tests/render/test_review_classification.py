"""plan.md's Classification section states each RoCE DSCP with the priority the plan maps it to."""

from __future__ import annotations

import re

from roce_tune.inventory.models import Policy
from roce_tune.render.review import render_review
from roce_tune.tuner.classification import derive_classification

from .plan_builder import build_plan


def _classification_line(policy: Policy) -> str:
    plan = build_plan()
    plan = plan.model_copy(update={"classification": derive_classification(policy)})
    md = render_review(plan)
    (line,) = [ln for ln in md.splitlines() if ln.startswith("- trust ")]
    return line


def test_one_roce_dscp_keeps_its_line() -> None:
    line = _classification_line(Policy())
    assert line == ("- trust dscp; RoCE DSCP [26] -> priority 3 (lossless priorities [3], PG [3], "
                    "queues [3])")


def test_every_roce_dscp_is_stated_with_the_priority_the_maps_give_it() -> None:
    # lossless [5, 2], DSCP 46 -> 5, 18 -> 2, 20 -> 5 (extra DSCPs -> the first lossless priority):
    # the line used to say "RoCE DSCP [46, 18, 20] -> priority 5", which every switch map contradicts for 18.
    policy = Policy(lossless_priorities=[5, 2], roce_dscp=[46, 18, 20], cnp_priority=1)
    c = derive_classification(policy)
    line = _classification_line(policy)
    stated = {int(d): int(p) for d, p in re.findall(r"DSCP (\d+) -> priority (\d+)", line)}
    stated.update({int(d): int(p) for d, p in re.findall(r", (\d+) -> priority (\d+)", line)})
    assert stated == {d: c.dscp_to_tc[d] for d in policy.roce_dscp} == {46: 5, 18: 2, 20: 5}, line
