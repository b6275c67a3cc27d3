"""Fabric design rules: rail-optimised cabling (RT117), dual-ToR NIC placement (RT118) and management
addresses ending in .0/.255, as an intent counting them up gives (RT138)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.rules.base import LintContext, rule

_RAIL_LEAVES = """\
site: {name: lab, rail_optimised: true}
switches:
  - {name: leaf-r0, platform: sonic, model: SN4700, role: leaf, rail: 0, \
ports: [{name: Ethernet0, speed: 400G}]}
  - {name: leaf-r1, platform: sonic, model: SN4700, role: leaf, rail: 1, \
ports: [{name: Ethernet0, speed: 400G}]}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, rail: 0, \
switch_port: "leaf-r0:Ethernet0", cable_length: 3m}
"""


def _off_rail_nics(ctx: LintContext, served_by: dict[str, frozenset[int] | None]
                   ) -> list[tuple[int, str, frozenset[int]]]:
    """(index in ``topo.nics``, switch, the rails it serves) of every NIC with a rail cabled to a switch that
    serves other rails: one plain loop over the ~32k NICs of 4,096 hosts (nearly all pass), the findings
    are built for the few it returns."""
    out = []
    for k, ((_, _, nic), info) in enumerate(ctx.nic_ports()):
        rail = nic.rail
        if rail is None or nic.switch_port is None:
            continue
        dev = info.switch if info is not None else nic.switch_port.partition(":")[0]
        served = served_by.get(dev)
        if served is not None and rail not in served:
            out.append((k, dev, served))
    return out


@rule("RT117", "rail-mismatch", Severity.error,
      "In a rail-optimised fabric, a rail-k NIC is cabled to a leaf of another rail",
      """In a rail-optimised fabric (`site.rail_optimised: true`, \
or leaves that carry `rail`/`rails`) NIC k of
      every host goes to the rail-k leaf, so GPU k of all hosts talk through one switch hop. A NIC
      cabled to another rail's leaf sends that rail's traffic through the spines, and NCCL's rail
      assumptions (and PXN) no longer hold. A leaf shared by several rails lists them (`rails: [0, 1]`);
      a NIC may go to any leaf that serves its rail.""",
      _RAIL_LEAVES + """\
      - {model: connectx-7, netdev: ens2f0np0, rdma_device: mlx5_1, speed: 400G, rail: 1, \
switch_port: "leaf-r0:Ethernet0", cable_length: 3m}
""",
      _RAIL_LEAVES + """\
      - {model: connectx-7, netdev: ens2f0np0, rdma_device: mlx5_1, speed: 400G, rail: 1, \
switch_port: "leaf-r1:Ethernet0", cable_length: 3m}
""")
def rail_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per NIC with a rail cabled to a switch that serves other rails."""
    rail_opt = ctx.inv.site.rail_optimised or any(s.served_rails for s in ctx.inv.switches)
    if not rail_opt:
        return
    served_by = {name: sw.served_rails for name, sw in ctx.topo.switches.items()}
    for k, dev, served in _off_rail_nics(ctx, served_by):
        path, host, nic = ctx.topo.nics[k]
        what = f"a rail-{next(iter(served))} leaf" if len(served) == 1 else \
            f"a leaf of rails {', '.join(map(str, sorted(served)))}"
        yield ctx.finding(f"{host.name} {nic.netdev} is on rail {nic.rail} but is cabled to {dev}, {what}",
                          f"cable it to a rail-{nic.rail} leaf, or correct the NIC's rail",
                          f"{path}.switch_port", device=host.name, port=nic.netdev)


def _pci_slot(addr: str | None) -> str | None:
    """``0000:3b:00.1`` -> ``0000:3b:00`` (the two ports of one dual-port NIC differ in the function)."""
    return addr.rsplit(".", 1)[0].lower() if addr else None


