"""The adjust loop's mechanics with injected measure/apply (no devices): steps go through the
tuner, refused steps are not taken, and the loop stops at target / budget / worse (rolling back)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from roce_tune.deploy.runner import DeviceResult
from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import EcnProfileName, Inventory, Override
from roce_tune.plan import EcnProfile, Plan
from roce_tune.tuner.compose import build_plan
from roce_tune.tuner.ecn import KMIN_FLOOR_BYTES
from roce_tune.verify.adjust import (
    LoopOptions,
    adjust_loop,
    make_candidate,
    searched_step_values,
    step_values,
)
from roce_tune.verify.diagnose import CheckResult, Diagnosis, Proposal
from roce_tune.verify.measure import Measurement
from roce_tune.verify.sim_step import Evaluation, SimSearch, choose

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
    diags = [Diagnosis(rule="RT3xx", name="planted", severity=Severity.warning, message="m", fix="f",
                       proposal=p,
                       stops_loop=stops) for p in proposals]
    if stops and not proposals:
        diags.append(Diagnosis(rule="RT319", name="storm", severity=Severity.error, message="m", fix="f",
                               stops_loop=True))
    return Measurement(command="node1$ mpirun …", launcher="mpirun", outputs={}, run=None, delta=None,
                       traffic_time_s=None, busbw_by_size=[(1 << 30, frac * 50)], fraction=frac,
                       checks=[CheckResult(check="planted", status="fail" if diags else "pass",
                                           diagnoses=diags)],
                       wall_s=0.0)


class Recorder:
    """Fake apply: records every plan pushed; ``fail`` makes every device fail."""

    def __init__(self, fail: bool = False):
        self.plans: list[Plan] = []
        self.fail = fail

    def __call__(self, plan: Plan) -> list[DeviceResult]:
        self.plans.append(plan)
        return [DeviceResult("lab-leaf1", "sonic", "failed" if self.fail else "pushed",
                             error="boom" if self.fail else None)]


def run(inv: Inventory, respond: Callable[[Plan], Measurement], apply: Recorder | None = None,
        **kw):  # type: ignore[no-untyped-def]
    plan0 = build_plan(inv)
    return adjust_loop(inv, plan0, respond, apply or Recorder(), LoopOptions(**kw)), plan0


def derived() -> EcnProfile:
    """The tuner's own ECN profile for the lab (objective throughput: Kmax = half the egress PFC onset, at
    most 2 x C x rpg_time_reset = 7.5 MB)."""
    return build_plan(inventory([])).switches[0].ecn_profiles[0]


def above_derived() -> tuple[int, int]:
    """Kmin/Kmax pins above the tuner's derived ramp that the tuner still accepts (Kmax below the onset)."""
    d = derived()
    pins = (d.kmax_bytes, int(0.9 * d.pfc_onset_bytes) // 1000 * 1000)
    plan = build_plan(inventory([Override(set={"kmin_bytes": pins[0], "kmax_bytes": pins[1]})]))
    assert d.kmin_bytes < pins[0] < pins[1] and d.kmax_bytes < pins[1] <= d.pfc_onset_bytes
    assert not [f for f in plan.findings if f.severity is Severity.error]
    return pins


def test_pinned_values_step_to_the_tuners_derived_ones() -> None:
    kmin, kmax_ = above_derived()
    plan = build_plan(inventory([Override(set={"kmin_bytes": kmin, "kmax_bytes": kmax_})]))
    d = derived()
    values, changes = step_values(plan, DOWN)
    assert values == {("lab-leaf1", "Ethernet0"): {"kmin_bytes": d.kmin_bytes, "kmax_bytes": d.kmax_bytes},
                      ("lab-leaf1", "Ethernet8"): {"kmin_bytes": d.kmin_bytes, "kmax_bytes": d.kmax_bytes}}
    assert all("derived" in ch for ch in changes)
    # and upward from a ramp pinned far below the tuner's
    low = build_plan(inventory([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 60_000})]))
    assert step_values(low, UP)[0][("lab-leaf1", "Ethernet0")] == {"kmin_bytes": d.kmin_bytes,
                                                                    "kmax_bytes": d.kmax_bytes}


