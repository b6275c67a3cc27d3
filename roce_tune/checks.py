"""Everything ``roce-tune lint`` checks: the inventory rules (RT0xx/RT1xx) and, when those pass, the
tuner's safety checks (RT2xx: headroom budget, ECN below the PFC trigger, deadlock, map consistency,
render feasibility), so a change that passes lint in CI also plans.

Tuner findings name a device/port; here they also get the ``file:line:col`` of that device's entry in
the inventory, so CI annotations land on the right line.
"""

from __future__ import annotations

from roce_tune.findings import Finding, RoceTuneError, Severity, has_errors
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory


def _device_paths(loaded: LoadedInventory) -> dict[str, str]:
    inv = loaded.inventory
    paths = {sw.name: f"switches[{i}]" for i, sw in enumerate(inv.switches)}
    paths.update({h.name: f"hosts[{i}]" for i, h in enumerate(inv.hosts)})
    return paths


def check_inventory(loaded: LoadedInventory, catalog: Catalog | None = None,
                    plan_checks: bool = True) -> list[Finding]:
    """Lint ``loaded``; if it has no errors, also derive (and render, in memory) the plan and return
    its safety findings (RT2xx), positioned at the device's entry in the file.

    Returns:
        all findings, inventory rules first.
    """
    catalog = catalog or load_catalog()
    findings = lint(loaded, catalog)
    if not plan_checks or has_errors(findings):
        return findings
    from roce_tune.render.outputs import render_outputs
    from roce_tune.tuner.plan import build_plan

    plan = build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path), inventory_sha256=loaded.sha256)
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):
        try:
            render_outputs(plan, include_hosts=False, findings=extra)
        except RoceTuneError as exc:
            extra += exc.findings
    paths = _device_paths(loaded)
    out = list(findings)
    for f in extra:
        loc = f.location
        if loc.file is None and loc.device in paths:
            pos = loaded.locate(paths[loc.device])
            loc = loc.model_copy(update={"file": pos.file, "line": pos.line, "col": pos.col,
                                         "path": loc.path or paths[loc.device]})
            f = f.model_copy(update={"location": loc})
        elif loc.file is None:
            f = f.model_copy(update={"location": loc.model_copy(update={"file": str(loaded.path)})})
        out.append(f)
    return out


__all__ = ["check_inventory", "Severity"]
