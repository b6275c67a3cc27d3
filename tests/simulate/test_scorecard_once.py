"""Scorecards cost seconds each: a plan simulates each lossless port class once, however many ports and
switches share it (issue 16 item 5; lint never simulates: tests/test_lint_without_render.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.simulate import scorecard as sc

REPO = Path(__file__).resolve().parents[2]


def test_plan_scorecards_simulates_each_port_class_once(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    plan = derive_plan(load_inventory(REPO / "inventories" / "intent" / "rail-500.yaml"))
    monkeypatch.setattr(sc, "_cache_dir", lambda: tmp_path)  # nothing cached: every class is simulated
    seen: list[str] = []

    def fake(pc: sc.PortClass, seeds: int = 1, use_cache: bool = True) -> sc.Scorecard:
        seen.append(pc.key())
        return sc.Scorecard(pc, (), seeds)

    monkeypatch.setattr(sc, "scorecard", fake)
    cards = sc.plan_scorecards(plan, jobs=1)
    assert len(seen) == len(set(seen)) == len(cards) < len(plan.switches)
    assert sum(c.port_class.ports for c in cards) == plan.summary.lossless_ports


def test_cached_classes_are_read_without_starting_worker_processes(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """A re-plan whose classes are all cached starts no process pool (each costs a Python start-up per CPU);
    with one class left it is simulated in this process; the cards keep the classes' order either way."""
    import concurrent.futures

    plan = derive_plan(load_inventory(REPO / "inventories" / "mixed-vendor.yaml"))
    classes = sc.port_classes(plan)
    assert len(classes) > 2
    monkeypatch.setattr(sc, "_cache_dir", lambda: tmp_path)
    simulated: list[str] = []

    def fake(pc: sc.PortClass, seeds: int = 1, use_cache: bool = True) -> sc.Scorecard:
        simulated.append(pc.key())
        row = sc.ScoreRow("x", "M", "incast", {"derived": (90.0, 0.0, 1.0)}, True, "")
        card = sc.Scorecard(pc, tuple(row for _ in sc._cases(pc)), seeds)
        sc._write_cache(sc._cache_dir() / f"{pc.key()}-s{seeds}.json", card)
        return card

    def no_pool(*_a: object, **_k: object) -> None:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(sc, "scorecard", fake)
    monkeypatch.setattr(sc, "_read_cache", lambda path, pc: (sc.Scorecard(pc, (), 1).rows
                                                             if path.exists() else None))
    for pc in classes[1:]:
        fake(pc)
    simulated.clear()
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    cards = sc.plan_scorecards(plan, jobs=4)
    assert simulated == [classes[0].key()]
    assert [c.port_class.key() for c in cards] == [pc.key() for pc in classes]
    simulated.clear()
    assert [c.port_class.key() for c in sc.plan_scorecards(plan, jobs=4)] == [pc.key() for pc in classes]
    assert simulated == []
