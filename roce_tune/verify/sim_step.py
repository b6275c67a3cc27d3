"""Simulator-chosen steps for ``verify --adjust``: a small, bounded search around the current values.

The measurement on the fabric decides the *direction* of a step (a diagnosis proposes ECN up/down or DCQCN
recovery up/down); this module decides its *size* with ``roce-tune simulate`` (docs/simulate.md) on the port
class the values apply to (speed, fan-in, base RTT, shared lossless pool and alpha of the plan):

* ECN (per lossless port class): Kmin/Kmax scaled by ``sqrt(factor)`` and ``factor`` in the proposed
  direction, each with the current Pmax and with the neighbouring Pmax of the tuner's ladder (lower when
  thresholds go up, higher when they go down); Kmin never below 2 jumbo frames, Kmax never above the port's
  egress PFC onset.
* DCQCN recovery (per NIC speed): rpg_ai/rpg_hai scaled by ``sqrt(factor)`` and ``factor``, evaluated on every
  lossless class of that speed.

Each candidate, and the current values, run 1 MB x N and 8 MB x N incasts and N long-lived flows
(:data:`LONG_LIVED_US`) in both reaction-point models (M and T), seed 1: deterministic. Choice: among
candidates whose lowest long-lived utilisation stays >= min(99 %, the current one's) - 0.5, the highest mean
incast efficiency; within :data:`NOISE_POINTS` of it, the least summed PFC pause; and the plain ``x factor``
step (the loop's rule without a simulator) whenever it is in that top set, so the simulator only overrides the
rule on evidence. Time is bounded by ``budget_s``: candidates are run nearest-first and the search stops at
the budget with what it has (the plain step is always run second, after the current values).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from roce_tune.simulate.model import DcqcnParams, EcnSetting, Scenario, SimInputs
from roce_tune.simulate.runner import run_seeds
from roce_tune.tuner.dcqcn import stepped_rate_mbps
from roce_tune.tuner.ecn import pmax_ladder_neighbour, stepped_thresholds

if TYPE_CHECKING:
    from roce_tune.plan import HostPlan, NicPlan, Plan
    from roce_tune.verify.diagnose import Proposal

__all__ = ["Evaluation", "SimSearch", "choose", "evaluate", "host_nic_keys", "key_name",
           "simulated_ecn_step", "simulated_dcqcn_step"]

#: long-lived run length of the search (statistics over its second half)
LONG_LIVED_US = 5_000.0
MESSAGES_BYTES = (1_000_000, 8_000_000)
#: efficiencies closer than this are not told apart (one seed; docs/simulate.md: bimodal incasts)
NOISE_POINTS = 1.0
UTILISATION_SLACK_POINTS = 0.5
UTILISATION_FLOOR_PERCENT = 99.0
#: why a port behind NICs without DCQCN, or such a NIC, keeps the plain step (policy.dcqcn false)
NO_DCQCN_NOTE = ("not simulated: DCQCN is off (policy.dcqcn false: the NICs send with PFC alone) and the "
                 "simulator models only senders that react to CNPs; the plain step applies")


@dataclass(frozen=True)
class SimSearch:
    """Bounds of the search: ``budget_s`` seconds of simulation per step (all classes together) at most; the
    current values and the plain step of every class are run whatever the budget."""

    budget_s: float = 60.0

    def deadline(self) -> float:
        """``time.monotonic()`` value at which this step's search stops adding candidates."""
        return time.monotonic() + self.budget_s


@dataclass(frozen=True)
class Evaluation:
    """One setting on one or more port classes: mean incast efficiency %, summed PFC pause ms (all runs),
    lowest long-lived utilisation %, and the label of the values (``"kmin/kmax/pmax"`` or ``"ai/hai"``)."""

    label: str
    efficiency_percent: float
    pfc_pause_ms: float
    utilisation_percent: float

    def text(self) -> str:
        """``"400000/800000/5%: incast 91.2 %, PFC 3.1 ms, long-lived >= 99.8 %"``."""
        return (f"{self.label}: incast {self.efficiency_percent:.1f} %, PFC {self.pfc_pause_ms:.1f} ms, "
                f"long-lived >= {self.utilisation_percent:.1f} %")


