"""Scorecards cost seconds each: a plan simulates each lossless port class once, however many ports and
switches share it (issue 16 item 5; lint never simulates: tests/test_lint_without_render.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.simulate import scorecard as sc

REPO = Path(__file__).resolve().parents[2]


def test_plan_scorecards_simulates_each_port_class_once(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = derive_plan(load_inventory(REPO / "inventories" / "intent" / "rail-500.yaml"))
    seen: list[str] = []

    def fake(pc: sc.PortClass, seeds: int = 1, use_cache: bool = True) -> sc.Scorecard:
        seen.append(pc.key())
        return sc.Scorecard(pc, (), seeds)

    monkeypatch.setattr(sc, "scorecard", fake)
    cards = sc.plan_scorecards(plan, jobs=1)
    assert len(seen) == len(set(seen)) == len(cards) < len(plan.switches)
    assert sum(c.port_class.ports for c in cards) == plan.summary.lossless_ports
