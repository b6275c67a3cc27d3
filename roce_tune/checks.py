"""Everything ``roce-tune lint`` checks: the inventory rules (RT0xx/RT1xx) and, when those pass, the
tuner's safety checks (RT2xx: headroom budget, ECN below the PFC trigger, deadlock, map consistency,
render feasibility, checked without rendering), so a change that passes lint in CI also plans.

Tuner findings name a device/port; here they also get the ``file:line:col`` of that port's entry in the
inventory (its ``ports:`` item, or the link/NIC that cables it for a cable fix), else of the device's entry
(:func:`roce_tune.pipeline.locate_findings`), so CI annotations land on the right line.
"""

from __future__ import annotations

from roce_tune.findings import Finding, Severity, has_errors
from roce_tune.inventory.catalog import Catalog, load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory
from roce_tune.pipeline import TUNER_FAILURES, StageError, derive, internal_finding, locate_findings, topology


def check_inventory(loaded: LoadedInventory, catalog: Catalog | None = None,
                    plan_checks: bool = True) -> list[Finding]:
    """Lint ``loaded``; if it has no errors, also derive the plan and return its safety findings (RT2xx),
    positioned at the port's or device's entry in the file (or the pin behind them).

    Lint and the tuner share one resolved topology. The plan is derived for its findings only
    (``findings_only``: no host plans kept, repeated switch shapes share port plans). Nothing is rendered:
    what rendering would report (RT240 a platform cannot express a switch's plan, RT241 syntax notes, RT25x
    known defects) comes from the platforms' checks and data (:func:`roce_tune.platforms.switch_findings`),
    the same findings in the same order as ``roce-tune plan`` reports; scorecards are not simulated.

    Returns:
        all findings, inventory rules first; RT299 if deriving or checking failed on an input no rule
        caught (never an exception).
    """
    catalog = catalog or load_catalog()
    topo = topology(loaded)
    findings = lint(loaded, catalog, topology=topo)
    if not plan_checks or has_errors(findings):
        return findings
    from roce_tune.platforms import switch_findings

    try:
        plan = derive(loaded, catalog, topo=topo, findings_only=True)  # read by nothing but the checks
    except StageError as exc:  # RT299: an input no rule caught
        return [*findings, *exc.findings]
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):
        try:
            problems, warnings = switch_findings(plan)
        except TUNER_FAILURES as exc:
            extra.append(internal_finding(exc, str(loaded.path), "be rendered"))
        else:
            extra += problems or warnings  # a plan that cannot be rendered reports only why (as plan does)
    return [*findings, *locate_findings(loaded, extra)]


__all__ = ["TUNER_FAILURES", "check_inventory", "internal_finding", "locate_findings", "Severity"]
