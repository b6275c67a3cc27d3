"""``roce-tune lint`` reports what rendering would (RT240/RT241/RT25x) without rendering (issue 16 item 5).

The reference is the render path itself: lint + derive + ``render_outputs(include_hosts=False)``, which is
what ``check_inventory`` did before it stopped rendering. For every shipped inventory the findings must be
the same, in the same order; rendering (Jinja) must not run at all.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jinja2
import pytest

from roce_tune import platforms
from roce_tune.checks import check_inventory, locate_findings
from roce_tune.findings import Finding, RoceTuneError, has_errors
from roce_tune.inventory.catalog import load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory, load_inventory, load_inventory_text
from roce_tune.render import outputs
from roce_tune.simulate import scorecard
from roce_tune.tuner.compose import build_plan

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "inventories").glob("*.yaml")) + sorted((REPO / "inventories"
                                                                  / "intent").glob("*.yaml"))


def _by_rendering(loaded: LoadedInventory) -> list[Finding]:
    """Lint as it was: derive, then render every switch and collect what rendering reports."""
    catalog = load_catalog()
    findings = lint(loaded, catalog)
    if has_errors(findings):
        return findings
    plan = build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path),
                      inventory_sha256=loaded.sha256)
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):
        try:
            outputs.render_outputs(plan, include_hosts=False, findings=extra)
        except RoceTuneError as exc:
            extra += exc.findings
    return [*findings, *locate_findings(loaded, extra)]


def _no_rendering(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any render (a platform's ``render``, Jinja, render_outputs) or scorecard simulation fails the test."""
    def refuse(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("lint rendered")

    real = platforms.platform
    monkeypatch.setattr(platforms, "platform", lambda name: dataclasses.replace(real(name), render=refuse))
    monkeypatch.setattr(jinja2.Environment, "get_template", refuse)
    monkeypatch.setattr(jinja2.Template, "render", refuse)
    monkeypatch.setattr(outputs, "render_outputs", refuse)
    monkeypatch.setattr(scorecard, "scorecard", refuse)  # nor simulated a port class
    monkeypatch.setattr(scorecard, "plan_scorecards", refuse)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_lint_findings_equal_the_render_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = load_inventory(path)
    expected = _by_rendering(loaded)
    _no_rendering(monkeypatch)
    got = check_inventory(loaded)
    assert [f.model_dump() for f in got] == [f.model_dump() for f in expected]


def test_a_switch_the_platform_cannot_express_is_rt240_without_rendering(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO / "inventories" / "mixed-vendor.yaml").read_text(encoding="utf-8")
    text = text.replace("\npolicy:\n", "\npolicy:\n  watchdog_action: forward\n", 1)
    loaded = load_inventory_text(text, "mixed.yaml")
    expected = _by_rendering(loaded)
    assert [f.rule for f in expected if f.rule == "RT240"], "the reference no longer refuses this plan"
    _no_rendering(monkeypatch)
    got = check_inventory(loaded)
    assert [f.model_dump() for f in got] == [f.model_dump() for f in expected]
    rt240 = [f for f in got if f.rule == "RT240"]
    assert rt240 and all("Cumulus PFC watchdog can only drop" in f.message for f in rt240)
    assert all(f.location.file == "mixed.yaml" and f.location.line for f in rt240)
    assert not [f for f in got if f.rule in ("RT241", "RT251", "RT252")]  # as plan: only why it cannot render
