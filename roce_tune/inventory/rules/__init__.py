"""Lint rules, one small function each, registered in :data:`RULES` by importing their modules."""

from __future__ import annotations

from roce_tune.inventory.rules import cabling, capacity, design, mtu, names, policy  # noqa: F401  (registration)
from roce_tune.inventory.rules.base import RULES, LintContext, Rule, rule

# registry order = rule ID order (docs, lint output tie-breaks)
_ordered = sorted(RULES.items())
RULES.clear()
RULES.update(_ordered)

__all__ = ["RULES", "LintContext", "Rule", "rule"]
