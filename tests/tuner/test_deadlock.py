"""PFC deadlock analysis: planted cycle, clean Clos, flags, notes, an independent per-flow oracle, speed.

The oracle is the per-flow algorithm of DOMAIN.md §5 steps 1-3, written independently with networkx:
for every (source leaf, destination leaf) pair walk *every* shortest path (``nx.all_shortest_paths``),
add a dependency edge per consecutive pair of switch ingress buffers (over every parallel-link port
combination), then look for cycles. The tuner must agree with it on edge counts and on cycles without
ever enumerating flows.
"""

from __future__ import annotations

import re
import time
from itertools import product

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roce_tune.inventory.models import Inventory
from roce_tune.inventory.synthetic import rail_optimised_fabric
from roce_tune.inventory.topology import Topology, build_topology
from roce_tune.tuner.deadlock import LARGE_FABRIC_HOSTS, analyze_deadlock

LINK_RE = re.compile(r"^[A-Za-z][\w.-]*:[\w/:.-]+ -> [A-Za-z][\w.-]*:[\w/:.-]+$")


def clos(spines: int = 2, leaves: int = 4, hosts_per_leaf: int = 2,
         extra_links: tuple[tuple[str, str], ...] = (),
         single_homed: dict[int, int] | None = None) -> Inventory:
    """leafN:Ethernet0.. face hosts, leafN:Ethernet(32+4s) -> spine(s+1):Ethernet(4(N-1)).

    ``single_homed`` = {leaf number: the only spine it is cabled to}.
    """
    sw = [{"name": f"spine{s + 1}", "platform": "sonic", "model": "SN4700", "role": "spine",
           "ports": [{"name": "Ethernet[0-60/4]", "speed": "400G"}]} for s in range(spines)]
    sw += [{"name": f"leaf{n + 1}", "platform": "sonic", "model": "SN4700", "role": "leaf",
            "ports": [{"name": "Ethernet[0-60/4]", "speed": "400G"}]} for n in range(leaves)]
    homes = single_homed or {}
    links = [{"a": f"leaf{n + 1}:Ethernet{32 + 4 * s}", "b": f"spine{s + 1}:Ethernet{4 * n}"}
             for n in range(leaves) for s in range(spines) if homes.get(n + 1, s + 1) == s + 1]
    links += [{"a": a, "b": b} for a, b in extra_links]
    hosts = [{"name": f"h{n + 1}x{h}", "nics": [{"model": "connectx-7", "netdev": "ens1f0np0",
                                                 "rdma_device": "mlx5_0",
                                                 "speed": "400G",
                                                 "switch_port": f"leaf{n + 1}:Ethernet{4 * h}"}]}
             for n in range(leaves) for h in range(hosts_per_leaf)]
    return Inventory.model_validate({"site": {"name": "t"}, "switches": sw, "links": links, "hosts": hosts})


#: leaf3 and leaf4 each have one uplink (to different spines) and back each other up with a leaf-to-leaf
#: link. When that link fails, leaf3 <-> leaf4 traffic must bounce down-up through leaf1/leaf2.
PEER = ("leaf3:Ethernet60", "leaf4:Ethernet60")


def planted() -> Inventory:
    return clos(single_homed={3: 1, 4: 2}, extra_links=(PEER,))


# --- oracle ------------------------------------------------------------------------------------------------
def _switch_graph(topo: Topology, drop: tuple[str, str] | None = None) -> nx.MultiGraph:
    g = nx.MultiGraph()
    g.add_nodes_from(topo.switches)
    for (s, p), peer in topo.peers.items():
        if peer.kind == "switch" and s < peer.device and (s, p) != drop and (peer.device, peer.port) != drop:
            g.add_edge(s, peer.device, ports={s: p, peer.device: peer.port})
    return g


