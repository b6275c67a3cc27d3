"""A resolved view of the inventory: expanded ports, who is cabled to what, tiers and fan-in.

Pure data built once from a validated :class:`~roce_tune.inventory.models.Inventory`; shared by lint,
the tuner and the deadlock analysis. Problems found while resolving (dangling endpoints, a port used
twice) are *not* raised here: they are recorded in ``problems`` and turned into lint findings, so one
run reports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from roce_tune.inventory.catalog import Catalog, CatalogError
from roce_tune.inventory.models import TIER, Inventory, Role, Switch


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
        ports: (switch, port) -> PortInfo for every declared switch port.
        peers: (switch, port) -> Peer for every cabled switch port.
        problems: (rule hint, path, message) for endpoints that could not be resolved.
        hosts_per_leaf: leaf -> number of host NIC ports cabled to it.
    """

    inventory: Inventory
    switches: dict[str, Switch] = field(default_factory=dict)
    ports: dict[tuple[str, str], PortInfo] = field(default_factory=dict)
    peers: dict[tuple[str, str], Peer] = field(default_factory=dict)
    problems: list[tuple[str, str, str]] = field(default_factory=list)
    duplicate_ports: list[tuple[str, str, str]] = field(default_factory=list)
    ports_by_switch: dict[str, list[PortInfo]] = field(default_factory=dict)
    cabled_by_switch: dict[str, list[str]] = field(default_factory=dict)
    _directions: dict[tuple[str, str], str] | None = field(default=None, repr=False, compare=False)

    def tier(self, switch: str) -> int:
        """Clos tier of a switch: leaf 0, spine 1, superspine 2."""
        return TIER[self.switches[switch].role]

    def ports_of(self, switch: str) -> list[PortInfo]:
        """Declared ports of ``switch`` in inventory order."""
        return self.ports_by_switch.get(switch, [])

    def cabled_ports(self, switch: str) -> list[str]:
        """Names of the ports of ``switch`` that have a peer, in the order they were cabled."""
        return self.cabled_by_switch.get(switch, [])

    def direction(self, switch: str, port: str) -> str:
        """``down`` (towards hosts or a lower tier), ``up`` (higher tier), ``peer`` (same tier) or
        ``edge`` (not cabled to anything in the inventory)."""
        return self.directions().get((switch, port), "edge")

    def directions(self) -> dict[tuple[str, str], str]:
        """``(switch, port) -> direction`` (as :meth:`direction`) of every cabled port, computed once on first
        use: lint, the tuner and the deadlock check ask for each of the ~100k ports of a 4,096-host fabric.
        The topology must not change after the first call (it is built once and only read)."""
        if self._directions is None:
            tier = {name: TIER[sw.role] for name, sw in self.switches.items()}
            out: dict[tuple[str, str], str] = {}
            for key, peer in self.peers.items():
                if peer.kind == "host":
                    out[key] = "down"
                elif peer.device not in tier:
                    out[key] = "edge"
                else:
                    mine, theirs = tier[key[0]], tier[peer.device]
                    out[key] = "up" if theirs > mine else "down" if theirs < mine else "peer"
            self._directions = out
        return self._directions

    def down_ports(self, switch: str) -> list[str]:
        """Names of the ports of ``switch`` that face hosts or a lower tier."""
        return [p for p in self.cabled_ports(switch) if self.direction(switch, p) == "down"]

    def up_ports(self, switch: str) -> list[str]:
        """Names of the ports of ``switch`` that face a higher tier."""
        return [p for p in self.cabled_ports(switch) if self.direction(switch, p) == "up"]

    def tiers(self) -> int:
        """Number of switch tiers present (0 for a host-only inventory)."""
        return len({self.tier(s) for s in self.switches})


