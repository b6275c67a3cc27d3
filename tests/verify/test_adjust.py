"""The adjust loop's mechanics with injected measure/apply (no devices): steps go through the
tuner, refused steps are not taken, and the loop stops at target / budget / worse (rolling back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from roce_tune.deploy.runner import DeviceResult
from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import Inventory, Override
from roce_tune.plan import Plan
from roce_tune.tuner.compose import build_plan
from roce_tune.tuner.ecn import KMIN_FLOOR_BYTES
from roce_tune.verify.adjust import LoopOptions, adjust_loop, make_candidate, step_values
from roce_tune.verify.diagnose import CheckResult, Diagnosis, Proposal
from roce_tune.verify.measure import Measurement

REPO = Path(__file__).resolve().parents[2]
DOWN, UP = Proposal(knob="ecn", direction="down"), Proposal(knob="ecn", direction="up")
AI_UP = Proposal(knob="dcqcn_recovery", direction="up")


def inventory(overrides: list[Override]) -> Inventory:
    inv = load_inventory(REPO / "inventories" / "lab-2node.yaml").inventory
    return inv.model_copy(update={"policy": inv.policy.model_copy(update={"overrides": overrides})})


def kmax(plan: Plan) -> int:
    return plan.switches[0].ecn_profiles[0].kmax_bytes


def ai(plan: Plan) -> int:
    return plan.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"]


def measurement(frac: float, proposals: tuple[Proposal, ...] = (), stops: bool = False) -> Measurement:
    diags = [Diagnosis(rule="RT3xx", name="planted", severity=Severity.warning, message="m", fix="f", proposal=p,
                       stops_loop=stops) for p in proposals]
    if stops and not proposals:
        diags.append(Diagnosis(rule="RT319", name="storm", severity=Severity.error, message="m", fix="f", stops_loop=True))
    return Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=None, delta=None,
                       traffic_time_s=None, busbw_by_size=[(1 << 30, frac * 50)], fraction=frac,
                       checks=[CheckResult(check="planted", status="fail" if diags else "pass", diagnoses=diags)],
                       wall_s=0.0)


class Recorder:
    """Fake apply: records every plan pushed; ``fail`` makes every device fail."""

    def __init__(self, fail: bool = False):
        self.plans: list[Plan] = []
        self.fail = fail

    def __call__(self, plan: Plan) -> list[DeviceResult]:
        self.plans.append(plan)
        return [DeviceResult("lab-leaf1", "sonic", "failed" if self.fail else "pushed", error="boom" if self.fail else None)]


def run(inv: Inventory, respond: Callable[[Plan], Measurement], apply: Recorder | None = None, **kw):  # type: ignore[no-untyped-def]
    plan0 = build_plan(inv)
    return adjust_loop(inv, plan0, respond, apply or Recorder(), LoopOptions(**kw)), plan0


def test_pinned_values_step_to_the_tuners_derived_ones() -> None:
    plan = build_plan(inventory([Override(set={"kmin_bytes": 3_000_000, "kmax_bytes": 12_000_000})]))
    values, changes = step_values(plan, DOWN)
    assert values == {("lab-leaf1", "Ethernet0"): {"kmin_bytes": 36_000, "kmax_bytes": 495_000},
                      ("lab-leaf1", "Ethernet8"): {"kmin_bytes": 36_000, "kmax_bytes": 495_000}}
    assert all("derived" in ch for ch in changes)


def test_unpinned_values_halve_with_the_kmin_floor() -> None:
    plan = build_plan(inventory([]))
    values, _ = step_values(plan, DOWN)
    # 36000/2 = 18000 is below the tuner's 2-jumbo-frame floor (2 x 9216 = 18432)
    assert values[("lab-leaf1", "Ethernet0")] == {"kmin_bytes": KMIN_FLOOR_BYTES, "kmax_bytes": 247_500}
    assert step_values(plan, UP)[0][("lab-leaf1", "Ethernet0")] == {"kmin_bytes": 72_000, "kmax_bytes": 990_000}


def test_a_step_past_the_pfc_trigger_is_refused_by_the_tuner() -> None:
    plan = build_plan(inventory([Override(set={"kmin_bytes": 1_000_000, "kmax_bytes": 10_000_000})]))
    trigger = plan.switches[0].ecn_profiles[0].pfc_trigger_bytes
    assert 10_000_000 < trigger < 20_000_000  # doubling crosses it
    cand = make_candidate(inventory([Override(set={"kmin_bytes": 1_000_000, "kmax_bytes": 10_000_000})]), None,
                          plan, {}, UP)
    assert cand.plan is None and "RT210" in (cand.refused or "")


def test_dcqcn_steps_and_range_refusal() -> None:
    inv = inventory([Override(role="host", set={"rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50})])
    plan = build_plan(inv)
    cand = make_candidate(inv, None, plan, {}, AI_UP)
    assert cand.plan is not None and ai(cand.plan) == 80  # HPCC rule 5 Mb/s x 400/25
    high = inventory([Override(role="host", set={"rpg_ai_rate_mbps": 300_000})])
    refused = make_candidate(high, None, build_plan(high), {}, AI_UP)
    assert refused.plan is None and "outside" in (refused.refused or "")  # 600000 Mb/s > 400G line rate


def test_converges_in_one_step_when_the_model_allows() -> None:
    inv = inventory([Override(set={"kmin_bytes": 3_000_000, "kmax_bytes": 12_000_000})])
    rec = Recorder()
    res, _ = run(inv, lambda p: measurement(0.58, (DOWN,)) if kmax(p) > 2_000_000 else measurement(0.96), rec)
    assert res.stop_reason.startswith("target reached")
    assert [it.kind for it in res.iterations] == ["baseline", "step"]
    assert [kmax(p) for p in rec.plans] == [495_000]
    assert res.best_index == 1
    assert {o.port for o in res.best_overrides} == {"Ethernet0", "Ethernet8"}


def test_unpinned_fabric_halves_until_the_target() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.96 if kmax(p) <= 130_000 else 0.6, (DOWN,)), rec)
    assert [kmax(p) for p in rec.plans] == [247_500, 123_750]
    assert res.stop_reason.startswith("target reached") and res.best_index == 2


def test_stops_at_the_budget_when_the_target_is_out_of_reach() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.6 + 0.1 * (495_000 / kmax(p)) ** 0.1, (DOWN,)), rec,
                 max_iterations=2)
    assert res.stop_reason.startswith("max iterations (2)")
    assert len(rec.plans) == 2 and res.best_index == 2  # improving every step: no rollback
    assert res.iterations[-1].kind == "step"


def test_a_worse_step_rolls_back_to_the_best_plan() -> None:
    inv = inventory([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000})])
    rec = Recorder()
    res, plan0 = run(inv, lambda p: measurement(0.83, (UP,)) if kmax(p) == 100_000 else measurement(0.61, (DOWN,)), rec)
    assert res.stop_reason.startswith("step 1 made busbw worse") and res.stop_reason.endswith("rolled back to iteration 0")
    assert [it.kind for it in res.iterations] == ["baseline", "step", "rollback"]
    assert [kmax(p) for p in rec.plans] == [495_000, 100_000]  # the step, then the baseline plan again
    assert res.best_plan == plan0 and res.iterations[-1].fraction == pytest.approx(0.83)


def test_findings_ecn_cannot_fix_stop_before_any_step() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.5, (DOWN,), stops=True), rec)
    assert res.stop_reason.startswith("RT3xx") and rec.plans == []


def test_no_proposal_means_no_step() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.5), rec)
    assert res.stop_reason == "no finding proposes an ECN/DCQCN step" and rec.plans == []


def test_failed_apply_stops_and_restores_the_best_plan() -> None:
    rec = Recorder(fail=True)
    res, plan0 = run(inventory([]), lambda p: measurement(0.6, (DOWN,)), rec)
    assert res.stop_reason.startswith("apply failed: lab-leaf1 failed boom")
    assert rec.plans[-1] == plan0  # re-applied
    assert res.iterations[-1].kind == "rollback"


def test_target_met_at_baseline_changes_nothing() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.95, (DOWN,)), rec)
    assert len(res.iterations) == 1 and rec.plans == [] and res.stop_reason.startswith("target reached")