def test_unpinned_values_halve_with_the_kmin_floor() -> None:
    d = derived()
    plan = build_plan(inventory([]))
    values, _ = step_values(plan, DOWN)
    assert values[("lab-leaf1", "Ethernet0")] == {"kmin_bytes": d.kmin_bytes // 2,
                                                  "kmax_bytes": d.kmax_bytes // 2}
    assert step_values(plan, UP)[0][("lab-leaf1", "Ethernet0")] == {"kmin_bytes": 2 * d.kmin_bytes,
                                                                     "kmax_bytes": 2 * d.kmax_bytes}
    # the bdp profile's ramp sits near the floor: halving its Kmin would go below 2 jumbo frames (2 x 9216 B)
    inv = inventory([])
    inv = inv.model_copy(update={"policy": inv.policy.model_copy(
        update={"ecn_profile": EcnProfileName("bdp")})})
    bdp = build_plan(inv)
    b = bdp.switches[0].ecn_profiles[0]
    assert b.kmin_bytes // 2 < KMIN_FLOOR_BYTES < b.kmin_bytes
    assert step_values(bdp, DOWN)[0][("lab-leaf1", "Ethernet0")] == {"kmin_bytes": KMIN_FLOOR_BYTES,
                                                                      "kmax_bytes": b.kmax_bytes // 2}


def test_a_step_past_the_pfc_trigger_is_refused_by_the_tuner() -> None:
    d = derived()
    # above the derived Kmax: UP doubles, no derived
    # jump
    kmax_ = int(0.75 * d.pfc_onset_bytes) // 1000 * 1000
    pins = [Override(set={"kmin_bytes": kmax_ // 10, "kmax_bytes": kmax_})]
    plan = build_plan(inventory(pins))
    assert not [f for f in plan.findings if f.severity is Severity.error]
    onset = plan.switches[0].ecn_profiles[0].pfc_onset_bytes
    assert d.kmax_bytes < kmax_ <= onset < 2 * kmax_  # doubling crosses it
    cand = make_candidate(inventory(pins), None, plan, {}, UP)
    assert cand.plan is None and "RT210" in (cand.refused or "")


def test_dcqcn_steps_and_range_refusal() -> None:
    derived_ai = build_plan(inventory([])).hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"]
    assert derived_ai > 1
    low = inventory([Override(role="host", set={"rpg_ai_rate_mbps": 1, "rpg_hai_rate_mbps": 10})])
    cand = make_candidate(low, None, build_plan(low), {}, AI_UP)
    assert cand.plan is not None and ai(cand.plan) == derived_ai  # pinned below: to the tuner's value
    at = inventory([Override(role="host", set={"rpg_ai_rate_mbps": derived_ai})])
    cand = make_candidate(at, None, build_plan(at), {}, AI_UP)
    assert cand.plan is not None and ai(cand.plan) == 2 * derived_ai  # at the tuner's value: doubled
    line_mbps = build_plan(at).hosts[0].nics[0].speed_gbps * 1000
    high = inventory([Override(role="host", set={"rpg_ai_rate_mbps": 300_000, "rpg_hai_rate_mbps": 350_000})])
    capped = make_candidate(high, None, build_plan(high), {}, AI_UP)
    assert capped.plan is not None  # x2 = 600000 Mb/s is past the line rate: the step stops at it
    assert capped.plan.hosts[0].nics[0].dcqcn.params["rpg_ai_rate_mbps"] == line_mbps
    assert capped.plan.hosts[0].nics[0].dcqcn.params["rpg_hai_rate_mbps"] == line_mbps
    top = inventory([Override(role="host", set={"rpg_ai_rate_mbps": line_mbps,
                                                "rpg_hai_rate_mbps": line_mbps})])
    stuck = make_candidate(top, None, build_plan(top), {}, AI_UP)
    assert stuck.plan is None and "nothing to move" in (stuck.refused or "")  # at the line rate


def test_converges_in_one_step_when_the_model_allows() -> None:
    kmin, kmax_ = above_derived()
    d = derived()
    inv = inventory([Override(set={"kmin_bytes": kmin, "kmax_bytes": kmax_})])
    rec = Recorder()
    res, _ = run(inv, lambda p: measurement(0.58, (DOWN,)) if kmax(p) > d.kmax_bytes else measurement(0.96),
                 rec)
    assert res.stop_reason.startswith("target reached")
    assert [it.kind for it in res.iterations] == ["baseline", "step"]
    assert [kmax(p) for p in rec.plans] == [d.kmax_bytes]
    assert res.best_index == 1
    assert {o.port for o in res.best_overrides} == {"Ethernet0", "Ethernet8"}


def test_unpinned_fabric_halves_until_the_target() -> None:
    d = derived()
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.96 if kmax(p) <= d.kmax_bytes // 4 else 0.6, (DOWN,)),
                 rec)
    assert [kmax(p) for p in rec.plans] == [d.kmax_bytes // 2, d.kmax_bytes // 2 // 2]
    assert res.stop_reason.startswith("target reached") and res.best_index == 2


def test_stops_at_the_budget_when_the_target_is_out_of_reach() -> None:
    d = derived()
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.6 + 0.1 * (d.kmax_bytes / kmax(p)) ** 0.1, (DOWN,)),
                 rec,
                 max_iterations=2)
    assert res.stop_reason.startswith("max iterations (2)")
    assert len(rec.plans) == 2 and res.best_index == 2  # improving every step: no rollback
    assert res.iterations[-1].kind == "step"


def test_a_worse_step_rolls_back_to_the_best_plan() -> None:
    inv = inventory([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000})])
    rec = Recorder()
    res, plan0 = run(inv, lambda p: measurement(0.83, (UP,)) if kmax(p) == 100_000
                     else measurement(0.61, (DOWN,)), rec)
    assert (res.stop_reason.startswith("step 1 made busbw worse")
            and res.stop_reason.endswith("rolled back to iteration 0"))
    assert [it.kind for it in res.iterations] == ["baseline", "step", "rollback"]
    # the step, then the baseline plan
    # again
    assert [kmax(p) for p in rec.plans] == [derived().kmax_bytes, 100_000]
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


def test_a_rollback_that_fails_is_not_reported_as_done() -> None:
    """A device unreachable after a worse step: the re-apply of the best plan fails on it, so the loop must
    not claim it rolled back (the device may still hold the worse step's values)."""
    class FailsFromSecond(Recorder):
        def __call__(self, plan: Plan) -> list[DeviceResult]:
            self.fail = bool(self.plans)
            return super().__call__(plan)

    inv = inventory([Override(set={"kmin_bytes": 20_000, "kmax_bytes": 100_000})])
    rec = FailsFromSecond()
    res, plan0 = run(inv, lambda p: measurement(0.83, (UP,)) if kmax(p) == 100_000
                     else measurement(0.61, (DOWN,)), rec)
    assert [it.kind for it in res.iterations] == ["baseline", "step", "rollback"]
    assert rec.plans[-1] == plan0 and res.iterations[-1].measurement is None
    assert "rolled back to iteration 0" not in res.stop_reason
    assert res.stop_reason.endswith("rollback to iteration 0 FAILED: lab-leaf1 failed boom; the devices "
                                    "that failed may still hold the settings of iteration 1")


def test_target_met_at_baseline_changes_nothing() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.95, (DOWN,)), rec)
    assert len(res.iterations) == 1 and rec.plans == [] and res.stop_reason.startswith("target reached")


