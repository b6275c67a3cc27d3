"""Cabling rules: endpoints that resolve, ports used once, matching speeds, cable lengths, external peers.

Dangling vs external (a deliberate split):

* **RT101 dangling** (error) — the inventory contradicts itself: a link endpoint names a declared
  switch but a port that switch does not declare, or a NIC's ``switch_port`` names a switch or port
  that is not declared (host NICs must land on a switch roce-tune tunes).
* **RT113 external** (warning) — a link endpoint names a device that is not declared at all: the
  cable is real but the far end is outside the inventory, so the lossless settings on our side face
  a device whose PFC/ECN configuration roce-tune cannot see or set.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterator
from typing import NamedTuple

from roce_tune.findings import Finding, Severity
from roce_tune.inventory.models import Host, Nic
from roce_tune.inventory.overrides import (
    CablePin,
    CablePins,
    conflicting_cable_pins,
    override_label,
    pinned_cables,
)
from roce_tune.inventory.rules.base import LintContext, rule
from roce_tune.platforms import HOST_PLATFORM, get_platform

_SWITCH_HEAD = """\
site: {name: lab}
switches:
  - name: leaf1
    platform: sonic
    model: SN4700
    role: leaf
    ports:
"""


def _close_ports(ctx: LintContext, switch: str, port: str) -> str:
    names = [p.name for p in ctx.topo.ports_of(switch)]
    close = difflib.get_close_matches(port, names, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


@rule("RT101", "dangling-endpoint", Severity.error,
      "Link endpoint or NIC switch_port names an undeclared port or switch",
      """A link endpoint `device:port` whose device is a declared switch must name one of that switch's
      declared ports; a NIC's `switch_port` must name a declared switch and port. Otherwise the cable
      has no port to carry its PFC/ECN settings and headroom. (A link to a device that is not in the
      inventory at all is RT113, a warning.)""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet4"
        cable_length: 3m
""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet0"
        cable_length: 3m
""")
def dangling_endpoint(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per link end on a declared switch that names an undeclared port, and per NIC whose
    switch_port names an undeclared switch or port. The topology records each of these as a ``dangling``
    problem (with the unknown devices on links, RT113's), so an inventory without one is not walked."""
    if not any(hint == "dangling" for hint, _, _ in ctx.topo.problems):
        return
    for li, (adev, aport, bdev, bport, _, _) in enumerate(ctx.topo.link_ends):
        for side, dev, port in (("a", adev, aport), ("b", bdev, bport)):
            if dev in ctx.topo.switches and ctx.topo.port(dev, port) is None:
                yield ctx.finding(
                    f"link endpoint {dev}:{port}: {dev} declares no port "
                    f"{port}{_close_ports(ctx, dev, port)}",
                    f"add {port} to the ports of {dev} ({ctx.switch_path[dev]}), or correct the endpoint",
                    f"links[{li}].{side}", device=dev, port=port)
    for path, host, nic in ctx.nics():
        if nic.switch_port is None:
            continue
        dev, port = nic.switch_port.split(":", 1)
        if dev not in ctx.topo.switches:
            what = "a host, not a switch" if dev in ctx.host_names else "not declared"
            known = ", ".join(sorted(ctx.topo.switches)[:8]) or "none"
            yield ctx.finding(f"{host.name} {nic.netdev}: switch_port names {dev!r}, which is {what}",
                              f"cable the NIC to a declared switch (known: {known}) or add {dev} to switches",
                              f"{path}.switch_port", device=host.name, port=nic.netdev)
        elif ctx.topo.port(dev, port) is None:
            yield ctx.finding(
                f"{host.name} {nic.netdev}: switch_port {dev}:{port}: {dev} declares no port {port}"
                f"{_close_ports(ctx, dev, port)}",
                f"add {port} to the ports of {dev} ({ctx.switch_path[dev]}), or correct switch_port",
                f"{path}.switch_port", device=host.name, port=nic.netdev)


