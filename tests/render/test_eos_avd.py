"""roce-tune's Arista EOS output checked line by line against Arista's own renderer, pyavd
(tests/render/eos_avd.py builds AVD structured config from the same plan, validates it with AVD's
schema and compares the rendered lines both ways)."""

from __future__ import annotations

import re

import pytest

from roce_tune.findings import Severity
from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms import eos

from . import eos_avd
from .golden import REPO, pipeline_plan
from .plan_builder import build_plan


def _shipped_eos_inventories() -> list[str]:
    """Every shipped inventory (full and intent form) that has an EOS switch, by repo-relative stem."""
    names = []
    folder = REPO / "inventories"
    for path in sorted([*folder.glob("*.yaml"), *(folder / "intent").glob("*.yaml")]):
        if re.search(r"^\s*platform:\s*eos\b", path.read_text(encoding="utf-8"), re.MULTILINE):
            names.append(str(path.relative_to(folder).with_suffix("")))
    return names


def _with_watchdog(sw: SwitchPlan, **update: object) -> SwitchPlan:
    return sw.model_copy(update={"watchdog": sw.watchdog.model_copy(update=update)})


#: non-default watchdog settings every EOS switch is also rendered with
#: (action, detection_ms, restoration_ms, poll_ms)
WATCHDOG_VARIANTS = (("alert", 100, 100, 50), ("forward", 500, 60_000, 250), ("drop", 5000, 600, 100))


def _switch_variants(sw: SwitchPlan) -> list[SwitchPlan]:
    out = [sw]
    out += [_with_watchdog(sw, action=a, detection_ms=d, restoration_ms=r, poll_ms=p)
            for a, d, r, p in WATCHDOG_VARIANTS]
    return [*out, _with_watchdog(sw, enabled=False)]


def _check(plan: Plan, sw: SwitchPlan) -> int:
    return eos_avd.check_against_avd(plan, sw, eos.render(plan, sw)[f"{sw.name}.cfg"])


def test_shipped_inventories_with_eos_are_found() -> None:
    assert {"mixed-vendor", "intent/mixed-vendor"} <= set(_shipped_eos_inventories())


@pytest.mark.parametrize("inventory", _shipped_eos_inventories())
def test_every_eos_line_is_one_pyavd_renders(inventory: str) -> None:
    plan = pipeline_plan(inventory)
    switches = [sw for sw in plan.switches if sw.platform == "eos"]
    assert switches
    checked = sum(_check(plan, variant) for sw in switches for variant in _switch_variants(sw))
    assert checked > 100 * len(switches)


def test_hand_built_plan_variants_match_pyavd() -> None:
    """Two ECN profiles, a lossy port, Jericho's tx-queue, PCP trust, WRED drop thresholds, fractional
    Pmax, every watchdog variant."""
    plan = build_plan()
    sw = plan.switch("leaf1")
    drop = {"drop_min_bytes": 500_000, "drop_max_bytes": 2_000_000, "drop_probability_percent": 5.0,
            "pmax_percent": 0.4}
    ecn_drop = [e.model_copy(update=drop) for e in sw.ecn_profiles]
    pcp = plan.model_copy(update={"classification": plan.classification.model_copy(update={"trust": "pcp"})})
    cases = [(plan, v) for v in _switch_variants(sw)] + [
        (plan, sw.model_copy(update={"asic": "jericho2"})),
        (pcp, sw),
        (plan, sw.model_copy(update={"ecn_profiles": ecn_drop})),
    ]
    assert sum(_check(p, s) for p, s in cases) > 40 * len(cases)