# --- steps sized by the simulator (roce_tune.verify.sim_step) ---------------------------------------------


def _ev(label: str, eff: float, pause: float = 0.0, util: float = 100.0) -> Evaluation:
    return Evaluation(label, eff, pause, util)


def test_choose_takes_the_best_simulated_candidate_and_the_plain_step_within_noise() -> None:
    cur = _ev("cur", 80.0)
    pick, why = choose(cur, [_ev("plain", 82.0), _ev("half", 90.0), _ev("pmax", 89.5, pause=5.0)], "plain")
    assert pick.label == "half" and why.startswith("simulates best") and "current cur: incast 80.0 %" in why
    # within 1 point: the plain
    # step
    pick, why = choose(cur, [_ev("plain", 89.6), _ev("half", 90.0)], "plain")
    assert pick.label == "plain" and "does not tell the candidates apart" in why
    # within noise, less PFC pause wins over the plain step
    assert choose(cur, [_ev("plain", 90.0, pause=9.0), _ev("half", 89.5, pause=2.0)],
                  "plain")[0].label == "half"
    # a candidate that drops long-lived utilisation below 99 % is not taken while another keeps it
    assert choose(cur, [_ev("plain", 85.0), _ev("fast", 95.0, util=97.0)], "plain")[0].label == "plain"


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_search_sizes_an_unpinned_step_with_the_simulator_deterministically() -> None:
    plan = build_plan(inventory([]))
    d = derived()
    values, changes = searched_step_values(plan, DOWN, 2.0, SimSearch(budget_s=120))
    assert set(values) == {("lab-leaf1", "Ethernet0"), ("lab-leaf1", "Ethernet8")}
    v = values[("lab-leaf1", "Ethernet0")]
    assert (v["kmax_bytes"] < d.kmax_bytes and v["kmin_bytes"] < d.kmin_bytes
            and v["pmax_percent"] >= d.pmax_percent)
    assert all("(simulator, fan-in 1: " in ch and "candidate(s) run" in ch for ch in changes)
    # seed 1, no
    # clock
    assert searched_step_values(plan, DOWN, 2.0, SimSearch(budget_s=120)) == (values, changes)
    cand = make_candidate(inventory([]), None, plan, {}, DOWN, search=SimSearch(budget_s=120))
    assert cand.plan is not None and kmax(cand.plan) == v["kmax_bytes"]
    assert cand.plan.switches[0].ecn_profiles[0].pmax_percent == v["pmax_percent"]


