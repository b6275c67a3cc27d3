"""The platform contract: every platform's PLATFORM record is complete, and known defects reach the plan."""

from __future__ import annotations

import pytest

from roce_tune.platforms import ALL_PLATFORMS, SWITCH_PLATFORMS, platform, platform_findings
from tests.render.golden import pipeline_plan


@pytest.mark.parametrize("name", ALL_PLATFORMS)
def test_every_platform_implements_the_contract(name: str) -> None:
    impl = platform(name)
    assert impl.name == impl.spec.name == name
    assert impl.push.netmiko_device_type and impl.push.error_pattern
    if name in SWITCH_PLATFORMS:
        assert impl.diff is not None and impl.push.push is not None and impl.push.rollback is not None
        assert impl.push.read_running and impl.push.desired_file


def _sonic_switch(asic: str, watchdog: bool):  # type: ignore[no-untyped-def]
    plan = pipeline_plan("mixed-vendor")
    sw = next(s for s in plan.switches if s.platform == platform("sonic").name)
    return plan, sw.model_copy(update={"asic": asic,
                                       "watchdog": sw.watchdog.model_copy(update={"enabled": watchdog})})


def test_a_tomahawk5_sonic_plan_with_the_watchdog_shows_the_restore_loop_defect() -> None:
    plan, sw = _sonic_switch("tomahawk-5", watchdog=True)
    found = [f for f in platform_findings(plan, sw) if f.rule == "RT251"]
    assert len(found) == 1 and "sonic-buildimage/issues/29203" in found[0].message
    assert found[0].location.device == sw.name


def test_the_restore_loop_defect_needs_the_watchdog_and_the_asic() -> None:
    for asic, wd in (("tomahawk-5", False), ("tomahawk-4", True)):
        plan, sw = _sonic_switch(asic, watchdog=wd)
        assert not [f for f in platform_findings(plan, sw) if f.rule == "RT251"], (asic, wd)


def test_a_spectrum_sonic_plan_shows_the_pfcstat_zero_defect() -> None:
    plan, sw = _sonic_switch("spectrum-4", watchdog=True)
    assert [f.rule for f in platform_findings(plan, sw) if "issues/5540" in f.message] == ["RT252"]


def test_read_back_names_the_platform_until_a_module_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from roce_tune.platforms.contract import module_read_back

    fake = types.ModuleType("fake_platform")
    monkeypatch.setitem(sys.modules, "fake_platform", fake)
    read_back = module_read_back("fake_platform", "fakeos")
    with pytest.raises(NotImplementedError, match="fakeos"):
        read_back("text")
    fake.read_back = lambda text: f"parsed {text}"  # type: ignore[attr-defined]
    assert read_back("x") == "parsed x"  # a read_back defined later in the module is found
