"""Catalog and capacity rules: known hardware, port counts, oversubscription, growth, fabric size."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.catalog import CatalogError
from roce_tune.inventory.models import Role
from roce_tune.inventory.rules.base import LintContext, rule
from roce_tune.platforms import SWITCH_PLATFORMS, platform

#: Spare-port share below which RT115 notes that the fabric has little room to grow.
SPARE_PORTS_MIN = 0.5


@rule("RT111", "port-capacity", Severity.error,
      "More ports, or faster ports, than the switch or NIC model has",
      """The number of declared ports (ranges expanded) must not exceed the model's `max_logical_ports`
      from the catalog, and no port may be faster than the model's `max_speed_gbps`. Usually a range
      typo (`Ethernet[0-255]` on a 32-port switch) or the wrong model. A NIC may not be faster than its
      model's `max_speed_gbps` either (a ConnectX-7 at 800G): headroom, ECN and DCQCN would be derived
      for a line rate the port never runs at.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: 'Ethernet[0-129]', speed: 100G}
""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: 'Ethernet[0-127]', speed: 100G}
""", needs_catalog=True)
def port_capacity(ctx: LintContext) -> Iterator[Finding]:
    assert ctx.catalog is not None
    for path, sw in ctx.switches():
        spec = ctx.switch_specs[sw.model]
        if spec is None:
            continue  # RT112
        count = ctx.ports_by_switch.get(sw.name, 0) if ctx.switch_path[sw.name] == path else 0
        if count > spec.max_logical_ports:
            yield ctx.finding(f"{sw.name} declares {count} ports but a {spec.id} has at most "
                              f"{spec.max_logical_ports} ({spec.ports} cages, with breakout)",
                              "check the port ranges (start-stop/step) and the model", f"{path}.ports",
                              device=sw.name)
        for pi, port in enumerate(sw.ports):
            if port.speed > spec.max_speed_gbps:
                yield ctx.finding(f"{sw.name} {port.name}: {port.speed}G is faster than a {spec.id} port "
                                  f"({spec.max_speed_gbps}G)",
                                  f"use at most {spec.max_speed_gbps}G or fix the model",
                                  f"{path}.ports[{pi}].speed", device=sw.name, port=port.name)
    yield from _nic_speeds(ctx)


def _nic_speeds(ctx: LintContext) -> Iterator[Finding]:
    """RT111 for each NIC faster than its catalog model's ``max_speed_gbps`` (unknown models: RT112)."""
    assert ctx.catalog is not None
    max_gbps: dict[str, int | None] = {}
    for model in {nic.model for _, _, nic in ctx.nics()}:  # a fabric has a few models
        try:
            max_gbps[model] = ctx.catalog.nic(model).max_speed_gbps
        except CatalogError:
            max_gbps[model] = None
    # the ~32k NICs of 4,096 hosts compared in one comprehension; findings for the few that are too fast
    for path, host, nic in [entry for entry in ctx.nics()
                            if (limit := max_gbps[entry[2].model]) is not None and entry[2].speed > limit]:
        limit = max_gbps[nic.model]
        if limit is not None:  # (always: for the type checker)
            yield ctx.finding(f"{host.name} {nic.netdev}: {nic.speed}G is faster than a {nic.model} port "
                              f"({limit}G)", f"use at most {limit}G or fix the NIC model", f"{path}.speed",
                              device=host.name, port=nic.netdev)


