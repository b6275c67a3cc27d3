"""PFC deadlock check: cyclic buffer dependencies under ECMP routing, normal and single-link-failure states.

Model (docs/derivation.md#pfc-deadlock "How roce-tune can CHECK a topology + routing"):

* A node is a lossless ingress buffer ``(switch, ingress port, priority)``. Host NIC receive queues are
  sinks (they never wait), so they are not nodes; host-facing switch ingress ports are.
* An edge ``(A, a, p) -> (B, b, p)`` means some route arrives at A on port ``a`` and leaves towards B,
  arriving on B's port ``b``: a packet held in the first buffer needs space in the second. There is no
  DSCP remap, so the graph is the same for every lossless priority; a buffer that is not lossless (port
  not in ``lossless_ports``) drops instead of pausing and breaks the chain.
* A cycle (cyclic buffer dependency, CBD) means PFC can deadlock (Hu et al. HotNets'16; Tagger, CoNEXT'17;
  Dally & Seitz 1987 for the acyclic-channel-graph theorem).

Routing, at switch granularity (parallel links are one ECMP group; sources and destinations are the
switches that have hosts; every host talks to every other host):

* **Tiered fabric (no same-tier links): valley-free shortest-path ECMP.** A switch forwards down when the
  destination is below it, otherwise up to the parents with the shortest up-then-down route. This is
  what eBGP with the RFC 7938 ASN plan converges to: a down-up path repeats a tier's ASN and is dropped
  by AS-path loop prevention, so failures re-route valley-free or withdraw the route (never bounce).
* **Same-tier (peer) links present: unrestricted shortest-path ECMP** over the (remaining) switch graph,
  the conservative model (IGP-like, no valley filter): peer links and failures can then create down-up
  "bounces" (e.g. leaf3 -> spine1 -> leaf1 -> spine2 -> leaf4 when leaf3/leaf4 lose their cross-link).

Theorem (valley-free => acyclic). Let T be the top tier and give each ingress buffer ``b = (A, port to X)``
the rank ``phi(b) = tier(A)`` when X is below A (host or lower tier) and ``2T + 1 - tier(A)`` when X is
above A. Along a valley-free route the up-buffers have strictly increasing tier and the down-buffers
strictly decreasing tier, and every down-buffer ranks above every up-buffer (``>= T + 1 > T``), so ``phi``
strictly increases along every dependency edge such routes create. A strictly increasing potential
admits no cycle. This holds for any set of valley-free routes, hence for every single-link failure
re-routed valley-free: in a tiered fabric those scenarios are *counted* (by the theorem), not recomputed.

Lemma (used for fabrics with peer links). If failing link ``(u, v)`` changes no switch's distance to any
destination, the new next-hop sets are the old ones minus that link, so the new dependency graph is a
subgraph of the normal-state graph and adds no cycle. Distances are unchanged iff ``v`` is never ``u``'s
*only* next hop (and vice versa) or a parallel link remains; only the other failures are recomputed.

Cost. All destinations are handled at once as Python-int bitsets (bit k = k-th host-bearing switch):
distance levels, next-hop sets per directed switch pair and "used" sets cost O(levels x switch links)
big-int operations, and dependency edges are counted per turn ``x -> A -> y`` (O(sum of switch degree^2)),
never per flow. Measured on one core (Python 3.11, a shared machine): 0.16-0.2 s for
``rail_optimised_fabric(4096)`` (4,096 hosts x 8 NICs, 1,792 switches, 98,304 lossless buffers, 3.1 M edges,
32,768 failure scenarios), of which ~0.05 s walking the cabling link by link. Fabrics with same-tier links
pay O(levels x links + sum degree^2) per re-computed failure, bounded by :data:`RECOMPUTE_WORK_BUDGET`.

Scale note: more than :data:`LARGE_FABRIC_HOSTS` (32) *hosts* -- about one rack of 8-GPU servers behind a leaf
pair -- adds a plan note on what a static graph cannot see: lossless packets flooded for unresolved ARP/ND,
transient loops during convergence and NIC PFC storms (docs/derivation.md#pfc-deadlock). Hosts, not switches,
because all three grow with the number of endpoints.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import reduce
from itertools import islice, zip_longest
from operator import and_, or_

from roce_tune.findings import Finding, Location, Severity
from roce_tune.gcpause import gc_paused
from roce_tune.inventory.topology import Peer, Topology
from roce_tune.plan import DeadlockCycle, DeadlockReport

#: More hosts than this gets the plan-level note about risks this analysis cannot see
#: (docs/derivation.md#pfc-deadlock).
LARGE_FABRIC_HOSTS = 32
#: Distinct cycles reported (each once per lossless priority); more are summarised in a note.
MAX_REPORTED_CYCLES = 32
#: Work budget (switch-pair visits) for full re-computations when ``max_failure_scenarios`` is None.
RECOMPUTE_WORK_BUDGET = 6_000_000
#: Tiered fabrics up to this many candidate turns also get an explicit cycle search (a self-check).
EXPLICIT_TURN_LIMIT = 200_000

_S = "docs/derivation.md#pfc-deadlock (PFC deadlock)"


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


@dataclass
class _Fabric:
    """Switch graph indexed by integers (switches in natural name order)."""

    names: list[str]
    tier: list[int]
    links: list[dict[int, list[tuple[str, str]]]]  # links[i][j] = [(port on i, port on j)] admin-up links
    adj: list[list[int]]  # adj[i] = sorted keys of links[i]
    dbit: list[int]  # destination bit of host-bearing switches, else 0
    host_lossless: list[int]  # lossless host-facing ports per switch
    lossless_in: list[dict[int, int]]  # lossless_in[a][x] = lossless ingress ports on a facing x
    lossless_set: set[tuple[str, str]] | None  # None: the tuner's rule (admin-up, link not lossy)
    topo: Topology
    nodes: int = 0
    flagged: list[Finding] = field(default_factory=list)
    #: per switch (RT223): (first up-facing cabled port or None, lossless down-facing ports, up-facing
    #: ports, whether an up-facing port is lossless)
    uplinks: list[tuple[str | None, int, int, bool]] = field(default_factory=list)

    def is_lossless(self, sw: str, port: str) -> bool:
        if self.lossless_set is not None:
            return (sw, port) in self.lossless_set
        info, peer = self.topo.port(sw, port), self.topo.peers_of(sw).get(port)
        return info is not None and info.admin_up and peer is not None and peer.lossless


@dataclass
class _Routes:
    nh: list[dict[int, int]]  # nh[i][j] = destinations i forwards to j
    used: list[int]  # destinations of packets that can be at switch i
    src: list[int]  # destinations the hosts of switch i send to (reachable ones)
    unreachable_pairs: int


def _unknown_peer(sw: str, port: str, peer: Peer) -> Finding:
    return Finding(
        rule="RT221", severity=Severity.warning, location=Location(device=sw, port=port),
        message=f"lossless port {sw}:{port} faces {peer.device}:{peer.port}, a device not in the "
                "inventory: its routing and PFC behaviour are unknown to the deadlock check",
        fix="make the port lossy (lossless: false on its link) or add the device to the inventory")


def _walk_cabling(topo: Topology, fab: _Fabric, idx: dict[str, int], flag: bool,
                  per_port: bool = False) -> None:
    """Account every cabled port (links, lossless ingress ports, destinations, the RT223 uplink state
    :data:`_Fabric.uplinks`).

    A topology that resolved without problems (every link between two declared switch ports, every cabled
    NIC on a declared port, no port declared or cabled twice) is walked link by link and NIC by NIC
    (:func:`_walk_links`, :func:`_walk_nics`: both ends of a link at once, no lookups by port); any other
    switch by switch, port by port in cabling order (:func:`_walk_switch`, :func:`_walk_external_ports`). Both
    give the same accounts in the same order: a switch's links are cabled in link order, then its NICs.
    ``per_port`` walks port by port whatever the topology (tests compare the two walks).
    """
    n = len(fab.names)
    ups: list[list[tuple[str, bool]]] = [[] for _ in range(n)]  # (port, lossless) of up-facing ports
    downs = [0] * n  # lossless ports facing a lower tier or a host
    if per_port or topo.problems or topo.duplicate_ports or topo.foreign_link_ends:
        # admin state of every declared port, by switch index and port name: the walk looks up each port
        # and its far end by name (string hashes are cached; a (switch, port) tuple is hashed on every lookup)
        admin = [{info.name: info.admin_up for info in topo.ports_of(name)} for name in fab.names]
        for i, name in enumerate(fab.names):
            external, ups[i], downs[i] = _walk_switch(topo, fab, idx, admin, i, name)
            _walk_external_ports(fab, name, external, flag)
    else:
        _walk_links(topo, fab, idx, ups, downs)
        _walk_nics(topo, fab, idx, downs)
    fab.uplinks = [(up[0][0] if up else None, down, len(up), any(lossless for _, lossless in up))
                   for up, down in zip(ups, downs)]


def _walk_links(topo: Topology, fab: _Fabric, idx: dict[str, int], ups: list[list[tuple[str, bool]]],
                downs: list[int]) -> None:
    """Both ends of every switch link (``topo.link_ends``, each end a declared switch port cabled by that
    link): :func:`_walk_switch`'s accounts of a port facing a switch, per link."""
    lossless_set, tier, links, lin = fab.lossless_set, fab.tier, fab.links, fab.lossless_in
    nodes = 0
    for (adev, aport, bdev, bport, ia, ib), link in zip(topo.link_ends, topo.inventory.links):
        if ia is None or ib is None:  # not in a topology without problems
            continue
        i, j, a_up, b_up = idx[adev], idx[bdev], ia.admin_up, ib.admin_up
        if lossless_set is None:
            la, lb = a_up and link.lossless, b_up and link.lossless
        else:
            la, lb = (adev, aport) in lossless_set, (bdev, bport) in lossless_set
        if tier[j] > tier[i]:
            ups[i].append((aport, la))
            downs[j] += lb
        elif tier[j] < tier[i]:
            downs[i] += la
            ups[j].append((bport, lb))
        if a_up and b_up and i != j:
            nodes += la + lb
            links[i].setdefault(j, []).append((aport, bport))
            links[j].setdefault(i, []).append((bport, aport))
            lin[i][j] = lin[i].get(j, 0) + la
            lin[j][i] = lin[j].get(i, 0) + lb
    fab.nodes += nodes


