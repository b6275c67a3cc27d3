"""Issue 16: the deadlock analysis walks the cabling once, switch by switch, keeps links and next hops per
switch and applies the tuner's lossless rule itself (``lossless_ports=None``, what ``build_plan`` passes).
Here it is compared with straightforward references on fabrics with cycles (down-up bounces, leaf-to-leaf and
spine-to-spine links), lossy links and admin-down ports:

* the lossless set written out (every cabled, admin-up port on a link not marked ``lossless: false``),
  passed explicitly: the same report;
* RT223 computed port by port from ``Topology.directions()`` (the check as first written);
* the per-flow oracle of ``test_deadlock.py`` restricted to admin-up links and lossless buffers: the same
  dependency-edge count, and a normal-state cycle exactly when the oracle's graph has one.
"""

from __future__ import annotations

import re
from itertools import product
from typing import Any

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.models import Inventory
from roce_tune.inventory.topology import Topology, build_topology
from roce_tune.tuner.compose import build_plan
from roce_tune.tuner.deadlock import analyze_deadlock, analyze_fabric, check_lossless_uplinks
from tests.tuner.test_deadlock import clos, fabrics_with_peer_links, planted


def reference_lossless(topo: Topology) -> set[tuple[str, str]]:
    """The tuner's lossless ports, written out: cabled, admin-up, on a link not marked lossy."""
    return {k for k, p in topo.peers.items() if p.lossless and k in topo.ports and topo.ports[k].admin_up}


def reference_uplinks(topo: Topology, lossless: set[tuple[str, str]]) -> list[Finding]:
    """RT223 port by port: per switch (natural order) its cabled ports' directions and lossless state."""
    out = []
    for sw in sorted(topo.switches, key=lambda n: [int(t) if t.isdigit() else t
                                                   for t in re.split(r"(\d+)", n)]):
        ports = topo.cabled_ports(sw)
        ups = [p for p in ports if topo.direction(sw, p) == "up"]
        downs = sum(1 for p in ports if topo.direction(sw, p) == "down" and (sw, p) in lossless)
        if ups and downs and not any((sw, p) in lossless for p in ups):
            out.append(Finding(
                rule="RT223", severity=Severity.warning, location=Location(device=sw, port=ups[0]),
                message=f"{sw} has {downs} lossless down-facing port(s) but all {len(ups)} uplink(s) "
                        "are lossy: lossless traffic leaving it upwards can be dropped at its uplink queues",
                fix="make at least the uplinks that carry RoCE lossless (remove lossless: false from those "
                    "links), or keep RoCE jobs inside this switch"))
    return out


def restricted_oracle(topo: Topology, lossless: set[tuple[str, str]]) -> tuple[int, nx.DiGraph, int]:
    """Per-flow oracle over admin-up switch links: every shortest path of every (source, destination)
    switch pair with admin-up host ports; dependency edges only between lossless ingress buffers. Returns
    (edges, dependency graph, lossless buffers: admin-up host ports, ports facing a device outside the
    inventory, and ingress ports of switch links admin-up at both ends)."""
    up = {k for k, info in topo.ports.items() if info.admin_up}
    g = nx.MultiGraph()
    g.add_nodes_from(topo.switches)
    ports: dict[tuple[str, str], list[str]] = {}  # (a, b) -> ingress ports on b facing a
    for (s, p), peer in topo.peers.items():
        far = (peer.device, peer.port)
        if peer.kind == "switch" and s != peer.device and (s, p) in up and far in up:
            ports.setdefault((peer.device, s), []).append(p)
            if s < peer.device:
                g.add_edge(s, peer.device)
    simple = nx.Graph(g)
    nodes = sum(1 for (s, p), peer in topo.peers.items() if (s, p) in up and (s, p) in lossless
                and (peer.kind != "switch" or (peer.device != s and (peer.device, peer.port) in up)))
    hostports = {s: [p for (sw, p), peer in topo.peers.items() if sw == s and peer.kind == "host"
                     and (sw, p) in up] for s in topo.switches}
    leaves = sorted(s for s, hp in hostports.items() if hp)
    dep = nx.DiGraph()
    for src, dst in product(leaves, leaves):
        if src == dst or not nx.has_path(simple, src, dst):
            continue
        for path in nx.all_shortest_paths(simple, src, dst):
            for hp, q in product(hostports[src], ports[(src, path[1])]):
                if (src, hp) in lossless and (path[1], q) in lossless:
                    dep.add_edge((src, hp), (path[1], q))
            for x, a, y in zip(path, path[1:], path[2:]):
                for p, q in product(ports[(x, a)], ports[(a, y)]):
                    if (a, p) in lossless and (y, q) in lossless:
                        dep.add_edge((a, p), (y, q))
    return dep.number_of_edges(), dep, nodes


