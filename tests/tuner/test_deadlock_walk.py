"""The deadlock analysis walks a topology without problems link by link and NIC by NIC, any other port by port
(``deadlock._walk_cabling``). Both walks must give the same switch graph, node count, destinations, RT223
uplink state and findings, on clean Clos fabrics with admin-down ports, lossy links, same-tier links, a
switch without hosts and an explicit lossless port set."""

from __future__ import annotations

from pathlib import Path

import pytest

from roce_tune.inventory.loader import load_inventory
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.inventory.topology import Topology, build_topology
from roce_tune.tuner.deadlock import _build, analyze_fabric
from tests.tuner.test_deadlock import PEER, clos, planted

INVENTORIES = sorted(Path(__file__).parents[2].joinpath("inventories").glob("*.yaml"))


def _accounts(topo: Topology, lossless: set[tuple[str, str]] | None, per_port: bool) -> tuple[object, ...]:
    fab = _build(topo, lossless, True, per_port=per_port)
    assert not fab.topo.problems  # the link walk applies
    return (fab.names, fab.tier, [list(row.items()) for row in fab.links], fab.adj, fab.dbit,
            fab.host_lossless, [list(row.items()) for row in fab.lossless_in], fab.nodes, fab.uplinks,
            [(f.rule, f.location.device, f.location.port, f.message) for f in fab.flagged])


def _messy_clean() -> Inventory:
    """A clean Clos (no lint problem) with what changes the accounts: an admin-down host port and an
    admin-down uplink, a lossy uplink, a leaf-to-leaf link and a leaf without hosts."""
    data = clos(spines=2, leaves=5, hosts_per_leaf=2, extra_links=(PEER,)).model_dump(mode="json",
                                                                                       exclude_none=True)
    data["hosts"] = [h for h in data["hosts"] if not h["name"].startswith("h5x")]
    leaf1 = next(s for s in data["switches"] if s["name"] == "leaf1")
    leaf1["ports"] = [{"name": "Ethernet0", "speed": "400G", "admin_up": False},
                      {"name": "Ethernet[4-28/4]", "speed": "400G"},
                      {"name": "Ethernet32", "speed": "400G", "admin_up": False},
                      {"name": "Ethernet[36-60/4]", "speed": "400G"}]
    next(link for link in data["links"] if link["a"] == "leaf2:Ethernet36")["lossless"] = False
    return Inventory.model_validate(data)


def _rail64() -> Inventory:
    return Inventory.model_validate(rail_optimised_fabric(64))


@pytest.mark.parametrize("make", [clos, planted, _messy_clean, _rail64],
                         ids=["clos", "planted", "messy-clean", "rail-64"])
def test_link_walk_equals_port_walk(make) -> None:  # type: ignore[no-untyped-def]
    topo = build_topology(make())
    assert _accounts(topo, None, False) == _accounts(topo, None, True)
    every_other = set(list(topo.peers)[::2])  # an explicit lossless set, not the tuner's rule
    assert _accounts(topo, every_other, False) == _accounts(topo, every_other, True)


@pytest.mark.parametrize("path", INVENTORIES, ids=[p.stem for p in INVENTORIES])
def test_link_walk_equals_port_walk_shipped(path: Path) -> None:
    topo = build_topology(load_inventory(path).inventory)
    assert _accounts(topo, None, False) == _accounts(topo, None, True)


def test_messy_clean_fabric_is_accounted() -> None:
    """The walk sees what the fixture changed: leaf1's admin-down host port is no node, its admin-down
    uplink no link, leaf5 (no hosts) no destination, and the leaf-to-leaf link is flagged (RT220)."""
    topo = build_topology(_messy_clean())
    fab = _build(topo, None, True)
    leaf1, leaf5, spine1 = (fab.names.index(n) for n in ("leaf1", "leaf5", "spine1"))
    assert fab.host_lossless[leaf1] == 1 and fab.dbit[leaf5] == 0
    assert spine1 not in fab.links[leaf1]
    report, _ = analyze_fabric(topo, [3])
    assert [f.rule for f in report.flagged] == ["RT220"]
