"""MTU rules: host vs switch MTU (RT105) and MTUs too small for the RoCE path MTU (RT106, RT119)."""

from __future__ import annotations

from collections.abc import Iterator

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.rules.base import MTU_OVERHEAD_BYTES, ROCE_MTU_MIN_NETDEV, LintContext, rule

_LEAF = """\
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
"""
_NIC = """\
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}
"""


def _blame(ctx: LintContext, host_path: str, nic_path: str, port_path: str) -> str:
    """The most specific MTU the user wrote for this host/port pair: that is where the fix goes."""
    for p in (f"{nic_path}.mtu", f"{host_path}.mtu", f"{port_path}.mtu", "policy.host_mtu", "policy.mtu"):
        if ctx.explicit(p):
            return p
    return "policy"


@rule("RT105", "mtu-mismatch", Severity.error,
      "Switch port MTU is smaller than the host MTU plus L2 overhead (or differs across a link)",
      f"""The switch port facing a NIC must accept the largest frame the host sends: host netdev MTU
      (`nic.mtu`, else `host.mtu`, else `policy.host_mtu`) + {MTU_OVERHEAD_BYTES} bytes (Ethernet header,
      FCS and one VLAN tag) must not exceed the port MTU (`port.mtu`, else `policy.mtu`). Oversized frames
      are dropped silently, which RoCE sees as loss. The two ports of a switch-to-switch link must also
      have the same MTU. One finding per MTU setting at fault, with the number of ports it affects.""",
      "site: {name: lab}\npolicy: {mtu: 9216}\n" + _LEAF + "    mtu: 9216\n" + _NIC,
      "site: {name: lab}\npolicy: {mtu: 9216}\n" + _LEAF + "    mtu: 9000\n" + _NIC)
def mtu_mismatch(ctx: LintContext) -> Iterator[Finding]:
    blamed, detail = _host_mtu_blame(ctx)
    for where, pairs in blamed.items():
        more = f" ({len(pairs)} ports, e.g. {pairs[0]})" if len(pairs) > 1 else f" ({pairs[0]})"
        host_side = where.endswith("host_mtu") or where.startswith("hosts")
        fix = ("lower the host MTU (9000 is the usual value with a 9216 switch MTU)" if host_side else
               "raise the switch port MTU to 9216 (or at least host MTU + 22)")
        yield ctx.finding(detail[where] + more, fix, where)
    yield from _link_mtu_mismatch(ctx)


def _host_mtu_blame(ctx: LintContext) -> tuple[dict[str, list[str]], dict[str, str]]:
    """NIC/port pairs whose host frame exceeds the switch port MTU, grouped by the MTU setting at fault
    (its field path): path -> ["host:netdev->switch:port", ...] and path -> what is wrong. Not walked when
    the largest MTU any host can have fits the smallest any switch port can have."""
    blamed: dict[str, list[str]] = {}
    detail: dict[str, str] = {}
    policy = ctx.inv.policy
    if _largest_host_mtu(ctx) + MTU_OVERHEAD_BYTES <= min(_port_mtus(ctx), default=policy.mtu):
        return blamed, detail
    for (path, host, nic), info in ctx.nic_ports():
        if info is None:
            continue
        # ctx.host_mtu / ctx.port_mtu, inlined (32k NICs at 4,096 hosts)
        host_mtu, port_mtu = nic.mtu or host.mtu or policy.host_mtu, info.mtu or policy.mtu
        if host_mtu + MTU_OVERHEAD_BYTES > port_mtu:
            where = _blame(ctx, path.partition(".nics[")[0], path, info.path)
            blamed.setdefault(where, []).append(f"{host.name}:{nic.netdev}->{info.switch}:{info.name}")
            detail.setdefault(where, f"host MTU {host_mtu} + {MTU_OVERHEAD_BYTES} B L2 overhead = "
                                     f"{host_mtu + MTU_OVERHEAD_BYTES} exceeds switch port MTU "
                                     f"{port_mtu}")
    return blamed, detail


def _largest_host_mtu(ctx: LintContext) -> int:
    """The largest effective netdev MTU of any NIC (``nic.mtu``, else ``host.mtu``, else policy.host_mtu)."""
    host_mtu = ctx.inv.policy.host_mtu
    return max([nic.mtu or host.mtu or host_mtu for host in ctx.inv.hosts for nic in host.nics], default=0)


def _port_mtus(ctx: LintContext) -> set[int]:
    """The effective MTUs (``port.mtu``, else policy.mtu) of the switches' port entries."""
    mtu = ctx.inv.policy.mtu
    return {port.mtu or mtu for sw in ctx.inv.switches for port in sw.ports}


