"""The topology and the lint rules take short paths on large fabrics (issue 16): ports resolved by their
``switch:port`` string, a switch's ports indexed at once, all links of a sound fabric attached in one pass,
walks skipped when they cannot find anything, catalog lookups and capacities computed once per distinct
input. These tests pin that each short path gives what the one-by-one path gives, on inventories where the
facts a short path relies on differ (a name declared twice, a port cabled twice, one odd NIC among many).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from roce_tune.catalog import _parse, load_catalog
from roce_tune.findings import Finding
from roce_tune.inventory.catalog import Catalog
from roce_tune.inventory.lint import lint
from roce_tune.inventory.loader import load_inventory_text
from roce_tune.inventory.models import expand_interface_pattern
from roce_tune.inventory.rules import RULES, LintContext
from roce_tune.inventory.rules.capacity import SPARE_PORTS_MIN, _capacity
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.inventory.topology import Topology, build_topology

REPO = Path(__file__).resolve().parents[2]

#: every irregular case the topology resolves one by one: overlapping ranges, a switch name used twice, an
#: empty range, a port cabled twice by links, a link from a port to itself, a link to a host and to an
#: unknown device, undeclared ports, NICs on a taken port, an unknown switch and an undeclared port
EDGE = """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf,
     ports: [{name: 'Ethernet[0-12/4]', speed: 400G}, {name: 'Ethernet[8-16/4]', speed: 100G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine,
     ports: [{name: 'Ethernet[0-8/4]', speed: 400G}]}
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf,
     ports: [{name: 'Ethernet[4-20/4]', speed: 400G}]}
  - {name: leaf2, platform: sonic, model: SN4700, role: leaf,
     ports: [{name: 'Ethernet[12-0/4]', speed: 400G}, {name: Ethernet0, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet12", b: "spine1:Ethernet0"}
  - {a: "leaf1:Ethernet12", b: "spine1:Ethernet4"}
  - {a: "spine1:Ethernet8", b: "spine1:Ethernet8"}
  - {a: "leaf1:Ethernet16", b: "gpu01:eth0"}
  - {a: "border:Ethernet1", b: "spine1:Ethernet4"}
  - {a: "leaf2:Ethernet4", b: "spine1:Ethernet99"}
  - {a: "leaf2:Ethernet0", b: "leaf1:Ethernet20"}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: eth1, rdma_device: mlx5_0, speed: 400G, switch_port: "leaf1:Ethernet0"}
      - {model: connectx-7, netdev: eth2, rdma_device: mlx5_1, speed: 400G, switch_port: "leaf1:Ethernet0"}
      - {model: connectx-7, netdev: eth3, rdma_device: mlx5_2, speed: 400G, switch_port: "spine1:Ethernet4"}
      - {model: connectx-7, netdev: eth4, rdma_device: mlx5_3, speed: 400G, switch_port: "nope:Ethernet4"}
      - {model: connectx-7, netdev: eth5, rdma_device: mlx5_4, speed: 400G, switch_port: "leaf2:Ethernet8"}
      - {model: connectx-7, netdev: eth6, rdma_device: mlx5_5, speed: 400G, switch_port: "leaf1:Ethernet4"}
      - {model: connectx-7, netdev: eth7, rdma_device: mlx5_6, speed: 400G}
"""


def _topology(data: dict[str, Any] | str) -> Topology:
    text = data if isinstance(data, str) else json.dumps(data)
    return build_topology(load_inventory_text(text, "f.yaml").inventory)


def _lint(data: dict[str, Any]) -> list[Finding]:
    return lint(load_inventory_text(json.dumps(data), "f.yaml"))


@pytest.fixture(scope="module")
def fabric() -> dict[str, Any]:
    """64 hosts x 8 NICs, rail-optimised (16 leaves, 8 spines): every link and NIC on a declared free port."""
    return rail_optimised_fabric(64)


def test_irregular_inventory_resolves_one_by_one() -> None:
    topo = _topology(EDGE)
    assert topo.problems == [
        ("range", "switches[3].ports[0].name",
         "interface range 'Ethernet[12-0/4]' is empty (start > stop or step < 1)"),
        ("dangling", "links[4].a", "device 'border' is not in the inventory"),
        ("dangling", "links[5].a", "port leaf2:Ethernet4 is not declared on leaf2"),
        ("dangling", "links[5].b", "port spine1:Ethernet99 is not declared on spine1"),
        ("dangling", "hosts[0].nics[3].switch_port", "switch 'nope' is not in the inventory"),
        ("dangling", "hosts[0].nics[4].switch_port", "port leaf2:Ethernet8 is not declared on leaf2")]
    assert topo.duplicate_ports == [
        ("switches[0].ports[1].name", "leaf1:Ethernet8", "declared twice"),
        ("switches[0].ports[1].name", "leaf1:Ethernet12", "declared twice"),
        *[("switches[2].ports[0].name", f"leaf1:Ethernet{n}", "declared twice") for n in (4, 8, 12, 16)],
        ("links[1].a", "leaf1:Ethernet12", "already cabled at links[0]"),
        ("links[2].b", "spine1:Ethernet8", "already cabled at links[2]"),
        ("links[4].b", "spine1:Ethernet4", "already cabled at links[1]"),
        ("hosts[0].nics[1].switch_port", "leaf1:Ethernet0", "already cabled at hosts[0].nics[0]"),
        ("hosts[0].nics[2].switch_port", "spine1:Ethernet4", "already cabled at links[1]")]
    # the first declaration of a name wins, the second switch named leaf1 adds only its new port
    assert [(p.name, p.speed_gbps) for p in topo.ports_of("leaf1")] == [
        ("Ethernet0", 400), ("Ethernet4", 400), ("Ethernet8", 400), ("Ethernet12", 400), ("Ethernet16", 100),
        ("Ethernet20", 400)]
    # switch by switch (in the order each was first cabled), each one's ports in the order they were cabled
    assert [(k, p.kind, p.device, p.port, p.path) for k, p in topo.peers.items()] == [
        (("leaf1", "Ethernet12"), "switch", "spine1", "Ethernet0", "links[0]"),
        (("leaf1", "Ethernet16"), "external", "gpu01", "eth0", "links[3]"),
        (("leaf1", "Ethernet20"), "switch", "leaf2", "Ethernet0", "links[6]"),
        (("leaf1", "Ethernet0"), "host", "gpu01", "eth1", "hosts[0].nics[0]"),
        (("leaf1", "Ethernet4"), "host", "gpu01", "eth6", "hosts[0].nics[5]"),
        (("spine1", "Ethernet0"), "switch", "leaf1", "Ethernet12", "links[0]"),
        (("spine1", "Ethernet4"), "switch", "leaf1", "Ethernet12", "links[1]"),
        (("spine1", "Ethernet8"), "switch", "spine1", "Ethernet8", "links[2]"),
        (("leaf2", "Ethernet0"), "switch", "leaf1", "Ethernet20", "links[6]")]
    assert topo.peers == {(s, port): peer for s, peers in topo.peers_by_switch.items()
                          for port, peer in peers.items()}
    assert topo.cabled_ports("leaf1") == ["Ethernet12", "Ethernet16", "Ethernet20", "Ethernet0", "Ethernet4"]
    assert topo.foreign_link_ends == [(3, "b"), (4, "a")]
    assert [(e[:4], e[4] is None, e[5] is None) for e in topo.link_ends][4:6] == [
        (("border", "Ethernet1", "spine1", "Ethernet4"), True, False),
        (("leaf2", "Ethernet4", "spine1", "Ethernet99"), True, True)]
    assert [None if p is None else f"{p.switch}:{p.name}" for p in topo.nic_ports] == [
        "leaf1:Ethernet0", "leaf1:Ethernet0", "spine1:Ethernet4", None, None, "leaf1:Ethernet4", None]
    assert [path for path, _, _ in topo.nics] == [f"hosts[0].nics[{i}]" for i in range(7)]


def test_port_lookups_agree_with_the_declared_ports_first_declaration_winning() -> None:
    """``port`` (the cabling's per-switch index) and ``ports`` (built on first use) hold exactly the ports of
    ``ports_of``, the first declaration of a name winning, also across two switches of one name."""
    topo = _topology(EDGE)
    declared = {(p.switch, p.name): p for infos in topo.ports_by_switch.values() for p in infos}
    assert topo.ports == declared
    assert all(topo.port(*key) is info for key, info in declared.items())
    assert topo.port("leaf1", "Ethernet16").speed_gbps == 100  # the second leaf1's new port
    assert topo.port("leaf1", "Ethernet4").path == "switches[0].ports[0]"  # not the later declarations
    assert topo.port("leaf2", "Ethernet4") is None and topo.port("gpu01", "eth0") is None
    assert topo.port("nope", "Ethernet0") is None


def test_one_irregular_link_or_port_leaves_the_rest_as_the_short_path_made_it(fabric: dict[str, Any]) -> None:
    clean = _topology(fabric)
    assert not clean.problems and not clean.duplicate_ports and len(clean.peers) == 2 * len(fabric["links"]) \
        + sum(len(h["nics"]) for h in fabric["hosts"])
    leaf = fabric["switches"][0]["name"]
    odd = copy.deepcopy(fabric)
    odd["links"].append({"a": f"{leaf}:Ethernet999", "b": "border:Ethernet0"})  # one link resolved alone
    odd["switches"][0]["ports"].append(dict(fabric["switches"][0]["ports"][0]))  # a range declared twice
    topo = _topology(odd)
    assert topo.ports == clean.ports and topo.ports_by_switch == clean.ports_by_switch
    assert list(topo.peers.items()) == list(clean.peers.items())  # same peers, same order
    assert topo.peers_by_switch == clean.peers_by_switch and topo.nic_ports == clean.nic_ports
    assert topo.link_ends[:-1] == clean.link_ends
    new = len(fabric["links"])
    assert topo.problems == [
        ("dangling", f"links[{new}].a", f"port {leaf}:Ethernet999 is not declared on {leaf}"),
        ("dangling", f"links[{new}].b", "device 'border' is not in the inventory")]
    first = fabric["switches"][0]["ports"][0]["name"]
    assert topo.duplicate_ports == [("switches[0].ports[2].name", f"{leaf}:{p.name}", "declared twice")
                                    for p in clean.ports_by_switch[leaf] if p.path == "switches[0].ports[0]"]
    assert topo.duplicate_ports and "[" in first


def _edit_nic(data: dict[str, Any], host: int, nic: int, **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["hosts"][host]["nics"][nic].update(fields)
    return out


@pytest.mark.parametrize(("rule", "edit", "path"), [
    ("RT104", lambda d: _edit_nic(d, 37, 5, speed="200G"), "hosts[37].nics[5].speed"),
    ("RT105", lambda d: _edit_nic(d, 37, 5, mtu=9216), "hosts[37].nics[5].mtu"),
    ("RT112", lambda d: _edit_nic(d, 37, 5, model="connectx-99"), "hosts[37].nics[5].model"),
    ("RT124", lambda d: _edit_nic(d, 37, 5, netdev=d["hosts"][37]["nics"][4]["netdev"]),
     "hosts[37].nics[5].netdev"),
    ("RT128", lambda d: _edit_nic(d, 37, 5, cable_length="100000m"), "hosts[37].nics[5].cable_length"),
    ("RT101", lambda d: _edit_nic(d, 37, 5, switch_port=d["hosts"][37]["nics"][5]["switch_port"] + "9"),
     "hosts[37].nics[5].switch_port"),
])
def test_one_odd_nic_among_many_is_found(fabric: dict[str, Any], rule: str, edit: Any, path: str) -> None:
    """Each rule's walk is skipped only when no NIC can match (distinct values, bounds); one NIC that does
    is reported at its own field."""
    assert rule not in {f.rule for f in _lint(fabric)}
    got = [f for f in _lint(edit(fabric)) if f.rule == rule]
    assert [f.location.path for f in got] == [path], got


def test_one_port_entry_with_its_own_mtu_is_found(fabric: dict[str, Any]) -> None:
    """The host-MTU walk is skipped when the largest host MTU fits the smallest port MTU, and the link-MTU
    walk when every port has one MTU: a single port entry below them is both."""
    odd = copy.deepcopy(fabric)
    spine = next(i for i, s in enumerate(odd["switches"]) if s["role"] == "spine")
    odd["switches"][spine]["ports"][0]["mtu"] = 9000
    odd["switches"][0]["ports"][0]["mtu"] = 9000
    got = [f for f in _lint(odd) if f.rule == "RT105"]
    assert got[0].location.path == "switches[0].ports[0].mtu"
    assert "exceeds switch port MTU 9000" in got[0].message
    links = [f for f in got if f.location.path.startswith("links[")]
    spine_name = odd["switches"][spine]["name"]
    names = expand_interface_pattern(odd["switches"][spine]["ports"][0]["name"])
    at_9000 = {f"{spine_name}:{n}" for n in names}
    expected = [i for i, link in enumerate(odd["links"]) if (link["a"] in at_9000) != (link["b"] in at_9000)]
    assert expected and sorted(int(f.location.path[6:-1]) for f in links) == expected


def test_few_spare_ports_capacity_per_switch_shape_equals_each_switch_computed_alone() -> None:
    """RT115 computes a capacity once per (model, port speeds, declared ports); switches of one model that
    differ in those get their own."""
    text = """\
site: {name: lab}
switches:
  - {name: a1, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-68/4]', speed: 400G}]}
  - {name: a2, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-68/4]', speed: 100G}]}
  - {name: a3, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-136/4]', speed: 400G}]}
  - {name: a4, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-68/4]', speed: 400G}]}
links:
""" + "".join(f'  - {{a: "{sw}:Ethernet{4 * i}", b: "ext{sw}{i}:Ethernet0", cable_length: 3m}}\n'
              for sw in ("a1", "a2", "a3", "a4") for i in range(18))
    loaded = load_inventory_text(text, "f.yaml")
    catalog = load_catalog()
    ctx = LintContext(loaded, build_topology(loaded.inventory), catalog)
    ctx.rule_id = "RT115"
    got = [f.location.device for f in RULES["RT115"].check(ctx)]
    expected = []
    for sw in loaded.inventory.switches:
        declared = ctx.ports_by_switch[sw.name]
        capacity = _capacity(ctx, sw.model, Counter(p.speed for p in sw.ports), declared)
        if (capacity - len(ctx.topo.cabled_ports(sw.name))) / capacity < SPARE_PORTS_MIN:
            expected.append(sw.name)
    assert got == expected and "a1" in got and "a4" in got and "a2" not in got
    assert [f.location.device for f in lint(loaded, catalog) if f.rule == "RT115"] == expected


@pytest.mark.parametrize("name", ["asics.yaml", "nics.yaml", "switch_models.yaml"])
def test_catalog_parse_memo_equals_a_fresh_parse(name: str) -> None:
    text = (REPO / "roce_tune" / "catalog" / name).read_text(encoding="utf-8")
    assert _parse(text) == YAML(typ="safe").load(text)
    assert _parse(text) is _parse(text)  # parsed once per process
    assert load_catalog() == Catalog.model_validate(load_catalog().model_dump())


def _imports_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=REPO)
    return set(out.stdout.split())


def test_cli_module_imports_no_model_library() -> None:
    """``roce-tune --help`` (and shell completion, which runs the program) pays only for typer and rich."""
    modules = _imports_after("import roce_tune.cli")
    assert "pydantic" not in modules and "roce_tune.findings" not in modules


def test_cycle_free_plan_does_not_import_networkx() -> None:
    modules = _imports_after("from pathlib import Path\nfrom roce_tune.pipeline import derive_plan, load\n"
                             "derive_plan(load(Path('inventories/site.yaml')))")
    assert "roce_tune.tuner.deadlock" in modules and "networkx" not in modules