def _walk_nics(topo: Topology, fab: _Fabric, idx: dict[str, int], downs: list[int]) -> None:
    """The switch port of every cabled NIC (``topo.nic_ports``, each cabled to that NIC):
    :func:`_walk_switch`'s accounts of a host port (a host cable is lossless where the port is admin-up)."""
    lossless_set, host_lossless, dbit = fab.lossless_set, fab.host_lossless, fab.dbit
    for info in topo.nic_ports:
        if info is None:
            continue
        i, admin_up = idx[info.switch], info.admin_up
        lossless = admin_up if lossless_set is None else (info.switch, info.name) in lossless_set
        downs[i] += lossless
        host_lossless[i] += admin_up & lossless
        if admin_up:
            dbit[i] = 1  # marked here, numbered in _connect
    fab.nodes += sum(host_lossless)


_OtherPort = tuple[str, Peer, bool, bool]  # (port, peer, admin-up, lossless) of a port facing a non-switch


def _walk_switch(topo: Topology, fab: _Fabric, idx: dict[str, int], admin: list[dict[str, bool]], i: int,
                 name: str) -> tuple[list[_OtherPort], list[tuple[str, bool]], int]:
    """The cabled ports of switch ``i``: links to admin-up, declared far ends go to ``fab.links[i]`` and
    ``fab.lossless_in[i]`` (their lossless ingress ports count as nodes); host ports count as nodes when
    lossless and make the switch a destination when one is admin-up (``fab.dbit``, numbered in
    :func:`_connect`). Lossless is membership of ``fab.lossless_set``, or the tuner's rule when that is None
    (admin-up and ``peer.lossless``). ``admin[k]`` maps switch k's declared ports to their admin state.

    Returns:
        the ports facing devices outside the inventory, (name, lossless) of the up-facing ports, and the
        number of lossless ports facing a lower tier or a host.
    """
    lossless_set, tier, ti = fab.lossless_set, fab.tier, fab.tier[i]
    mine, lin, admin_i = fab.links[i], fab.lossless_in[i], admin[i]
    external: list[_OtherPort] = []
    up_ports: list[tuple[str, bool]] = []
    downs = nodes = host_lossless = 0
    hosts = False
    for port, peer in topo.peers_of(name).items():
        kind, dev, far_port, _, _, _, link_lossless = peer
        admin_up = admin_i.get(port, False)
        lossless = (admin_up and link_lossless) if lossless_set is None else (name, port) in lossless_set
        j = idx.get(dev) if kind == "switch" else None
        if j is None:
            if kind == "host":
                downs += lossless
                hosts |= admin_up
                host_lossless += admin_up & lossless
            else:
                external.append((port, peer, admin_up, lossless))
            continue
        if tier[j] > ti:
            up_ports.append((port, lossless))
        elif tier[j] < ti:
            downs += lossless
        if admin_up and j != i and admin[j].get(far_port, False):
            nodes += lossless
            mine.setdefault(j, []).append((port, far_port))
            lin[j] = lin.get(j, 0) + lossless
    fab.host_lossless[i] = host_lossless
    fab.nodes += nodes + host_lossless
    if hosts:
        fab.dbit[i] = 1  # marked here, numbered in _connect
    return external, up_ports, downs


