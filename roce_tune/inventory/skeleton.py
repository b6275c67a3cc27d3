"""Build an inventory skeleton from a list of cables, write YAML fast, write files atomically.

Shared by ``roce-tune import cabling`` (:mod:`roce_tune.inventory.cabling_import`) and ``roce-tune import
lldp`` (:mod:`roce_tune.inventory.lldp`): both know which device:port is cabled to which, and little else.

Which end is a host (docs/import.md#hosts-and-switches): a device is a host when its name matches the
``hosts`` pattern given; else a switch when it matches the ``switches`` pattern; else a host when every
port it is seen with looks like a Linux NIC netdev (:data:`NETDEV_LIKE_RE`: ``ens1f0np0``,
``enp65s0f0np0``, ``eth2``, ``ib0`` …) and a switch otherwise (``Ethernet0``, ``swp1``, ``et-0/0/0``,
``Ethernet1/1`` …).

Switch roles follow the Clos: a switch with hosts is a leaf, one cabled to leaves a spine, one cabled
only to spines a superspine (tiers counted up from the host-facing switches).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from roce_tune.inventory.intent import _as_range
from roce_tune.platforms import DEFAULT_SWITCH_PLATFORM, full_port_name, port_name_hints

#: Port names that are Linux NIC netdevs (systemd predictable names, the kernel's ethN, IPoIB ibN, and
#: the Mellanox representor/uplink forms); switch front-panel names never look like this.
NETDEV_LIKE_RE = re.compile(r"^(?:en[osPpx][0-9a-z_]*|eth\d+[0-9a-z_.]*|ib\d+|bond\d+|p\d+p\d+|mlx\d+\S*)$")



@dataclass(frozen=True)
class Cable:
    """One cable as a source reports it. ``where`` is ``file:line`` of the row or capture line."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    length_m: float | None = None
    media: str | None = None
    where: str = ""


@dataclass
class SwitchFacts:
    """What a source knows about a switch beyond its cables (LLDP: ``show version``)."""

    platform: str | None = None
    model: str | None = None
    os_version: str | None = None


@dataclass
class SkeletonOptions:
    """How to fill in what a cabling source does not say.

    Attributes:
        site: ``site.name`` of the skeleton.
        hosts: regex (full match) of host names; None = by port names.
        switches: regex (full match) of switch names; None = by port names.
        platform: platform of switches whose port names do not tell (and of all, if ``force_platform``).
        model: switch model written where the source has none (``unknown`` fails lint RT112 until set).
        speed: port and NIC speed (``400G``): cabling plans and LLDP do not carry it.
        nic_model: catalog id of the host NICs.
    """

    site: str = "imported"
    hosts: str | None = None
    switches: str | None = None
    platform: str = DEFAULT_SWITCH_PLATFORM
    force_platform: bool = False
    model: str = "unknown"
    speed: str = "400G"
    nic_model: str = "connectx-7"
    facts: dict[str, SwitchFacts] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)


def classify_devices(cables: Iterable[Cable], opts: SkeletonOptions) -> dict[str, str]:
    """Device name -> ``host`` or ``switch`` (module docstring)."""
    ports: dict[str, set[str]] = {}
    for c in cables:
        ports.setdefault(c.a_device, set()).add(c.a_port)
        ports.setdefault(c.b_device, set()).add(c.b_port)
    host_re = re.compile(opts.hosts) if opts.hosts else None
    switch_re = re.compile(opts.switches) if opts.switches else None
    out: dict[str, str] = {}
    for dev, names in ports.items():
        if dev in opts.kinds:
            out[dev] = opts.kinds[dev]
        elif dev in opts.facts:
            out[dev] = "switch"
        elif host_re and host_re.fullmatch(dev):
            out[dev] = "host"
        elif switch_re and switch_re.fullmatch(dev):
            out[dev] = "switch"
        elif host_re and switch_re:
            out[dev] = "switch"
        else:
            out[dev] = "host" if all(NETDEV_LIKE_RE.match(p) for p in names) else "switch"
    return out


def guess_platform(ports: Iterable[str], default: str) -> str:
    """Platform from port names (each platform's port-name hint, :func:`roce_tune.platforms.port_name_hints`,
    matched by the name as that platform spells it: ``Et1/1/1`` is EOS's ``Ethernet1/1/1``), ``default``
    when they do not agree on one."""
    seen = platform_hints(ports)
    return next(iter(seen)) if len(seen) == 1 else default


