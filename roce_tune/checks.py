"""Everything ``roce-tune lint`` checks: the inventory rules (RT0xx/RT1xx) and, when those pass, the
tuner's safety checks (RT2xx: headroom budget, ECN below the PFC trigger, deadlock, map consistency,
render feasibility), so a change that passes lint in CI also plans.

Tuner findings name a device/port; here they also get the ``file:line:col`` of that device's entry in
the inventory, so CI annotations land on the right line.
"""

from __future__ import annotations

from roce_tune.findings import TUNER_FAILURES, Finding, RoceTuneError, Severity, has_errors, internal_finding
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory


def _device_paths(loaded: LoadedInventory) -> dict[str, str]:
    inv = loaded.inventory
    paths = {sw.name: f"switches[{i}]" for i, sw in enumerate(inv.switches)}
    paths.update({h.name: f"hosts[{i}]" for i, h in enumerate(inv.hosts)})
    return paths


def locate_findings(loaded: LoadedInventory, findings: list[Finding]) -> list[Finding]:
    """Give tuner findings (device/port, or the field path of a pin) the ``file:line:col`` of that entry in
    the inventory, so CI annotations and terminals point at the line to change."""
    paths = _device_paths(loaded)
    out = []
    for f in findings:
        loc = f.location
        if loc.file is None and loc.path and loc.path in loaded.positions:  # e.g. the pin behind the finding
            pos = loaded.locate(loc.path)
            loc = loc.model_copy(update={"file": pos.file, "line": pos.line, "col": pos.col})
            f = f.model_copy(update={"location": loc})
        elif loc.file is None and loc.device in paths:
            pos = loaded.locate(paths[loc.device])
            loc = loc.model_copy(update={"file": pos.file, "line": pos.line, "col": pos.col,
                                         "path": loc.path or paths[loc.device]})
            f = f.model_copy(update={"location": loc})
        elif loc.file is None:
            f = f.model_copy(update={"location": loc.model_copy(update={"file": str(loaded.path)})})
        out.append(f)
    return out


def check_inventory(loaded: LoadedInventory, catalog: Catalog | None = None,
                    plan_checks: bool = True) -> list[Finding]:
    """Lint ``loaded``; if it has no errors, also derive (and render, in memory) the plan and return
    its safety findings (RT2xx), positioned at the device's entry in the file (or the pin behind them).

    Returns:
        all findings, inventory rules first; RT299 if deriving or rendering failed on an input no rule
        caught (never an exception).
    """
    catalog = catalog or load_catalog()
    findings = lint(loaded, catalog)
    if not plan_checks or has_errors(findings):
        return findings
    from roce_tune.render.outputs import render_outputs
    from roce_tune.tuner.compose import build_plan

    try:
        plan = build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path),
                          inventory_sha256=loaded.sha256)
    except TUNER_FAILURES as exc:
        return [*findings, internal_finding(exc, str(loaded.path), "be derived")]
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):
        try:
            render_outputs(plan, include_hosts=False, findings=extra)
        except RoceTuneError as exc:
            extra += exc.findings
        except TUNER_FAILURES as exc:
            extra.append(internal_finding(exc, str(loaded.path), "be rendered"))
    return [*findings, *locate_findings(loaded, extra)]


__all__ = ["TUNER_FAILURES", "check_inventory", "internal_finding", "locate_findings", "Severity"]
