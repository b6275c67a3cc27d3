"""The value summary of every shipped inventory's plan is checked in (``tests/golden/plans/<inventory>/``),
so a tuner change shows up once, as a value diff a reviewer reads, instead of as many rendered files.
``ROCE_TUNE_UPDATE_GOLDEN=1`` rewrites them; review the git diff."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from roce_tune.render.values import plan_values, plan_values_yaml
from tests.render.golden import REPO, assert_golden, pipeline_plan

INVENTORIES = sorted(p.stem for p in (REPO / "inventories").glob("*.yaml"))


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_plan_values_match_the_golden_summary(inventory: str) -> None:
    assert_golden("plans", inventory, {"values.yaml": plan_values_yaml(pipeline_plan(inventory))})


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_summary_keeps_every_device_port_and_nic(inventory: str) -> None:
    """Grouping loses nothing: every switch, port, host and NIC is named exactly once, and each port's
    group carries that port's own headroom and ECN profile."""
    plan = pipeline_plan(inventory)
    values = plan_values(plan)
    switch_names = [n for g in values["switches"] for n in g["names"]]
    assert sorted(switch_names) == sorted(sw.name for sw in plan.switches)
    assert sorted(n for g in values["hosts"] for n in g["names"]) == sorted(h.name for h in plan.hosts)
    for g in values["switches"]:
        for name in g["names"]:
            sw = plan.switch(name)
            names = sorted(p for c in g["port_classes"] for p in c["names"])
            assert names == sorted(p.name for p in sw.ports)
            for c in g["port_classes"]:
                for pname in c["names"]:
                    port = next(p for p in sw.ports if p.name == pname)
                    assert c["ecn_profile"] == port.ecn_profile
                    assert c["headroom"] == (port.headroom.model_dump(mode="json", exclude={"rationale"})
                                             if port.headroom else None)
    for g in values["hosts"]:
        assert len(g["nics"]) == len(plan.host(g["names"][0]).nics)


def test_golden_summary_is_yaml_of_the_values() -> None:
    plan = pipeline_plan(INVENTORIES[0])
    assert YAML(typ="safe").load(plan_values_yaml(plan)) == plan_values(plan)