def platform_hints(ports: Iterable[str]) -> dict[str, list[str]]:
    """Platform -> the ``ports`` whose names only that platform uses (its port-name hint, matched by the name
    as it spells it), in the order given; ports no hint matches are left out."""
    seen: dict[str, list[str]] = {}
    hints = port_name_hints()
    for p in ports:
        for pat, plat in hints:
            if pat.match(full_port_name(plat, p)):
                seen.setdefault(plat, []).append(p)
                break
    return seen


@lru_cache(maxsize=1 << 16)
def _port_key(name: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _length(m: float) -> str:
    return f"{m:g}m"


def _roles(switches: set[str], adj: dict[str, set[str]], host_facing: set[str]) -> dict[str, str]:
    """Leaf / spine / superspine by distance from the host-facing switches (BFS over switch links)."""
    tier: dict[str, int] = {s: 0 for s in host_facing}
    frontier = sorted(host_facing)
    while frontier:
        nxt = []
        for s in frontier:
            for o in sorted(adj.get(s, ())):
                if o in switches and o not in tier:
                    tier[o] = tier[s] + 1
                    nxt.append(o)
        frontier = nxt
    names = ("leaf", "spine", "superspine")
    return {s: names[min(tier.get(s, 1), 2)] for s in switches}


@dataclass
class _Cabling:
    """The cables sorted by what they join: switch ports, switch-switch links and adjacency, host NICs."""

    switch_ports: dict[str, set[str]] = field(default_factory=dict)
    adj: dict[str, set[str]] = field(default_factory=dict)
    links: list[dict[str, Any]] = field(default_factory=list)
    host_nics: dict[str, dict[str, tuple[str, Cable]]] = field(
        default_factory=dict
    )  # host -> netdev -> (sw:port, c)

    def add(self, c: Cable, ka: str, kb: str) -> None:
        for dev, port, kind in ((c.a_device, c.a_port, ka), (c.b_device, c.b_port, kb)):
            if kind == "switch":
                self.switch_ports.setdefault(dev, set()).add(port)
            else:
                self.host_nics.setdefault(dev, {})
        if ka == "switch" and kb == "switch":
            self.links.append(
                _with_cable({"a": f"{c.a_device}:{c.a_port}", "b": f"{c.b_device}:{c.b_port}"}, c)
            )
            self.adj.setdefault(c.a_device, set()).add(c.b_device)
            self.adj.setdefault(c.b_device, set()).add(c.a_device)
        elif ka != kb:
            (h, hp, s, sp) = (
                (c.a_device, c.a_port, c.b_device, c.b_port)
                if ka == "host"
                else (c.b_device, c.b_port, c.a_device, c.a_port)
            )
            self.host_nics[h][hp] = (f"{s}:{sp}", c)


def _with_cable(entry: dict[str, Any], c: Cable) -> dict[str, Any]:
    """``entry`` with the cable's ``cable_length`` and ``media`` where known."""
    if c.length_m is not None:
        entry["cable_length"] = _length(c.length_m)
    if c.media:
        entry["media"] = c.media
    return entry


def build_skeleton(cables: list[Cable], opts: SkeletonOptions) -> dict[str, Any]:
    """Inventory data (plain dicts, full form) for ``cables``.

    Switches get every cabled port (as ranges where the names form one) at ``opts.speed``; switch-switch
    cables become ``links`` (with ``cable_length``/``media`` where known); host cables become NICs
    (``netdev`` = the host's port name, ``rdma_device`` = ``mlx5_<i>`` in netdev order — a placeholder
    to check against ``ibdev2netdev``) with ``switch_port``. When every host's i-th NIC lands on leaves
    that take only i-th NICs, the fabric is rail-optimised: NICs and leaves get ``rail: i``.
    Host-to-host cables cannot be declared and are left out (:func:`host_to_host`).
    """
    kinds = classify_devices(cables, opts)
    cabling = _Cabling()
    for c in cables:
        cabling.add(c, kinds[c.a_device], kinds[c.b_device])
    host_nics = cabling.host_nics
    host_facing = {sp.split(":", 1)[0] for nics in host_nics.values() for sp, _ in nics.values()}
    roles = _roles(set(cabling.switch_ports), cabling.adj, host_facing)
    rails = _rails(host_nics)
    leaf_rail = rails[1] if rails is not None else None
    switches = [
        _switch_entry(name, sorted(cabling.switch_ports[name], key=_port_key), roles[name], leaf_rail, opts)
        for name in sorted(cabling.switch_ports, key=_port_key)
    ]
    hosts = [
        {
            "name": name,
            "nics": [
                _nic_entry(i, netdev, *host_nics[name][netdev], rails is not None, opts)
                for i, netdev in enumerate(sorted(host_nics[name], key=_port_key))
            ],
        }
        for name in sorted(host_nics, key=_port_key)
    ]
    site: dict[str, Any] = {"name": opts.site}
    if rails is not None:
        site["rail_optimised"] = True
    return {"site": site, "switches": switches, "links": cabling.links, "hosts": hosts}


def _switch_entry(
    name: str, ports: list[str], role: str, leaf_rail: dict[str, int] | None, opts: SkeletonOptions
) -> dict[str, Any]:
    """One switch: platform (facts, else forced/guessed), model, role, rail, ports (one range if they form
    one)."""
    facts = opts.facts.get(name, SwitchFacts())
    platform = (
        opts.platform if opts.force_platform else facts.platform or guess_platform(ports, opts.platform)
    )
    sw: dict[str, Any] = {
        "name": name,
        "platform": platform,
        "model": facts.model or opts.model,
        "role": role,
    }
    if facts.os_version:
        sw["os_version"] = facts.os_version
    if leaf_rail is not None and name in leaf_rail:
        sw["rail"] = leaf_rail[name]
    rng = _as_range(ports)
    sw["ports"] = (
        [{"name": rng, "speed": opts.speed}] if rng else [{"name": p, "speed": opts.speed} for p in ports]
    )
    return sw


def _nic_entry(
    i: int, netdev: str, sp: str, c: Cable, rail_optimised: bool, opts: SkeletonOptions
) -> dict[str, Any]:
    """The host's ``i``-th NIC (netdev order), cabled to ``sp``."""
    nic: dict[str, Any] = {
        "model": opts.nic_model,
        "netdev": netdev,
        "rdma_device": f"mlx5_{i}",
        "speed": opts.speed,
    }
    if rail_optimised:
        nic["rail"] = i
    nic["switch_port"] = sp
    return _with_cable(nic, c)


def _rails(host_nics: dict[str, dict[str, tuple[str, Cable]]]) -> tuple[int, dict[str, int]] | None:
    """(rails, leaf -> rail) when NIC i of every host lands on leaves that take only NIC i, else None."""
    leaf_rail: dict[str, int] = {}
    width = 0
    for nics in host_nics.values():
        order = sorted(nics, key=_port_key)
        width = max(width, len(order))
        for i, netdev in enumerate(order):
            leaf = nics[netdev][0].split(":", 1)[0]
            if leaf_rail.setdefault(leaf, i) != i:
                return None
    return (width, leaf_rail) if width > 1 else None


def unlikely_switches(cables: Iterable[Cable], opts: SkeletonOptions) -> dict[str, list[str]]:
    """Devices read as switches by their port names alone (no ``--hosts``/``--switches`` match, no facts)
    whose ports look like no switch platform's (:func:`roce_tune.platforms.port_name_hints`: ``p0``,
    ``NIC1``): likely hosts whose NIC names the import did not recognise. Name -> its ports, sorted."""
    cables = list(cables)
    kinds = classify_devices(cables, opts)
    hints = [pat for pat, _ in port_name_hints()]
    ports: dict[str, set[str]] = {}
    for c in cables:
        ports.setdefault(c.a_device, set()).add(c.a_port)
        ports.setdefault(c.b_device, set()).add(c.b_port)
    named = [re.compile(rx) for rx in (opts.hosts, opts.switches) if rx]
    return {
        dev: sorted(names, key=_port_key)
        for dev, names in sorted(ports.items())
        if kinds[dev] == "switch"
        and dev not in opts.kinds
        and dev not in opts.facts
        and not any(rx.fullmatch(dev) for rx in named)
        and not any(h.match(p) for p in names for h in hints)
    }


def undecided_switches(cables: Iterable[Cable], opts: SkeletonOptions) -> dict[str, dict[str, list[str]]]:
    """Switches whose platform the import guesses from port names (no facts, no forced ``--platform``) and
    whose names fit several platforms (``Et1/1/1`` EOS, ``Ethernet32/1`` NX-OS): they get
    ``opts.platform``. Name -> platform -> its ports, sorted."""
    if opts.force_platform:
        return {}
    cables = list(cables)
    kinds = classify_devices(cables, opts)
    ports: dict[str, set[str]] = {}
    for c in cables:
        ports.setdefault(c.a_device, set()).add(c.a_port)
        ports.setdefault(c.b_device, set()).add(c.b_port)
    out = {}
    for dev, names in sorted(ports.items()):
        if kinds[dev] != "switch" or dev in opts.kinds or dev in opts.facts:
            continue
        hints = platform_hints(sorted(names, key=_port_key))
        if len(hints) > 1:
            out[dev] = dict(sorted(hints.items()))
    return out


def host_to_host(cables: Iterable[Cable], opts: SkeletonOptions) -> list[Cable]:
    """The cables whose two ends are both hosts (a direct cable; an inventory cannot declare it)."""
    cables = list(cables)
    kinds = classify_devices(cables, opts)
    return [c for c in cables if kinds[c.a_device] == kinds[c.b_device] == "host"]


# --- YAML out ------------------------------------------------------------------------------------
_PLAIN_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9_.\-/]*|\d+(?:\.\d+)?[A-Za-z]+)$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(v: Any) -> str:
    if isinstance(v, str):
        return _str_scalar(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return _str_scalar(str(v))


@lru_cache(maxsize=1 << 16)
def _str_scalar(s: str) -> str:
    if _PLAIN_RE.match(s) and s.lower() not in _RESERVED:
        return s
    return json.dumps(s)  # a JSON string is a YAML double-quoted scalar


def _value(v: Any) -> str:
    """One YAML value: a mapping or list in flow style, ``null`` for None, else a scalar."""
    if isinstance(v, dict):
        return _flow(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if v is None:
        return "null"
    return _scalar(v)


def _flow(d: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in d.items()) + "}"


def _switch_lines(sw: dict[str, Any]) -> list[str]:
    out = []
    for i, (k, v) in enumerate(sw.items()):
        lead = "    " if i else "  - "
        if k == "ports" and v:
            out.append(f"{lead}ports:")
            out += [f"      - {_flow(p)}" for p in v]
        else:
            out.append(f"{lead}{k}: {_value(v)}")
    return out


def _host_lines(h: dict[str, Any]) -> list[str]:
    out = [f"  - name: {_scalar(h['name'])}"]
    out += [f"    {k}: {_value(v)}" for k, v in h.items() if k not in ("name", "nics")]
    nics = h.get("nics", [])
    out.append("    nics:" if nics else "    nics: []")
    out += [f"      - {_flow(n)}" for n in nics]
    return out


def inventory_yaml(data: dict[str, Any], header: str = "") -> str:
    """Full-form inventory ``data`` as YAML in the shipped files' layout: switches and hosts in block
    style, each port, link and NIC on one line (mappings and lists inside them in flow style). Plain text
    building, fast at 10^5 lines (the 4,096-host import writes ~40k lines in well under a second)."""
    out: list[str] = []
    if header:
        out += [f"# {line}".rstrip() for line in header.splitlines()]
    for key in ("site", "policy", "defaults"):
        if key in data:
            out.append(f"{key}:")
            out += [f"  {k}: {_value(v)}" for k, v in data[key].items()]
    out.append("")
    out.append("switches:" if data.get("switches") else "switches: []")
    for sw in data.get("switches", []):
        out += _switch_lines(sw)
    out.append("")
    out.append("links:" if data.get("links") else "links: []")
    out += [f"  - {_flow(link)}" for link in data.get("links", [])]
    out.append("")
    out.append("hosts:" if data.get("hosts") else "hosts: []")
    for h in data.get("hosts", []):
        out += _host_lines(h)
    return "\n".join(out) + "\n"


__all__ = [
    "NETDEV_LIKE_RE",
    "Cable",
    "SkeletonOptions",
    "SwitchFacts",
    "build_skeleton",
    "classify_devices",
    "guess_platform",
    "host_to_host",
    "inventory_yaml",
    "undecided_switches",
    "unlikely_switches",
]
