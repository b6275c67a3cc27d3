"""Everything ``roce-tune lint`` checks: the inventory rules (RT0xx/RT1xx) and, when those pass, the
tuner's safety checks (RT2xx: headroom budget, ECN below the PFC trigger, deadlock, map consistency,
render feasibility), so a change that passes lint in CI also plans.

Tuner findings name a device/port; here they also get the ``file:line:col`` of that device's entry in
the inventory, so CI annotations land on the right line.
"""

from __future__ import annotations

from roce_tune.findings import Finding, Severity, has_errors
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory
from roce_tune.pipeline import TUNER_FAILURES, StageError, derive, internal_finding, locate_findings, render


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
    try:
        plan = derive(loaded, catalog)
    except StageError as exc:  # RT299: an input no rule caught
        return [*findings, *exc.findings]
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):
        try:
            rendered, _ = render(plan, include_hosts=False)
            extra += rendered.findings[len(plan.findings):]  # the platforms' render warnings (RT241)
        except StageError as exc:
            extra += exc.findings
    return [*findings, *locate_findings(loaded, extra)]


__all__ = ["TUNER_FAILURES", "check_inventory", "internal_finding", "locate_findings", "Severity"]