def _walk_external_ports(fab: _Fabric, name: str, external: list[_OtherPort], flag: bool) -> None:
    """Ports of switch ``name`` facing devices outside the inventory: admin-up lossless ones count as nodes
    (and get RT221 when ``flag``)."""
    for port, peer, admin_up, lossless in external:
        if admin_up:
            fab.nodes += lossless
            if lossless and flag:
                fab.flagged.append(_unknown_peer(name, port, peer))


def _build(topo: Topology, lossless_ports: set[tuple[str, str]] | None, flag: bool,
           per_port: bool = False) -> _Fabric:
    names = sorted(topo.switches, key=_natural)
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    fab = _Fabric(names, [topo.tier(s) for s in names], [{} for _ in range(n)], [], [0] * n, [0] * n,
                  [{} for _ in range(n)], lossless_ports, topo)
    _walk_cabling(topo, fab, idx, flag, per_port)
    _connect(fab)
    return fab


def _connect(fab: _Fabric) -> None:
    """Adjacency from links cabled on both sides, destination bits for the host-bearing switches."""
    links = fab.links
    for i, row in enumerate(links):
        for j in [j for j in row if i not in links[j]]:  # cabled on one side only (duplicate cabling): lint
            del row[j]
    fab.adj = [sorted(row) for row in links]
    k = 0
    for i, b in enumerate(fab.dbit):
        if b:
            fab.dbit[i] = 1 << k
            k += 1


def _extend_levels(first: int, covered: int, sources: list[list[int]]) -> tuple[list[int], int]:
    """Distance levels ``[first, l1, l2, ...]``: level k = the OR of every source's level k-1 minus what an
    earlier level (or ``covered``) already has. Returns the levels and the final covered set."""
    levels, cov = [first], covered
    # column k-1 of the sources, OR-ed in C (zip_longest pads the shorter lists with the empty set)
    for col in zip_longest(*sources, fillvalue=0):
        b = reduce(or_, col) & ~cov
        levels.append(b)
        cov |= b
    return levels, cov


