"""``plan.md``: the review document a network engineer reads before approving a push.

Sections: fabric summary; classification; per-role tables (headroom, ECN, watchdog) and per-NIC
DCQCN; every pinned (non-default) value with its rationale; findings; deadlock analysis; notes.
Rows are grouped (identical values on many ports collapse to one row with a port count), so a
4,096-host plan stays readable. Pure translation of the plan: no derivation here.
"""

from __future__ import annotations

import operator
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from roce_tune.plan import EcnProfile, Explained, Headroom, Plan, Rationale, SwitchPlan

if TYPE_CHECKING:
    from roce_tune.simulate.scorecard import Scorecard


def _fmt_rationale(r: Rationale) -> str:
    inputs = ", ".join(f"{k}={v}" for k, v in r.inputs.items())
    s = f"{r.formula}"
    if inputs:
        s += f" with {inputs}"
    s += f" — source: {r.source}"
    if r.note:
        s += f" ({r.note})"
    return s.replace("|", "\\|")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(("-" if c is None else str(c)).replace("|", "\\|") for c in row) + " |"
            for row in rows]
    return out


def scorecard_caveat(plan: Plan) -> list[str]:
    """What the scorecards of ``plan`` are evidence of when that is not the plan as it runs: under
    ``policy.dcqcn: false`` the NICs run PFC alone while the simulator's senders react to CNPs (with the DCQCN
    values the plan keeps for re-enabling). Markdown lines (a paragraph and a blank line), else none."""
    if plan.policy.get("dcqcn") is not False:
        return []
    return ["**DCQCN is off in this plan** (policy.dcqcn false: the NICs run PFC alone), and the simulator's "
            "senders react to CNPs: every scorecard row runs the plan's ECN values with the DCQCN values it "
            "keeps for re-enabling. They show what re-enabling DCQCN would give, not what this plan runs "
            "(without DCQCN the ECN marks change no sender's rate).", ""]


def render_scorecards(plan: Plan, scorecards: list[Scorecard] | None) -> list[str]:
    """The "Objective and simulated evidence" section: the objective, what it traded, and one simulator
    scorecard per lossless port class (roce_tune.simulate.scorecard). ``scorecards`` None (``roce-tune plan
    --no-scorecard``): the objective and a statement that nothing was simulated, with the commands that
    would (the plan states its objective either way; issue 13)."""
    from roce_tune.tuner.ecn import OBJECTIVE_TRADE

    obj = str(plan.policy.get("objective", "throughput"))
    lines = ["## Objective and simulated evidence", "",
             f"Objective **{obj}** (policy.objective): {OBJECTIVE_TRADE.get(obj, '')}.", ""]
    if scorecards is None:
        return lines + ["**Not simulated:** this plan was made with `roce-tune plan --no-scorecard`, so no "
                        "lossless port class was compared with the NVIDIA, SONiC and DCQCN-paper thresholds. "
                        "`roce-tune plan` without that flag adds the scorecards here; `roce-tune simulate "
                        "plan PLAN_DIR --port DEVICE:PORT` simulates one port (docs/simulate.md).", ""]
    from roce_tune.simulate.scorecard import scorecard_lines

    lines += ["Each lossless port class below was simulated with `roce-tune simulate` (docs/simulate.md): "
              "the plan's values against NVIDIA, SONiC and DCQCN-paper thresholds with firmware DCQCN, in "
              "both reaction-point models (M: byte counter + CNP pacing; T: timer only). Target: incast "
              "efficiency >= the best default - 2 points with no more PFC pause than it, long-lived "
              "utilisation >= 99 %.", ""]
    lines += scorecard_caveat(plan)
    if not scorecards:
        lines += ["No lossless port class to simulate.", ""]
    for card in scorecards:
        lines += scorecard_lines(card)
    return lines


