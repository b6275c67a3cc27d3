"""Every lint rule declares the most severe finding it can report (``Rule.ceiling``) and cannot exceed it,
so ``lint(min_severity=Severity.error)`` (what ``explain`` runs) can skip the rules that only warn and still
refuse exactly the inventories full lint refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.findings import Severity
from roce_tune.inventory.catalog import Catalog
from roce_tune.inventory.lint import RULES, lint, lint_text
from roce_tune.inventory.loader import load_inventory, load_inventory_text
from roce_tune.inventory.rules import LintContext
from roce_tune.inventory.rules.base import SEVERITY_RANK
from roce_tune.inventory.topology import build_topology

REPO = Path(__file__).resolve().parents[2]


def test_a_rule_cannot_report_above_its_ceiling(catalog: Catalog) -> None:
    loaded = load_inventory_text(RULES["RT107"].bad, "x.yaml")
    ctx = LintContext(loaded, build_topology(loaded.inventory), catalog)
    ctx.rule_id = "RT107"  # a warning rule without max_severity
    with pytest.raises(ValueError, match="RT107 reports error, above its declared maximum warning"):
        ctx.finding("m", "f", "hosts[0]", severity=Severity.error)
    assert ctx.finding("m", "f", "hosts[0]", severity=Severity.info).severity is Severity.info
    ctx.rule_id = "RT114"  # info by default, a warning above 1:1: declared
    assert RULES["RT114"].ceiling is Severity.warning
    assert ctx.finding("m", "f", "hosts[0]", severity=Severity.warning).severity is Severity.warning


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_bad_examples_stay_within_the_ceiling(rule_id: str, catalog: Catalog) -> None:
    found = [f for f in lint_text(RULES[rule_id].bad, "b.yaml", catalog) if f.rule == rule_id]
    assert found and all(SEVERITY_RANK[f.severity] <= SEVERITY_RANK[RULES[rule_id].ceiling] for f in found)


@pytest.mark.parametrize("text", [r.bad for r in RULES.values()] + [r.fixed for r in RULES.values()])
def test_errors_only_lint_has_the_same_errors(text: str, catalog: Catalog) -> None:
    try:
        loaded = load_inventory_text(text, "x.yaml")
    except Exception:  # noqa: BLE001 - loader examples (RT0xx) have nothing to lint
        return
    full = lint(loaded, catalog)
    errors_only = lint(loaded, catalog, min_severity=Severity.error)
    assert [f for f in errors_only if f.severity is Severity.error] == \
        [f for f in full if f.severity is Severity.error]
    skipped = {r.id for r in RULES.values() if r.ceiling is not Severity.error}
    assert skipped and not {f.rule for f in errors_only} & skipped


def test_shipped_inventories_errors_only_lint_agrees(catalog: Catalog) -> None:
    for path in sorted((REPO / "inventories").glob("**/*.yaml")):
        loaded = load_inventory(path)
        full = [f for f in lint(loaded, catalog) if f.severity is Severity.error]
        assert full == lint(loaded, catalog, min_severity=Severity.error), path