def oracle(topo: Topology, drop: tuple[str, str] | None = None) -> tuple[int, nx.DiGraph]:
    """(port-level edge count, port-level dependency graph) by walking every shortest path of every flow."""
    g = _switch_graph(topo, drop)
    simple = nx.Graph(g)
    ports: dict[tuple[str, str], list[str]] = {}  # (a, b) -> ingress ports on b facing a
    for a, b, data in g.edges(data=True):
        pa, pb = data["ports"][a], data["ports"][b]
        ports.setdefault((a, b), []).append(pb)
        ports.setdefault((b, a), []).append(pa)
    hostports = {s: [p for (sw, p), peer in topo.peers.items() if sw == s and peer.kind == "host"]
                 for s in topo.switches}
    leaves = sorted(s for s, hp in hostports.items() if hp)
    dep = nx.DiGraph()
    for src, dst in product(leaves, leaves):
        if src == dst or not nx.has_path(simple, src, dst):
            continue
        for path in nx.all_shortest_paths(simple, src, dst):
            for hp in hostports[src]:
                for q in ports[(src, path[1])]:
                    dep.add_edge((src, hp), (path[1], q))
            for x, a, y in zip(path, path[1:], path[2:]):
                for p, q in product(ports[(x, a)], ports[(a, y)]):
                    dep.add_edge((a, p), (y, q))
    return dep.number_of_edges(), dep