def render_review(plan: Plan, switch_files: dict[str, str] | None = None,
                  scorecards: list[Scorecard] | None = None) -> str:
    """Render the review markdown for ``plan`` (deterministic).

    Args:
        plan: the plan (with any render findings already added).
        switch_files: rendered switch files by file name (``leaf1.json`` …); when given, the runbook
            section names, per SONiC switch, the tables ``config qos reload`` / ``config load_minigraph``
            would wipe.
        scorecards: simulator scorecards per lossless port class (the "Objective and simulated evidence"
            section); None (``roce-tune plan --no-scorecard``) states the objective and that nothing
            was simulated.
    """
    heads = _switch_heads(plan)  # (read by two sections)
    sections = (_fabric_section, _classification_section, partial(_headroom_section, heads=heads),
                _buffers_section, _ecn_section, _watchdog_section, _dcqcn_section,
                partial(_non_default_section, heads=heads), _findings_section, _deadlock_section)
    lines = [line for section in sections for line in section(plan)]
    lines += _runbook(plan, switch_files or {})
    lines += ["", "## Notes", ""] + [f"- {n}" for n in plan.notes]
    card_lines = render_scorecards(plan, scorecards)
    if card_lines:
        lines += [""] + card_lines[:-1] if card_lines[-1] == "" else [""] + card_lines
    return "\n".join(lines) + "\n"


def _count_rows(counts: dict[tuple[object, ...], int]) -> list[list[object]]:
    """Table rows: each key's fields and its count, sorted by the key's text."""
    return [[*k, n] for k, n in sorted(counts.items(), key=lambda kv: str(kv[0]))]


def _fabric_section(plan: Plan) -> list[str]:
    """Title, provenance and the fabric's counts."""
    s = plan.summary
    lines = [f"# roce-tune plan: {plan.site}", "",
             f"Generated by {plan.generator} from `{plan.inventory_file}` (sha256 "
             f"`{plan.inventory_sha256[:16]}`), plan schema {plan.schema_version}.", "", "## Fabric", ""]
    platforms: dict[str, int] = defaultdict(int)
    for sw in plan.switches:
        platforms[f"{sw.platform}/{sw.role}"] += 1
    return lines + _table(["switches", "hosts", "NIC ports", "lossless switch ports", "tiers",
                           "platform/role"],
                          [[s.switches, s.hosts, s.nics, s.lossless_ports, s.tiers,
                            ", ".join(f"{k}: {v}" for k, v in sorted(platforms.items()))]])


def _classification_section(plan: Plan) -> list[str]:
    """Trust, DSCP/priority/PG/queue of RoCE and CNP, and the queue schedulers."""
    c = plan.classification
    # several RoCE DSCPs may map to different lossless priorities: state each pair as the maps do
    prios = {d: c.dscp_to_tc.get(d, c.roce_priority) for d in c.roce_dscp}
    roce = (f"{c.roce_dscp} -> priority {c.roce_priority}" if set(prios.values()) == {c.roce_priority}
            else ", ".join(f"{d} -> priority {p}" for d, p in prios.items()))
    lines = ["", "## Classification", "",
             f"- trust {c.trust}; RoCE DSCP {roce} (lossless "
             f"priorities {c.lossless_priorities}, PG {c.lossless_pgs}, queues {c.lossless_queues})",
             f"- CNP DSCP {c.cnp_dscp} -> priority {c.cnp_priority}, queue {c.cnp_queue} strict",
             f"- host TOS {c.roce_tos} (DSCP {c.roce_dscp[0]} << 2 | ECT(0)); CNP TOS {c.cnp_tos}", ""]
    return lines + _table(["queue", "mode", "weight %", "scheduler"],
                          [[q.queue, q.mode, q.weight_percent if q.weight_percent is not None else "-",
                            q.name]
                           for q in c.schedulers])


#: a switch's headroom per port, and its distinct headroom objects by ``id`` (in order of first use)
_Heads = tuple[list[Headroom | None], dict[int, Headroom | None]]