def _link_mtu_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """Switch-to-switch links whose two ends have different MTUs (none when all ports have one MTU)."""
    if len(_port_mtus(ctx)) <= 1:
        return
    policy = ctx.inv.policy
    for li, (da, pa, _, _, ia, ib) in enumerate(ctx.topo.link_ends):
        if ia is not None and ib is not None:
            ma, mb = ia.mtu or policy.mtu, ib.mtu or policy.mtu  # ctx.port_mtu, inlined
            if ma != mb:
                link = ctx.inv.links[li]
                yield ctx.finding(f"link {link.a} (MTU {ma}) <-> {link.b} (MTU {mb}): the ends have "
                                  "different MTUs",
                                  "give both ports the same MTU (9216 is usual for a RoCE fabric)",
                                  f"links[{li}]", device=da, port=pa)


@rule("RT106", "policy-mtu-below-roce", Severity.error,
      "Policy or switch port MTU is too small for the RoCE MTU",
      """RoCE MTU 4096 needs a host netdev MTU of at least 4200 (the RoCEv2 headers ride on top of the
      4096-byte payload; with less the NIC falls back to RoCE MTU 2048 and bandwidth drops), and switch
      ports need that plus L2 overhead. This rule checks `policy.host_mtu`, `policy.mtu` and every
      `port.mtu` against `policy.roce_mtu`.""",
      """\
site: {name: lab}
policy:
  roce_mtu: 4096
  host_mtu: 4000
""",
      """\
site: {name: lab}
policy:
  roce_mtu: 4096
  host_mtu: 9000
""")
def policy_mtu_below_roce(ctx: LintContext) -> Iterator[Finding]:
    pol = ctx.inv.policy
    need = ROCE_MTU_MIN_NETDEV[pol.roce_mtu]
    if pol.host_mtu < need:
        yield ctx.finding(f"policy.host_mtu {pol.host_mtu} is below {need}, the netdev MTU RoCE MTU "
                          f"{pol.roce_mtu} needs",
                          f"set policy.host_mtu to 9000 (at least {need})", "policy.host_mtu")
    if pol.mtu < need + MTU_OVERHEAD_BYTES:
        yield ctx.finding(f"policy.mtu {pol.mtu} is below {need + MTU_OVERHEAD_BYTES}, the switch MTU RoCE "
                          f"MTU {pol.roce_mtu} needs", "set policy.mtu to 9216", "policy.mtu")
    for path, sw in ctx.switches():
        for pi, port in enumerate(sw.ports):
            if port.mtu is not None and port.mtu < need + MTU_OVERHEAD_BYTES:
                yield ctx.finding(f"{sw.name} {port.name}: MTU {port.mtu} is below "
                                  f"{need + MTU_OVERHEAD_BYTES}, the switch MTU RoCE MTU {pol.roce_mtu} "
                                  "needs", "set the port MTU to 9216 or remove "
                                  "it to use policy.mtu", f"{path}.ports[{pi}].mtu", device=sw.name,
                                  port=port.name)


@rule("RT119", "host-mtu-below-roce", Severity.error,
      "A host or NIC MTU is too small for the RoCE MTU",
      """A `host.mtu` or `nic.mtu` below the netdev MTU RoCE needs (4200 for RoCE MTU 4096) makes that
      NIC negotiate a smaller RoCE path MTU than the rest of the fabric.""",
      "site: {name: lab}\n" + _LEAF + "    mtu: 1500\n" + _NIC,
      "site: {name: lab}\n" + _LEAF + "    mtu: 9000\n" + _NIC)
def host_mtu_below_roce(ctx: LintContext) -> Iterator[Finding]:
    pol = ctx.inv.policy
    need = ROCE_MTU_MIN_NETDEV[pol.roce_mtu]
    for hi, host in enumerate(ctx.inv.hosts):
        if host.mtu is not None and host.mtu < need and any(n.mtu is None for n in host.nics):
            yield ctx.finding(f"{host.name}: MTU {host.mtu} is below {need}, the netdev MTU RoCE MTU "
                              f"{pol.roce_mtu} needs", f"set mtu to 9000 (at least {need})",
                              f"hosts[{hi}].mtu", device=host.name)
        for ni, nic in enumerate(host.nics):
            if nic.mtu is not None and nic.mtu < need:
                yield ctx.finding(f"{host.name} {nic.netdev}: MTU {nic.mtu} is below {need}, the netdev MTU "
                                  f"RoCE MTU {pol.roce_mtu} needs", f"set mtu to 9000 (at least {need})",
                                  f"hosts[{hi}].nics[{ni}].mtu", device=host.name, port=nic.netdev)
