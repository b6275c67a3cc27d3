"""The tuner's per-plan buffers memo (``compose._switch_buffers``) must give each switch the buffers derived
from its own headrooms: the profile list in the order its own ports first use each profile, and the
rationale of its own (pinned) headrooms. Found by tests/test_replan_property.py (memoised vs unmemoised
plan of an edited inventory)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from roce_tune.inventory.loader import load_inventory_text
from roce_tune.inventory.models import expand_interface_pattern
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.pipeline import derive_plan
from roce_tune.plan import Plan, plan_to_json
from roce_tune.tuner import compose

BASE = rail_optimised_fabric(32)


def _plan(data: dict[str, Any], memo: bool, monkeypatch: pytest.MonkeyPatch) -> Plan:
    with monkeypatch.context() as m:
        if not memo:
            m.setattr(compose, "REUSE_SHAPES", False)
            m.setattr(compose._Memo, "get", lambda self, key, make: make())
        return derive_plan(load_inventory_text(yaml.safe_dump(data, sort_keys=False), "memo.yaml"))


def _explode(data: dict[str, Any], name: str) -> None:
    sw = next(s for s in data["switches"] if s["name"] == name)
    sw["ports"] = [{**p, "name": n} for p in sw["ports"] for n in expand_interface_pattern(p["name"])]


def test_each_switch_lists_its_buffer_profiles_in_its_own_port_order(monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(BASE)
    # su0-leaf0 and su0-leaf1 use the same profiles as often, but the 10 m one first / last
    for end in ("su0-leaf0:Ethernet0", "su0-leaf1:Ethernet124"):
        next(n for h in data["hosts"] for n in h["nics"] if n["switch_port"] == end)["cable_length"] = "10m"
    for name in ("su0-leaf0", "su0-leaf1"):
        _explode(data, name)
    memoised, each = _plan(data, True, monkeypatch), _plan(data, False, monkeypatch)
    for name in ("su0-leaf0", "su0-leaf1"):
        sw = memoised.switch(name)
        first_use = list(dict.fromkeys(p.headroom.profile for p in sw.ports if p.headroom))
        assert [p.name for p in sw.buffers.profiles if p.name.startswith("pg_lossless")] == first_use
    assert plan_to_json(memoised) == plan_to_json(each)


def test_buffer_profiles_of_a_pinned_headroom_name_their_own_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    data = copy.deepcopy(BASE)
    data["policy"] = {"overrides": [{"role": "leaf", "set": {"xoff_bytes": 200000}}]}
    memoised, each = _plan(data, True, monkeypatch), _plan(data, False, monkeypatch)
    for sw in memoised.switches:
        pinned = [p for p in sw.buffers.profiles if "_pinned_" in p.name]
        assert (sw.role == "leaf") == bool(pinned)
        for prof in pinned:
            assert prof.rationale["xoff_bytes"].source.startswith(f"inventory override for {sw.name}:"), (
                sw.name, prof.rationale["xoff_bytes"].source)
    assert plan_to_json(memoised) == plan_to_json(each)