def _switch_heads(plan: Plan) -> list[_Heads]:
    """:data:`_Heads` of each switch (in plan order)."""
    out = []
    for sw in plan.switches:
        heads = list(map(_HEADROOM, sw.ports))
        out.append((heads, dict(zip(map(id, heads), heads))))
    return out


def _headroom_section(plan: Plan, heads: list[_Heads] | None = None) -> list[str]:
    """Headroom per (role, ASIC, speed, cable, values), both models, and why each ASIC renders its model
    (``heads``: :func:`_switch_heads` of ``plan`` when already made)."""
    groups: dict[tuple[object, ...], int] = defaultdict(int)
    reasons: dict[tuple[str, str], str] = {}
    # the headroom columns per headroom object and ASIC (ports of one class share the object; ids are stable
    # while the plan lives); the ASIC's model note from its first headroom, as port order gives it
    values: dict[tuple[int, str], tuple[object, ...]] = {}
    for sw, (sw_heads, by_id) in zip(plan.switches, heads or _switch_heads(plan)):
        # ports per (speed, cable, headroom object, port rationale), counted in C, in the order the ports
        # first show them (ports of one class share a rationale: whether a cable is pinned is read once each)
        whys = list(map(_RATIONALE, sw.ports))
        why_by_id = dict(zip(map(id, whys), whys))
        for (speed, cable, head, why_id), n in Counter(zip(map(_SPEED, sw.ports), map(_CABLE, sw.ports),
                                                           map(id, sw_heads), map(id, whys))).items():
            h = by_id[head]
            if h is None:
                continue
            cable_why = why_by_id[why_id].get("cable_m")
            if cable_why is not None and cable_why.pinned_by_user:
                cable = f"{cable} (pinned)"
            columns = values.get((head, sw.asic))
            if columns is None:
                columns = values[(head, sw.asic)] = _headroom_columns(h)
                why = h.rationale.get("model")
                if why:
                    reasons.setdefault((sw.asic, h.model), why.note)
            groups[(sw.role, sw.asic, speed, cable) + columns] += n
    lines = ["", "## PFC headroom (per role, speed, cable)", ""]
    lines += _table(["role", "ASIC", "speed Gb/s", "cable m", "model", "xon B", "xoff B", "size B", "cells",
                     "other model", "its xoff B", "its size B", "ports"], _count_rows(groups))
    if reasons:
        lines += ["", "Headroom model per ASIC (both models are shown above; the first one is rendered):", ""]
        lines += [f"- {asic}: **{model}** — {note}" for (asic, model), note in sorted(reasons.items())]
    return lines


_HEADROOM, _SPEED, _CABLE, _DCQCN, _MODEL, _RATIONALE = (
    operator.attrgetter(f) for f in ("headroom", "speed_gbps", "cable_m", "dcqcn", "model", "rationale"))


def _headroom_columns(h: Headroom) -> tuple[object, ...]:
    """The headroom table's columns of one headroom: model (and which values are pinned), xon/xoff/size
    bytes, cells, and the other model with its xoff and size (from the ``model`` rationale; None where there
    is none)."""
    why = h.rationale.get("model")
    other = str(why.inputs["other_model"]) if why else None
    return (h.model + _pinned(h, ("xon_bytes", "xoff_bytes", "size_bytes")), h.xon_bytes, h.xoff_bytes,
            h.size_bytes, h.size_cells, other,
            why.inputs.get(f"{other}_xoff_bytes") if why else None,
            why.inputs.get(f"{other}_size_bytes") if why else None)


def _pinned(section: Explained, keys: tuple[str, ...]) -> str:
    """`` (pinned: xoff_bytes)`` naming the ``keys`` of ``section`` the inventory pinned, "" when none is."""
    pins = [k for k in keys if (why := section.rationale.get(k)) is not None and why.pinned_by_user]
    return f" (pinned: {', '.join(pins)})" if pins else ""


