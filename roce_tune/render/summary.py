"""The at-a-glance summary ``roce-tune plan`` prints: devices per platform, headroom range, ECN
thresholds per speed, warnings. Pure translation of the plan."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import TypedDict, cast

from rich.table import Table

from roce_tune.findings import Finding, Severity
from roce_tune.plan import Plan


class _Facts(TypedDict):
    """What :func:`summary_json` prints (plus ``output_dir`` and ``files``) and :func:`summary_table`
    shows."""

    site: str
    switches_per_platform: dict[str, int]
    hosts: int
    nic_ports: int
    lossless_ports: int
    headroom_size_bytes_range: list[int] | None  # [min, max] over lossless ports
    headroom_xoff_bytes_range: list[int] | None
    ecn_by_speed_gbps: dict[str, list[dict[str, float]]]  # kmin_bytes, kmax_bytes, pmax_percent
    deadlock_cycles: int
    errors: int
    warnings: int


def _range(values: list[int]) -> list[int] | None:
    """``[min, max]`` of ``values``, None when empty."""
    return [min(values), max(values)] if values else None


def _ecn_by_speed(plan: Plan) -> dict[str, list[dict[str, float]]]:
    """Distinct (Kmin, Kmax, Pmax) of the ECN profiles per port speed (Gb/s, as text), sorted."""
    ecn: dict[int, set[tuple[int, int, float]]] = defaultdict(set)
    for sw in plan.switches:
        for e in sw.ecn_profiles:
            ecn[e.speed_gbps].add((e.kmin_bytes, e.kmax_bytes, e.pmax_percent))
    return {str(k): [{"kmin_bytes": a, "kmax_bytes": b, "pmax_percent": c} for a, b, c in sorted(v)]
            for k, v in sorted(ecn.items())}


_HEADROOM, _PORTS = attrgetter("headroom"), attrgetter("ports")


def _facts(plan: Plan) -> _Facts:
    per_platform: dict[str, int] = defaultdict(int)
    for sw in plan.switches:
        per_platform[sw.platform] += 1
    # each headroom section once (ports of one class share it; min and max need no repeats): read in C
    heads = list(map(_HEADROOM, chain.from_iterable(map(_PORTS, plan.switches))))
    headrooms = [h for h in dict(zip(map(id, heads), heads)).values() if h]
    return {
        "site": plan.site,
        "switches_per_platform": dict(sorted(per_platform.items())),
        "hosts": plan.summary.hosts,
        "nic_ports": plan.summary.nics,
        "lossless_ports": plan.summary.lossless_ports,
        "headroom_size_bytes_range": _range([h.size_bytes for h in headrooms]),
        "headroom_xoff_bytes_range": _range([h.xoff_bytes for h in headrooms]),
        "ecn_by_speed_gbps": _ecn_by_speed(plan),
        "deadlock_cycles": len(plan.deadlock.cycles),
        "errors": sum(f.severity is Severity.error for f in plan.findings),
        "warnings": sum(f.severity is Severity.warning for f in plan.findings),
    }


class PlanSummary(TypedDict):
    """What ``roce-tune plan`` prints of a plan, as JSON-serialisable data: kept in the plan directory's
    manifest, so an unchanged re-plan prints it without deriving the plan again
    (roce_tune.pipeline.reuse_plan).

    Attributes:
        facts: :class:`_Facts` of the plan.
        findings: the plan's warnings and errors as printed (``str(finding)``), in plan order.
        files: every file of the plan directory (relative paths, sorted).
    """

    facts: _Facts
    findings: list[str]
    files: list[str]


def plan_summary(plan: Plan, files: Iterable[str],
                 locate: Callable[[list[Finding]], list[Finding]] | None = None) -> PlanSummary:
    """The :class:`PlanSummary` of ``plan`` with its rendered ``files``. ``locate`` (e.g.
    :func:`roce_tune.pipeline.locate_findings` on the loaded inventory) gives the warnings and errors their
    inventory ``file:line:col`` as printed, so a tuner warning such as RT211 points at the port's entry as
    ``lint`` does; plan.json keeps the plan's own findings."""
    shown = [f for f in plan.findings if f.severity is not Severity.info]
    return {"facts": _facts(plan), "findings": [str(f) for f in (locate(shown) if locate else shown)],
            "files": sorted(files)}


def as_plan_summary(data: object) -> PlanSummary | None:
    """``data`` (read back from a manifest) as a :class:`PlanSummary`, or None when it is not one (a manifest
    of another roce-tune, or damaged): every fact present with its JSON type, findings and files strings."""
    if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
        return None
    kinds: dict[str, type | tuple[type, ...]]
    facts, kinds = data["facts"], {"site": str, "hosts": int, "nic_ports": int, "lossless_ports": int,
                                   "deadlock_cycles": int, "errors": int, "warnings": int,
                                   "switches_per_platform": dict, "ecn_by_speed_gbps": dict,
                                   "headroom_size_bytes_range": (list, type(None)),
                                   "headroom_xoff_bytes_range": (list, type(None))}
    if (set(facts) != set(_Facts.__annotations__)
            or not all(isinstance(facts[k], t) for k, t in kinds.items())):
        return None
    lists = [data.get("findings"), data.get("files")]
    if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists):
        return None
    return cast(PlanSummary, data)


def summary_json(summary: PlanSummary, out_dir: Path) -> dict[str, object]:
    """Machine-readable summary (``--format json``): the facts, ``output_dir`` and ``files``."""
    data: dict[str, object] = dict(summary["facts"])
    data["output_dir"] = str(out_dir)
    data["files"] = list(summary["files"])
    return data


def summary_table(summary: PlanSummary) -> Table:
    """The rich table printed by ``roce-tune plan``."""
    f = summary["facts"]
    t = Table(title=f"roce-tune plan: {f['site']}", show_header=True, header_style="bold")
    t.add_column("what")
    t.add_column("value")
    t.add_row("switches", ", ".join(f"{k}: {v}" for k, v in f["switches_per_platform"].items()) or "-")
    t.add_row("hosts / NIC ports", f"{f['hosts']} / {f['nic_ports']}")
    t.add_row("lossless switch ports", str(f["lossless_ports"]))
    if f["headroom_size_bytes_range"] and f["headroom_xoff_bytes_range"]:  # both set or both None
        lo, hi = f["headroom_xoff_bytes_range"]
        slo, shi = f["headroom_size_bytes_range"]
        t.add_row("PFC headroom", f"xoff {lo}-{hi} B, PG size {slo}-{shi} B")
    for speed, rows in f["ecn_by_speed_gbps"].items():
        t.add_row(f"ECN @ {speed}G", "; ".join(f"Kmin {r['kmin_bytes']} B, Kmax {r['kmax_bytes']} B, "
                                                f"Pmax {r['pmax_percent']} %" for r in rows))
    t.add_row("deadlock", "no cycles" if not f["deadlock_cycles"] else f"{f['deadlock_cycles']} cycle(s)")
    t.add_row("findings", f"{f['errors']} error(s), {f['warnings']} warning(s)")
    return t
