"""Junos OS Evolved 24.4R1 and later take decimal ECN fill levels (Juniper's YANG: ``fill-level`` decimal64,
fraction-digits 9): a switch whose inventory says that release gets the plan's Kmin/Kmax to the byte, the
push commits them, the dry run after it has nothing to do and audit's read-back agrees. A device on an
earlier release (fill level uint32) refuses the decimal line, and the push changes nothing. Real SSH to the
loopback Junos emulator, which type-checks fill levels per its release (tests/emulators/junos.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from roce_tune.deploy.apply import load_source
from roce_tune.pipeline import open_source
from roce_tune.platforms import junos, junos_readback
from roce_tune.qos import differences

from .conftest import dry_run_then_push, emulated_inventory

pytestmark = [pytest.mark.emulator, pytest.mark.slow]  # full multi-step pushes

DEVICE = "leaf3"  # a QFX5130 of mixed-vendor.yaml
DECIMAL_RELEASE = "24.4R1-EVO"
_FILL = re.compile(r"^set class-of-service drop-profiles \S+ interpolate fill-level (\S+)$", re.MULTILINE)


def _on_release(inv: Path, release: str) -> None:
    """Give ``DEVICE`` ``os_version: release`` in the emulated inventory copy."""
    data = YAML(typ="safe").load(inv.read_text())
    for sw in data["switches"]:
        if sw["name"] == DEVICE:
            sw["os_version"] = release
    with open(inv, "w") as fh:
        YAML().dump(data, fh)


def test_decimal_fill_levels_push_commit_and_come_back_unchanged(tmp_path: Path) -> None:
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    _on_release(inv, DECIMAL_RELEASE)
    fleet[DEVICE].version = DECIMAL_RELEASE  # type: ignore[attr-defined]
    (target,) = [t for t in load_source(inv)[0] if t.name == DEVICE]
    rendered = _FILL.findall(junos.display_set_lines(target.desired))
    assert any("." in v for v in rendered), f"the mixed-vendor QFX ramps are not whole percents: {rendered}"
    dry, pushed = dry_run_then_push(inv, DEVICE, tmp_path, known)
    assert dry.state == "would-change" and pushed.state == "pushed", (pushed.state, pushed.error)
    running = fleet[DEVICE].running_config()
    assert sorted(_FILL.findall(running)) == sorted(rendered)
    (again,) = dry_run_then_push(inv, DEVICE, tmp_path, known, dry_run_only=True)
    assert again.state == "no-change", again.diff[:5]
    plan = open_source(inv).plan
    expected = junos_readback.expressible_qos(plan, plan.switch(DEVICE))
    seen = junos_readback.read_back(running)
    assert [d for d in differences(expected, seen) if "ecn" in d] == []  # audit's running-vs-plan ECN check
    lossless = [n for n, q in expected.ports.items() if q.ecn]
    assert lossless and all(seen.ports[n].ecn == expected.ports[n].ecn for n in lossless)


def test_a_release_without_decimal_fill_levels_refuses_them_and_nothing_changes(tmp_path: Path) -> None:
    """The inventory says 24.4R1-EVO but the device runs 24.2R1-EVO (uint32 fill levels): its refusal of
    the decimal line fails the push before the commit."""
    fleet, inv, known = emulated_inventory("mixed-vendor.yaml", tmp_path)
    _on_release(inv, DECIMAL_RELEASE)
    fleet[DEVICE].version = "24.2R1-EVO"  # type: ignore[attr-defined]
    before = fleet[DEVICE].running_config()
    _, pushed = dry_run_then_push(inv, DEVICE, tmp_path, known)
    assert pushed.state == "failed" and "fill-level" in (pushed.error or ""), (pushed.state, pushed.error)
    assert fleet[DEVICE].running_config() == before
    assert any(e.startswith("refused value: fill-level") for e in fleet[DEVICE].events)