def _cycle_edges(links: list[str]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Consecutive ingress buffers of a reported cycle, as oracle nodes (device, port)."""
    ins = [tuple(link.split(" -> ")[1].split(":", 1)) for link in links]
    return list(zip(ins, ins[1:] + ins[:1]))


# --- tests --------------------------------------------------------------------------------------------------
def test_clean_clos_has_no_cycle_and_counts_match_oracle() -> None:
    topo = build_topology(clos())
    rep = analyze_deadlock(topo, [3])
    assert rep.ok and rep.cycles == [] and rep.flagged == []
    assert rep.scenarios_checked == 8  # 4 leaves x 2 spines, every single link failure
    assert rep.nodes == 8 + 8 + 8  # host-facing + leaf uplink + spine downlink ingress buffers
    edges, dep = oracle(topo)
    assert rep.edges == edges
    assert nx.is_directed_acyclic_graph(dep)


@pytest.mark.parametrize("drop", [("leaf1", "Ethernet32"), ("spine2", "Ethernet12")])
def test_clean_clos_single_failures_stay_acyclic_in_the_oracle(drop: tuple[str, str]) -> None:
    """The valley-free theorem on an example: re-routed shortest paths after a failure create no cycle."""
    topo = build_topology(clos())
    _, dep = oracle(topo, drop)
    assert nx.is_directed_acyclic_graph(dep)


def test_planted_bounce_cycle_is_found_with_readable_links() -> None:
    topo = build_topology(planted())
    rep = analyze_deadlock(topo, [3])
    assert not rep.ok and rep.cycles
    for cyc in rep.cycles:
        assert cyc.priority == 3
        assert cyc.failed_link == "leaf3:Ethernet60 <-> leaf4:Ethernet60"
        assert all(LINK_RE.match(link) for link in cyc.links), cyc.links
        # a closed walk: each link starts on the device where the previous one ended
        devs = [(link.split(" -> ")[0].split(":")[0], link.split(" -> ")[1].split(":")[0])
                for link in cyc.links]
        assert all(devs[k][1] == devs[(k + 1) % len(devs)][0] for k in range(len(devs)))
        # the bounce: leaf1 or leaf2 receives from one spine and sends up to the other
        assert {"leaf1", "leaf2"} <= {d for d, _ in devs}
    # the oracle sees the same cycles after the failure, and none in the normal state
    _, dep_failed = oracle(topo, ("leaf3", "Ethernet60"))
    for cyc in rep.cycles:
        assert all(dep_failed.has_edge(u, v) for u, v in _cycle_edges(cyc.links))
    edges, dep_normal = oracle(topo)
    assert nx.is_directed_acyclic_graph(dep_normal)
    assert rep.edges == edges
    rules = [f.rule for f in rep.flagged]
    assert rules.count("RT222") == len(rep.cycles)
    assert all(f.severity.value == "error" for f in rep.flagged if f.rule == "RT222")
    assert rules.count("RT220") == 1  # the lossless leaf-to-leaf link


def test_cycles_reported_per_lossless_priority() -> None:
    rep = analyze_deadlock(build_topology(planted()), [4, 3])
    prios = [c.priority for c in rep.cycles]
    assert prios.count(3) == prios.count(4) >= 1
    assert rep.nodes == 2 * analyze_deadlock(build_topology(planted()), [3]).nodes


def test_lossy_loop_ports_break_the_cycle() -> None:
    """A buffer that drops instead of pausing ends the dependency chain (DOMAIN.md §5 step 1)."""
    topo = build_topology(planted())
    lossless = {k for k, p in topo.peers.items()
                if not (k[0].startswith("spine") and p.device in ("leaf1", "leaf2"))}
    rep = analyze_deadlock(topo, [3], lossless)
    assert rep.ok


def test_peer_link_kept_lossy_is_not_flagged_but_bounce_still_found() -> None:
    topo = build_topology(planted())
    lossless = {k for k in topo.peers if k not in (("leaf3", "Ethernet60"), ("leaf4", "Ethernet60"))}
    rep = analyze_deadlock(topo, [3], lossless)
    assert "RT220" not in {f.rule for f in rep.flagged}
    assert rep.cycles  # the bounce goes through leaf1/leaf2, not through the peer link


def test_failure_bound_examines_same_tier_link_first() -> None:
    rep = analyze_deadlock(build_topology(planted()), [3], max_failure_scenarios=1)
    assert rep.scenarios_checked == 1 and rep.cycles
    assert any("max_failure_scenarios=1" in n and "6 of 7" in n for n in rep.notes)


def test_external_device_port_flagged() -> None:
    inv = clos(extra_links=(("leaf1:Ethernet60", "fw1:eth0"),))
    rep = analyze_deadlock(build_topology(inv), [3])
    ext = [f for f in rep.flagged if f.rule == "RT221"]
    assert len(ext) == 1 and (ext[0].location.device, ext[0].location.port) == ("leaf1", "Ethernet60")
    assert ext[0].severity.value == "warning" and rep.ok
    # not flagged once the port is lossy
    topo = build_topology(inv)
    rep2 = analyze_deadlock(topo, [3], {k for k in topo.peers if k != ("leaf1", "Ethernet60")})
    assert "RT221" not in {f.rule for f in rep2.flagged}


def test_large_fabric_note() -> None:
    small = analyze_deadlock(build_topology(clos(hosts_per_leaf=8)), [3])  # 32 hosts: not > 32
    big = analyze_deadlock(build_topology(clos(hosts_per_leaf=9)), [3])  # 36 hosts
    assert LARGE_FABRIC_HOSTS == 32
    assert not any("flooded" in n for n in small.notes)
    note = next(n for n in big.notes if "flooded" in n)
    assert "drop-not-flood" in note and "transient loops" in note and "storm" in note


def test_valley_free_blackhole_is_noted_not_a_cycle() -> None:
    """Single-homed leaves on different spines and no peer link: no valley-free route, no bounce."""
    rep = analyze_deadlock(build_topology(clos(single_homed={3: 1, 4: 2})), [3])
    assert rep.ok
    assert any("black-holed" in n for n in rep.notes)


def test_no_lossless_priorities_nothing_flagged() -> None:
    rep = analyze_deadlock(build_topology(planted()), [])
    assert rep.nodes == 0 and rep.edges == 0 and rep.cycles == [] and rep.flagged == []


def three_tier(pods: int = 2, leaves: int = 3, spines: int = 2, per_plane: int = 2,
               parallel: int = 2) -> Inventory:
    """Pods of ``leaves`` x ``spines``; spine i of every pod joins the ``per_plane`` superspines of plane
    i with ``parallel`` links each (the plane layout of roce_tune.inventory.synthetic)."""
    sw, links, hosts = [], [], []
    ports = [{"name": "Ethernet[0-124/4]", "speed": "400G"}]
    for p in range(pods):
        for s in range(spines):
            sw.append({"name": f"p{p}-spine{s}", "platform": "sonic", "model": "SN4700", "role": "spine",
                       "ports": ports})
            for u in range(per_plane * parallel):
                links.append({"a": f"p{p}-spine{s}:Ethernet{64 + 4 * u}",
                              "b": f"ss{s}-{u % per_plane}:Ethernet{4 * (p * parallel + u // per_plane)}"})
        for n in range(leaves):
            sw.append({"name": f"p{p}-leaf{n}", "platform": "sonic", "model": "SN4700", "role": "leaf",
                       "ports": ports})
            links += [{"a": f"p{p}-leaf{n}:Ethernet{64 + 4 * s}", "b": f"p{p}-spine{s}:Ethernet{4 * n}"}
                      for s in range(spines)]
            hosts += [{"name": f"h{p}-{n}-{h}", "nics": [{"model": "connectx-7", "netdev": "ens1f0np0",
                       "rdma_device": "mlx5_0", "speed": "400G",
                       "switch_port": f"p{p}-leaf{n}:Ethernet{4 * h}"}]}
                      for h in range(2)]
    sw += [{"name": f"ss{s}-{j}", "platform": "sonic", "model": "SN4700", "role": "superspine",
            "ports": ports}
           for s in range(spines) for j in range(per_plane)]
    return Inventory.model_validate({"site": {"name": "t"}, "switches": sw, "links": links, "hosts": hosts})


def test_three_tier_counts_match_oracle_and_deterministic() -> None:
    topo = build_topology(three_tier())
    assert topo.tiers() == 3
    rep = analyze_deadlock(topo, [3])
    edges, dep = oracle(topo)
    assert rep.edges == edges and rep.ok and nx.is_directed_acyclic_graph(dep)
    assert rep.scenarios_checked == 2 * 3 * 2 + 2 * 2 * 2 * 2  # leaf-spine + spine-superspine links
    assert rep == analyze_deadlock(topo, [3])


@pytest.mark.parametrize("n_hosts", [512, pytest.param(4096, marks=pytest.mark.slow)])
def test_rail_optimised_fabric_edges_and_scenarios(n_hosts: int) -> None:
    """Benchmark fabric: 4,096 hosts x 8 NICs (32,768 host ports, 1,024 leaves, 512 spines,
    256 superspines); README's run analyses its 512-host cut (4 pods: 128 leaves, 64 spines, 32
    superspines of 4 spines x 16 ports), the same three tiers and formulas at an eighth of the size."""
    topo = build_topology(Inventory.model_validate(rail_optimised_fabric(n_hosts)))
    lossless = set(topo.peers)
    t0 = time.perf_counter()
    rep = analyze_deadlock(topo, [3], lossless)
    seconds = time.perf_counter() - t0
    print(f"deadlock analysis {n_hosts} hosts: {seconds:.3f} s, nodes={rep.nodes} edges={rep.edges} "
          f"scenarios={rep.scenarios_checked}")
    pods = n_hosts // 128  # 4 SUs of 32 hosts
    leaves, spines, superspines = 32 * pods, 16 * pods, 8 * pods  # 16 planes of pods / 2 superspines
    links_per_spine = 64 // pods  # a superspine's 64 ports, spread evenly over the pods' spines of its plane
    assert rep.ok and rep.scenarios_checked == leaves * 16 + spines * 32  # every leaf-spine and spine-ss link
    # edges by hand: leaf 32 host ports x 16 uplinks; spine (32 leaves x (31 + 32 up) + 32 up-ports x 32
    # down); superspine 64 ports x (the ports to the other spines: 64 - links_per_spine); at 4096 hosts
    # 1024 * 32 * 16 + 512 * (32 * 63 + 32 * 32) + 256 * (32 * 2 * 62)
    assert rep.edges == (leaves * 32 * 16 + spines * (32 * 63 + 32 * 32)
                         + superspines * 64 * (64 - links_per_spine))
    if n_hosts == 4096:
        assert (leaves, spines, superspines, rep.edges) == (
            1024, 512, 256, 1024 * 32 * 16 + 512 * (32 * 63 + 32 * 32) + 256 * (32 * 2 * 62))
    # speed (target 1.5 s on one core) is measured by benchmarks/bench_plan.py, not asserted here: a timed
    # assertion fails on a loaded machine without saying anything about the code


# --- random fabrics with same-tier links against the oracle ------------------------------------------


@st.composite
def fabrics_with_peer_links(draw: st.DrawFn) -> Inventory:
    n_leaves, n_spines = draw(st.integers(3, 5)), draw(st.integers(2, 3))
    homes: dict[int, int] = {}
    for leaf in range(1, n_leaves + 1):
        if draw(st.booleans()):
            homes[leaf] = draw(st.integers(1, n_spines))
    pairs = [(f"leaf{a}", f"leaf{b}") for a in range(1, n_leaves + 1) for b in range(a + 1, n_leaves + 1)]
    pairs += [(f"spine{a}", f"spine{b}") for a in range(1, n_spines + 1) for b in range(a + 1, n_spines + 1)]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=3, unique=True))
    used: dict[str, int] = {}
    extra = []
    for a, b in chosen:  # peer links on free ports 60, 56, 52 ...
        pa, pb = 60 - 4 * used.get(a, 0), 60 - 4 * used.get(b, 0)
        used[a], used[b] = used.get(a, 0) + 1, used.get(b, 0) + 1
        extra.append((f"{a}:Ethernet{pa}", f"{b}:Ethernet{pb}"))
    return clos(spines=n_spines, leaves=n_leaves, hosts_per_leaf=1, extra_links=tuple(extra),
                single_homed=homes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fabrics_with_peer_links())
def test_random_fabrics_with_peer_links_agree_with_oracle(inv: Inventory) -> None:
    topo = build_topology(inv)
    rep = analyze_deadlock(topo, [3])
    edges, dep = oracle(topo)
    assert rep.edges == edges
    normal_cyclic = not nx.is_directed_acyclic_graph(dep)
    assert normal_cyclic == any(c.failed_link is None for c in rep.cycles)
    for cyc in rep.cycles:  # every reported cycle is real in the oracle of its scenario
        drop = None if cyc.failed_link is None else tuple(cyc.failed_link.split(" <-> ")[0].split(":", 1))
        g = dep if drop is None else oracle(topo, drop)[1]  # type: ignore[arg-type]
        assert all(g.has_edge(u, v) for u, v in _cycle_edges(cyc.links))
    if normal_cyclic:
        return
    switch_links = sorted((s, p) for (s, p), peer in topo.peers.items() if peer.kind == "switch"
                          and s < peer.device)
    exposed = [d for d in switch_links if not nx.is_directed_acyclic_graph(oracle(topo, d)[1])]
    assert bool(exposed) == any(c.failed_link is not None for c in rep.cycles)


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 5), st.integers(2, 4), st.data())
def test_random_tiered_fabrics_edges_match_oracle(n_leaves: int, n_spines: int, data: st.DataObject) -> None:
    """Tiered, every leaf pair sharing a spine: shortest paths are valley-free, so the oracle applies."""
    homes = {leaf: data.draw(st.integers(1, n_spines)) for leaf in range(1, n_leaves + 1)
             if data.draw(st.booleans())}
    if len(set(homes.values())) > 1:
        homes = {leaf: 1 for leaf in homes}
    topo = build_topology(clos(spines=n_spines, leaves=n_leaves, hosts_per_leaf=2, single_homed=homes))
    rep = analyze_deadlock(topo, [3])
    edges, dep = oracle(topo)
    assert rep.ok and rep.edges == edges and nx.is_directed_acyclic_graph(dep)


def test_link_marked_lossless_false_is_lossy_end_to_end() -> None:
    """``lossless: false`` on the peer link: both ends carry no PFC, headroom or ECN profile, RT220 goes away,
    the deadlock check leaves the link out, and the SONiC rendering has no lossless PG on those ports."""
    import json

    from roce_tune.render.outputs import render_outputs
    from roce_tune.tuner.compose import build_plan

    def plan_of(lossless: bool):  # type: ignore[no-untyped-def]
        inv = planted()
        data = inv.model_dump(mode="json", exclude_none=True)
        for link in data["links"]:
            if (link["a"], link["b"]) == PEER:
                link["lossless"] = lossless
        return build_plan(Inventory.model_validate(data))

    ends = [tuple(e.split(":")) for e in PEER]
    lossy = plan_of(False)
    ports = {(s.name, p.name): p for s in lossy.switches for p in s.ports}
    for end in ends:
        p = ports[end]
        assert not p.lossless and p.pfc_priorities == [] and p.headroom is None and p.ecn_profile is None
        assert p.peer is not None  # still cabled: only out of the lossless domain
    assert "RT220" not in {f.rule for f in lossy.findings}
    assert "RT220" in {f.rule for f in plan_of(True).findings}
    assert lossy.summary.lossless_ports == plan_of(True).summary.lossless_ports - 2
    assert lossy.deadlock.nodes == plan_of(True).deadlock.nodes - 2  # one lossless priority: a node per port
    files = render_outputs(lossy, include_hosts=False)
    db = json.loads(files["switches/leaf3.json"])
    assert not any(k.startswith("Ethernet60|") for k in db.get("BUFFER_PG", {}) if k.endswith("|3"))
    assert "pfc_enable" not in db["PORT_QOS_MAP"].get("Ethernet60", {})
    assert "pfc_enable" in db["PORT_QOS_MAP"]["Ethernet0"]  # a host port stays lossless


def test_external_link_marked_lossless_false_is_not_flagged() -> None:
    from roce_tune.inventory.lint import lint
    from roce_tune.inventory.loader import load_inventory_text

    text = """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet120, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet120", b: "border1:Ethernet0", cable_length: 30m, lossless: %s}
