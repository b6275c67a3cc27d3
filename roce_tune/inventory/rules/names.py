"""Naming rules: device names unique across switches and hosts (RT120), NIC names unique per host (RT124),
port names within the platform's length limit (RT129), port names of the platform's physical-port shape
(RT139)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.rules.base import LintContext, rule
from roce_tune.platforms import full_port_name, get_platform, platform


@rule("RT120", "duplicate-device-name", Severity.error,
      "Two devices (switches or hosts) have the same name",
      """Device names key every cable, override, rendered file and deploy session; switches and hosts
      share one name space. A second device with the same name would silently replace the first. Names
      that differ only in case (`node1`, `NODE1`) count as the same: host names are case-insensitive
      (RFC 4343) and the plan's per-device files (`hosts/node1.sh`, `hosts/NODE1.sh`) collide on a
      case-insensitive file system (macOS, Windows).""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
  - {name: leaf2, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
""")
def duplicate_device_name(ctx: LintContext) -> Iterator[Finding]:
    first: dict[str, tuple[str, str]] = {}  # casefolded name -> (path, name as first written)
    devices = [(f"switches[{i}]", s.name) for i, s in enumerate(ctx.inv.switches)]
    devices += [(f"hosts[{i}]", h.name) for i, h in enumerate(ctx.inv.hosts)]
    for path, name in devices:
        key = name.casefold()
        if key not in first:
            first[key] = (path, name)
            continue
        at, other = first[key]
        what = f"device name {name!r} is used twice" if other == name else (
            f"device names {other!r} and {name!r} differ only in case (host names are case-insensitive; "
            "their plan files collide on a case-insensitive file system)")
        yield ctx.finding(f"{what} (first at {at}, line {ctx.line_of(at)})",
                          "give every switch and host a unique name", f"{path}.name", device=name)


@rule("RT124", "duplicate-nic-name", Severity.error,
      "Two NICs of one host share a netdev or an RDMA device and port",
      """Host settings (mlnx_qos, sysctl, NCCL_IB_HCA) are applied per netdev and per RDMA device; two NIC
      entries with the same netdev, or the same `rdma_device` and `rdma_port`, would configure one NIC
      twice and the other not at all.""",
      """\
site: {name: lab}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G}
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_1, speed: 400G}
""",
      """\
site: {name: lab}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G}
      - {model: connectx-7, netdev: ens2f0np0, rdma_device: mlx5_1, speed: 400G}
""")
def duplicate_nic_name(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per NIC whose netdev, or RDMA device and port, an earlier NIC of its host has."""
    for hi, host in enumerate(ctx.inv.hosts):
        nics = host.nics
        if len({n.netdev for n in nics}) == len(nics) == len({(n.rdma_device, n.rdma_port) for n in nics}):
            continue
        netdevs: dict[str, int] = {}
        rdmas: dict[tuple[str, int], int] = {}
        for ni, nic in enumerate(host.nics):
            path = f"hosts[{hi}].nics[{ni}]"
            if nic.netdev in netdevs:
                yield ctx.finding(f"{host.name}: netdev {nic.netdev} is declared twice "
                                  f"(nics[{netdevs[nic.netdev]}])",
                                  "give each NIC its own netdev (ip link shows the names)", f"{path}.netdev",
                                  device=host.name, port=nic.netdev)
            else:
                netdevs[nic.netdev] = ni
            key = (nic.rdma_device, nic.rdma_port)
            if key in rdmas:
                yield ctx.finding(f"{host.name}: RDMA device {nic.rdma_device} port {nic.rdma_port} is "
                                  f"declared twice (nics[{rdmas[key]}])",
                                  "give each NIC its own rdma_device (or rdma_port 2 for the "
                                  "second port of a dual-port device)", f"{path}.rdma_device",
                                  device=host.name,
                                  port=nic.netdev)
            else:
                rdmas[key] = ni


