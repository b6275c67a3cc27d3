"""``verify --adjust``: a bounded closed loop over ECN thresholds and DCQCN recovery rates.

The loop never writes device settings itself. A step is a set of inventory **overrides**
(``policy.overrides``, the user-pin mechanism) that goes back through
:func:`~roce_tune.tuner.compose.build_plan` and every tuner safety check; a step whose plan has an error-level
finding (Kmax above the PFC trigger, a DCQCN value out of range …) is **not taken**. Accepted plans are
rendered and pushed by the apply engine (commit-confirm / checkpoint-rollback per platform), then measured
again.

Step rule [D] (:func:`step_values`), per lossless port (ECN) or host (DCQCN):

* if the value is pinned and the tuner's own derived value lies in the step's direction, go to the
  derived value (it is what the safety rules were built around);
* else multiply (``up``) or divide (``down``) by ``factor`` (default 2); Kmin and Kmax move together,
  Kmin never below 2 jumbo frames (the tuner's floor), AI/HAI never below 1 Mb/s nor above the NIC's
  line rate.

With a simulator search (``LoopOptions.simulate``, on for ``roce-tune verify --adjust``; the module
:mod:`roce_tune.verify.sim_step`) the second branch's size is chosen by simulating candidates around the
current values on the port's class (bounded time, seed 1); the reason, with the simulated figures, is in
the step's ``changes``. Jumps to the tuner's derived value stay as above.

Stop: target reached; ``max_iterations`` steps taken; a finding that ECN/DCQCN cannot fix (loss,
watchdog storm: ``stops_loop``); no finding proposes a step; every proposed step refused by the
tuner; an apply failed; a step made busbw worse by more than ``tolerance`` — then the best plan
measured so far is re-applied (and re-measured). The loop ends with the best plan applied, or with a stop
reason that says the re-apply FAILED and on which device (that device may still hold the last step's values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.deploy.runner import DeviceResult
from roce_tune.findings import Severity
from roce_tune.inventory.catalog import Catalog
from roce_tune.inventory.models import Inventory, Override
from roce_tune.plan import EcnProfile, Explained, Plan
from roce_tune.tuner.compose import build_plan
from roce_tune.tuner.dcqcn import stepped_rate_mbps
from roce_tune.tuner.ecn import stepped_thresholds
from roce_tune.verify.diagnose import Proposal
from roce_tune.verify.measure import Measurement
from roce_tune.verify.sim_step import (
    SimSearch,
    host_nic_keys,
    key_name,
    simulated_dcqcn_step,
    simulated_ecn_step,
)

__all__ = [
    "Candidate",
    "Iteration",
    "LoopOptions",
    "LoopResult",
    "adjust_loop",
    "make_candidate",
    "plan_settings",
    "proposals_of",
    "searched_step_values",
    "step_values",
]

Key = tuple[str, str | None]  # (device, port) — port None for host (device-scoped) overrides


def _derived(section: Explained, key: str, current: int) -> int:
    r = section.rationale.get(key)
    if r is not None and r.pinned_by_user and isinstance(r.derived_value, (int, float)):
        return int(r.derived_value)
    return current


def step_values(plan: Plan, proposal: Proposal, factor: float = 2.0) -> tuple[dict[Key, dict[str, int
                                                                                             | float]],
                                                                              list[str]]:
    """New pinned values for one step (rule in the module docstring), and what changes, in words.

    Returns:
        ``({(device, port): {param: value}}, ["lab-leaf1:Ethernet0 kmax_bytes 12000000 -> 495000
        (derived)"]``; empty when nothing can move (already at a floor).
    """
    up = proposal.direction == "up"
    if proposal.knob == "ecn":
        return _ecn_step_values(plan, up, factor)
    return _dcqcn_step_values(plan, up, factor)


def _ecn_step(prof: EcnProfile, up: bool, factor: float) -> tuple[tuple[int, int], str]:
    """New (Kmin, Kmax) of one ECN profile under rule [D], and why (derived value, xfactor or /factor)."""
    kmin, kmax = prof.kmin_bytes, prof.kmax_bytes
    dmin, dmax = _derived(prof, "kmin_bytes", kmin), _derived(prof, "kmax_bytes", kmax)
    if (dmax > kmax) == up and dmax != kmax:
        return (dmin, dmax), "the tuner's derived value"
    return stepped_thresholds(kmin, kmax, factor, up), f"x{factor:g}" if up else f"/{factor:g}"


Step = tuple[dict[Key, dict[str, int | float]], list[str]]  # new pinned values, and the changes in words


def _ecn_step_values(plan: Plan, up: bool, factor: float) -> Step:
    """:func:`step_values` for the ECN knob: Kmin/Kmax of every lossless port that can move."""
    values: dict[Key, dict[str, int | float]] = {}
    changes: list[str] = []
    for sw in plan.switches:
        for port, prof in sw.lossless_ecn_ports():
            new, why = _ecn_step(prof, up, factor)
            kmin, kmax = prof.kmin_bytes, prof.kmax_bytes
            if new == (kmin, kmax):
                continue
            values[(sw.name, port.name)] = {"kmin_bytes": new[0], "kmax_bytes": new[1]}
            changes.append(f"{sw.name}:{port.name} kmin/kmax {kmin}/{kmax} -> {new[0]}/{new[1]} B ({why})")
    return values, changes


def _dcqcn_rate_step(cur: int, derived: int, up: bool, factor: float, line_mbps: int) -> tuple[int, str]:
    """New AI/HAI rate (Mb/s) under rule [D], never below 1 Mb/s nor above the NIC's line rate
    ``line_mbps`` (a recovery step beyond it is outside the range the tuner accepts), and why."""
    if (derived > cur) == up and derived != cur:
        return derived, "the tuner's derived value"
    rate = stepped_rate_mbps(cur, factor, up, line_mbps)
    return rate, (f"x{factor:g}" + (", capped at the line rate" if rate == line_mbps != cur else "")
                  if up else f"/{factor:g}")


def _dcqcn_step_values(plan: Plan, up: bool, factor: float) -> Step:
    """:func:`step_values` for the DCQCN knob: rpg_ai/hai rates per host, or per NIC of a host whose NICs
    differ in speed or values (:func:`~roce_tune.verify.sim_step.host_nic_keys`)."""
    values: dict[Key, dict[str, int | float]] = {}
    changes: list[str] = []
    for target, nic in (kn for h in plan.hosts for kn in host_nic_keys(h)):
        dq = nic.dcqcn
        new_vals: dict[str, int | float] = {}
        for key in ("rpg_ai_rate_mbps", "rpg_hai_rate_mbps"):
            cur = dq.params[key]
            new_vals[key], why = _dcqcn_rate_step(cur, _derived(dq, key, cur), up, factor,
                                                  nic.speed_gbps * 1000)
            if new_vals[key] != cur:
                changes.append(f"{key_name(target)} {key} {cur} -> {new_vals[key]} ({why})")
        if any(new_vals[k] != dq.params[k] for k in new_vals):
            values[target] = new_vals
    return values, changes


def _changes_of(key: Key, changes: list[str]) -> list[str]:
    name = key_name(key)
    return [ch for ch in changes if ch.startswith(name + " ")]


def searched_step_values(plan: Plan, proposal: Proposal, factor: float, search: SimSearch
                         ) -> tuple[dict[Key, dict[str, int | float]], list[str]]:
    """Like :func:`step_values`, but a step that is not a jump to the tuner's derived value takes its size
    from the simulator search (:mod:`roce_tune.verify.sim_step`); its reason is in the change text, and so is
    the search's reason for leaving a step plain (e.g. a port behind NICs without DCQCN)."""
    plain, plain_changes = step_values(plan, proposal, factor)
    jumps = {k for k in plain if any("derived value" in ch for ch in _changes_of(k, plain_changes))}
    if jumps == set(plain):
        return plain, plain_changes
    sim = simulated_ecn_step if proposal.knob == "ecn" else simulated_dcqcn_step
    found, found_changes = sim(plan, proposal, factor, search)
    values: dict[Key, dict[str, int | float]] = {}
    changes: list[str] = []
    for k in plain:
        use_sim = k not in jumps and k in found
        values[k] = found[k] if use_sim else plain[k]
        changes += _changes_of(k, found_changes if use_sim else plain_changes)
        if not use_sim and k not in jumps:  # the search's reason for not sizing this step, if it gave one
            changes += _changes_of(k, found_changes)
    return values, changes


def overrides_from(values: dict[Key, dict[str, int | float]]) -> list[Override]:
    """Port-scoped overrides for switch ports, device-scoped ones for hosts (sorted, deterministic)."""
    out = []
    for (device, port), vals in sorted(values.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        out.append(Override(device=device, port=port,
                            set=dict(sorted(vals.items())),  # type: ignore[arg-type]
                            reason="roce-tune verify --adjust"))
    return out


@dataclass(frozen=True)
class Candidate:
    """A proposed step: the overrides after it, the plan the tuner derived, or why it was refused."""

    proposal: Proposal
    values: dict[Key, dict[str, int | float]]
    changes: list[str]
    plan: Plan | None
    refused: str | None = None


def make_candidate(inv: Inventory, catalog: Catalog | None, plan: Plan,
                   pinned: dict[Key, dict[str, int | float]],
                   proposal: Proposal, factor: float = 2.0, search: SimSearch | None = None) -> Candidate:
    """Derive the plan one step away from ``plan`` (through ``build_plan``); ``pinned`` = earlier steps;
    ``search`` = size the step with the simulator (:func:`searched_step_values`)."""
    step, changes = (searched_step_values(plan, proposal, factor, search) if search
                     else step_values(plan, proposal, factor))
    if not step:
        return Candidate(proposal, pinned, [], None, refused="nothing to move (already at a bound)")
    merged = {k: {**pinned.get(k, {}), **v} for k, v in {**pinned, **step}.items()}
    policy = inv.policy.model_copy(update={"overrides": list(inv.policy.overrides) + overrides_from(merged)})
    try:
        new = build_plan(inv.model_copy(update={"policy": policy}), catalog,
                         inventory_file=plan.inventory_file,
                         inventory_sha256=plan.inventory_sha256)
    except ValueError as exc:
        return Candidate(proposal, merged, changes, None, refused=f"tuner rejected the values: {exc}")
    errors = [f for f in new.findings if f.severity is Severity.error]
    if errors:
        return Candidate(proposal, merged, changes, None,
                         refused="tuner safety check: " + "; ".join(f"{f.rule} {f.message}"
                                                                    for f in errors[:3]))
    return Candidate(proposal, merged, changes, new)


def plan_settings(plan: Plan) -> dict[str, dict[str, dict[str, object]]]:
    """The values the loop moves, for the report: ECN profile per switch, AI/HAI per host (per
    ``host:netdev`` for a host whose NICs differ in speed or values)."""
    return {
        "ecn": {f"{s.name}/{p.name}": {"kmin_bytes": p.kmin_bytes, "kmax_bytes": p.kmax_bytes,
                                       "pmax_percent": p.pmax_percent,
                                       "pfc_trigger_bytes": p.pfc_trigger_bytes}
                for s in plan.switches for p in s.ecn_profiles},
        "dcqcn": {key_name(k): {"rpg_ai_rate_mbps": n.dcqcn.params["rpg_ai_rate_mbps"],
                                 "rpg_hai_rate_mbps": n.dcqcn.params["rpg_hai_rate_mbps"]}
                  for h in plan.hosts for k, n in host_nic_keys(h)}}


class Iteration(BaseModel):
    """One row of the per-iteration table.

    ``kind``: ``baseline`` (as found), ``step`` (after a change), ``rollback`` (best plan re-applied).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    kind: Literal["baseline", "step", "rollback"]
    proposal: Proposal | None = None
    changes: list[str] = Field(default_factory=list)
    overrides: list[dict[str, object]] = Field(default_factory=list)
    settings: dict[str, dict[str, dict[str, object]]] = Field(default_factory=dict)
    applied: list[dict[str, object]] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    measurement: Measurement | None = None
    seconds: float = 0.0

    @property
    def fraction(self) -> float:
        """Largest-message busbw / line rate (0 when the run gave none)."""
        return (self.measurement.fraction if self.measurement else None) or 0.0


@dataclass
class LoopOptions:
    """Bounds of the loop; ``target_ratio`` is the busbw/line-rate goal."""

    target_ratio: float = 0.9
    max_iterations: int = 5
    tolerance: float = 0.02
    factor: float = 2.0
    #: size steps with the simulator search (roce_tune.verify.sim_step); off = the plain x/÷ factor rule
    simulate: bool = False
    sim_budget_s: float = 60.0

    def search(self) -> SimSearch | None:
        """The simulator search bounds when ``simulate`` is on, else None (plain factor steps)."""
        return SimSearch(self.sim_budget_s) if self.simulate else None


@dataclass
class LoopResult:
    """All iterations, why the loop stopped, and the best one (whose plan is applied at the end)."""

    iterations: list[Iteration]
    stop_reason: str
    best_index: int
    best_plan: Plan
    best_overrides: list[Override] = field(default_factory=list)


def proposals_of(m: Measurement) -> list[Proposal]:
    """Distinct proposals of the failed checks, in check order."""
    out: list[Proposal] = []
    for c in m.checks:
        for d in c.diagnoses:
            if d.proposal is not None and d.proposal not in out:
                out.append(d.proposal)
    return out


def _applied(results: list[DeviceResult]) -> list[dict[str, object]]:
    return [{"device": r.name, "state": r.state, "error": r.error, "changes": len(r.diff)} for r in results]


@dataclass
class _LoopState:
    """What :func:`adjust_loop` carries from one iteration to the next."""

    its: list[Iteration]
    plan: Plan
    plans: dict[int, Plan]
    pinned: dict[Key, dict[str, int | float]] = field(default_factory=dict)
    best: int = 0
    best_pinned: dict[Key, dict[str, int | float]] = field(default_factory=dict)
    steps: int = 0
    #: an iteration's settings, after its push: :func:`plan_settings` or the devices read back running
    settings_of: Callable[[Plan], dict[str, dict[str, dict[str, object]]]] = plan_settings


def _stop_before_step(last: Iteration, props: list[Proposal], opts: LoopOptions, steps: int) -> str:
    """Why the loop ends before a step from ``last`` (target, a blocking finding, the iteration bound, nothing
    proposed); '' to go on."""
    checks = last.measurement.checks if last.measurement else []
    blocking = [d for c in checks for d in c.diagnoses if d.stops_loop]
    if last.fraction >= opts.target_ratio:
        return f"target reached ({last.fraction:.1%} >= {opts.target_ratio:.0%})"
    if blocking:
        return f"{blocking[0].rule} {blocking[0].name}: not something ECN/DCQCN steps fix"
    if steps >= opts.max_iterations:
        return f"max iterations ({opts.max_iterations}) reached"
    if not props:
        return "no finding proposes an ECN/DCQCN step"
    return ""


def _first_candidate(inv: Inventory, catalog: Catalog | None, st: _LoopState, props: list[Proposal],
                     opts: LoopOptions) -> tuple[Candidate | None, list[str]]:
    """The first proposal the tuner accepts (None if none), and why the ones before it were refused."""
    refusals: list[str] = []
    for prop in props:
        c = make_candidate(inv, catalog, st.plan, st.pinned, prop, opts.factor, opts.search())
        if c.plan is not None:
            return c, refusals
        refusals.append(f"{prop.knob} {prop.direction}: {c.refused}")
    return None, refusals


Measure = Callable[[Plan], Measurement]
Apply = Callable[[Plan], list[DeviceResult]]


def _take_step(st: _LoopState, cand: Candidate, plan: Plan, refusals: list[str], measure: Measure,
               apply: Apply, opts: LoopOptions, now: Callable[[], float]) -> str:
    """Apply ``plan`` (the candidate's), measure it and record the iteration; why the loop stops after it
    (apply failed, busbw worse than the best beyond ``tolerance``) or ''."""
    t1 = now()
    results = apply(plan)
    st.steps += 1
    it = Iteration(index=len(st.its), kind="step", proposal=cand.proposal, changes=cand.changes,
                   refused=refusals,
                   overrides=[o.model_dump(exclude_none=True) for o in overrides_from(cand.values)],
                   settings=st.settings_of(plan), applied=_applied(results))
    st.its.append(it)
    if any(r.failed for r in results):
        it.seconds = round(now() - t1, 3)
        return "apply failed: " + "; ".join(f"{r.name} {r.state} {r.error or ''}".strip()
                                            for r in results if r.failed)
    it.measurement = measure(plan)
    it.seconds = round(now() - t1, 3)
    st.plan, st.pinned = plan, cand.values
    st.plans[it.index] = plan
    best = st.its[st.best]
    if it.fraction < best.fraction * (1 - opts.tolerance):
        return f"step {it.index} made busbw worse ({it.fraction:.1%} < best {best.fraction:.1%})"
    if it.fraction > best.fraction:
        st.best, st.best_pinned = it.index, dict(st.pinned)
    return ""


def _roll_back(st: _LoopState, measure: Measure, apply: Apply, now: Callable[[], float]) -> str:
    """Re-apply (and re-measure) the best plan when the last iteration is not it or was not measured; what
    it did, for the stop reason ('' when nothing was needed). A re-apply that fails on a device is said so
    (that device may still hold the last step's values), never reported as rolled back."""
    last = st.its[-1]
    if last.index == st.best and not (last.kind == "step" and last.measurement is None):
        return ""
    t2 = now()
    best_plan = st.plans[st.best]
    results = apply(best_plan)
    rb = Iteration(index=len(st.its), kind="rollback", changes=[f"re-apply the plan of iteration {st.best}"],
                   settings=st.settings_of(best_plan), applied=_applied(results),
                   overrides=[o.model_dump(exclude_none=True) for o in overrides_from(st.best_pinned)])
    failed = [r for r in results if r.failed]
    rb.measurement = measure(best_plan) if not failed else None
    rb.seconds = round(now() - t2, 3)
    st.its.append(rb)
    if failed:
        return (f"rollback to iteration {st.best} FAILED: "
                + "; ".join(f"{r.name} {r.state} {r.error or ''}".strip() for r in failed)
                + f"; the devices that failed may still hold the settings of iteration {last.index}")
    return f"rolled back to iteration {st.best}"


def adjust_loop(inv: Inventory, plan0: Plan, measure: Callable[[Plan], Measurement],
                apply: Callable[[Plan], list[DeviceResult]], opts: LoopOptions,
                catalog: Catalog | None = None,
                clock: Callable[[], float] | None = None,
                settings_of: Callable[[Plan], dict[str, dict[str, dict[str, object]]]] = plan_settings,
                ) -> LoopResult:
    """Run the loop of the module docstring. ``measure``/``apply`` do the I/O (injected).

    ``settings_of``: each iteration's settings from its plan, called after its push (if any): the plan's
    values (:func:`plan_settings`, the default) or, in ``roce-tune verify``, the values the devices were
    read back running after it (:meth:`roce_tune.verify.as_found.AsFound.settings`).
    """
    import time

    now = clock or time.monotonic
    t0 = now()
    its = [Iteration(index=0, kind="baseline", settings=settings_of(plan0), measurement=measure(plan0))]
    its[0].seconds = round(now() - t0, 3)
    st = _LoopState(its=its, plan=plan0, plans={0: plan0}, settings_of=settings_of)
    while True:
        last = st.its[-1]
        props = proposals_of(last.measurement) if last.measurement else []
        stop = _stop_before_step(last, props, opts, st.steps)
        if stop:
            break
        cand, refusals = _first_candidate(inv, catalog, st, props, opts)
        if cand is None or cand.plan is None:
            last.refused.extend(refusals)
            stop = "no step the tuner accepts: " + "; ".join(refusals)
            break
        stop = _take_step(st, cand, cand.plan, refusals, measure, apply, opts, now)
        if stop:
            break
    if rolled := _roll_back(st, measure, apply, now):
        stop += f"; {rolled}"
    return LoopResult(iterations=st.its, stop_reason=stop, best_index=st.best, best_plan=st.plans[st.best],
                      best_overrides=overrides_from(st.best_pinned))
