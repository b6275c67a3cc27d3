"""``roce-tune explain``: find the rationale of one plan value by device, port and parameter name."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from roce_tune.plan import Explained, HostPlan, Plan, Rationale, SwitchPlan


class ExplainError(LookupError):
    """Unknown device, port or parameter; the message lists what exists."""


@dataclass(frozen=True)
class Explanation:
    """One explained value: where (``leaf1:Ethernet0``), the parameter, its value and rationale."""

    where: str
    param: str
    value: object
    rationale: Rationale


def explanation_lines(e: Explanation) -> list[str]:
    """What ``roce-tune explain`` prints for ``e``: ``WHERE PARAM = VALUE``, then ``  formula: ...``,
    ``  inputs:  k=v, ...`` (when there are inputs), ``  source: ...``, and the note and pin lines when
    set."""
    why = e.rationale
    lines = [f"{e.where} {e.param} = {e.value}", f"  formula: {why.formula}"]
    if why.inputs:
        lines.append("  inputs:  " + ", ".join(f"{k}={v}" for k, v in why.inputs.items()))
    lines.append(f"  source:  {why.source}")
    if why.note:
        lines.append(f"  note:    {why.note}")
    if why.pinned_by_user:
        lines.append(f"  pinned by user; derived value {why.derived_value}")
    return lines


def _from_section(where: str, section: Explained, values: dict[str,
                                                               object] | None = None) -> list[Explanation]:
    out = []
    for key, why in sorted(section.rationale.items()):
        value = (values or {}).get(key, getattr(section, key, None))
        if value is None and key in why.inputs:  # e.g. buffers' reserved_bytes lives in its inputs
            value = why.inputs[key]
        out.append(Explanation(where, key, value, why))
    return out


def _port_entries(sw: SwitchPlan, target: str, port: str) -> list[Explanation]:
    """A switch port: its own values, its headroom and its ECN profile."""
    p = next((x for x in sw.ports if x.name == port), None)
    if p is None:
        raise ExplainError(f"{sw.name} has no port {port!r}; ports: "
                           f"{', '.join(x.name for x in sw.ports[:20])}"
                           + (" …" if len(sw.ports) > 20 else ""))
    entries = _from_section(target, p)
    if p.headroom:
        entries += _from_section(target, p.headroom)
    prof = next((e for e in sw.ecn_profiles if e.name == p.ecn_profile), None)
    if prof:
        entries += _from_section(f"{target} ({prof.name})", prof)
    return entries


def _switch_entries(sw: SwitchPlan, target: str, port: str) -> list[Explanation]:
    """A switch (buffers, pools, ECN profiles) or one of its ports; the watchdog either way."""
    device = sw.name
    if port:
        entries = _port_entries(sw, target, port)
    else:
        entries = _from_section(device, sw.buffers)
        for pool in sw.buffers.pools:
            entries += _from_section(f"{device} pool {pool.name}", pool)
        for e in sw.ecn_profiles:
            entries += _from_section(f"{device} {e.name}", e)
    return entries + _from_section(f"{device} watchdog", sw.watchdog)


def _host_entries(host: HostPlan, port: str) -> list[Explanation]:
    """A host's NICs (all, or the one named by netdev or RDMA device), their DCQCN, and the NCCL env."""
    device = host.name
    nics = [n for n in host.nics if not port or n.netdev == port or n.rdma_device == port]
    if port and not nics:
        raise ExplainError(f"{device} has no NIC {port!r}; NICs: {', '.join(n.netdev for n in host.nics)}")
    entries: list[Explanation] = []
    for n in nics:
        entries += _from_section(f"{device}:{n.netdev}", n)
        entries += _from_section(f"{device}:{n.netdev} DCQCN", n.dcqcn, dict(n.dcqcn.params))
    for key, why in sorted(host.nccl_rationale.items()):
        entries.append(Explanation(device, key, host.nccl_env.get(key, "(unset)"), why))
    return entries


def _only_param(entries: list[Explanation], param: str, target: str) -> list[Explanation]:
    """The entries for ``param``; ExplainError (with close names and the known ones) when there are none."""
    known = sorted({e.param for e in entries})
    found = [e for e in entries if e.param == param]
    if not found:
        close = difflib.get_close_matches(param, known, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ExplainError(f"no parameter {param!r} at {target}{hint}; parameters here: {', '.join(known)}")
    return found


def explain(plan: Plan, target: str, param: str | None = None) -> list[Explanation]:
    """Return the explanations for ``target`` (``DEVICE`` or ``DEVICE:PORT``), filtered by ``param``.

    Raises:
        ExplainError: the device, port or parameter does not exist in the plan.
    """
    device, _, port = target.partition(":")
    sw = next((s for s in plan.switches if s.name == device), None)
    host = next((h for h in plan.hosts if h.name == device), None)
    if sw is not None:
        entries = _switch_entries(sw, target, port)
    elif host is not None:
        entries = _host_entries(host, port)
    else:
        raise ExplainError(f"no device {device!r} in the plan")
    if not param:
        return entries
    entries += [Explanation("site", k, getattr(plan.classification, k, None), r)
                for k, r in sorted(plan.classification.rationale.items())]
    if sw is not None and port:
        _refuse_lossy(plan, sw, target, port, param, entries)
    return _only_param(entries, param, target)


#: the values a lossless switch port has and a lossy one has not: its PFC headroom and its ECN profile's
_LOSSLESS_ONLY = frozenset({
    "xon_bytes", "xoff_bytes", "size_bytes", "size_cells", "model", "pause_threshold_bytes",
    "resume_threshold_bytes", "static_buffer_bytes", "kmin_bytes", "kmax_bytes", "pmax_percent",
    "drop_min_bytes", "fluid", "pfc_trigger_bytes", "pfc_onset_bytes", "queue_buffer_bytes"})


def _refuse_lossy(plan: Plan, sw: SwitchPlan, target: str, port: str, param: str,
                  entries: list[Explanation]) -> None:
    """ExplainError saying why ``port`` of ``sw`` has no ``param`` when that is a value only lossless ports
    have (headroom, ECN) and the port is lossy: not cabled, admin down, or its cable lossless: false."""
    p = next(x for x in sw.ports if x.name == port)
    if p.lossless or param not in _LOSSLESS_ONLY or any(e.param == param for e in entries):
        return
    why = ("no cable to it in the inventory" if p.peer is None else "admin_up: false" if not p.admin_up
           else f"its cable to {p.peer} is lossless: false")
    other = next((f"{s.name}:{x.name}" for s in plan.switches for x in s.ports if x.lossless), None)
    raise ExplainError(f"{target} is not a lossless port ({why}), so it has no {param}: PFC headroom and "
                       "ECN are set on lossless ports only" + (f" (e.g. {other})" if other else ""))