@rule("RT112", "unknown-catalog-id", Severity.error,
      "Unknown switch model, ASIC or NIC model",
      """Buffer sizes, cell size, headroom constants and DCQCN defaults come from the catalog; a model
      the catalog does not know cannot be tuned. The message lists the known ids. Reported once per
      distinct unknown id, at its first use.""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN9999, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
""", needs_catalog=True)
def unknown_catalog_id(ctx: LintContext) -> Iterator[Finding]:
    catalog = ctx.catalog
    assert catalog is not None
    uses: dict[tuple[str, str], list[str]] = {}
    errors: dict[tuple[str, str], str | None] = {}  # None: known (each distinct id is looked up once)
    for path, sw in ctx.switches():
        checks = [("model", sw.model, catalog.switch_model)] + (
            [("asic", sw.asic, catalog.asic)] if sw.asic else [])
        for field, value, lookup in checks:
            if _unknown(errors, (field, value), lookup):
                uses.setdefault((field, value), []).append(f"{path}.{field}")
    models = {nic.model for _, _, nic in ctx.nics()}
    unknown_nics = {m for m in models if _unknown(errors, ("nic", m), catalog.nic)}
    for path, _, nic in ctx.nics() if unknown_nics else ():
        if nic.model in unknown_nics:
            uses.setdefault(("nic", nic.model), []).append(f"{path}.model")
    for key, paths in uses.items():
        more = f" (used {len(paths)} times; first here)" if len(paths) > 1 else ""
        yield ctx.finding(f"{errors[key]}{more}", "use one of the known ids, or add the hardware to "
                          "roce_tune/catalog/*.yaml with a source for every number", paths[0])


def _unknown(errors: dict[tuple[str, str], str | None], key: tuple[str, str],
             lookup: Callable[[str], object]) -> bool:
    """True if the catalog does not know ``key`` = (kind, id); ``lookup``'s CatalogError text (None when
    known) is kept in ``errors``, so every distinct id is looked up once."""
    if key not in errors:
        try:
            lookup(key[1])
            errors[key] = None
        except CatalogError as exc:
            errors[key] = str(exc)
    return errors[key] is not None


@rule("RT114", "oversubscription", Severity.info,
      "Leaf oversubscription ratio (warning above 1:1)",
      """For each leaf with uplinks: the sum of host-facing (down) port speeds over the sum of uplink
      speeds. Above 1:1 the lossless class is oversubscribed by design: under all-to-all load the leaf
      must pause hosts (PFC) or mark heavily (ECN), and tail latency grows. Reported as info with the
      ratio when at or below 1:1, as a warning above.""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-8/4]', speed: 400G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet8", b: "spine1:Ethernet0", cable_length: 30m}
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}]}
  - {name: gpu02, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet4", cable_length: 3m}]}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, \
ports: [{name: 'Ethernet[0-12/4]', speed: 400G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, \
ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
links:
  - {a: "leaf1:Ethernet8", b: "spine1:Ethernet0", cable_length: 30m}
  - {a: "leaf1:Ethernet12", b: "spine1:Ethernet4", cable_length: 30m}
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}]}
  - {name: gpu02, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet4", cable_length: 3m}]}
""", max_severity=Severity.warning)
def oversubscription(ctx: LintContext) -> Iterator[Finding]:
    """Yield the oversubscription (host-facing over uplink port speeds) of each leaf with both: info at or
    below 1:1, a warning above."""
    for path, sw in ctx.switches():
        if sw.role is not Role.leaf or ctx.switch_path[sw.name] != path:
            continue
        down = up = up_speed = 0
        name = sw.name
        directions = ctx.topo.directions_of(name)  # the leaf's own: the spines' are not needed here
        for info in ctx.topo.ports_of(name):  # a port cabled twice counts once, as its one peer
            direction = directions.get(info.name)
            if direction == "down":
                down += info.speed_gbps
            elif direction == "up":
                up, up_speed = up + info.speed_gbps, max(up_speed, info.speed_gbps)
        if not up or not down:
            continue
        ratio = down / up
        text = f"{sw.name}: oversubscription {ratio:.2f}:1 ({down}G toward hosts / {up}G uplinks)"
        if ratio > 1 + 1e-9:
            yield ctx.finding(text + "; lossless traffic will be paused or ECN-marked under full load",
                              f"add {-(-(down - up) // up_speed)} uplink(s) of {up_speed}G for 1:1, or "
                              "accept the ratio knowingly",
                              f"{path}.name", device=sw.name, severity=Severity.warning)
        else:
            yield ctx.finding(text, "none needed (non-blocking)", f"{path}.name", device=sw.name)


