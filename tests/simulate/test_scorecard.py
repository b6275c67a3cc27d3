"""Per-port-class scorecards in plan.md and `roce-tune explain ... kmax_bytes` (real simulations, no
mocks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from roce_tune.cli import app
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan
from roce_tune.render.review import render_review
from roce_tune.simulate.scorecard import Scorecard, ScoreRow, judge, port_classes, scorecard, scorecard_lines

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _plan(name: str) -> Plan:
    return derive_plan(load_inventory(str(ROOT / "inventories" / f"{name}.yaml")))


def test_port_classes_cover_every_lossless_port_once() -> None:
    plan = _plan("site")
    classes = port_classes(plan)
    lossless = sum(1 for sw in plan.switches for p in sw.ports if p.lossless)
    assert sum(c.ports for c in classes) == lossless
    assert len(classes) == len({(c.asic, c.speed_gbps, c.fan_in, c.ecn.kmax_bytes,
                                 c.buffer_bytes) for c in classes})
    assert len(classes) < 10  # a fabric has few classes: that is what keeps the plan time down
    for c in classes:
        sw = plan.switch(c.example.split(":")[0])
        e = next(x for x in sw.ecn_profiles if x.kmax_bytes == c.ecn.kmax_bytes)
        assert (c.ecn.kmin_bytes, c.ecn.pmax_percent, c.speed_gbps) == (e.kmin_bytes, e.pmax_percent,
                                                                        e.speed_gbps)


def test_judge_target() -> None:
    d = {"nvidia-default": (80.0, 1.0, 0.0), "sonic-default": (90.0, 2.0, 0.0),
         "dcqcn-paper": (70.0, 0.0, 0.0)}
    assert judge("incast", {"derived": (88.5, 2.0, 0.0), **d}) == (True, "")
    ok, why = judge("incast", {"derived": (87.0, 2.0, 0.0), **d})
    assert not ok and "sonic-default 90.0" in why
    # faster but pauses more than the best
    # default
    ok, why = judge("incast", {"derived": (95.0, 3.0, 0.0), **d})
    assert not ok and "PFC pause 3.0 ms" in why
    assert judge("long-lived", {"derived": (99.2, 5.0, 0.0), **d})[0]
    ok, why = judge("long-lived", {"derived": (95.0, 0.0, 0.0), **d})
    assert not ok and "no default reaches it" in why


@pytest.mark.slow
def test_scorecard_cached_and_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(tmp_path))
    plan = _plan("lab-2node")
    pc = replace(port_classes(plan)[0], fan_in=4)  # a 4:1 class keeps the run short but real
    first = scorecard(pc)
    assert first.seconds > 0 and len(first.rows) == 6  # (1 MB, 8 MB, long-lived) x (M, T)
    assert {r.model for r in first.rows} == {"M", "T"}
    assert all(set(r.results) == {"derived", "nvidia-default", "sonic-default",
                                  "dcqcn-paper"} for r in first.rows)
    again = scorecard(pc)
    assert again.seconds == 0.0 and again.rows == first.rows  # read from the on-disk cache
    assert list(tmp_path.rglob("*.json"))
    (next(tmp_path.rglob("*.json"))).write_text("{broken", encoding="utf-8")
    assert scorecard(pc).rows == first.rows  # a damaged entry is recomputed
    md = render_review(plan, scorecards=[first])
    assert "## Objective and simulated evidence" in md and "Objective **throughput**" in md
    assert "| 1 MB x 4 | M |" in md and "SONiC 1M/2M/5%" in md
    unsimulated = render_review(plan)  # --no-scorecard: the objective stays, and the plan says nothing ran
    assert "Objective **throughput**" in unsimulated and "**Not simulated:**" in unsimulated
    assert "| 1 MB x 4 |" not in unsimulated


def test_plan_cli_scorecard_and_no_scorecard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCE_TUNE_CACHE", str(tmp_path / "cache"))
    inv = str(ROOT / "inventories" / "lab-2node.yaml")
    r = runner.invoke(app, ["plan", inv, "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "a" / "plan.md").read_text(encoding="utf-8")
    assert "## Objective and simulated evidence" in md and "fan-in 1" in md
    r = runner.invoke(app, ["plan", inv, "--out", str(tmp_path / "b"), "--no-scorecard"])
    assert r.exit_code == 0, r.output
    unsimulated = (tmp_path / "b" / "plan.md").read_text(encoding="utf-8")
    assert "Objective **throughput**" in unsimulated and "`roce-tune plan --no-scorecard`" in unsimulated
    assert "fan-in 1" not in unsimulated
    plan = _plan("lab-2node")
    port = next(f"{sw.name}:{p.name}" for sw in plan.switches for p in sw.ports if p.lossless)
    r = runner.invoke(app, ["explain", inv, port, "kmax_bytes"])
    assert r.exit_code == 0, r.output
    # the rule and its
    # evidence
    assert "onset_fraction x pfc_onset_bytes" in r.output and "onset_fraction=0.5" in r.output
    assert "| 8 MB x 1 | T |" in r.output



def _card(rows: list[tuple[str, str, dict[str, tuple[float, float, float]]]]) -> Scorecard:
    pc = port_classes(_plan("lab-2node"))[0]
    out = []
    for scenario, kind, results in rows:
        ok, why = judge(kind, results)
        out.append(ScoreRow(scenario, "T", kind, results, ok, why))
    return Scorecard(pc, tuple(out), 1)


def test_plan_md_says_when_no_setting_achieves_the_target() -> None:
    # short incast: the plan and SONiC win; long incast: only the paper's values pause little enough
    short = {"derived": (96.0, 25.0, 0.0), "nvidia-default": (85.0, 20.0, 0.0),
             "sonic-default": (93.0, 19.0, 0.0),
             "dcqcn-paper": (83.0, 20.0, 0.0)}
    long_ = {"derived": (79.0, 58.0, 0.0), "nvidia-default": (80.0, 52.0, 0.0),
             "sonic-default": (85.0, 42.0, 0.0),
             "dcqcn-paper": (91.0, 37.0, 0.0)}
    card = _card([("1 MB x 32", "incast", short), ("8 MB x 32", "incast", long_)])
    misses = card.setting_misses()
    assert all(misses.values())  # each setting misses a row: the paper loses the short incast, SONiC the long
    assert ("dcqcn-paper 91.0" in misses["sonic-default"][0]
            and "sonic-default 93.0" in misses["dcqcn-paper"][0])
    text = "\n".join(scorecard_lines(card))
    assert "No setting achieves the target on this port class" in text
    assert "the plan's values: 1 MB x 32 T: PFC pause 25.0 ms > sonic-default 19.0 ms (+1 more)" in text


def test_plan_md_names_a_default_that_would_meet_every_row() -> None:
    row = {"derived": (70.0, 0.0, 0.0), "nvidia-default": (80.0, 0.0, 0.0), "sonic-default": (90.0, 0.0, 0.0),
           "dcqcn-paper": (60.0, 0.0, 0.0)}
    card = _card([("1 MB x 4", "incast", row)])
    assert card.setting_misses()["sonic-default"] == [] and card.setting_misses()["derived"]
    text = "\n".join(scorecard_lines(card))
    assert "SONiC would meet every row of this class where the plan's values do not" in text
    assert "No setting achieves" not in text
    assert "\n".join(scorecard_lines(_card([("1 MB x 4", "incast",
                                             {**row, "derived": (90.0, 0.0, 0.0)})]))).count(
        "would meet") == 0  # a class the plan meets gets no verdict


def test_plan_md_says_the_scorecard_runs_dcqcn_a_plan_turned_off(tmp_path: Path) -> None:
    # policy.dcqcn false: the scorecard simulated DCQCN acting; plan.md presented it as this plan's evidence
    row = {"derived": (90.0, 0.0, 0.0), "nvidia-default": (80.0, 0.0, 0.0), "sonic-default": (90.0, 0.0, 0.0),
           "dcqcn-paper": (60.0, 0.0, 0.0)}
    card = _card([("1 MB x 1", "incast", row)])
    text = (ROOT / "inventories" / "lab-2node.yaml").read_text(encoding="utf-8")
    assert "  cnp_priority: 6\n" in text
    inv = tmp_path / "lab-pfc-only.yaml"
    inv.write_text(text.replace("  cnp_priority: 6\n", "  cnp_priority: 6\n  dcqcn: false\n"),
                   encoding="utf-8")
    off = render_review(derive_plan(load_inventory(str(inv))), scorecards=[card])
    assert "**DCQCN is off in this plan** (policy.dcqcn false" in off
    assert "not what this plan runs" in off and "| 1 MB x 1 | T |" in off
    assert "DCQCN is off in this plan" not in render_review(_plan("lab-2node"), scorecards=[card])
    r = runner.invoke(app, ["explain", str(inv), "lab-leaf1:Ethernet0", "kmax_bytes"])  # the same scorecard
    assert r.exit_code == 0, r.output
    assert "DCQCN is off in this plan" in r.output and "| 8 MB x 1 | T |" in r.output