@rule("RT102", "port-used-twice", Severity.error,
      "A switch port is cabled twice or declared twice",
      """Every switch port carries one cable and is declared once (ranges included). A port cabled to
      two peers, or listed in two port entries, makes its speed, MTU and headroom ambiguous.""",
      _SWITCH_HEAD + """\
      - {name: 'Ethernet[0-8/4]', speed: 400G}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}
  - name: gpu02
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}
""",
      _SWITCH_HEAD + """\
      - {name: 'Ethernet[0-8/4]', speed: 400G}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet0", cable_length: 3m}
  - name: gpu02
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, \
switch_port: "leaf1:Ethernet4", cable_length: 3m}
""")
def port_used_twice(ctx: LintContext) -> Iterator[Finding]:
    for path, endpoint, reason in ctx.topo.duplicate_ports:
        switch, port = endpoint.split(":", 1)
        if reason == "declared twice":
            first = ctx.topo.port_index[switch][port].path
            yield ctx.finding(f"port {endpoint} is declared twice (first in {first}, line "
                              f"{ctx.line_of(first)})",
                              "remove the second declaration or fix the range so the entries do not overlap",
                              path, device=switch, port=port)
        else:
            first = ctx.topo.peers[(switch, port)].path
            yield ctx.finding(
                f"port {endpoint} is cabled twice (already used by {first}, line {ctx.line_of(first)})",
                "each port takes one cable: move one of the two to a free port", path, device=switch,
                port=port)


@rule("RT103", "link-speed-mismatch", Severity.error,
      "The two ends of a switch-to-switch link have different speeds",
      """Both ports of a cable must run at the same speed; a 400G port cabled to a 100G port either
      does not come up or runs at the lower speed while headroom is sized for the higher one.""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet120, speed: 400G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 100G}]}
links:
  - {a: "leaf1:Ethernet120", b: "spine1:Ethernet0", cable_length: 30m}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet120, speed: 400G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet120", b: "spine1:Ethernet0", cable_length: 30m}
""")
def link_speed_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per link whose two declared ports differ in speed."""
    links = ctx.inv.links
    # the ~32k links of 4,096 hosts compared in one comprehension; findings for the few that differ
    for li, (da, pa, _, _, ia, ib) in [(li, ends) for li, ends in enumerate(ctx.topo.link_ends)
                                       if ends[4] and ends[5] and ends[4].speed_gbps != ends[5].speed_gbps]:
        if ia and ib:  # (always: for the type checker)
            link = links[li]
            slow, fast = sorted((ia.speed_gbps, ib.speed_gbps))
            split = (f" (or break the faster port out, e.g. breakout: {fast // slow}x{slow}G)"
                     if fast % slow == 0 and fast // slow <= 8 else "")
            yield ctx.finding(
                f"link {link.a} ({ia.speed_gbps}G) <-> {link.b} ({ib.speed_gbps}G): the ends have different "
                "speeds", f"set both ports to the same speed{split} in {ia.path} / {ib.path}",
                f"links[{li}]", device=da, port=pa)


@rule("RT104", "nic-speed-mismatch", Severity.error,
      "A NIC's speed differs from the speed of the switch port it is cabled to",
      """The NIC and its switch port must agree on the speed; otherwise the link does not come up, or
      headroom and ECN thresholds are computed for the wrong rate.""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 200G
        switch_port: "leaf1:Ethernet0"
        cable_length: 3m
""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet0"
        cable_length: 3m
""")
def nic_speed_mismatch(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per NIC whose speed differs from its declared switch port's."""
    # the ~32k NICs of 4,096 hosts compared in one comprehension; findings for the few that differ
    for (path, host, nic), info in [(nic, info) for nic, info in ctx.nic_ports()
                                    if info is not None and info.speed_gbps != nic[2].speed]:
        if info is not None:  # (always: for the type checker)
            dev, port = info.switch, info.name
            yield ctx.finding(
                f"{host.name} {nic.netdev} is {nic.speed}G but {dev}:{port} is {info.speed_gbps}G",
                f"set the NIC speed to {info.speed_gbps}G, or the port speed in {info.path} "
                f"(line {ctx.line_of(info.path)}) to {nic.speed}G",
                f"{path}.speed", device=host.name, port=nic.netdev)