"""
    rules = {f.rule for f in lint(load_inventory_text(text % "true", "x.yaml"))}
    assert "RT113" in rules
    assert "RT113" not in {f.rule for f in lint(load_inventory_text(text % "false", "x.yaml"))}


def test_leaf_with_only_lossy_uplinks_is_flagged() -> None:
    """RT223: leaf1's lossless host ports reach the spines only over lossy links."""
    from roce_tune.tuner.compose import build_plan

    data = clos().model_dump(mode="json", exclude_none=True)
    for link in data["links"]:
        if link["a"].startswith("leaf1:"):
            link["lossless"] = False
    plan = build_plan(Inventory.model_validate(data))
    got = [f for f in plan.findings if f.rule == "RT223"]
    assert [(f.location.device, f.severity.value) for f in got] == [("leaf1", "warning")]
    assert "2 uplink(s)" in got[0].message
    assert not [f for f in build_plan(clos()).findings if f.rule == "RT223"]  # all lossless: nothing
    one = Inventory.model_validate({**data, "links": [dict(link, lossless=True)
                                                      if link["b"] == "spine1:Ethernet0"
                                                      else link for link in data["links"]]})
    assert not [f for f in build_plan(one).findings if f.rule == "RT223"]  # one lossless uplink suffices


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(fabrics_with_peer_links(),
                 st.builds(three_tier, st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
                           st.integers(1, 2), st.integers(1, 2))),
       st.data())
def test_counted_turns_equal_listed_turns(inv: Inventory, data: st.DataObject) -> None:
    """Large tiered fabrics count dependency edges from next-hop groups without listing turns
    (``_transit_count``); the count must equal the sum over the listed turns, also with lossy ports."""
    from roce_tune.tuner.deadlock import _build, _route_shortest, _route_valley_free, _turns

    topo = build_topology(inv)
    ports = sorted(k for k, p in topo.peers.items())
    lossy = set(data.draw(st.lists(st.sampled_from(ports), max_size=4))) if ports else set()
    fab = _build(topo, set(ports) - lossy, flag=False)
    tiered = not any(fab.tier[i] == fab.tier[j] for i, row in enumerate(fab.links) for j in row)
    routes = _route_valley_free(fab) if tiered else _route_shortest(fab)
    assert _turns(fab, routes, False)[0] == _turns(fab, routes, True)[0]