@lru_cache(maxsize=256)
def _evaluate_one(inp: SimInputs, ecn: EcnSetting, dcqcn: DcqcnParams) -> tuple[float, float, float]:
    effs, pause, utils = [], 0.0, []
    for model in ("M", "T"):
        for msg in (*MESSAGES_BYTES, 0):
            sc = Scenario(kind="incast" if msg else "long-lived", speed_gbps=inp.speed_gbps,
                          fan_in=inp.fan_in, ecn=ecn, dcqcn=dcqcn,
                          model=model, message_bytes=msg or 1, duration_us=LONG_LIVED_US,
                          base_rtt_us=inp.base_rtt_us,
                          buffer_bytes=inp.buffer_bytes, pfc_alpha=inp.pfc_alpha)
            m = run_seeds(sc, 1).median
            pause += float(m["pfc_pause_ms"] or 0.0)
            if msg:
                effs.append(float(m["efficiency_percent"] or 0.0))
            else:
                utils.append(float(m["utilisation_percent"] or 0.0))
    return sum(effs) / len(effs), pause, min(utils)


Runs = Sequence[tuple[SimInputs, EcnSetting, DcqcnParams]]


def evaluate(label: str, runs: Runs) -> Evaluation:
    """Simulate each (class, ECN, DCQCN) of ``runs`` (see the module docstring) and combine them: mean
    efficiency, summed pause, lowest utilisation. Results are memoised per process (deterministic inputs).

    Raises:
        ValueError: ``runs`` empty.
    """
    if not runs:
        raise ValueError("evaluate: no port class to simulate")
    parts = []
    for inp, e, d in runs:
        e, d = replace(e, label=""), replace(d, label="")
        plain = SimInputs(speed_gbps=inp.speed_gbps, fan_in=inp.fan_in, base_rtt_us=inp.base_rtt_us,
                          buffer_bytes=inp.buffer_bytes, pfc_alpha=inp.pfc_alpha, ecn=e, dcqcn=d)
        parts.append(_evaluate_one(plain, e, d))
    return Evaluation(label, sum(p[0] for p in parts) / len(parts), sum(p[1] for p in parts),
                      min(p[2] for p in parts))


def choose(current: Evaluation, candidates: list[Evaluation], plain: str) -> tuple[Evaluation, str]:
    """The candidate to take and why (rule in the module docstring). ``plain`` = label of the ``x factor``
    step.

    Raises:
        ValueError: no candidates.
    """
    if not candidates:
        raise ValueError("choose: no candidates")
    floor = min(UTILISATION_FLOOR_PERCENT, current.utilisation_percent) - UTILISATION_SLACK_POINTS
    ok = [c for c in candidates if c.utilisation_percent >= floor] or candidates
    best_eff = max(c.efficiency_percent for c in ok)
    top = [c for c in ok if c.efficiency_percent >= best_eff - NOISE_POINTS]
    pick = min(top, key=lambda c: (c.pfc_pause_ms, -c.efficiency_percent))
    plain_c = next((c for c in top if c.label == plain), None)
    if plain_c is not None and plain_c.pfc_pause_ms <= pick.pfc_pause_ms + 0.2:
        why = ("the simulator does not tell the candidates apart beyond the plain step"
               if plain_c is not pick or len(top) > 1 else "the plain step simulates best")
        pick = plain_c
    else:
        why = "simulates best"
    return pick, f"{why} (current {current.text()}; chosen {pick.text()}; {len(candidates)} candidate(s) run)"


def _ecn_candidates(e: EcnSetting, up: bool, factor: float, onset: int) -> list[EcnSetting]:
    out: list[EcnSetting] = []
    for f in (factor, math.sqrt(factor)):  # the plain step first: it always runs
        kmin, kmax = stepped_thresholds(e.kmin_bytes, e.kmax_bytes, f, up)
        if kmax > onset:
            continue
        for p in (e.pmax_percent, pmax_ladder_neighbour(e.pmax_percent, up)):
            if p is not None:
                c = EcnSetting(kmin, kmax, p, label=f"{kmin}/{kmax}/{p:g}%")
                if (kmin, kmax, p) != (e.kmin_bytes, e.kmax_bytes, e.pmax_percent) and c not in out:
                    out.append(c)
    return out