def _buffers_section(plan: Plan) -> list[str]:
    """The buffer pools of one example switch per distinct (ASIC, pools)."""
    seen: set[tuple[object, ...]] = set()
    buf_rows = []
    for sw in plan.switches:
        key = (sw.asic, tuple((p.name, p.size_bytes, p.xoff_bytes) for p in sw.buffers.pools))
        if key in seen:
            continue
        seen.add(key)
        for pool in sw.buffers.pools:
            buf_rows.append([sw.name, sw.asic, pool.name, pool.type, pool.size_bytes,
                             pool.xoff_bytes if pool.xoff_bytes is not None else "-"])
    return ["", "## Buffers (per switch model)", ""] + _table(
        ["example switch", "ASIC", "pool", "type", "size B", "SHP xoff B"], buf_rows)


def _ecn_section(plan: Plan) -> list[str]:
    """ECN profiles of the lossless queue with their inputs and fluid check, and how many switches use
    each."""
    ecn_rows: dict[tuple[object, ...], list[str]] = {}
    for sw in plan.switches:
        for e in sw.ecn_profiles:
            # no separate drop thresholds: non-ECT packets are dropped on the ECN ramp -- show those numbers
            drop_min = e.drop_min_bytes if e.drop_min_bytes is not None else f"{e.kmin_bytes} (ECN ramp)"
            drop_max = e.drop_max_bytes if e.drop_max_bytes is not None else f"{e.kmax_bytes} (ECN ramp)"
            source = e.source_profile + _pinned(e, ("kmin_bytes", "kmax_bytes", "pmax_percent"))
            key = (e.name, e.speed_gbps, source, e.kmin_bytes, e.kmax_bytes, e.pmax_percent,
                   drop_min, drop_max, e.fan_in, round(e.base_rtt_us, 2), e.pfc_trigger_bytes,
                   e.fluid.n_flows, f"{e.fluid.p_star:.5f}", e.fluid.q_star_bytes,
                   "ok" if e.fluid.ok else "FAIL")
            ecn_rows.setdefault(key, []).append(sw.name)
    return ["", "## ECN on the lossless queue", ""] + _table(
        ["profile", "speed", "source", "Kmin B", "Kmax B", "Pmax %", "drop min B", "drop max B",
         "fan-in", "base RTT us", "PFC trigger B", "N", "p*", "q* B", "fluid", "switches"],
        [[*k, len(v)] for k, v in sorted(ecn_rows.items(), key=lambda kv: str(kv[0]))])


def _watchdog_section(plan: Plan) -> list[str]:
    """PFC watchdog settings grouped by role and platform."""
    wd: dict[tuple[object, ...], int] = defaultdict(int)
    for sw in plan.switches:
        w = sw.watchdog
        wd[(sw.role, sw.platform, w.enabled, w.detection_ms, w.restoration_ms, w.poll_ms, w.action,
            w.pfc_ports)] += 1
    return ["", "## PFC watchdog", ""] + _table(
        ["role", "platform", "enabled", "detection ms", "restoration ms", "poll ms", "action",
         "PFC ports", "switches"], _count_rows(wd))


def _dcqcn_section(plan: Plan) -> list[str]:
    """One sub-section per distinct (NIC model, speed, DCQCN settings) with a parameter table against the
    firmware defaults (each ends with a blank line)."""
    lines = ["", "## DCQCN on the NICs", ""]
    dq: dict[tuple[str, int, bool, tuple[tuple[str, int], ...]], int] = defaultdict(int)
    # NICs per (model, speed, DCQCN object), counted in C (NICs of one policy share the object)
    nics = [n for h in plan.hosts for n in h.nics]
    dcqcns = list(map(_DCQCN, nics))
    by_id = dict(zip(map(id, dcqcns), dcqcns))
    for (model, speed, dcqcn), count in Counter(zip(map(_MODEL, nics), map(_SPEED, nics),
                                                    map(id, dcqcns))).items():
        d = by_id[dcqcn]
        dq[(model, speed, d.enabled, tuple(sorted(d.params.items())))] += count
    for (model, speed, enabled, params), count in sorted(dq.items(), key=lambda kv: str(kv[0])):
        lines.append(f"### {model} at {speed} Gb/s — {count} NIC ports, DCQCN {'on' if enabled else 'off'}")
        lines.append("")
        example = next(n.dcqcn for h in plan.hosts for n in h.nics
                       if n.model == model and n.speed_gbps == speed
                       and tuple(sorted(n.dcqcn.params.items())) == params)
        if not enabled and example.relies_on:
            lines += [f"Relies on: {example.relies_on}", ""]
        lines += _table(["parameter", "value", "firmware default"],
                        [[k, v, example.firmware_defaults.get(k, "-")] for k, v in params])
        lines.append("")
    return lines