def _tier_neighbours(fab: _Fabric) -> tuple[list[list[int]], list[list[int]]]:
    """Per switch, its neighbours in a higher tier and in a lower tier."""
    tier, adj = fab.tier, fab.adj
    up = [[j for j in a if tier[j] > tier[i]] for i, a in enumerate(adj)]
    down = [[j for j in a if tier[j] < tier[i]] for i, a in enumerate(adj)]
    return up, down


def _route_valley_free(fab: _Fabric) -> _Routes:
    """Valley-free shortest-path ECMP for all destinations at once (tiered fabrics)."""
    n, tier = len(fab.names), fab.tier
    up, down = _tier_neighbours(fab)
    order = sorted(range(n), key=lambda i: tier[i])
    dd: list[list[int]] = [[] for _ in range(n)]  # dd[i][k]: destinations k hops below i (shortest)
    dr = [0] * n
    for i in order:
        dd[i], dr[i] = _extend_levels(fab.dbit[i], fab.dbit[i], [dd[c] for c in down[i]])
    wu: list[list[int]] = [[] for _ in range(n)]  # up-routed destinations by route length
    reach = [0] * n
    for i in reversed(order):
        wu[i], reach[i] = _extend_levels(0, dr[i], [x for p in up[i] for x in (dd[p], wu[p])])
    nh = _valley_free_next_hops(dd, wu, down, up)
    src = [reach[i] & ~fab.dbit[i] if fab.dbit[i] else 0 for i in range(n)]
    upused = _propagate(order, down, src, nh)
    used = _propagate(list(reversed(order)), up, upused, nh)
    return _Routes(nh, used, src, _unreachable(fab, reach))


def _valley_free_next_hops(dd: list[list[int]], wu: list[list[int]], down: list[list[int]],
                           up: list[list[int]]) -> list[dict[int, int]]:
    """``nh[i][j]``: the destinations switch i forwards to neighbour j, from the distance levels below
    (``dd``) and up-routed (``wu``) of every switch. Down to c: those one level nearer below c; up to p:
    those whose route from p (down or further up) is one hop shorter. (:func:`_level_and` with shift 1,
    inlined: no Python call per switch link.)"""
    nh: list[dict[int, int]] = []
    for ddi, wui, below, above in zip(dd, wu, down, up):
        ddi1, wui1 = ddi[1:], wui[1:]
        row = {c: reduce(or_, map(and_, ddi1, dd[c]), 0) for c in below}
        for p in above:
            row[p] = reduce(or_, map(and_, wui1, dd[p]), reduce(or_, map(and_, wui1, wu[p]), 0))
        nh.append(row)
    return nh


def _propagate(order: list[int], feeders: list[list[int]], own: list[int],
               nh: list[dict[int, int]]) -> list[int]:
    """Destinations present at each switch: its own plus what each feeder forwards to it, in ``order``."""
    out = [0] * len(own)
    for i in order:
        b = own[i]
        for c in feeders[i]:
            b |= out[c] & nh[c][i]
        out[i] = b
    return out


def _level_and(a: list[int], b: list[int], shift: int) -> int:
    """OR over k of a[k] & b[k - shift]."""
    return reduce(or_, map(and_, islice(a, shift, None), b), 0)


def _unreachable(fab: _Fabric, reach: list[int]) -> int:
    alld = 0
    for b in fab.dbit:
        alld |= b
    return sum((alld & ~reach[i] & ~b).bit_count() for i, b in enumerate(fab.dbit) if b)


def _without_link(adj: list[list[int]], removed: tuple[int, int]) -> list[list[int]]:
    u, v = removed
    return [[j for j in a if not ((i, j) == (u, v) or (i, j) == (v, u))] for i, a in enumerate(adj)]


def _distance_levels(adj: list[list[int]], dbit: list[int]) -> tuple[list[list[int]], list[int]]:
    """BFS from every destination at once: ``ex[i][k]`` = destinations exactly k hops from i, ``cov[i]``
    all of them."""
    n = len(adj)
    ex = [[b] for b in dbit]
    cov = list(dbit)
    prev = list(dbit)
    while True:
        new = [0] * n
        for i in range(n):
            b = 0
            for j in adj[i]:
                b |= prev[j]
            new[i] = b & ~cov[i]
        if not any(new):
            return ex, cov
        for i in range(n):
            ex[i].append(new[i])
            cov[i] |= new[i]
        prev = new


def _route_shortest(fab: _Fabric, removed: tuple[int, int] | None = None) -> _Routes:
    """Unrestricted shortest-path ECMP over the switch graph without the pair ``removed``."""
    n = len(fab.names)
    adj = fab.adj if removed is None else _without_link(fab.adj, removed)
    ex, cov = _distance_levels(adj, fab.dbit)
    nh = [{j: _level_and(ex[i], ex[j], 1) for j in adj[i]} for i in range(n)]
    src = [cov[i] & ~fab.dbit[i] if fab.dbit[i] else 0 for i in range(n)]
    return _Routes(nh, _used_shortest(ex, adj, nh, src), src, _unreachable(fab, cov))


