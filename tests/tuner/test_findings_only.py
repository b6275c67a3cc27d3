"""Issue 16: ``roce-tune lint`` derives the plan for its findings only (``build_plan(findings_only=True)``).

Hosts are still derived (their NIC classes and NCCL environment) and checked for consistency through each
NIC's class plan, but not kept; switches of a repeated shape share port plans (peer names and all). The
findings must be exactly the full plan's, in the same order, on every shipped
inventory, on a synthetic 3-tier multi-vendor fabric with several NIC classes and per-NIC pins, and when
the hosts' plans are inconsistent (RT232/RT234, injected into the tuner's output).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from roce_tune.checks import check_inventory
from roce_tune.findings import Finding, has_errors
from roce_tune.inventory.catalog import load_catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import LoadedInventory, full_form_data, load_inventory
from roce_tune.inventory.synthetic import rail_optimised_intent
from roce_tune.inventory.topology import build_topology
from roce_tune.pipeline import locate_findings
from roce_tune.plan import NicPlan, Plan
from roce_tune.platforms import switch_findings
from roce_tune.tuner import compose

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted((REPO / "inventories").glob("*.yaml")) + sorted((REPO / "inventories"
                                                                  / "intent").glob("*.yaml"))
ODD_CABLE_M = 7.0  # the NIC class whose plan the injection test makes inconsistent
ODD_HOST = 21  # the host whose NCCL environment it makes inconsistent


def _three_tier_multi_vendor(tmp: Path) -> LoadedInventory:
    """160 hosts: two pods under superspines (3 tiers), SONiC and Cumulus leaves, SONiC spines, Cumulus
    superspines; NICs in several classes (3 m, 7 m, host MTU 4200), one NIC with its own DCQCN pin and one
    host with another socket interface."""
    data = rail_optimised_intent(160, site="three-tier")
    fab = data["fabric"]
    fab["superspine"].update(platform="cumulus", ports={"count": 64, "name": "swp{q+1}", "speed": "800G"})
    fab["leaf"]["groups"] = [{}, {"platform": "cumulus",
                                  "host_ports": {"name": "swp{p+1}", "speed": "400G", "breakout": "2x400G"},
                                  "uplinks": {"name": "swp{33+u}", "speed": "800G", "cable_length": "30m",
                                              "media": "optic"}}]
    intent = tmp / "intent.yaml"
    intent.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    full: dict[str, Any] = full_form_data(intent)
    for i, host in enumerate(full["hosts"]):
        for j, nic in enumerate(host["nics"]):
            if (i + j) % 5 == 0:
                nic["cable_length"] = f"{ODD_CABLE_M:g}m"
        if i % 7 == 3:
            host["mtu"] = 4200
    full["hosts"][ODD_HOST]["socket_ifname"] = "eno2"  # its own NCCL environment
    pinned = full["hosts"][9]
    full.setdefault("policy", {})["overrides"] = [
        {"device": pinned["name"], "port": pinned["nics"][2]["netdev"], "set": {"rpg_gd": 9}}]
    path = tmp / "three-tier.yaml"
    path.write_text(yaml.safe_dump(full, sort_keys=False), encoding="utf-8")
    return load_inventory(path)


def _plans(loaded: LoadedInventory) -> tuple[Plan, Plan]:
    catalog = load_catalog()
    full = compose.build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path),
                              topology=build_topology(loaded.inventory))
    lite = compose.build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path),
                              topology=build_topology(loaded.inventory), findings_only=True)
    return full, lite


def _dumps(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.model_dump() for f in findings]


def _without_peers(plan: Plan) -> dict[str, Any]:
    data = plan.model_dump(exclude={"hosts"})
    for sw in data["switches"]:
        for port in sw["ports"]:
            port.pop("peer")
    return data


def _assert_same_but_hosts(full: Plan, lite: Plan) -> None:
    """Same findings, summary and values (but the peer names of shared ports); no host plans."""
    assert _dumps(lite.findings) == _dumps(full.findings)
    assert lite.hosts == [] and lite.summary == full.summary
    assert _without_peers(lite) == _without_peers(full)


def _by_full_plan(loaded: LoadedInventory) -> list[Finding]:
    """What ``check_inventory`` reports, computed from the full plan (host plans kept)."""
    catalog = load_catalog()
    findings = lint(loaded, catalog)
    plan = compose.build_plan(loaded.inventory, catalog, inventory_file=str(loaded.path))
    extra = [f for f in plan.findings if f.rule.startswith("RT2")]
    if not has_errors(extra):  # a plan with errors is not rendered: no platform findings
        problems, warnings = switch_findings(plan)
        extra += problems or warnings
    return [*findings, *locate_findings(loaded, extra)]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_a_findings_only_plan_has_the_full_plans_findings(path: Path) -> None:
    full, lite = _plans(load_inventory(path))
    assert full.hosts
    _assert_same_but_hosts(full, lite)


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_lint_of_a_three_tier_multi_vendor_fabric_equals_the_full_plans_findings(tmp_path: Path) -> None:
    loaded = _three_tier_multi_vendor(tmp_path)
    full, lite = _plans(loaded)
    assert full.summary.tiers == 3 and {s.platform for s in full.switches} == {"sonic", "cumulus"}
    nic_classes = {(n.cable_m, n.mtu, n.dcqcn.params.get("rpg_gd")) for h in full.hosts for n in h.nics}
    assert len(nic_classes) >= 4
    _assert_same_but_hosts(full, lite)
    assert len({id(sw.ports) for sw in lite.switches}) < len(lite.switches) / 4  # repeated shapes share
    got = check_inventory(loaded)
    assert [f.rule for f in got if f.rule.startswith("RT2")], "the fabric has no tuner finding to compare"
    assert _dumps(got) == _dumps(_by_full_plan(loaded))


@pytest.mark.slow  # end-to-end (subprocesses/emulators), seconds each: .ci/run runs it (-m slow)
def test_inconsistent_host_plans_give_the_same_findings_in_a_findings_only_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = _three_tier_multi_vendor(tmp_path)
    real_construct, real_nccl = compose.construct_trusted, compose.nccl.derive_nccl_env
    odd_host = loaded.inventory.hosts[ODD_HOST].name

    def construct(cls: type[Any], **values: Any) -> Any:
        if cls is NicPlan and values["cable_m"] == ODD_CABLE_M:  # one NIC class trusts PCP
            values = {**values, "trust": "pcp"}
        return real_construct(cls, **values)

    def nccl_env(host: Any, *args: Any) -> Any:
        env, why = real_nccl(host, *args)
        return ({**env, "NCCL_IB_TC": "0"}, why) if host.name == odd_host else (env, why)

    monkeypatch.setattr(compose, "construct_trusted", construct)
    monkeypatch.setattr(compose.nccl, "derive_nccl_env", nccl_env)
    full, lite = _plans(loaded)
    rt232 = [f for f in full.findings if f.rule == "RT232"]
    odd_nics = sum(n.cable_m == ODD_CABLE_M for h in full.hosts for n in h.nics)
    assert len(rt232) == odd_nics > 1 and len({f.location.device for f in rt232}) > 1
    assert [f.location.device for f in full.findings if f.rule == "RT234"] == [odd_host]
    _assert_same_but_hosts(full, lite)
    got = check_inventory(loaded)
    assert _dumps(got) == _dumps(_by_full_plan(loaded))
    first = next(f for f in got if f.rule == "RT232")
    assert first.location.file == str(loaded.path) and first.location.line  # at the NIC's entry