def _non_default_section(plan: Plan, heads: list[_Heads] | None = None) -> list[str]:
    """Values that differ from defaults or are pinned (see :func:`_non_default`)."""
    return (["## Values that differ from defaults, and values pinned by user", ""]
            + (_non_default(plan, heads) or ["None."]))


def _findings_section(plan: Plan) -> list[str]:
    """Every finding of the plan, or a line saying there is none."""
    lines = ["", "## Findings", ""]
    if not plan.findings:
        return lines + ["No findings."]
    return lines + _table(["severity", "rule", "where", "message", "fix"],
                          [[f.severity.value, f.rule, str(f.location), f.message, f.fix]
                           for f in plan.findings])


def _deadlock_section(plan: Plan) -> list[str]:
    """The buffer dependency analysis and every cycle it found."""
    dl = plan.deadlock
    lines = ["", "## Deadlock analysis", "",
             f"Buffer dependency graph: {dl.nodes} nodes, {dl.edges} edges; {dl.scenarios_checked} scenarios "
             f"checked (normal state and single link failures). Result: "
             f"{'no cyclic buffer dependency' if dl.ok else f'{len(dl.cycles)} cycle(s)'}.", ""]
    for cyc in dl.cycles:
        when = f"after failure of {cyc.failed_link}" if cyc.failed_link else "in the normal state"
        lines.append(f"- priority {cyc.priority}, {when}: " + " -> ".join(cyc.links))
    return lines