def test_search_keeps_the_jump_to_the_tuners_value_and_sizes_dcqcn_steps() -> None:
    kmin, kmax_ = above_derived()
    plan = build_plan(inventory([Override(set={"kmin_bytes": kmin, "kmax_bytes": kmax_})]))
    # no simulation
    # needed
    assert searched_step_values(plan, DOWN, 2.0, SimSearch()) == step_values(plan, DOWN)
    plan = build_plan(inventory([]))
    values, changes = searched_step_values(plan, AI_UP, 2.0, SimSearch(budget_s=120))
    ai0 = ai(plan)
    assert values[("node1", None)]["rpg_ai_rate_mbps"] in (2 * ai0, int(ai0 * 2 ** 0.5))
    assert any(ch.startswith("node1 rpg_ai/rpg_hai") and "(simulator, 400G: " in ch for ch in changes)


def test_loop_with_the_simulator_reports_why_it_took_the_step() -> None:
    rec = Recorder()
    res, _ = run(inventory([]), lambda p: measurement(0.6, (DOWN,)), rec, max_iterations=1, simulate=True)
    step = res.iterations[1]
    assert step.kind == "step" and step.changes and all("simulator" in ch for ch in step.changes)
    assert any("pmax_percent" in o["set"] for o in step.overrides)