@rule("RT107", "missing-cable-length", Severity.warning,
      "A link or NIC has no cable_length; the default is used for headroom",
      """PFC headroom grows with cable length (about 1 KB per 10 m at 400G, both directions). A link or
      NIC without `cable_length` gets `defaults.cable_length`; say so explicitly for any cable longer
      than that, or the headroom is too small and lossless traffic drops. A cable whose length a `cable_m`
      override pins (at either end) uses the pin, not the default.""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet0"
""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - model: connectx-7
        netdev: ens1f0np0
        rdma_device: mlx5_0
        speed: 400G
        switch_port: "leaf1:Ethernet0"
        cable_length: 3m
""")
def missing_cable_length(ctx: LintContext) -> Iterator[Finding]:
    default_m = ctx.inv.defaults.cable_length
    where = "defaults.cable_length" + ("" if ctx.explicit("defaults.cable_length") else " (built-in)")
    pins = pinned_cables(ctx.inv, ctx.topo)  # a pinned cable's length is the pin's (either end)
    for li, link in enumerate(ctx.inv.links):
        if link.cable_length is None and link.lossless:  # a lossy link gets no headroom
            dev, port, b_dev, b_port = ctx.topo.link_ends[li][:4]
            if pins and ((dev, port) in pins or (b_dev, b_port) in pins):
                continue
            yield ctx.finding(f"link {link.a} <-> {link.b} has no cable_length; headroom uses {default_m:g} "
                              f"m from {where}", "add cable_length: <metres> to the link (e.g. 30m)",
                              f"links[{li}]", device=dev, port=port)
    for path, host, nic in ctx.nics():
        if nic.cable_length is None and nic.switch_port is not None and (host.name, nic.netdev) not in pins:
            yield ctx.finding(f"{host.name} {nic.netdev} has no cable_length; headroom uses {default_m:g} m "
                              f"from {where}", "add cable_length: <metres> to the NIC (e.g. 3m)",
                              path, device=host.name, port=nic.netdev)


