"""The plan's values without their rationales, grouped so a tuner change reads as a short value diff.

``plan_values(plan)`` keeps every number a device receives — classification maps, per-port PFC and
headroom, buffer pools and profiles, ECN profiles, watchdog, per-NIC DCQCN and host settings, NCCL
environment — and drops what only explains them (rationales, formulas, sources). Devices whose values are
equal apart from their identity (name, management address, peers) are listed once with their names, and
ports of a switch with equal values are grouped the same way. The checked-in golden summaries under
``tests/golden/plans/`` are this function's output for every shipped inventory (the pyavd
structured-config golden idea, applied to the tuner's output).
"""

from __future__ import annotations

import io
import json
from typing import Any

from ruamel.yaml import YAML

from roce_tune.plan import HostPlan, Plan, PortPlan, SwitchPlan

#: Fields that identify a device, port or NIC instead of describing its settings (dropped at that level).
_IDENTITY = frozenset({"name", "mgmt_host", "mgmt_port", "credentials", "peer", "switch_port", "pci_address"})
#: Fields that only explain a value (dropped everywhere).
_EXPLANATION = frozenset({"rationale", "nccl_rationale"})


def _data(obj: Any) -> Any:
    """``obj`` as plain JSON data with every rationale removed."""
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {k: _data(v) for k, v in obj.items() if k not in _EXPLANATION}
    if isinstance(obj, list):
        return [_data(v) for v in obj]
    return obj


def _strip(obj: Any) -> Any:
    """:func:`_data` of ``obj`` without its identity fields (its own level only: a pool keeps its name)."""
    d = _data(obj)
    return {k: v for k, v in d.items() if k not in _IDENTITY} if isinstance(d, dict) else d


def _group(items: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Items with equal values, as ``{"names": [...], "count": n, **values}`` in first-seen order."""
    groups: dict[str, dict[str, Any]] = {}
    for name, values in items:
        key = json.dumps(values, sort_keys=True)
        g = groups.get(key)
        if g is None:
            groups[key] = g = {"names": [], "count": 0, **values}
        g["names"].append(name)
        g["count"] += 1
    return list(groups.values())


def _port(p: PortPlan) -> dict[str, Any]:
    return _strip(p)  # type: ignore[no-any-return]


def _switch(sw: SwitchPlan) -> dict[str, Any]:
    return {
        "platform": sw.platform, "role": sw.role, "model": sw.model, "asic": sw.asic,
        "os_version": sw.os_version,
        "port_classes": _group([(p.name, _port(p)) for p in sw.ports]),
        "buffers": _data(sw.buffers),
        "ecn_profiles": {e.name: _strip(e) for e in sw.ecn_profiles},
        "watchdog": _data(sw.watchdog),
    }


def _host(h: HostPlan) -> dict[str, Any]:
    return {"nics": [dict(_strip(n), netdev=n.netdev, rdma_device=n.rdma_device) for n in h.nics],
            "nccl_env": dict(h.nccl_env)}


def plan_values(plan: Plan) -> dict[str, Any]:
    """The plan's values, grouped: ``{"site", "policy", "classification", "switches": [group…],
    "hosts": [group…], "deadlock_cycles", "findings": {"RTxxx severity": count}}``.

    Each group is ``{"names": [...], "count": n, ...values}``; a switch group's ``port_classes`` are
    groups of ports the same way. Pure; the result is JSON/YAML-serialisable and deterministic.
    """
    findings: dict[str, int] = {}
    for f in plan.findings:
        key = f"{f.rule} {f.severity.value}"
        findings[key] = findings.get(key, 0) + 1
    return {
        "site": plan.site,
        "policy": _data(plan.policy),
        "classification": _data(plan.classification),
        "switches": _group([(sw.name, _switch(sw)) for sw in plan.switches]),
        "hosts": _group([(h.name, _host(h)) for h in plan.hosts]),
        "deadlock_cycles": [_data(c) for c in plan.deadlock.cycles],
        "findings": dict(sorted(findings.items())),
    }


def plan_values_yaml(plan: Plan) -> str:
    """:func:`plan_values` as block YAML (stable key order, one value per line, for review diffs)."""
    yaml = YAML()
    yaml.default_flow_style = None  # leaf maps and lists on one line (DSCP maps), the rest as blocks
    yaml.width = 4096
    buf = io.StringIO()
    yaml.dump(json.loads(json.dumps(plan_values(plan))), buf)
    return buf.getvalue()