def _index_ports(topo: Topology) -> None:
    for si, sw in enumerate(topo.inventory.switches):
        topo.switches[sw.name] = sw
        for pi, port in enumerate(sw.ports):
            path = f"switches[{si}].ports[{pi}]"
            try:
                names = port.names()
            except ValueError as exc:
                topo.problems.append(("range", path + ".name", str(exc)))
                continue
            for name in names:
                key = (sw.name, name)
                if key in topo.ports:
                    topo.duplicate_ports.append((path + ".name", f"{sw.name}:{name}", "declared twice"))
                    continue
                info = PortInfo(sw.name, name, port.speed, port.lanes, port.mtu, port.admin_up, path)
                topo.ports[key] = info
                topo.ports_by_switch.setdefault(sw.name, []).append(info)


def _attach(topo: Topology, key: tuple[str, str], peer: Peer, path: str) -> None:
    if key in topo.peers:
        other = topo.peers[key]
        topo.duplicate_ports.append((path, f"{key[0]}:{key[1]}", f"already cabled at {other.path}"))
        return
    topo.peers[key] = peer
    topo.cabled_by_switch.setdefault(key[0], []).append(key[1])


def build_topology(inv: Inventory) -> Topology:
    """Resolve ``inv`` into a :class:`Topology` (never raises for dangling references)."""
    topo = Topology(inventory=inv)
    _index_ports(topo)
    switches, ports = topo.switches, topo.ports
    host_names: set[str] | None = None  # built on the first link end that names no switch
    for li, link in enumerate(inv.links):
        (adev, aport), (bdev, bport) = link.a.split(":", 1), link.b.split(":", 1)
        for dev, port, side, odev, oport in ((adev, aport, "a", bdev, bport),
                                             (bdev, bport, "b", adev, aport)):
            path = f"links[{li}].{side}"
            if dev not in switches:
                # a host or unknown device on a switch link: recorded; lint decides
                if host_names is None:
                    host_names = {h.name for h in inv.hosts}
                if dev not in host_names:
                    topo.problems.append(("dangling", path, f"device {dev!r} is not in the inventory"))
                continue
            if (dev, port) not in ports:
                topo.problems.append(("dangling", path, f"port {dev}:{port} is not declared on {dev}"))
                continue
            kind = "switch" if odev in switches else "external"
            far = ports.get((odev, oport))
            _attach(topo, (dev, port), Peer(kind, odev, oport, link.cable_length, f"links[{li}]",
                                            far.speed_gbps if far is not None else None, link.lossless), path)
    _cable_hosts(topo)
    return topo


def _cable_hosts(topo: Topology) -> None:
    """Attach every NIC's ``switch_port`` (as :func:`_attach`, inlined for the 32k NICs of 4,096 hosts)."""
    switches, ports, peers, cabled = topo.switches, topo.ports, topo.peers, topo.cabled_by_switch
    for hi, host in enumerate(topo.inventory.hosts):
        for ni, nic in enumerate(host.nics):
            if nic.switch_port is None:
                continue
            dev, port = key = tuple(nic.switch_port.split(":", 1))
            if dev not in switches:
                topo.problems.append(("dangling", f"hosts[{hi}].nics[{ni}].switch_port",
                                      f"switch {dev!r} is not in the inventory"))
            elif key not in ports:
                topo.problems.append(("dangling", f"hosts[{hi}].nics[{ni}].switch_port",
                                      f"port {dev}:{port} is not declared on {dev}"))
            elif key in peers:
                topo.duplicate_ports.append((f"hosts[{hi}].nics[{ni}].switch_port", f"{dev}:{port}",
                                             f"already cabled at {peers[key].path}"))
            else:
                peers[key] = Peer("host", host.name, nic.netdev, nic.cable_length, f"hosts[{hi}].nics[{ni}]",
                                  nic.speed)
                cabled.setdefault(dev, []).append(port)


def asic_of(sw: Switch, catalog: Catalog) -> str:
    """The ASIC id of ``sw``: its ``asic`` field, else its model's ASIC. Raises CatalogError."""
    if sw.asic:
        catalog.asic(sw.asic)
        return sw.asic
    return catalog.switch_model(sw.model).asic


__all__ = ["PortInfo", "Peer", "Topology", "build_topology", "asic_of", "CatalogError", "Role"]