def _run_search(current: tuple[str, Runs], candidates: Sequence[tuple[str, Runs]],
                deadline: float) -> tuple[Evaluation, str]:
    base = evaluate(*current)
    done: list[Evaluation] = []
    for label, runs in candidates:
        done.append(evaluate(label, runs))
        if time.monotonic() > deadline and len(candidates) > len(done):
            break
    pick, why = choose(base, done, candidates[0][0])
    if len(done) < len(candidates):
        why += f"; time budget reached after {len(done)} of {len(candidates)}"
    return pick, why


def simulated_ecn_step(plan: Plan, proposal: Proposal, factor: float, search: SimSearch
                       ) -> tuple[dict[tuple[str, str | None], dict[str, int | float]], list[str]]:
    """ECN values per lossless port chosen by the search (one search per port class), and what changed, in
    words with the simulator's reason. Ports whose values cannot move (floors, onset) are left out, and so
    are ports whose NICs run without DCQCN (``policy.dcqcn: false``): the simulator has no PFC-only sender,
    so each of those gets a ``"SWITCH:PORT <NO_DCQCN_NOTE>"`` line instead and keeps the plain step."""
    from roce_tune.simulate.settings import nic_index, port_inputs

    up, deadline = proposal.direction == "up", search.deadline()
    nics = nic_index(plan)
    classes: dict[tuple[object, ...], tuple[EcnSetting, str] | None] = {}
    values: dict[tuple[str, str | None], dict[str, int | float]] = {}
    changes: list[str] = []
    for sw in plan.switches:
        for port, prof in sw.lossless_ecn_ports():
            inp = port_inputs(plan, sw, port, nics=nics)
            if not inp.dcqcn_enabled:
                changes.append(f"{sw.name}:{port.name} {NO_DCQCN_NOTE}")
                continue
            # the DCQCN label names the NIC's netdev: values, not names, make a class
            key = (sw.asic, inp.speed_gbps, inp.fan_in, inp.base_rtt_us, inp.buffer_bytes, inp.pfc_alpha,
                   inp.ecn.kmin_bytes, inp.ecn.kmax_bytes, inp.ecn.pmax_percent, replace(inp.dcqcn, label=""))
            if key not in classes:
                onset = prof.pfc_onset_bytes if prof.pfc_onset_bytes is not None else prof.pfc_trigger_bytes
                cands = _ecn_candidates(inp.ecn, up, factor, onset)
                classes[key] = None
                if cands:
                    cur = (f"{inp.ecn.kmin_bytes}/{inp.ecn.kmax_bytes}/{inp.ecn.pmax_percent:g}%",
                           [(inp, inp.ecn, inp.dcqcn)])
                    pick, why = _run_search(cur, [(c.label, [(inp, c, inp.dcqcn)]) for c in cands], deadline)
                    classes[key] = (next(c for c in cands if c.label == pick.label), why)
            chosen = classes[key]
            if chosen is None:
                continue
            c, why = chosen
            values[(sw.name, port.name)] = {"kmin_bytes": c.kmin_bytes, "kmax_bytes": c.kmax_bytes,
                                            "pmax_percent": c.pmax_percent}
            changes.append(f"{sw.name}:{port.name} kmin/kmax/pmax {inp.ecn.kmin_bytes}/{inp.ecn.kmax_bytes}/"
                           f"{inp.ecn.pmax_percent:g}% -> {c.label} (simulator, fan-in {inp.fan_in}: {why})")
    return values, changes


def _rate_steps(ai: int, hai: int, up: bool, factor: float, line_mbps: int) -> list[tuple[int, int]]:
    """(AI, HAI) candidates: x factor (the plain step, first) and x sqrt(factor), or divided; 1 .. line
    rate."""
    steps: list[tuple[int, int]] = []
    for f in (factor, math.sqrt(factor)):
        a, b = stepped_rate_mbps(ai, f, up, line_mbps), stepped_rate_mbps(hai, f, up, line_mbps)
        if (a, b) != (ai, hai) and (a, b) not in steps:
            steps.append((a, b))
    return steps


