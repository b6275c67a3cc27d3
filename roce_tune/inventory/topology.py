"""A resolved view of the inventory: expanded ports, who is cabled to what, tiers and fan-in.

Pure data built once from a validated :class:`~roce_tune.inventory.models.Inventory`; shared by lint,
the tuner and the deadlock analysis. Problems found while resolving (dangling endpoints, a port used
twice) are *not* raised here: they are recorded in ``problems`` and turned into lint findings, so one
run reports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

from roce_tune.inventory.catalog import Catalog, CatalogError
from roce_tune.inventory.models import TIER, Host, Inventory, Nic, Role, Switch


class PortInfo(NamedTuple):
    """One concrete switch port (ranges expanded). ``path`` is the inventory field path.

    A named tuple, not a frozen dataclass: a 4,096-host fabric has ~100k ports, and a frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` per field) costs 3-4x as much to build.
    """

    switch: str
    name: str
    speed_gbps: int
    lanes: int | None
    mtu: int | None
    admin_up: bool
    path: str


class Peer(NamedTuple):
    """The far end of a switch port's cable (a named tuple, like :class:`PortInfo`).

    ``kind`` is ``host`` (device = host name, port = netdev), ``switch`` or ``external``; ``cable_m`` is None
    when the inventory did not give a length (the default then applies, with a lint warning); ``path`` is
    the inventory path of the link or NIC that declares the cable.
    """

    kind: str
    device: str
    port: str
    cable_m: float | None
    path: str
    speed_gbps: int | None = None
    lossless: bool = True  # the link's ``lossless`` (host cables: always)


@dataclass
class Topology:
    """Resolved inventory.

    Attributes:
        switches: name -> Switch model.
        port_index: switch -> port name -> PortInfo for every declared switch port (the first declaration of
            a name wins); :meth:`port` looks one up. The cabling resolves its ~100k ``switch:port`` ends here:
            one small dict per switch, whose port names (shared by every switch of a range pattern) have
            their hashes known already, is ~2.5x quicker than a (switch, port) tuple lookup in one large
            dict, and saves building ~100k key tuples (``ports`` is such a dict, built on first use).
        peers_by_switch: switch -> port name -> Peer for every cabled switch port, switches in the order
            they were first cabled, each one's ports in the order they were cabled (:meth:`peers_of`). The
            cabling fills only these per-switch dicts: ``peers`` (the same as one dict) is built on first
            use, so lint and ``explain``, which read peers switch by switch, never build its ~100k (switch,
            port) keys at 4,096 hosts.
        problems: (rule hint, path, message) for endpoints that could not be resolved.
        link_ends: per link of ``inventory.links``, in order: (a device, a port, b device, b port, PortInfo of
            the a end, of the b end); a PortInfo is None when that end is not a declared switch port.
        foreign_link_ends: (link index, ``a``/``b``) of every link end whose device is not a switch, in
            link order (hosts and devices outside the inventory).
        nics: (``hosts[i].nics[j]``, host, nic) of every NIC in file order.
        nic_ports: the PortInfo each NIC of ``nics`` is cabled to (its ``switch_port``), None when it has no
            switch_port or that port is not declared.
    """

    inventory: Inventory
    switches: dict[str, Switch] = field(default_factory=dict)
    port_index: dict[str, dict[str, PortInfo]] = field(default_factory=dict)
    problems: list[tuple[str, str, str]] = field(default_factory=list)
    duplicate_ports: list[tuple[str, str, str]] = field(default_factory=list)
    ports_by_switch: dict[str, list[PortInfo]] = field(default_factory=dict)
    peers_by_switch: dict[str, dict[str, Peer]] = field(default_factory=dict)
    link_ends: list[tuple[str, str, str, str, PortInfo | None, PortInfo | None]] = field(default_factory=list)
    foreign_link_ends: list[tuple[int, str]] = field(default_factory=list)
    nics: list[tuple[str, Host, Nic]] = field(default_factory=list)
    nic_ports: list[PortInfo | None] = field(default_factory=list)
    _directions: dict[tuple[str, str], str] | None = field(default=None, repr=False, compare=False)
    _directions_by_switch: dict[str, dict[str, str]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def peers(self) -> dict[tuple[str, str], Peer]:
        """(switch, port) -> Peer for every cabled switch port, in ``peers_by_switch`` order (switch by
        switch; built on first use: the topology must not change after it)."""
        return {(sname, port): peer for sname, peers in self.peers_by_switch.items()
                for port, peer in peers.items()}

    @cached_property
    def ports(self) -> dict[tuple[str, str], PortInfo]:
        """(switch, port) -> PortInfo of every declared switch port, switch by switch (``port_index`` as one
        dict; built on first use: lint and the tuner look ports up with :meth:`port`)."""
        return {(sname, name): info for sname, index in self.port_index.items()
                for name, info in index.items()}

    def port(self, switch: str, name: str) -> PortInfo | None:
        """The declared port ``name`` of ``switch``, None when ``switch`` is not a switch or declares no such
        port."""
        return self.port_index.get(switch, _NO_PORTS).get(name)

    @cached_property
    def host_names(self) -> set[str]:
        """Names of the inventory's hosts."""
        return {h.name for h in self.inventory.hosts}

    def tier(self, switch: str) -> int:
        """Clos tier of a switch: leaf 0, spine 1, superspine 2."""
        return TIER[self.switches[switch].role]

    def ports_of(self, switch: str) -> list[PortInfo]:
        """Declared ports of ``switch`` in inventory order."""
        return self.ports_by_switch.get(switch, [])

    def cabled_ports(self, switch: str) -> list[str]:
        """Names of the ports of ``switch`` that have a peer, in the order they were cabled."""
        return list(self.peers_by_switch.get(switch, _NO_PEERS))

    def peers_of(self, switch: str) -> dict[str, Peer]:
        """Port name -> Peer of every cabled port of ``switch``, in the order they were cabled (do not
        modify it)."""
        return self.peers_by_switch.get(switch, _NO_PEERS)

    def directions_of(self, switch: str) -> dict[str, str]:
        """Port name -> direction (as :meth:`direction`) of every cabled port of ``switch``, computed once per
        switch on first use (``explain`` derives one switch: it needs one switch's directions, not the
        ~100k of :meth:`directions`). Do not modify it."""
        out = self._directions_by_switch.get(switch)
        if out is None:
            tier = self._tier_by_switch
            mine = tier[switch]
            out = self._directions_by_switch[switch] = {
                port: _facing(mine, tier, peer) for port, peer in self.peers_of(switch).items()}
        return out

    @cached_property
    def _tier_by_switch(self) -> dict[str, int]:
        """Switch name -> Clos tier (:meth:`tier`) of every switch."""
        return {name: TIER[sw.role] for name, sw in self.switches.items()}

    def direction(self, switch: str, port: str) -> str:
        """``down`` (towards hosts or a lower tier), ``up`` (higher tier), ``peer`` (same tier) or
        ``edge`` (not cabled to anything in the inventory)."""
        return self.directions().get((switch, port), "edge")

    def directions(self) -> dict[tuple[str, str], str]:
        """``(switch, port) -> direction`` (as :meth:`direction`) of every cabled port, computed once on first
        use: lint, the tuner and the deadlock check ask for each of the ~100k ports of a 4,096-host fabric.
        The topology must not change after the first call (it is built once and only read)."""
        if self._directions is None:
            tier = self._tier_by_switch
            self._directions = {(sname, port): _facing(tier[sname], tier, peer)
                                for sname, peers in self.peers_by_switch.items()
                                for port, peer in peers.items()}
        return self._directions

    def tiers(self) -> int:
        """Number of switch tiers present (0 for a host-only inventory)."""
        return len({self.tier(s) for s in self.switches})


def _facing(mine: int, tier: dict[str, int], peer: Peer) -> str:
    """The direction a port of a tier-``mine`` switch faces given its ``peer`` (``tier``: switch -> tier):
    ``down`` to a host or a lower tier, ``up``, ``peer`` (same tier) or ``edge`` (not in the inventory)."""
    if peer.kind == "host":
        return "down"
    theirs = tier.get(peer.device)
    if theirs is None:
        return "edge"
    return "up" if theirs > mine else "down" if theirs < mine else "peer"


_new_tuple = tuple.__new__  # PortInfo/Peer without their Python-level __new__ (~100k of each at 4,096 hosts)
_NO_PORTS: dict[str, PortInfo] = {}  # the port_index entry of a device that is not a switch (never written)
_NO_PEERS: dict[str, Peer] = {}  # the peers_by_switch entry of a switch with no cabled port (never written)


def _index_ports(topo: Topology) -> None:
    """Expand every switch's port entries into :class:`PortInfo` (``port_index``, ``ports_by_switch``); a
    name declared twice goes to ``duplicate_ports``, an empty range to ``problems``. A range is expanded once
    per distinct pattern (a fabric repeats a handful of patterns over its switches)."""
    port_index, by_switch = topo.port_index, topo.ports_by_switch
    expanded: dict[str, list[str]] = {}
    for si, sw in enumerate(topo.inventory.switches):
        sname = sw.name
        entries = _expand_entries(topo, si, sw, expanded)
        names = [name for _, entry_names in entries for name in entry_names]
        infos = [_new_tuple(PortInfo, (sname, name, *row)) for row, entry_names in entries
                 for name in entry_names]
        index = dict(zip(names, infos))
        if sname in topo.switches or len(index) != len(names):  # a name may be declared twice
            _index_one_by_one(topo, sname, names, infos)
        elif infos:
            by_switch[sname] = infos
            port_index[sname] = index
        topo.switches[sname] = sw


def _expand_entries(topo: Topology, si: int, sw: Switch, expanded: dict[str, list[str]]
                    ) -> list[tuple[tuple[int, int | None, int | None, bool, str], list[str]]]:
    """((speed, lanes, mtu, admin_up, path), port names) of each port entry of ``sw`` (``switches[si]``)
    in order; an empty range is recorded in ``problems`` and left out. ``expanded`` caches each pattern's
    names."""
    out = []
    for pi, port in enumerate(sw.ports):
        path = f"switches[{si}].ports[{pi}]"
        names = expanded.get(port.name)
        if names is None:
            try:
                names = expanded[port.name] = port.names()
            except ValueError as exc:
                topo.problems.append(("range", path + ".name", str(exc)))
                continue
        out.append(((port.speed, port.lanes, port.mtu, port.admin_up, path), names))
    return out


def _index_one_by_one(topo: Topology, sname: str, names: list[str], infos: list[PortInfo]) -> None:
    """Index the ports ``names`` of switch ``sname`` in order, the first declaration of a name winning (the
    others go to ``duplicate_ports``)."""
    index = topo.port_index.setdefault(sname, {})
    for name, info in zip(names, infos):
        if name in index:
            topo.duplicate_ports.append((info.path + ".name", f"{sname}:{name}", "declared twice"))
            continue
        index[name] = info
        topo.ports_by_switch.setdefault(sname, []).append(info)


def _attach(topo: Topology, key: tuple[str, str], peer: Peer, path: str) -> bool:
    """Cable ``key`` to ``peer`` and return True, or record it in ``duplicate_ports`` (at ``path``) if it is
    cabled already."""
    switch, port = key
    cabled = topo.peers_by_switch.get(switch)
    if cabled is None:
        topo.peers_by_switch[switch] = {port: peer}
        return True
    first = cabled.setdefault(port, peer)
    if first is peer:
        return True
    topo.duplicate_ports.append((path, f"{switch}:{port}", f"already cabled at {first.path}"))
    return False


def build_topology(inv: Inventory) -> Topology:
    """Resolve ``inv`` into a :class:`Topology` (never raises for dangling references)."""
    topo = Topology(inventory=inv)
    _index_ports(topo)
    _cable_links(topo)
    _cable_hosts(topo)
    return topo


def _cable_links(topo: Topology) -> None:
    """Attach both ends of every switch link (``links``); fill ``link_ends``, ``foreign_link_ends`` and the
    ``dangling`` problems. A link between two declared switch ports not cabled yet (every link of a sound
    fabric) takes the short path; anything else is resolved end by end (:func:`_cable_link_end`).

    An end is cut at its first colon (device names have none) and looked up in ``port_index``: quicker
    than indexing every declared port by its ``switch:port`` text first (~100k strings at 4,096 hosts) or
    than a (switch, port) lookup in ``ports``.
    """
    cabled, ends = topo.peers_by_switch, topo.link_ends
    get_cabled, get_switch = cabled.get, topo.port_index.get
    for li, link in enumerate(topo.inventory.links):
        adev, _, aport = link.a.partition(":")
        bdev, _, bport = link.b.partition(":")
        ia, ib = get_switch(adev, _NO_PORTS).get(aport), get_switch(bdev, _NO_PORTS).get(bport)
        if ia is None or ib is None:
            akey, bkey = (adev, aport), (bdev, bport)
            ends.append((adev, aport, bdev, bport, ia, ib))
            _cable_link_end(topo, li, "a", akey, bkey, ib)
            _cable_link_end(topo, li, "b", bkey, akey, ia)
            continue
        # two declared switch ports (every link of a sound fabric): _attach, inlined, with the names as the
        # ports hold them (the cut-out copies are freed, not kept for each of the 65k ends)
        adev, aport, bdev, bport = ia[0], ia[1], ib[0], ib[1]
        ends.append((adev, aport, bdev, bport, ia, ib))
        path, cable, lossless = f"links[{li}]", link.cable_length, link.lossless
        peer = _new_tuple(Peer, ("switch", bdev, bport, cable, path, ib.speed_gbps, lossless))
        if (cabled_ports := get_cabled(adev)) is None:
            cabled[adev] = {aport: peer}
        elif cabled_ports.setdefault(aport, peer) is not peer:
            _attach(topo, (adev, aport), peer, path + ".a")
        peer = _new_tuple(Peer, ("switch", adev, aport, cable, path, ia.speed_gbps, lossless))
        if (cabled_ports := get_cabled(bdev)) is None:
            cabled[bdev] = {bport: peer}
        elif cabled_ports.setdefault(bport, peer) is not peer:
            _attach(topo, (bdev, bport), peer, path + ".b")


def _cable_link_end(topo: Topology, li: int, side: str, key: tuple[str, str], far_key: tuple[str, str],
                    far: PortInfo | None) -> None:
    """Attach one end of ``links[li]`` (``side`` a or b) to its far end, or record why it cannot be."""
    link = topo.inventory.links[li]
    dev, port = key
    path = f"links[{li}].{side}"
    if dev not in topo.switches:
        # a host or unknown device on a switch link: recorded; lint decides
        topo.foreign_link_ends.append((li, side))
        if dev not in topo.host_names:
            topo.problems.append(("dangling", path, f"device {dev!r} is not in the inventory"))
        return
    if topo.port(dev, port) is None:
        topo.problems.append(("dangling", path, f"port {dev}:{port} is not declared on {dev}"))
        return
    kind = "switch" if far_key[0] in topo.switches else "external"
    _attach(topo, key, Peer(kind, far_key[0], far_key[1], link.cable_length, f"links[{li}]",
                            far.speed_gbps if far is not None else None, link.lossless), path)


def _cable_hosts(topo: Topology) -> None:
    """Attach every NIC's ``switch_port``; fill ``nics`` and ``nic_ports``."""
    cabled = topo.peers_by_switch
    nics, nic_ports = topo.nics, topo.nic_ports
    get_cabled, get_switch = cabled.get, topo.port_index.get
    for hi, host in enumerate(topo.inventory.hosts):
        hname = host.name
        for ni, nic in enumerate(host.nics):
            path = f"hosts[{hi}].nics[{ni}]"
            nics.append((path, host, nic))
            if nic.switch_port is None:
                nic_ports.append(None)
                continue
            dev, _, port = nic.switch_port.partition(":")
            info = get_switch(dev, _NO_PORTS).get(port)
            nic_ports.append(info)
            if info is None:
                _cable_host_problem(topo, path, dev, port)
                continue
            dev, port = info[0], info[1]  # the names as the port holds them (the cut-out copies are freed)
            peer = _new_tuple(Peer, ("host", hname, nic.netdev, nic.cable_length, path, nic.speed, True))
            if (cabled_ports := get_cabled(dev)) is None:  # _attach, inlined for the 32k NICs of 4,096 hosts
                cabled[dev] = {port: peer}
            elif cabled_ports.setdefault(port, peer) is not peer:
                _attach(topo, (dev, port), peer, f"{path}.switch_port")


def _cable_host_problem(topo: Topology, path: str, dev: str, port: str) -> None:
    """Record why the NIC at ``path`` cannot be cabled to its ``switch_port`` ``dev:port``, a port that
    is not declared."""
    where = f"{path}.switch_port"
    if dev not in topo.switches:
        topo.problems.append(("dangling", where, f"switch {dev!r} is not in the inventory"))
    else:
        topo.problems.append(("dangling", where, f"port {dev}:{port} is not declared on {dev}"))


def asic_of(sw: Switch, catalog: Catalog) -> str:
    """The ASIC id of ``sw``: its ``asic`` field, else its model's ASIC. Raises CatalogError."""
    if sw.asic:
        catalog.asic(sw.asic)
        return sw.asic
    return catalog.switch_model(sw.model).asic


__all__ = ["PortInfo", "Peer", "Topology", "build_topology", "asic_of", "CatalogError", "Role"]