def _used_shortest(ex: list[list[int]], adj: list[list[int]], nh: list[dict[int, int]],
                   src: list[int]) -> list[int]:
    """Destinations whose packets can be at each switch: sources' traffic pushed along next hops,
    farthest distance level first."""
    used = list(src)
    for k in range(max(len(x) for x in ex) - 1 if ex else 0, 0, -1):
        for i in range(len(adj)):
            if k < len(ex[i]):
                m = used[i] & ex[i][k]
                if m:
                    for j in adj[i]:
                        used[j] |= m & nh[i][j]
    return used


def _host_edges(fab: _Fabric, r: _Routes, a: int, outs: list[tuple[int, int, int]]) -> int:
    """Edges from switch a's lossless host ports to the uplinks its hosts' traffic leaves on."""
    s = r.src[a]
    if not (fab.host_lossless[a] and s):
        return 0
    return fab.host_lossless[a] * sum(m for _, nhb, m in outs if nhb & s)


def _transit_edges(mx: int, x: int, a: int, c: int, outs: list[tuple[int, int, int]],
                   turns: list[tuple[int, int, int]]) -> int:
    """Edges for traffic ``c`` entering a from x (``mx`` lossless ports) and leaving towards each y != x;
    records the turns x -> a -> y in ``turns``."""
    edges = 0
    for y, nhb, m in outs:
        if nhb & c and y != x:
            turns.append((x, a, y))
            edges += mx * m
    return edges


def _transit_count(fab: _Fabric, r: _Routes, a: int, outs: list[tuple[int, int, int]]) -> int:
    """Edges for all traffic through switch a, counted without listing turns: what :func:`_transit_edges`
    sums, per ingress neighbour x, from the next-hop sets grouped by value.

    Per x, the egress groups whose destinations miss ``c`` (x's traffic through a) are those inside
    ``missing`` = (all of a's next-hop destinations) minus ``c``. When the groups are pairwise disjoint and
    ``missing`` is one of them, that group is the only one missed (any other group inside it would overlap
    it); this is the common case in a Clos (a leaf's own bit, a pod, "everything above"), so a spine's or
    superspine's ~deg^2 turns cost ~deg set operations. Otherwise the groups are summed one by one.
    """
    li, nh = fab.lossless_in[a], r.nh
    groups: dict[int, int] = {}
    own: dict[int, tuple[int, int]] = {}
    union = 0
    for y, nhb, m in outs:
        groups[nhb] = groups.get(nhb, 0) + m
        own[y] = (nhb, m)
        union |= nhb
    disjoint = sum(g.bit_count() for g in groups) == union.bit_count()
    total = sum(groups.values())
    local = ~fab.dbit[a]
    edges = 0
    for x in fab.adj[a]:
        mx = li.get(x, 0)
        c = nh[x].get(a, 0) & r.used[x] & local if mx else 0
        if not c:
            continue
        missing = union & ~c
        if not missing:
            s = total
        elif disjoint and missing in groups:
            s = total - groups[missing]
        else:
            s = sum(mg for g, mg in groups.items() if g & c)
        mine = own.get(x)
        if mine is not None and mine[0] & c:  # no turn back to where the traffic came from
            s -= mine[1]
        edges += mx * s
    return edges


def _turns(fab: _Fabric, r: _Routes, explicit: bool) -> tuple[int, list[tuple[int, int, int]]]:
    """Dependency-edge count (port level, one priority) and, if ``explicit``, the used turns x -> a -> y."""
    edges, turns = 0, list[tuple[int, int, int]]()
    li, nh = fab.lossless_in, r.nh
    for a in range(len(fab.names)):
        nha = nh[a]
        outs = [(y, nha[y], li[y].get(a, 0)) for y in fab.adj[a] if nha.get(y)]
        if not outs:
            continue
        edges += _host_edges(fab, r, a, outs)
        if not explicit:
            edges += _transit_count(fab, r, a, outs)
            continue
        local = ~fab.dbit[a]
        for x in fab.adj[a]:
            c = nh[x].get(a, 0) & r.used[x] & local
            if c:
                edges += _transit_edges(li[a].get(x, 0), x, a, c, outs, turns)
    return edges, turns


_Node = tuple[int, int]


def _lossless_turn_graph(fab: _Fabric, turns: list[tuple[int, int, int]]
                         ) -> tuple[dict[_Node, list[_Node]], dict[_Node, int]]:
    """Successors and in-degrees of the buffer graph restricted to turns between lossless links."""
    li = fab.lossless_in
    succ: dict[_Node, list[_Node]] = defaultdict(list)
    indeg: dict[_Node, int] = defaultdict(int)
    for x, a, y in turns:
        if li[a].get(x) and li[y].get(a):
            succ[(x, a)].append((a, y))
            indeg[(a, y)] += 1
    return succ, indeg


def _peel(succ: dict[_Node, list[_Node]], indeg: dict[_Node, int]) -> set[_Node]:
    """Remove nodes without in- or out-edges until none is left (a DAG peels away completely)."""
    pred: dict[_Node, list[_Node]] = defaultdict(list)
    for s, ts in succ.items():
        for t in ts:
            pred[t].append(s)
    outdeg = {s: len(ts) for s, ts in succ.items()}
    alive = set(succ) | set(indeg)
    queue = deque(v for v in alive if not indeg.get(v) or not outdeg.get(v))
    while queue:
        v = queue.popleft()
        if v not in alive:
            continue
        alive.discard(v)
        _drop_degree(succ.get(v, ()), alive, indeg, queue)
        _drop_degree(pred.get(v, ()), alive, outdeg, queue)
    return alive