@rule("RT129", "port-name-too-long", Severity.error,
      "A port name is longer than the switch platform allows",
      """On SONiC and Cumulus Linux every front-panel port is a Linux network interface, whose name is at most
      15 characters (IFNAMSIZ 16 less the NUL, include/uapi/linux/if.h); a longer name in the inventory could
      never match a port on the switch. Platforms without a published limit are not checked.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: cumulus
    model: SN4700
    role: leaf
    ports: [{name: "swp1s0-uplink-a1", speed: 400G}]
""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: cumulus
    model: SN4700
    role: leaf
    ports: [{name: swp1s0, speed: 400G}]
""")
def port_name_too_long(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per port whose longest expanded name exceeds the platform's
    ``SPEC.max_port_name_chars`` (characters)."""
    limits: dict[str, int | None] = {}
    longest_of: dict[str, str | None] = {}  # port name or range -> its longest expanded name
    for path, sw in ctx.switches():
        platform = sw.platform.value
        if platform not in limits:
            limits[platform] = get_platform(platform).SPEC.max_port_name_chars
        limit = limits[platform]
        if limit is None:
            continue
        for pi, port in enumerate(sw.ports):
            if port.name not in longest_of:
                try:
                    longest_of[port.name] = max(port.names(), key=len)
                except ValueError:  # an empty range is RT123's
                    longest_of[port.name] = None
            longest = longest_of[port.name]
            if longest is None:
                continue
            if len(longest) > limit:
                yield ctx.finding(f"{sw.name}: port name {longest!r} has {len(longest)} characters; "
                                  f"{sw.platform.value} port names are Linux interface names of at most "
                                  f"{limit}",
                                  "use the port name the switch shows (ip link / show interfaces), e.g. "
                                  "Ethernet0 or swp1s0", f"{path}.ports[{pi}].name", device=sw.name,
                                  port=longest)


@rule("RT139", "not-a-physical-port", Severity.error,
      "A switch port name is not a physical front-panel port of the switch's platform",
      """Every per-port setting roce-tune writes (MTU, PFC, buffers, ECN, the watchdog) belongs to a physical
      port. A name the platform reads as something else gets those lines anyway, where they do not belong: a
      logical unit (`et-0/0/0.0`) gets `set interfaces et-0/0/0.0 mtu ...` and a congestion-notification
      profile on unit 0, a VLAN subinterface (`swp1.100`, `Ethernet0.10`, `Ethernet1/1.100`) a link MTU and
      QoS lines, a LAG or management port settings meant for front-panel ports. Each platform module states
      its physical-port shapes, breakouts (`et-0/0/0:1`, `swp1s0`, `Ethernet1/1/2`) and the abbreviations its
      CLI accepts (`Et1/5`, `Eth1/1/2`) included; the fix names the physical port.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: junos
    model: QFX5220-32CD
    role: leaf
    ports: [{name: "et-0/0/0.0", speed: 400G}]
""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: junos
    model: QFX5220-32CD
    role: leaf
    ports: [{name: "et-0/0/0", speed: 400G}]
""")
def not_a_physical_port(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per port entry with an expanded name outside its platform's
    :attr:`~roce_tune.platforms.contract.InventoryFacts.physical_port` (after the platform's
    ``full_port_name``); platforms without one are not checked, an empty range is RT123's."""
    shapes: dict[str, re.Pattern[str] | None] = {}
    physical: dict[tuple[str, str], bool] = {}  # (platform, port) -> physical: fabrics repeat port names
    for path, sw in ctx.switches():
        name = sw.platform.value
        if name not in shapes:
            regex = platform(name).inventory.physical_port
            shapes[name] = re.compile(regex) if regex is not None else None
        shape = shapes[name]
        if shape is None:
            continue
        for pi, port in enumerate(sw.ports):
            try:
                names = port.names()
            except ValueError:
                continue
            bad = next((n for n in names if not _is_physical(physical, shape, name, n)), None)
            if bad is not None:
                message, fix = _not_physical(sw.name, name, port.name, bad, shape)
                yield ctx.finding(message, fix, f"{path}.ports[{pi}].name", device=sw.name, port=bad)


def _is_physical(memo: dict[tuple[str, str], bool], shape: re.Pattern[str], platform_name: str,
                 port: str) -> bool:
    """Whether ``port`` (as written) is a physical port of ``platform_name`` (``shape`` after its
    ``full_port_name``), remembered in ``memo``: 1,792 switches name ~115,000 ports with a few hundred
    distinct names (issue 16: lint and explain run this rule)."""
    key = (platform_name, port)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = shape.fullmatch(full_port_name(platform_name, port)) is not None
    return hit


def _not_physical(switch: str, platform_name: str, entry: str, bad: str,
                  shape: re.Pattern[str]) -> tuple[str, str]:
    """(message, fix) of RT139 for port ``bad`` (expanded from inventory entry ``entry``) of ``switch``: a
    logical unit or subinterface (``<physical port>.<number>``) names its physical port, anything else gets
    the platform's example names."""
    parent, dot, unit = bad.rpartition(".")
    if dot and unit.isdigit() and shape.fullmatch(full_port_name(platform_name, parent)):
        physical = entry[:-len(unit) - 1] if entry.endswith(f".{unit}") else parent
        return (f"{switch}: port {bad!r} is logical unit / subinterface {unit} of physical port {parent!r}, "
                f"not a port: its MTU, PFC, buffer and ECN settings would be written for unit {unit}",
                f"name the physical port: {physical!r} (and the links and NIC switch_ports that name it)")
    examples = platform(platform_name).inventory.physical_port_examples
    shown = ", ".join(examples)
    return (f"{switch}: port {bad!r} is not a physical front-panel port name on {platform_name} "
            f"(physical ports look like {shown})",
            f"use the physical port name the switch shows (show interfaces), e.g. {examples[0]}"
            if examples else "use the physical port name the switch shows (show interfaces)")