class _Listing:
    """The lines of :func:`_non_default`, each once per key, and which rationale maps (shared by ports and
    NICs of one policy) hold no pinned value, so a repeat of one is passed over without reading it again."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.seen: set[tuple[object, ...]] = set()
        self.unpinned: set[int] = set()
        self.met: set[tuple[object, ...]] = set()
        #: pinned cable ends (``device:port``) per (cable_m, formula, override entry, note): one line each
        #: (:meth:`cable_lines`) with the first end's rationale
        self.cables: dict[tuple[float, str, str, str], tuple[Rationale, list[str]]] = {}

    def first(self, key: tuple[object, ...]) -> bool:
        """True the first time ``key`` (an object's ``id`` and what else its lines depend on) is asked about:
        its lines are made then; a repeat would only add keys already listed."""
        if key in self.met:
            return False
        self.met.add(key)
        return True

    def add(self, key: tuple[object, ...], text: Callable[[], str]) -> None:
        """List ``text()`` under ``key`` unless a line has that key (made only then: the switches of a fabric
        repeat a few ECN profiles and watchdogs)."""
        if key not in self.seen:
            self.seen.add(key)
            self.out.append(text())

    def cable(self, end: str, cable_m: float, why: Rationale) -> None:
        """Note the pinned cable length of one cable end (``device:port``: a switch port or a NIC netdev;
        ``why.source`` is ``inventory override for <pinned end>, <override entry and reason>``)."""
        entry = why.source.split(", ", 1)[-1]
        self.cables.setdefault((cable_m, why.formula, entry, why.note), (why, []))[1].append(end)

    def cable_lines(self) -> list[str]:
        """One line per pinned cable length and reason, naming its ends (a role-wide pin has thousands:
        the first :data:`_CABLE_ENDS_SHOWN`, then how many more)."""
        out = []
        for (cable_m, _, entry, _), (why, ends) in self.cables.items():
            if len(ends) == 1:
                out.append(f"- `{ends[0]}` cable_m = {cable_m} (pinned by user): {_fmt_rationale(why)}")
                continue
            shown = ", ".join(f"`{e}`" for e in ends[:_CABLE_ENDS_SHOWN])
            more = f" and {len(ends) - _CABLE_ENDS_SHOWN} more" if len(ends) > _CABLE_ENDS_SHOWN else ""
            why = why.model_copy(update={"source": f"inventory override {entry}"})  # (each end names its own)
            out.append(f"- {len(ends)} cable ends ({shown}{more}) cable_m = {cable_m} (pinned by user): "
                       f"{_fmt_rationale(why)}")
        return out

    def pinned(self, rationale: dict[str, Rationale]) -> bool:
        if id(rationale) in self.unpinned:
            return False
        if any(r.pinned_by_user for r in rationale.values()):
            return True
        self.unpinned.add(id(rationale))
        return False


def _ecn_line(e: EcnProfile, k: str, r: Rationale) -> str:
    """The plan.md line of one ECN threshold ``k`` of profile ``e`` and its rationale ``r``."""
    return (f"- ECN `{e.name}` {k} = {getattr(e, k)}{' (pinned by user)' if r.pinned_by_user else ''}: "
            f"{_fmt_rationale(r)}")


#: cable ends a plan.md line of one pinned cable length names before "and N more"
_CABLE_ENDS_SHOWN = 8


def _switch_non_default(sw: SwitchPlan, listing: _Listing, heads: _Heads) -> None:
    """Pinned headroom values, every ECN threshold and non-default watchdog timers of one switch (``heads``:
    its :data:`_Heads`). An ECN profile or watchdog object met before (switches of one shape share them) adds
    nothing: its lines' keys are listed already."""
    _headroom_non_default(sw, listing, heads)
    _cable_non_default(sw, listing)
    _ecn_non_default(sw, listing)
    _watchdog_non_default(sw, listing)


def _cable_non_default(sw: SwitchPlan, listing: _Listing) -> None:
    """Note on ``listing`` (:meth:`_Listing.cable`) the user-pinned cable length of each port of switch
    ``sw`` (``cable_m`` in metres, its rationale); returns nothing. Ports of one class share a rationale,
    so each distinct one is looked at (in C) before the ports are walked."""
    whys = list(map(_RATIONALE, sw.ports))
    if any(map(listing.pinned, dict(zip(map(id, whys), whys)).values())):
        for p in sw.ports:
            r = p.rationale.get("cable_m")
            if r is not None and r.pinned_by_user:
                listing.cable(f"{sw.name}:{p.name}", p.cable_m, r)


def _ecn_non_default(sw: SwitchPlan, listing: _Listing) -> None:
    """Add to ``listing`` one line per ECN threshold (``kmin_bytes``, ``kmax_bytes``, ``pmax_percent``) of
    each ECN profile of switch ``sw`` that has a rationale; returns nothing. A profile object met before
    (switches of one shape share it) is skipped."""
    for e in sw.ecn_profiles:
        if not listing.first(("ecn", id(e))):
            continue
        for k in ("kmin_bytes", "kmax_bytes", "pmax_percent"):
            r = e.rationale.get(k)
            if r is not None:
                listing.add(("ecn", e.name, k), partial(_ecn_line, e, k, r))


def _watchdog_non_default(sw: SwitchPlan, listing: _Listing) -> None:
    """Add to ``listing`` the PFC watchdog values of switch ``sw`` that are pinned by the user or, for the
    timers (``detection_ms``, ``restoration_ms``, ``poll_ms``, in ms), differ from 200 ms; returns nothing.
    A watchdog object met before on the same platform is skipped."""
    w = sw.watchdog
    timers = ("detection_ms", "restoration_ms", "poll_ms", "action")
    for k in timers if listing.first(("wd", id(w), sw.platform)) else ():
        r = w.rationale.get(k)
        if r is not None and (r.pinned_by_user or (k != "action" and getattr(w, k) != 200)):
            listing.add(("wd", sw.platform, k, getattr(w, k), r.pinned_by_user and r.source),
                        lambda: f"- watchdog ({sw.platform}, e.g. `{sw.name}`) {k} = "
                                f"{getattr(w, k)}: {_fmt_rationale(r)}")


def _headroom_non_default(sw: SwitchPlan, listing: _Listing, heads: _Heads) -> None:
    """The pinned headroom values of one switch, per port (``heads``: its :data:`_Heads`)."""
    pinned = {id(h) for h in heads[1].values() if h and listing.pinned(h.rationale)}
    for p in sw.ports if pinned else ():  # (ports of one class share a headroom: each is looked at once)
        if id(p.headroom) in pinned and p.headroom:
            for k, r in sorted(p.headroom.rationale.items()):
                if r.pinned_by_user:
                    hr = p.headroom
                    listing.add(("hr", sw.name, p.name, k),
                                lambda: f"- `{sw.name}:{p.name}` {k} = {getattr(hr, k)}: "
                                        f"{_fmt_rationale(r)}")


def _dcqcn_non_default(plan: Plan, listing: _Listing) -> None:
    """DCQCN parameters that are pinned or differ from the firmware default, per NIC model and speed."""
    listed: set[tuple[object, ...]] = set()  # (DCQCN object, model, speed) whose values are listed
    for h in plan.hosts:
        for n in h.nics:
            cable = n.rationale.get("cable_m") if listing.pinned(n.rationale) else None
            if cable is not None and cable.pinned_by_user:  # the NIC end of a cable a switch port's pin sets
                listing.cable(f"{h.name}:{n.netdev}", n.cable_m, cable)
            shared = (id(n.dcqcn), n.model, n.speed_gbps)
            if shared in listed:
                # the same values again: nothing new (a pinned value names its host, so never skipped)
                continue
            if not listing.pinned(n.dcqcn.rationale):
                listed.add(shared)
            for k, v in sorted(n.dcqcn.params.items()):
                r = n.dcqcn.rationale.get(k)
                if r is not None and (r.pinned_by_user or v != n.dcqcn.firmware_defaults.get(k, v)):
                    listing.add(("dq", n.model, n.speed_gbps, k, v, r.pinned_by_user and h.name),
                                lambda: f"- DCQCN {n.model} @ {n.speed_gbps}G {k} = {v} (firmware default "
                                f"{n.dcqcn.firmware_defaults.get(k, '-')})"
                                f"{' pinned by user on ' + h.name if r.pinned_by_user else ''}: "
                                f"{_fmt_rationale(r)}")


def _non_default(plan: Plan, heads: list[_Heads] | None = None) -> list[str]:
    """Pinned values, DCQCN parameters that differ from firmware defaults, every ECN threshold (all
    differ from the vendor profiles; the rationale says why) and non-default watchdog timers — each
    once per distinct value, with its rationale (``heads``: :func:`_switch_heads` of ``plan`` when already
    made)."""
    listing = _Listing()
    for sw, sw_heads in zip(plan.switches, heads or _switch_heads(plan)):
        _switch_non_default(sw, listing, sw_heads)
    _dcqcn_non_default(plan, listing)
    return listing.out + listing.cable_lines()


def _runbook(plan: Plan, switch_files: dict[str, str]) -> list[str]:
    """Operational warnings per platform that plan.md must carry (each platform's ``runbook``, e.g. what
    a QoS reload wipes), from the switches' rendered files."""
    from roce_tune.platforms import platform

    rendered: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for sw in plan.switches:
        impl = platform(sw.platform)
        text = switch_files.get(f"{sw.name}.{impl.spec.extension}") if impl.runbook is not None else None
        if text is not None:
            rendered[sw.platform].append((sw.name, text))
    lines: list[str] = []
    for name, files in sorted(rendered.items()):
        runbook = platform(name).runbook
        assert runbook is not None
        lines += runbook(files)
    return lines