def _drop_degree(nbrs: Iterable[_Node], alive: set[_Node], degree: dict[_Node, int],
                 queue: deque[_Node]) -> None:
    for t in nbrs:
        if t in alive:
            degree[t] -= 1
            if not degree[t]:
                queue.append(t)


def _cycles(fab: _Fabric, turns: list[tuple[int, int, int]]) -> list[tuple[tuple[int, int], ...]]:
    """One shortest cycle per non-trivial strongly connected component of the lossless turn graph."""
    succ, indeg = _lossless_turn_graph(fab, turns)
    alive = _peel(succ, indeg)       # then SCC on what is left
    if not alive:
        return []
    import networkx as nx  # here, not at the top: only a fabric with a cycle left needs it (~0.1 s to import)

    g = nx.DiGraph()
    for v in sorted(alive):
        g.add_node(v)
    for v in sorted(alive):
        for t in sorted(succ.get(v, ())):
            if t in alive:
                g.add_edge(v, t)
    out = []
    for comp in sorted(sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1):
        sub = g.subgraph(comp)
        start = comp[0]
        best = min((nx.shortest_path(sub, s, start) for s in sorted(sub.successors(start))), key=len)
        out.append(tuple([start] + best[:-1]))
    return out


def _link_text(fab: _Fabric, x: int, a: int) -> str:
    pp = sorted(fab.links[x][a], key=lambda t: (_natural(t[0]), _natural(t[1])))
    px, pa = next(((p, q) for p, q in pp if fab.is_lossless(fab.names[a], q)), pp[0])
    return f"{fab.names[x]}:{px} -> {fab.names[a]}:{pa}"


def _failure_order(fab: _Fabric, peer_pairs: list[tuple[int, int]]) -> list[tuple[int, int, str, str]]:
    """Physical switch links, those nearest a same-tier link first (BFS hops), then by name."""
    dist = [len(fab.names) + 1] * len(fab.names)
    q: deque[int] = deque()
    for u, v in peer_pairs:
        for w in (u, v):
            if dist[w]:
                dist[w] = 0
                q.append(w)
    while q:
        w = q.popleft()
        for z in fab.adj[w]:
            if dist[z] > dist[w] + 1:
                dist[z] = dist[w] + 1
                q.append(z)
    links = [(i, j, p, pj) for i, row in enumerate(fab.links) for j, pp in row.items() if i < j
             for p, pj in pp]
    peer = set(peer_pairs)
    return sorted(links, key=lambda t: ((t[0], t[1]) not in peer, min(dist[t[0]], dist[t[1]]),
                                        _natural(fab.names[t[0]]), _natural(t[2])))


def analyze_deadlock(topo: Topology, lossless_priorities: list[int],
                     lossless_ports: set[tuple[str, str]] | None = None,
                     max_failure_scenarios: int | None = None) -> DeadlockReport:
    """Buffer-dependency-graph check of the whole fabric, normal state and every single link failure.

    Args:
        topo: resolved inventory (switch ports, cabling, tiers from roles).
        lossless_priorities: priorities with PFC (the graph is the same for each; cycles are reported
            once per priority). Empty: nothing can deadlock, nothing is flagged.
        lossless_ports: ``(switch, port)`` with PFC on the lossless priorities; None = as the tuner decides
            (every cabled, admin-up switch port on a link not marked ``lossless: false``).
        max_failure_scenarios: examine at most this many single switch-switch link failures (nearest
            the same-tier links first). None = all of them; in fabrics with same-tier links the full
            re-computations are then limited by :data:`RECOMPUTE_WORK_BUDGET` (a note says so).

    Returns:
        DeadlockReport: ``nodes``/``edges`` of the normal-state graph summed over the lossless
        priorities, ``scenarios_checked`` (failure scenarios examined), ``cycles`` (readable links
        ``"leaf1:Ethernet0 -> spine1:Ethernet4"``, priority, ``failed_link`` None in the normal state),
        ``flagged`` findings (RT220 warning: lossless same-tier link; RT221 warning: lossless port facing
        a device not in the inventory; RT222 error: one per cycle) and plan-level ``notes``.
    """
    return analyze_fabric(topo, lossless_priorities, lossless_ports, max_failure_scenarios)[0]


def analyze_fabric(topo: Topology, lossless_priorities: list[int],
                   lossless_ports: set[tuple[str, str]] | None = None,
                   max_failure_scenarios: int | None = None) -> tuple[DeadlockReport, list[Finding]]:
    """:func:`analyze_deadlock` and :func:`check_lossless_uplinks` from one walk over the cabling.

    Returns:
        (the deadlock report, the RT223 findings), each equal to what those functions return for the same
        arguments.
    """
    # The analysis allocates mostly acyclic objects (tuples, ints, lists); pausing the cyclic GC keeps full
    # collections from walking the (large) inventory heap mid-analysis, which otherwise doubles the time.
    with gc_paused():
        prios = sorted(set(lossless_priorities))
        fab = _build(topo, lossless_ports, flag=bool(prios))
        return _analyze(fab, prios, max_failure_scenarios), _uplink_findings(fab)