@rule("RT113", "external-lossless-peer", Severity.warning,
      "A link goes to a device that is not in the inventory; PFC will face an unknown device",
      """A link endpoint naming a device that is declared nowhere is treated as external: our port is
      configured lossless (PFC, ECN) toward a device whose PFC and buffers roce-tune cannot see or set.
      If that device does not honour pause frames, lossless traffic drops; if it sends pauses we do not
      expect, they can spread. Add the device, or keep the port out of the lossless domain with
      `lossless: false` on the link. A link
      endpoint naming a host is reported here too: host cabling belongs on the NIC's `switch_port`.""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet120, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet120", b: "border1:Ethernet0", cable_length: 30m}
""",
      """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet120, speed: 400G}]}
  - {name: border1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet120", b: "border1:Ethernet0", cable_length: 30m}
""")
def external_lossless_peer(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per link end that names a host, and per lossless link end that names a device not in
    the inventory while its other end is a switch (the topology's ``foreign_link_ends``, in link order)."""
    for li, side in ctx.topo.foreign_link_ends:
        link = ctx.inv.links[li]
        adev, aport, bdev, bport, _, _ = ctx.topo.link_ends[li]
        dev, port, odev, oport = (adev, aport, bdev, bport) if side == "a" else (bdev, bport, adev, aport)
        if dev in ctx.host_names:
            yield ctx.finding(f"link names host {dev}; host cables are declared on the NIC "
                              "(switch_port), so this link is not used",
                              f"remove the link and set switch_port: "
                              f"\"{odev}:{oport}\" on {dev}'s NIC", f"links[{li}].{side}", device=dev,
                              port=port)
        elif odev in ctx.topo.switches and link.lossless:
            yield ctx.finding(f"{odev}:{oport} is cabled to {dev}, which is not in the inventory: PFC "
                              "and ECN will be enabled toward a device roce-tune cannot configure",
                              f"add {dev} to switches (so its PFC/ECN matches), or set lossless: false "
                              f"on the link to keep {odev}:{oport} out of the lossless domain",
                              f"links[{li}].{side}", device=odev, port=oport)


@rule("RT123", "bad-port-range", Severity.error,
      "A port range is empty (start after stop)",
      """A port entry like `Ethernet[124-0/4]` expands to no ports; write ranges as
      `[start-stop/step]` with start <= stop.""",
      _SWITCH_HEAD + """\
      - {name: 'Ethernet[124-0/4]', speed: 400G}
""",
      _SWITCH_HEAD + """\
      - {name: 'Ethernet[0-124/4]', speed: 400G}
""")
def bad_port_range(ctx: LintContext) -> Iterator[Finding]:
    for hint, path, message in ctx.topo.problems:
        if hint == "range":
            yield ctx.finding(message, "write the range as [start-stop/step] with start <= stop, e.g. "
                              "Ethernet[0-124/4]", path)


@rule("RT128", "nic-cable-out-of-range", Severity.error,
      "A NIC's cable length is longer than the NIC's buffer command accepts",
      """The host script hands each NIC its cable length (`mlnx_qos --cable_len`, whole metres), which the
      mlx5 driver uses for its receive-buffer xoff. The driver keeps only 1..999 m and silently ignores
      any other length; a longer cable is almost always a unit slip (centimetres or feet written as
      metres). A `cable_m` pin on the switch port a NIC is cabled to is that NIC's cable length too (one
      cable, one length): a pin outside the range is reported at the pin.""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, cable_length: 100000m}
""",
      _SWITCH_HEAD + """\
      - {name: Ethernet0, speed: 400G}
hosts:
  - name: gpu01
    nics:
      - {model: connectx-7, netdev: ens1f0np0, rdma_device: mlx5_0, speed: 400G, cable_length: 100m}
""")
def nic_cable_out_of_range(ctx: LintContext) -> Iterator[Finding]:
    """Yield a finding per NIC whose cable_length (metres, rounded up) is outside the host platform's
    ``CABLE_LEN_RANGE`` (what ``mlnx_qos --cable_len`` accepts), and one for a defaulted length."""
    lo, hi = get_platform(HOST_PLATFORM).CABLE_LEN_RANGE
    default_m = ctx.inv.defaults.cable_length
    pins = pinned_cables(ctx.inv, ctx.topo)
    lengths = {nic.cable_length for _, _, nic in ctx.nics()}  # a fabric has a handful of distinct lengths
    if not pins and all(lo <= math.ceil(default_m if m is None else m) <= hi for m in lengths):
        return
    sort = _sort_nic_cables(ctx, (lo, hi), default_m, pins)
    for path, host, nic, cable in sort.own_out:
        yield ctx.finding(f"{host.name} {nic.netdev}: cable_length {cable:g} m is outside the {lo}..{hi} m "
                          "the NIC driver keeps from mlnx_qos --cable_len",
                          "write the cable length in metres (e.g. 3m, 100m)",
                          f"{path}.cable_length", device=host.name, port=nic.netdev)
    if sort.defaulted_out:
        yield _default_cable_finding(ctx, (lo, hi), default_m, sort.defaulted_out)
    for pin, nics in sort.pinned_out.items():
        yield _pinned_cable_finding(ctx, (lo, hi), pin, nics)


class _NicCablesOut(NamedTuple):
    """The NICs whose cable length is outside the driver's range, by where the length comes from."""

    #: (``hosts[i].nics[j]``, host, NIC, its own cable_length in m), in file order
    own_out: list[tuple[str, Host, Nic, float]]
    #: ``host netdev`` of each NIC using ``defaults.cable_length``, in file order
    defaulted_out: list[str]
    #: a pin outside the range -> ``host netdev`` of the NICs on its cables, in file order
    pinned_out: dict[CablePin, list[str]]


def _sort_nic_cables(ctx: LintContext, range_m: tuple[int, int], default_m: float,
                     pins: CablePins) -> _NicCablesOut:
    """Every NIC of ``ctx`` whose cable length (metres, rounded up) is outside ``range_m`` (lo, hi
    inclusive), by its source: a pin on its cable (``pins``, :func:`pinned_cables`: the pin, not the
    inventory's length, reaches the NIC), its own ``cable_length``, or ``default_m``
    (``defaults.cable_length``)."""
    lo, hi = range_m
    out = _NicCablesOut([], [], {})
    for path, host, nic in ctx.nics():
        pin = pins.get((host.name, nic.netdev)) if pins else None
        if pin is not None:  # the pin, not the inventory's length, reaches the NIC
            if not lo <= math.ceil(pin.cable_m) <= hi:
                out.pinned_out.setdefault(pin, []).append(f"{host.name} {nic.netdev}")
            continue
        cable = nic.cable_length if nic.cable_length is not None else default_m
        if lo <= math.ceil(cable) <= hi:
            continue
        if nic.cable_length is None:
            out.defaulted_out.append(f"{host.name} {nic.netdev}")
        else:
            out.own_out.append((path, host, nic, cable))
    return out


def _default_cable_finding(ctx: LintContext, range_m: tuple[int, int], default_m: float,
                           defaulted: list[str]) -> Finding:
    """The finding at ``defaults.cable_length`` when ``default_m`` (metres) is outside ``range_m`` (lo, hi)
    and the NICs ``defaulted`` (``host netdev``; the first three are named) use it."""
    lo, hi = range_m
    return ctx.finding(f"defaults.cable_length {default_m:g} m is outside the {lo}..{hi} m the NIC driver "
                       f"keeps from mlnx_qos --cable_len, and {len(defaulted)} NIC(s) use it "
                       f"({', '.join(defaulted[:3])}{' …' if len(defaulted) > 3 else ''})",
                       "write the default cable length in metres "
                       "(e.g. 5m), or give those NICs their own cable_length", "defaults.cable_length")


def _pinned_cable_finding(ctx: LintContext, range_m: tuple[int, int], pin: CablePin,
                          nics: list[str]) -> Finding:
    """The finding at the override's ``set.cable_m`` when ``pin``'s length (metres) is outside ``range_m``
    (lo, hi), naming the NICs ``nics`` (``host netdev``) on its cables (up to three, then a count), at the
    pinned switch port."""
    lo, hi = range_m
    return ctx.finding(f"cable_m {pin.cable_m:g} m pinned on {pin.pinned_end} is the cable length of "
                       f"{', '.join(nics[:3])}{f' and {len(nics) - 3} more' if len(nics) > 3 else ''}, "
                       f"outside the {lo}..{hi} m the NIC driver keeps from mlnx_qos --cable_len",
                       "pin the cable length in metres (e.g. 100m)",
                       f"policy.overrides[{pin.override_index}].set.cable_m",
                       device=pin.pinned_end.split(":", 1)[0], port=pin.pinned_end.split(":", 1)[1])


_PIN_HEAD = """\
site: {name: lab}
switches:
  - {name: leaf1, platform: sonic, model: SN4700, role: leaf, ports: [{name: Ethernet0, speed: 400G}]}
  - {name: spine1, platform: sonic, model: SN4700, role: spine, ports: [{name: Ethernet0, speed: 400G}]}
links:
  - {a: "leaf1:Ethernet0", b: "spine1:Ethernet0", cable_length: 3m}
policy:
  overrides:
    - {device: leaf1, port: Ethernet0, set: {cable_m: 100}, reason: measured run}
"""


@rule("RT141", "cable-pins-disagree", Severity.warning,
      "The two ends of one cable are pinned to different lengths; the more specific pin wins silently",
      """A `cable_m` override states the length of the cable, which holds at both of its ends (the far
      switch port's headroom, the base RTT). When overrides pin the two ends of one switch-to-switch cable
      to different lengths, the more specific override (port over device over role over site, the later of
      equals) is used at both ends and the other pin is used nowhere on that cable. The finding is at the
      losing override and names both overrides and the length used. Pin the cable once, or give both ends
      the same length.""",
      _PIN_HEAD + """\
    - {device: spine1, set: {cable_m: 30}, reason: spine cables are 30 m}
""",
      _PIN_HEAD + """\
    - {device: spine1, port: Ethernet0, set: {cable_m: 100}, reason: measured run}
""")
def cable_pins_disagree(ctx: LintContext) -> Iterator[Finding]:
    """Yield one finding per losing override and winning override (:func:`conflicting_cable_pins`), at the
    losing entry's ``set.cable_m``, listing the cables (up to three, then a count) on which it lost."""
    if not any("cable_m" in o.set for o in ctx.inv.policy.overrides):
        return
    lost: dict[tuple[int, int, float, float], list[str]] = {}  # (loser, winner, lost m, used m) -> cables
    for c in conflicting_cable_pins(ctx.inv, ctx.topo):
        key = (c.loser.override_index, c.winner.override_index, c.loser.cable_m, c.winner.cable_m)
        lost.setdefault(key, []).append(f"{c.loser.pinned_end} <-> {c.winner.pinned_end}")
    policy = ctx.inv.policy
    for (loser, winner, lost_m, used_m), cables in lost.items():
        more = f" and {len(cables) - 3} more" if len(cables) > 3 else ""
        dev, port = cables[0].split(" <-> ", 1)[0].split(":", 1)
        yield ctx.finding(f"cable {', '.join(cables[:3])}{more}: {override_label(policy, loser)} pins "
                          f"cable_m {lost_m:g} m and {override_label(policy, winner)} pins {used_m:g} m; "
                          f"{used_m:g} m is used at both ends (the more specific override wins)",
                          f"pin the cable once, or pin {used_m:g} m at both ends",
                          f"policy.overrides[{loser}].set.cable_m", device=dev, port=port)