MIXED_SPEED_HOST = """
site: {name: mixed}
policy: {lossless_priorities: [3], roce_dscp: [26], cnp_dscp: 48, cnp_priority: 6}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: Ethernet0, speed: 400G}
      - {name: Ethernet8, speed: 200G}
      - {name: Ethernet16, speed: 400G}
hosts:
  - name: node1
    socket_ifname: eno1
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G,
         switch_port: "leaf1:Ethernet0"}
      - {model: connectx-7, netdev: ens2f0np0, rdma_device: mlx5_1, speed: 200G,
         switch_port: "leaf1:Ethernet8"}
  - name: node2
    socket_ifname: eno1
    nics:
      - {model: connectx-7, netdev: ens9f0np0, rdma_device: mlx5_0, speed: 400G,
         switch_port: "leaf1:Ethernet16"}
"""


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_dcqcn_steps_of_a_host_with_nics_at_two_speeds_are_scoped_to_each_nic(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import roce_tune.verify.sim_step as sim_step

    (tmp_path / "inv.yaml").write_text(MIXED_SPEED_HOST)
    inv = load_inventory(tmp_path / "inv.yaml").inventory
    plan = build_plan(inv)
    plain, _ = step_values(plan, AI_UP)
    values, changes = searched_step_values(plan, AI_UP, 2.0, SimSearch(budget_s=120))
    for found in (plain, values):
        assert set(found) == {("node1", "ens1f0np0"), ("node1", "ens2f0np0"), ("node2", None)}
    for netdev, speed in (("ens2f0np0", "200G"), ("ens1f0np0", "400G")):
        assert any(ch.startswith(f"node1:{netdev} rpg_ai/rpg_hai") and f"(simulator, {speed}: " in ch
                   for ch in changes)
    # the 400G NIC of node1 moves exactly as node2's 400G NIC (one search per speed and values)
    assert values[("node1", "ens1f0np0")] == values[("node2", None)]
    cand = make_candidate(inv, None, plan, {}, AI_UP, search=SimSearch(budget_s=120))
    assert cand.plan is not None
    got = {n.netdev: n.dcqcn.params["rpg_ai_rate_mbps"] for n in cand.plan.hosts[0].nics}
    assert got == {"ens1f0np0": values[("node1", "ens1f0np0")]["rpg_ai_rate_mbps"],
                   "ens2f0np0": values[("node1", "ens2f0np0")]["rpg_ai_rate_mbps"]}
    # ECN: the 400G ports behind ens1f0np0 and ens9f0np0 are one class (same values, other netdev names)
    searches: list[str] = []
    real = sim_step._run_search

    def spy(current: tuple[str, sim_step.Runs], cands: object, deadline: float) -> tuple[object, str]:
        searches.append(current[0])
        return real(current, cands, deadline)  # type: ignore[arg-type]

    monkeypatch.setattr(sim_step, "_run_search", spy)
    ecn_values, _ = searched_step_values(plan, DOWN, 2.0, SimSearch(budget_s=120))
    assert len(searches) == 2  # 400G and 200G
    assert ecn_values[("leaf1", "Ethernet0")] == ecn_values[("leaf1", "Ethernet16")]


def test_ecn_search_does_not_simulate_dcqcn_where_the_plan_turns_it_off(monkeypatch: pytest.MonkeyPatch
                                                                       ) -> None:
    """policy.dcqcn false: the NICs send without a reaction point (PFC alone), and the simulator models only
    senders that react to CNPs, so the ECN step is the plain one, with the reason in its change text."""
    import roce_tune.verify.sim_step as sim_step

    inv = inventory([])
    inv = inv.model_copy(update={"policy": inv.policy.model_copy(update={"dcqcn": False})})
    plan = build_plan(inv)
    assert not any(n.dcqcn.enabled for h in plan.hosts for n in h.nics)
    searches: list[str] = []
    monkeypatch.setattr(sim_step, "_run_search", lambda cur, *a: searches.append(cur[0]))
    values, changes = searched_step_values(plan, DOWN, 2.0, SimSearch(budget_s=120))
    plain, plain_changes = step_values(plan, DOWN)
    assert searches == [] and values == plain and plain
    assert all(ch in changes for ch in plain_changes)
    notes = [ch for ch in changes if ch not in plain_changes]
    assert {n.split(" ", 1)[0] for n in notes} == {f"{sw}:{port}" for sw, port in plain}
    assert all("DCQCN is off" in n and "plain step" in n for n in notes)
    # the recovery rates of NICs that do not run DCQCN are not simulated either
    values, changes = searched_step_values(plan, AI_UP, 2.0, SimSearch(budget_s=120))
    plain, plain_changes = step_values(plan, AI_UP)
    assert searches == [] and values == plain and plain and all(ch in changes for ch in plain_changes)
    assert [ch.split(" ", 1)[0] for ch in changes if ch not in plain_changes] == ["node1", "node2"]