@dataclass
class _FailureScan:
    """Single switch-switch link failures: how many exist, were examined, recomputed or left (budget)."""

    total: int
    bound: int
    checked: int = 0
    recomputed: int = 0
    skipped_budget: int = 0


def _flag_same_tier(fab: _Fabric, peer_pairs: list[tuple[int, int]], prios: list[int]) -> None:
    """RT220 for every same-tier link with a lossless end."""
    for i, j in peer_pairs:
        for p, q in fab.links[i][j]:
            if fab.is_lossless(fab.names[i], p) or fab.is_lossless(fab.names[j], q):
                fab.flagged.append(Finding(
                    rule="RT220", severity=Severity.warning, location=Location(device=fab.names[i], port=p),
                    message=f"lossless priorities {','.join(map(str, prios))} on same-tier link "
                            f"{fab.names[i]}:{p} <-> {fab.names[j]}:{q}: routes may use it sideways or "
                            "bounce down-up around it, which breaks the up-down order that keeps a Clos "
                            "deadlock-free",
                    fix="keep the link lossy (lossless: false on the link: no PFC on it), or remap bounced "
                        "traffic to another lossless priority (Tagger; SONiC tunnel_dscp_remapping) "
                        "(docs/derivation.md#pfc-deadlock)"))


def _routing_notes(routes: _Routes, tiered: bool, peer_pairs: int) -> list[str]:
    if tiered:
        notes = ["deadlock routing model: valley-free (up*/down*) shortest-path ECMP, as eBGP with the RFC "
                 "7938 ASN plan converges to; no same-tier links, so the normal state and every single-link "
                 "failure are cycle-free by the rank argument in roce_tune/tuner/deadlock.py (" + _S + ")"]
    else:
        notes = [f"deadlock routing model: unrestricted shortest-path ECMP, because {peer_pairs} same-tier "
                 "switch pair(s) exist; failure scenarios that change no distance are settled by the "
                 "subgraph lemma, the others are recomputed (" + _S + ")"]
    if routes.unreachable_pairs:
        notes.append(f"{routes.unreachable_pairs} (source leaf, destination leaf) pairs have no "
                     f"{'valley-free ' if tiered else ''}route in the normal state: traffic between them is "
                     "black-holed (check the cabling)")
    return notes


def _multi_next_hop(fab: _Fabric, routes: _Routes) -> list[int]:
    """Per switch, the destinations it reaches over two or more next-hop switches."""
    twice = [0] * len(fab.names)
    for i in range(len(fab.names)):
        once = 0
        for j in fab.adj[i]:
            s = routes.nh[i][j]
            twice[i] |= once & s
            once |= s
    return twice