def host_nic_keys(h: HostPlan) -> list[tuple[tuple[str, str | None], NicPlan]]:
    """The override scopes of host ``h``'s DCQCN values, each with the NIC whose values it moves:
    ``[((host, None), first NIC)]`` when every NIC has the same speed and rpg_ai/rpg_hai (one host-wide
    override), else ``[((host, netdev), nic)]`` for each NIC (a NIC-scoped override, ``port: <netdev>``:
    a 400G and a 200G NIC of one host each keep the values of their own speed). ``[]`` without NICs."""
    kinds = {(n.speed_gbps, n.dcqcn.params["rpg_ai_rate_mbps"], n.dcqcn.params["rpg_hai_rate_mbps"])
             for n in h.nics}
    if len(kinds) <= 1:
        return [((h.name, None), n) for n in h.nics[:1]]
    return [((h.name, n.netdev), n) for n in h.nics]


def key_name(key: tuple[str, str | None]) -> str:
    """An override scope as a change line names it: ``host`` (device-wide) or ``host:netdev``
    (:func:`host_nic_keys`); ``--adjust`` picks a scope's changes by this prefix. Raises nothing."""
    return f"{key[0]}:{key[1]}" if key[1] else key[0]


def simulated_dcqcn_step(plan: Plan, proposal: Proposal, factor: float, search: SimSearch
                         ) -> tuple[dict[tuple[str, str | None], dict[str, int | float]], list[str]]:
    """rpg_ai/rpg_hai per host, or per NIC of a host with NICs of different speeds or values
    (:func:`host_nic_keys`), chosen by the search (one search per NIC speed and values, on every lossless
    class of that speed; NICs whose speed has no class are left to the plain rule, and so are NICs that run
    without DCQCN, each with a ``"SCOPE <NO_DCQCN_NOTE>"`` line), and what changed, with the reason."""
    from roce_tune.simulate.scorecard import port_classes

    up, deadline = proposal.direction == "up", search.deadline()
    classes = port_classes(plan)
    per_speed: dict[tuple[int, int, int], tuple[int, int, str] | None] = {}
    values: dict[tuple[str, str | None], dict[str, int | float]] = {}
    changes: list[str] = []
    for target, nic in (kn for h in plan.hosts for kn in host_nic_keys(h)):
        if not nic.dcqcn.enabled:
            changes.append(f"{key_name(target)} {NO_DCQCN_NOTE}")
            continue
        ai, hai = nic.dcqcn.params["rpg_ai_rate_mbps"], nic.dcqcn.params["rpg_hai_rate_mbps"]
        key = (nic.speed_gbps, ai, hai)
        if key not in per_speed:
            per_speed[key] = _search_rates(classes, nic, up, factor, deadline)
        chosen = per_speed[key]
        if chosen is None:
            continue
        a, b, why = chosen
        values[target] = {"rpg_ai_rate_mbps": a, "rpg_hai_rate_mbps": b}
        changes.append(f"{key_name(target)} rpg_ai/rpg_hai {ai}/{hai} -> {a}/{b} Mb/s (simulator, "
                       f"{nic.speed_gbps}G: {why})")
    return values, changes


def _search_rates(classes: Sequence[SimInputs], nic: NicPlan, up: bool, factor: float, deadline: float
                  ) -> tuple[int, int, str] | None:
    """(AI, HAI, why) chosen for NICs like ``nic`` on the lossless classes of its speed; None when there is
    no class of that speed or no step."""
    ai, hai = nic.dcqcn.params["rpg_ai_rate_mbps"], nic.dcqcn.params["rpg_hai_rate_mbps"]
    same = [pc for pc in classes if pc.speed_gbps == nic.speed_gbps]
    steps = _rate_steps(ai, hai, up, factor, nic.speed_gbps * 1000)
    if not (same and steps):
        return None
    dq = DcqcnParams.from_params(dict(nic.dcqcn.params))
    cur = (f"{ai}/{hai} Mb/s", [(pc, pc.ecn, dq) for pc in same])
    cands = [(f"{a}/{b} Mb/s", [(pc, pc.ecn, replace(dq, rpg_ai_rate_mbps=a, rpg_hai_rate_mbps=b))
                                for pc in same]) for a, b in steps]
    pick, why = _run_search(cur, cands, deadline)
    a, b = steps[[c[0] for c in cands].index(pick.label)]
    return a, b, why