@rule("RT118", "dual-tor-same-leaf", Severity.warning,
      "In a dual-ToR design, both ports of a dual-port NIC land on the same leaf",
      """With `site.dual_tor: true` each host is cabled to two leaves so that one leaf can fail or be
      upgraded. Two NIC ports that belong together — the same PCI slot (address differing only in the
      function) or, without PCI addresses, the same rail — must land on different leaves; on one leaf
      they share its fate.""",
      """\
site: {name: lab, dual_tor: true}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, plane: 0, \
ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
  - {name: leaf2, platform: sonic, model: SN4700, role: leaf, plane: 1, \
ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
pci_address: "0000:3b:00.0", switch_port: "leaf1:Ethernet0", cable_length: 3m}
      - {model: connectx-7, netdev: ens1f1np1, rdma_device: mlx5_1, speed: 400G, \
pci_address: "0000:3b:00.1", switch_port: "leaf1:Ethernet4", cable_length: 3m}
""",
      """\
site: {name: lab, dual_tor: true}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, plane: 0, \
ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
  - {name: leaf2, platform: sonic, model: SN4700, role: leaf, plane: 1, \
ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
pci_address: "0000:3b:00.0", switch_port: "leaf1:Ethernet0", cable_length: 3m}
      - {model: connectx-7, netdev: ens1f1np1, rdma_device: mlx5_1, speed: 400G, \
pci_address: "0000:3b:00.1", switch_port: "leaf2:Ethernet0", cable_length: 3m}
""")
def dual_tor_same_leaf(ctx: LintContext) -> Iterator[Finding]:
    if not ctx.inv.site.dual_tor:
        return
    for hi, host in enumerate(ctx.inv.hosts):
        groups: dict[tuple[str, object], list[int]] = {}
        for ni, nic in enumerate(host.nics):
            if nic.switch_port is None:
                continue
            slot = _pci_slot(nic.pci_address)
            key: tuple[str, object] | None = (
                ("pci", slot) if slot else ("rail", nic.rail) if nic.rail is not None else None)
            if key is not None:
                groups.setdefault(key, []).append(ni)
        for (kind, value), members in groups.items():
            seen: dict[str, int] = {}
            for ni in members:
                nic = host.nics[ni]
                leaf = (nic.switch_port or "").split(":", 1)[0]
                if leaf in seen:
                    first = host.nics[seen[leaf]]
                    why = f"PCI slot {value}" if kind == "pci" else f"rail {value}"
                    yield ctx.finding(f"{host.name}: {first.netdev} and {nic.netdev} ({why}) both land on "
                                      f"{leaf}; in a dual-ToR design they should be on different leaves",
                                      f"cable {nic.netdev} to the other leaf of the pair",
                                      f"hosts[{hi}].nics[{ni}].switch_port", device=host.name,
                                      port=nic.netdev)
                else:
                    seen[leaf] = ni



_MGMT_RANGE = """\
site: {name: lab}
fabric:
  hosts: 8
  rails: 1
  hosts_per_group: 8
  label_rails: false
  host:
    name: "gpu{n:02d}"
    mgmt: 10.10.1.250
    nic: {model: connectx-7, speed: 400G, netdev: ens1f0np0, rdma_device: mlx5_0, cable_length: 2m}
  leaf:
    name: leaf1
    platform: sonic
    model: SN4700
    mgmt: 10.10.0.11
    host_ports: {name: "Ethernet{8*p}", speed: 400G}
"""


def _octet_edge(host: str | None) -> str | None:
    """``"network"``/``"broadcast"`` for an IPv4 address ending in .0/.255, else None (names, IPv6)."""
    try:
        last = int(ipaddress.IPv4Address(host or "")) & 0xFF
    except ValueError:
        return None
    return {0: "network", 0xFF: "broadcast"}.get(last)


@rule("RT138", "mgmt-address-octet-edge", Severity.warning,
      "A management address ends in .0 or .255",
      """A `fabric:` intent gives each tier's first management address and counts up from it
      (docs/intent.md), across octet boundaries without a word: `10.10.1.250` for 8 hosts gives
      `10.10.1.255` and `10.10.2.0`. In the /24 management subnets most sites use, those are the broadcast
      and the network address (RFC 919, RFC 950): no device answers there, and the devices after them sit in
      the next subnet. A hand-written address ending in .0 or .255 is the same slip. Neither an inventory
      nor an intent gives the prefix length, so this is a warning: a /23 or wider subnet may hold them on
      purpose. The finding of a counted-up address points at the intent's `mgmt:` line.""",
      _MGMT_RANGE,
      _MGMT_RANGE.replace("10.10.1.250", "10.10.1.11"))
def mgmt_address_octet_edge(ctx: LintContext) -> Iterator[Finding]:
    """One finding per switch or host whose IPv4 management address ends in .0 or .255 (at its
    ``mgmt.host``: the intent's ``fabric.<tier>.mgmt`` line for an expanded device)."""
    devices = [(f"switches[{i}]", s.name, s.mgmt) for i, s in enumerate(ctx.inv.switches)]
    devices += [(f"hosts[{i}]", h.name, h.mgmt) for i, h in enumerate(ctx.inv.hosts)]
    for path, name, mgmt in devices:
        edge = _octet_edge(mgmt.host) if mgmt else None
        if edge is None or mgmt is None:
            continue
        counted = " (an intent counting management addresses up crosses octet boundaries)" \
            if ctx.inv.fabric is not None else ""
        yield ctx.finding(
            f"{name}'s management address {mgmt.host} is the {edge} address of a /24 management "
            f"subnet{counted}",
            "give the device an address inside its subnet (an intent: start the tier's mgmt range lower, or "
            "give the device an explicit mgmt); keep it only if its subnet is wider than /24",
            f"{path}.mgmt.host", device=name)
