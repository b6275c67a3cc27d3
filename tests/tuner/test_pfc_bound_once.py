"""RT211 (PFC-bound / off-ramp steady state) is a property of an ECN profile, so a plan reports it once per
profile, naming the switches that carry it (issue 16: rail-500 gave one warning per switch and profile)."""

from __future__ import annotations

import re
from pathlib import Path

from roce_tune.findings import Severity
from roce_tune.inventory.loader import load_inventory
from roce_tune.pipeline import derive_plan
from roce_tune.tuner.ecn import check_ecn

REPO = Path(__file__).resolve().parents[2]


def test_rt211_once_per_ecn_profile_naming_its_switches() -> None:
    plan = derive_plan(load_inventory(REPO / "inventories" / "intent" / "rail-500.yaml"))
    carriers: dict[str, list[str]] = {}
    for sw in plan.switches:
        for e in sw.ecn_profiles:
            if any(f.rule == "RT211" for f in check_ecn(e, sw.name, None)):
                carriers.setdefault(e.name, []).append(sw.name)
    assert len(carriers) > 1 and max(len(v) for v in carriers.values()) > 8  # the fabric has the case
    got = [f for f in plan.findings if f.rule == "RT211"]
    assert sorted(re.match(r"ECN profile (\S+):", f.message).group(1) for f in got) == sorted(carriers)  # type: ignore[union-attr]
    for f in got:
        name = re.match(r"ECN profile (\S+):", f.message).group(1)  # type: ignore[union-attr]
        switches = carriers[name]
        assert f.severity is Severity.warning and f.location.device == switches[0]
        assert f"[same profile on {len(switches)} switches: {switches[0]}, {switches[1]}" in f.message
        listed = f.message.rsplit(": ", 1)[1].rstrip("]")
        shown = listed.split(" and ")[0].split(", ")
        assert shown == switches[:len(shown)]
        if len(shown) < len(switches):
            assert listed.endswith(f" and {len(switches) - len(shown)} more")
        assert len(f.message) < 2000  # never cut by the finding's length limit