def _capacity(ctx: LintContext, model: str, speeds: Counter[int], declared: int) -> int:
    """Ports the switch can offer at its most common declared speed (catalog), else the declared count."""
    spec = ctx.switch_specs[model]
    if spec is None or not speeds:
        return declared
    speed = speeds.most_common(1)[0][0]
    return max(declared, min(spec.max_logical_ports, spec.ports * max(1, spec.max_speed_gbps // speed)))


@rule("RT115", "few-spare-ports", Severity.info,
      "Fewer than 50 % of a switch's ports are free for growth",
      """Counts cabled ports against the switch's capacity at its most common port speed (catalog
      model: cages x breakout, capped at `max_logical_ports`; without the catalog, the declared ports).
      Below 50 % spare, adding hosts or uplinks needs another switch, not another cable.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: 'Ethernet[0-68/4]', speed: 400G}
links:
""" + "".join(f'  - {{a: "leaf1:Ethernet{4 * i}", b: "ext{i}:Ethernet0", cable_length: 3m}}\n'
              for i in range(18)),
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
      - {name: 'Ethernet[0-68/4]', speed: 400G}
links:
""" + "".join(f'  - {{a: "leaf1:Ethernet{4 * i}", b: "ext{i}:Ethernet0", cable_length: 3m}}\n'
              for i in range(16)))
def few_spare_ports(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per switch with fewer than :data:`SPARE_PORTS_MIN` of its capacity uncabled; the
    capacity is computed once per (model, port entry speeds, declared port count)."""
    capacities: dict[tuple[str, tuple[int, ...], int], int] = {}
    for path, sw in ctx.switches():
        if ctx.switch_path[sw.name] != path:
            continue
        declared = ctx.ports_by_switch.get(sw.name, 0)
        if not declared:
            continue
        speeds = tuple(p.speed for p in sw.ports)
        key = (sw.model, speeds, declared)  # everything _capacity reads (the catalog is the run's)
        if key not in capacities:
            capacities[key] = _capacity(ctx, sw.model, Counter(speeds), declared)
        capacity = capacities[key]
        cabled = len(ctx.topo.peers_of(sw.name))
        spare = (capacity - cabled) / capacity
        if spare < SPARE_PORTS_MIN:
            yield ctx.finding(f"{sw.name}: {cabled} of {capacity} ports cabled ({spare:.0%} spare, below "
                              f"{SPARE_PORTS_MIN:.0%})",
                              "plan growth: more hosts or uplinks need another switch",
                              f"{path}.ports", device=sw.name)


@rule("RT116", "no-fabric", Severity.info,
      "Single host or no inter-node fabric: no RoCE tuning needed",
      """With one host (or hosts whose NICs are not cabled to any switch) there is no RoCE traffic
      between nodes, so PFC, ECN and DCQCN settings have nothing to protect; NCCL uses NVLink/PCIe.""",
      """\
site: {name: lab}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}]}
  - {name: gpu02, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet4", cable_length: 3m}]}
""")
def no_fabric(ctx: LintContext) -> Iterator[Finding]:
    hosts = ctx.inv.hosts
    if len(hosts) == 1:
        yield ctx.finding(f"single host {hosts[0].name}: no inter-node RoCE traffic, so no RoCE tuning is "
                          "needed",
                          "add the other hosts of the cluster to tune their fabric", "hosts")
    elif len(hosts) > 1 and not any(n.switch_port for h in hosts for n in h.nics):
        yield ctx.finding(f"{len(hosts)} hosts but no NIC is cabled to a switch (no switch_port): no "
                          "inter-node fabric to tune", "set switch_port on each NIC", "hosts")


@rule("RT140", "host-without-nics", Severity.warning,
      "A host has no NICs: roce-tune configures nothing on it",
      """A host entry with `nics: []` (or no `nics`) plans and renders without a word, but its host script
      sets nothing: no trust mode, DSCP map, PFC, DCQCN or MTU. A GPU host of a RoCE fabric has RDMA
      NICs, so the list was usually lost on the way (a spreadsheet row or an import without the NIC
      columns, a YAML indentation slip), and the host's traffic would run on the NICs' defaults: lossy, or
      on whatever priority the firmware picks. List the host's RDMA NICs, or remove a host that has none
      from the inventory.""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}]}
  - {name: gpu02, nics: []}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: 'Ethernet[0-4/4]', speed: 400G}]}
hosts:
  - {name: gpu01, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}]}
  - {name: gpu02, nics: [{model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet4", cable_length: 3m}]}
""")
def host_without_nics(ctx: LintContext) -> Iterator[Finding]:
    """One finding per host without NICs, at its ``nics`` (the host's entry when the key is not written)."""
    for i, host in enumerate(ctx.inv.hosts):
        if host.nics:
            continue
        path = f"hosts[{i}].nics" if ctx.explicit(f"hosts[{i}].nics") else f"hosts[{i}]"
        yield ctx.finding(f"host {host.name} has no NICs: its host script would configure nothing (no trust, "
                          "DSCP map, PFC or DCQCN) and its RoCE traffic would run on the NICs' defaults",
                          f"list {host.name}'s RDMA NICs (model, netdev, rdma_device, speed, switch_port), "
                          "or remove the host from the inventory", path, device=host.name)


def _any_vendor() -> list[str]:
    """Switch platforms that run on any catalogued vendor's hardware (each platform's ``vendors``)."""
    return [n for n in SWITCH_PLATFORMS if platform(n).inventory.vendors is None]


@rule("RT125", "platform-model-mismatch", Severity.error,
      "The network OS does not run on the switch model's hardware (or the ASIC contradicts the model)",
      """`platform` must be an OS the model ships with: EOS on Arista, NX-OS on Cisco, Junos on Juniper,
      Cumulus on NVIDIA Spectrum; SONiC on any catalogued model. An explicit `asic` must be the model's
      ASIC. Renderers rely on this (queue keywords, buffer syntax) and would otherwise produce config the
      device rejects.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: eos
    model: SN4700
    role: leaf
""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
""", needs_catalog=True)
def platform_model_mismatch(ctx: LintContext) -> Iterator[Finding]:
    assert ctx.catalog is not None
    for path, sw in ctx.switches():
        spec = ctx.switch_specs[sw.model]
        if spec is None:
            continue  # RT112
        vendors = platform(sw.platform.value).inventory.vendors
        if vendors is not None and spec.vendor not in vendors:
            yield ctx.finding(f"{sw.name}: {sw.platform.value} does not run on a {spec.vendor} {spec.id}",
                              f"use platform {' or '.join(_any_vendor())} or a {'/'.join(sorted(vendors))} "
                              "model",
                              f"{path}.platform", device=sw.name)
        if sw.asic and sw.asic != spec.asic:
            yield ctx.finding(f"{sw.name}: asic {sw.asic} contradicts model {spec.id} ({spec.asic})",
                              f"remove asic or set it to {spec.asic}", f"{path}.asic", device=sw.name)


@rule("RT136", "unknown-os-release", Severity.warning,
      "The switch's os_version is not a release whose syntax roce-tune knows for its platform",
      """Where a platform's syntax differs by release (Cumulus NVUE keywords), roce-tune keeps a table of the
      releases it was checked against (README lists them). An `os_version` outside that table renders with
      the default release's syntax, which the switch may reject or read differently.""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: cumulus
    model: SN4700
    role: leaf
    os_version: 4.4.3
""",
      """\
site: {name: lab}
switches:
  - name: leaf1
    platform: cumulus
    model: SN4700
    role: leaf
    os_version: 5.14.0
""")
def unknown_os_release(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per switch whose ``os_version`` matches none of its platform's
    ``capabilities.os_releases`` globs."""
    from fnmatch import fnmatchcase

    from roce_tune.platforms import platform

    for path, sw in ctx.switches():
        known = platform(sw.platform.value).capabilities.os_releases
        if sw.os_version is None or not known or any(fnmatchcase(sw.os_version, g) for g in known):
            continue
        releases = sorted({g.removesuffix(".*") for g in known}, key=lambda r: [int(x) for x in r.split(".")
                                                                               if x.isdigit()])
        yield ctx.finding(f"{sw.name}: {sw.platform.value} release {sw.os_version} is not one roce-tune "
                          f"knows the syntax of (known: {', '.join(releases)}); the output follows the "
                          "default release",
                          "set os_version to a known release or check every rendered line on the switch",
                          f"{path}.os_version", device=sw.name)