def test_pyavd_oracle_rejects_planted_errors() -> None:
    """An unknown keyword, a value AVD renders differently, an out-of-range value (AVD's schema) and a
    missing companion line each fail the comparison."""
    plan = build_plan()
    sw = plan.switch("leaf1")
    text = eos.render(plan, sw)["leaf1.cfg"]
    assert eos_avd.check_against_avd(plan, sw, text) > 40
    planted = {
        "action no-drop": text.replace("port action drop", "port action no-drop"),  # EOS has no such action
        "max-mark-probability 21": text.replace("max-mark-probability 20 ", "max-mark-probability 21 "),
        "priority-flow-control priority 4 no-drop": text.replace(
            "   priority-flow-control priority 3 no-drop\n",
            "   priority-flow-control priority 3 no-drop\n   priority-flow-control priority 4 no-drop\n", 1),
        "only pyavd: +qos profile ecn-400g / priority-flow-control on": re.sub(
            r"(qos profile ecn-400g\n)   priority-flow-control on\n", r"\1", text),  # no-drop without PFC on
        "only pyavd: +interface Ethernet9/1 / mtu 1500": text.replace("   mtu 1500\n", ""),
    }
    for what, bad in planted.items():
        assert bad != text, what
        with pytest.raises(eos_avd.AvdMismatch, match=re.escape(what.split("+")[-1])):
            eos_avd.check_against_avd(plan, sw, bad)
    out_of_range = eos_avd.structured_config(plan, sw)
    queue3 = out_of_range["qos_profiles"][0]["uc_tx_queues"][1]
    queue3["random_detect"]["ecn"]["threshold"]["max_probability"] = 101
    with pytest.raises(eos_avd.AvdMismatch, match="max_probability"):
        eos_avd.validate(out_of_range)
    bad_action = eos_avd.structured_config(plan, sw)
    bad_action["qos_profiles"][0]["priority_flow_control"]["watchdog"]["action"] = "no-drop"
    with pytest.raises(eos_avd.AvdMismatch, match="action"):
        eos_avd.validate(bad_action)


def test_watchdog_timers_eos_cannot_take_are_rounded_and_flagged() -> None:
    """Defect: a pinned 15 ms detection was written as ``timeout 0.015`` (AVD's schema and EOS take two
    decimals), 5 ms recovery as ``0.005`` (below EOS's 0.01 s) and 2 ms polling as ``0.002`` (below 0.005 s).
    Now each goes out in EOS's range and step, with a note in the file and an RT241 finding."""
    plan = build_plan()
    sw = _with_watchdog(plan.switch("leaf1"), detection_ms=15, restoration_ms=5, poll_ms=2)
    with pytest.raises(eos_avd.AvdMismatch, match=r"timeout: The value '0\.015' does not match"):
        eos_avd.validate(eos_avd.structured_config(plan, sw))
    text = eos.render(plan, sw)["leaf1.cfg"]
    lines = text.splitlines()
    for line in ("priority-flow-control pause watchdog default timeout 0.02",
                 "priority-flow-control pause watchdog default recovery-time 0.01",
                 "priority-flow-control pause watchdog default polling-interval 0.005"):
        assert line in lines
    assert "! plan timeout 15 ms rendered as 0.02 s (EOS takes 0.01..60 s in 0.01 s steps)" in lines
    expressible = _with_watchdog(sw, detection_ms=20, restoration_ms=10, poll_ms=5)
    assert eos_avd.check_against_avd(plan, expressible, text) > 40
    found = [f for f in eos.render_findings(plan, sw) if "watchdog" in f.message]
    assert sorted(f.message.split(" takes")[0] for f in found) == [
        "EOS PFC watchdog polling-interval", "EOS PFC watchdog recovery-time", "EOS PFC watchdog timeout"]
    assert {f.rule for f in found} == {"RT241"} and {f.severity for f in found} == {Severity.warning}
    big = _with_watchdog(plan.switch("leaf1"), detection_ms=61_000, restoration_ms=60_000, poll_ms=30_001)
    assert eos.watchdog_timers_ms(big) == {"timeout": (61_000, 60_000), "recovery-time": (60_000, 60_000),
                                           "polling-interval": (30_001, 30_000)}
    assert not [f for f in eos.render_findings(plan, plan.switch("leaf1")) if "watchdog" in f.message]