def _individual_ports(data: dict[str, Any], down: set[tuple[str, int]]) -> None:
    """Declare every switch's Ethernet0..60 one by one, ``down`` (switch, port number) admin-down."""
    for sw in data["switches"]:
        sw["ports"] = [{"name": f"Ethernet{n}", "speed": "400G", "admin_up": (sw["name"], n) not in down}
                       for n in range(0, 64, 4)]


@st.composite
def varied_fabrics(draw: st.DrawFn) -> Inventory:
    """Fabrics with same-tier links (cycles after failures or in the normal state), some links lossy and
    some cabled ports admin-down."""
    data = draw(fabrics_with_peer_links()).model_dump(mode="json", exclude_none=True)
    for link in data["links"]:
        link["lossless"] = draw(st.booleans()) or draw(st.booleans())  # ~1 in 4 lossy
    cabled = sorted({end for link in data["links"] for end in (link["a"], link["b"])}
                    | {n["switch_port"] for h in data["hosts"] for n in h["nics"]})
    down = draw(st.lists(st.sampled_from(cabled), max_size=3, unique=True))
    _individual_ports(data, {(e.split(":")[0], int(e.split(":")[1][len("Ethernet"):])) for e in down})
    return Inventory.model_validate(data)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(varied_fabrics())
def test_tuner_rule_equals_explicit_set_and_port_by_port_uplinks(inv: Inventory) -> None:
    topo = build_topology(inv)
    lossless = reference_lossless(topo)
    report, uplinks = analyze_fabric(topo, [3, 4])
    assert report == analyze_deadlock(topo, [3, 4], lossless)
    assert report == analyze_deadlock(topo, [4, 3])
    assert uplinks == reference_uplinks(topo, lossless) == check_lossless_uplinks(topo, lossless)
    assert check_lossless_uplinks(topo, None) == uplinks


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(varied_fabrics())
def test_edges_and_normal_state_cycles_match_the_restricted_oracle(inv: Inventory) -> None:
    topo = build_topology(inv)
    rep = analyze_deadlock(topo, [3])
    edges, dep, nodes = restricted_oracle(topo, reference_lossless(topo))
    assert rep.nodes == nodes
    if not any("unrestricted shortest-path" in n for n in rep.notes):
        return  # admin-down ports removed every same-tier link: valley-free routing, which the oracle is not
    assert rep.edges == edges
    assert (not nx.is_directed_acyclic_graph(dep)) == any(c.failed_link is None for c in rep.cycles)


def test_spine_to_spine_link_with_an_admin_down_uplink_and_a_lossy_link() -> None:
    """A worked case: spine1-spine2 cabled, leaf4 single-homed, one leaf uplink admin-down, one lossy link;
    the plan's deadlock section equals the analysis with the plan's own lossless ports passed in."""
    data = clos(leaves=4, single_homed={4: 2},
                extra_links=(("spine1:Ethernet60", "spine2:Ethernet60"),)).model_dump(mode="json",
                                                                                       exclude_none=True)
    _individual_ports(data, {("leaf2", 36)})
    data["links"][0]["lossless"] = False
    inv = Inventory.model_validate(data)
    topo = build_topology(inv)
    plan = build_plan(inv, topology=topo)
    plan_lossless = {(s.name, p.name) for s in plan.switches for p in s.ports if p.lossless}
    assert plan_lossless == reference_lossless(topo)
    assert ("leaf2", "Ethernet36") not in plan_lossless and ("leaf1", "Ethernet32") not in plan_lossless
    assert plan.deadlock == analyze_deadlock(topo, [3], plan_lossless)
    assert "RT220" in {f.rule for f in plan.deadlock.flagged}
    assert (plan.deadlock.edges, plan.deadlock.nodes) == restricted_oracle(topo, plan_lossless)[::2]


def test_planted_bounce_with_a_lossy_bounce_link_same_both_ways() -> None:
    topo = build_topology(planted())
    lossless = reference_lossless(topo) - {("spine1", "Ethernet0")}
    assert analyze_deadlock(topo, [3], lossless).edges == restricted_oracle(topo, lossless)[0]
    assert analyze_fabric(topo, [3])[0] == analyze_deadlock(topo, [3], reference_lossless(topo))