def _scan_failures(fab: _Fabric, routes: _Routes, peer_pairs: list[tuple[int, int]], tiered: bool,
                   max_failure_scenarios: int | None, turn_estimate: int,
                   found: dict[tuple[tuple[int, int], ...], str | None]) -> _FailureScan:
    """Examine single switch-switch link failures; cycles they create go into ``found`` with the link."""
    total = sum(len(pp) for i, row in enumerate(fab.links) for j, pp in row.items() if i < j)
    bound = total if max_failure_scenarios is None else max(0, min(total, max_failure_scenarios))
    scan = _FailureScan(total, bound)
    if tiered:
        scan.checked = bound                           # the valley-free theorem covers them
        return scan
    if not bound:
        return scan
    twice = _multi_next_hop(fab, routes)
    cost = sum(len(a) for a in fab.adj) * 8 + turn_estimate
    budget = max(1, RECOMPUTE_WORK_BUDGET // max(1, cost)) if max_failure_scenarios is None else bound
    for i, j, p, q in _failure_order(fab, peer_pairs)[:bound]:
        if len(fab.links[i][j]) > 1 or not (routes.nh[i][j] & ~twice[i] or routes.nh[j][i] & ~twice[j]):
            scan.checked += 1                          # no distance changes: the subgraph lemma
            continue
        if scan.recomputed >= budget:
            scan.skipped_budget += 1
            continue
        scan.recomputed += 1
        scan.checked += 1
        _, t = _turns(fab, _route_shortest(fab, (i, j)), True)
        label = f"{fab.names[i]}:{p} <-> {fab.names[j]}:{q}"
        for c in _cycles(fab, t):
            found.setdefault(c, label)
    return scan


def _failure_notes(scan: _FailureScan, tiered: bool, max_failure_scenarios: int | None) -> list[str]:
    checked, total = scan.checked, scan.total
    if tiered:
        notes = [f"single-link failures: {checked} of {total} switch-switch link failures covered by the "
                 "valley-free theorem (no recomputation needed)"]
    else:
        notes = [f"single-link failures: {checked} of {total} checked ({scan.recomputed} recomputed, "
                 f"{checked - scan.recomputed} settled because no distance changes)"]
    if scan.bound < total:
        notes.append(f"failure scenarios cut at max_failure_scenarios={max_failure_scenarios}: "
                     f"{total - scan.bound} of {total} link failures were not examined (those nearest "
                     "same-tier links were examined first)")
    if scan.skipped_budget:
        notes.append(f"{scan.skipped_budget} link failures that change routing were not recomputed (work "
                     f"budget {RECOMPUTE_WORK_BUDGET:,} switch-pair visits); pass max_failure_scenarios to "
                     "examine more")
    return notes


def _report_cycles(fab: _Fabric, found: dict[tuple[tuple[int, int], ...], str | None], prios: list[int],
                   notes: list[str]) -> list[DeadlockCycle]:
    """One DeadlockCycle and one RT222 per reported cycle and lossless priority (at most
    :data:`MAX_REPORTED_CYCLES` cycles; a note counts the rest)."""
    cycles: list[DeadlockCycle] = []
    items = list(found.items())
    if len(items) > MAX_REPORTED_CYCLES:
        notes.append(f"{len(items)} distinct dependency cycles found; the first {MAX_REPORTED_CYCLES} are "
                     "reported")
        items = items[:MAX_REPORTED_CYCLES]
    for cyc, failed in items:
        links = [_link_text(fab, x, a) for x, a in cyc]
        state = "normal state" if failed is None else "after failure of " + failed
        for prio in prios:
            cycles.append(DeadlockCycle(priority=prio, links=links, failed_link=failed))
            dev, port = links[0].split(" -> ")[1].split(":", 1)
            fab.flagged.append(Finding(
                rule="RT222", severity=Severity.error, location=Location(device=dev, port=port),
                message=f"cyclic buffer dependency on lossless priority {prio} ({state}): "
                + " ; ".join(links),
                fix="remove the bounce (cabling/routing), make a link in the loop lossy (lossless: false on "
                    "the link), or remap bounced traffic to another lossless priority (Tagger) "
                    "(docs/derivation.md#pfc-deadlock)"))
    return cycles


def _analyze(fab: _Fabric, prios: list[int], max_failure_scenarios: int | None) -> DeadlockReport:
    peer_pairs = sorted((i, j) for i, row in enumerate(fab.links) for j in row
                        if i < j and fab.tier[i] == fab.tier[j])
    tiered = not peer_pairs
    if prios:
        _flag_same_tier(fab, peer_pairs, prios)
    routes = _route_valley_free(fab) if tiered else _route_shortest(fab)
    turn_estimate = sum(len(a) ** 2 for a in fab.adj)
    explicit = not tiered or turn_estimate <= EXPLICIT_TURN_LIMIT
    edges, turns = _turns(fab, routes, explicit)
    found: dict[tuple[tuple[int, int], ...], str | None] = {}
    if explicit:
        for c in _cycles(fab, turns):
            found.setdefault(c, None)
    notes = _routing_notes(routes, tiered, len(peer_pairs))
    scan = _scan_failures(fab, routes, peer_pairs, tiered, max_failure_scenarios, turn_estimate, found)
    notes += _failure_notes(scan, tiered, max_failure_scenarios)
    cycles = _report_cycles(fab, found, prios, notes)
    hosts = len(fab.topo.inventory.hosts)
    if hosts > LARGE_FABRIC_HOSTS:
        notes.append(f"{hosts} hosts (> {LARGE_FABRIC_HOSTS}): risks this graph cannot see grow with scale "
                     "-- lossless packets flooded for unresolved ARP/ND entries (configure drop-not-flood "
                     "for lossless classes), transient loops while routing converges, and NIC PFC pause "
                     "storms; keep the PFC watchdog on (docs/derivation.md#pfc-deadlock; Microsoft "
                     "SIGCOMM'16)")
    fab.flagged.sort(key=lambda f: (f.rule, _natural(f.location.device or ""),
                                    _natural(f.location.port or ""),
                                    f.message))
    return DeadlockReport(nodes=fab.nodes * len(prios), edges=edges * len(prios) if prios else 0,
                          scenarios_checked=scan.checked, cycles=cycles, flagged=fab.flagged, notes=notes)


def check_lossless_uplinks(topo: Topology, lossless_ports: set[tuple[str, str]] | None) -> list[Finding]:
    """RT223: a switch with lossless down-facing ports whose up-facing links are all lossy.

    Lossless traffic that leaves such a switch upwards meets egress queues that drop instead of pausing
    (``lossless: false`` on every uplink), so the lossless class only holds inside it. One warning per
    switch, at the switch (its first up-facing port in cabling order). Switches without uplinks (a single
    leaf, the top tier) are not flagged. ``lossless_ports`` as for :func:`analyze_deadlock` (None: the
    tuner's rule). :func:`analyze_fabric` returns the same findings without walking the cabling twice.
    """
    with gc_paused():
        return _uplink_findings(_build(topo, lossless_ports, flag=False))


def _uplink_findings(fab: _Fabric) -> list[Finding]:
    """RT223 findings from the per-switch uplink accounting of :func:`_walk_cabling`, in switch order."""
    out: list[Finding] = []
    for sw, (first_up, downs, ups, lossless_up) in zip(fab.names, fab.uplinks):
        if first_up is not None and downs and not lossless_up:
            out.append(Finding(
                rule="RT223", severity=Severity.warning, location=Location(device=sw, port=first_up),
                message=f"{sw} has {downs} lossless down-facing port(s) but all {ups} uplink(s) "
                        "are lossy: lossless traffic leaving it upwards can be dropped at its uplink queues",
                fix="make at least the uplinks that carry RoCE lossless (remove lossless: false from those "
                    "links), or keep RoCE jobs inside this switch"))
    return out
