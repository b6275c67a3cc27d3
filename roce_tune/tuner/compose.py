"""Compose the tuner's sections into a :class:`~roce_tune.plan.Plan` (pure: inventory in, plan out).

Order of derivation, each step feeding the next:

1. classification (maps, TOS) from the policy;
2. per switch port: cable, lanes, fan-in, lossless or not, PFC headroom (+ user pins);
3. per switch: buffer pools/profiles from the headrooms, headroom admission checks;
4. per switch port: the PFC xoff trigger (ingress PG dynamic-threshold limit at the port's fan-in),
   then the ECN profile checked against it and against the DCQCN fluid-model fixed point;
5. PFC watchdog per switch; DCQCN, TOS, NIC xoff per NIC; NCCL environment per host;
6. deadlock analysis of the whole fabric, then the end-to-end consistency check.

Switches of one shape (same ASIC, platform, role, buffer model and per-port facts: :func:`_shape_key`) have
the same values: the first is derived, the others copy its ports with their own peers (a 4,096-host
rail-optimised fabric has 1,792 switches of 4 shapes). NICs of one class share their values likewise.

Errors that make derivation meaningless (lint errors: dangling links, unknown models) raise
:class:`~roce_tune.findings.RoceTuneError` before anything is derived; safety-check errors found while
deriving (headroom over budget, Kmax above the PFC trigger, map disagreement) are returned in
``plan.findings`` so a reviewer sees all of them, and ``roce-tune plan`` refuses to write.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import NamedTuple, TypeVar, cast

from roce_tune import __version__
from roce_tune.findings import (
    Finding,
    Location,
    Severity,
)
from roce_tune.gcpause import gc_paused
from roce_tune.inventory.catalog import AsicSpec, Catalog, NicSpec, load_catalog
from roce_tune.inventory.models import Host, Inventory, Policy, Role, Switch
from roce_tune.inventory.overrides import (
    DCQCN_PARAMS,
    ECN_PARAMS,
    HEADROOM_PARAMS,
    WATCHDOG_PARAMS,
    CablePin,
    CablePins,
    override_label,
    pin_sources,
    pinned_cables,
    resolve_override_sources,
)
from roce_tune.inventory.topology import Peer, Topology, asic_of, build_topology
from roce_tune.plan import (
    BufferPool,
    Buffers,
    Classification,
    Dcqcn,
    DeadlockReport,
    EcnProfile,
    Explained,
    Headroom,
    HostPlan,
    NicPlan,
    Plan,
    PlanSummary,
    PortPlan,
    Rationale,
    SwitchPlan,
    Watchdog,
    construct_ordered,
    construct_trusted,
    copy_each_trusted,
)
from roce_tune.platforms import get_platform
from roce_tune.tuner import (
    buffers,
    classification,
    consistency,
    dcqcn,
    deadlock,
    ecn,
    headroom,
    nccl,
    provenance,
    watchdog,
)
from roce_tune.tuner.fluid import ROCE_HEADER_BYTES

DEFAULT_NIC = "connectx-7"
#: reuse a derived switch for every later switch of the same shape (:func:`_shape_key`); tests turn it off
#: to check that reusing gives the same plan
REUSE_SHAPES = True


class _PortFacts(NamedTuple):
    """Per-port inputs gathered before any tuning math (a named tuple: ~100k of them at 4,096 hosts, built
    3-4x faster than a frozen dataclass). The fields before ``fan_in`` are the port's row (:data:`_PortRow`);
    the rows and the switch's two fan-ins are its shape (see :class:`_SwitchShape`)."""

    name: str
    speed_gbps: int
    lanes: int
    mtu: int
    cable_m: float
    cable_defaulted: bool
    admin_up: bool
    peer_kind: str
    direction: str
    lossless: bool
    fan_in: int
    peer: str | None


#: a port's facts without its fan-in and peer's name: (name, speed_gbps, lanes, mtu, cable_m, cable_defaulted,
#: admin_up, peer_kind, direction, lossless) -- :class:`_PortFacts` in order, minus ``fan_in`` and ``peer``
#: (the fan-in follows from the direction and the switch's two fan-ins: :func:`_port_facts`)
_PortRow = tuple[str, int, int, int, float, bool, bool, str, str, bool]


def _port_shapes(topo: Topology, sw: Switch, asic: AsicSpec, cable_pins: CablePins
                 ) -> tuple[list[_PortRow], tuple[int, int], list[Peer | None]]:
    """Per declared port of ``sw`` (inventory order): its shape without the fan-in (:data:`_PortRow`), the
    switch's fan-ins (down-facing, up-facing egress) and, apart, each port's peer (None when not cabled).
    ``_port_facts`` makes the ports' facts of them. A port's cable length is its cable's pin
    (``cable_pins``, :func:`pinned_cables`: at either end), else the cable's length, else
    ``defaults.cable_length``."""
    inv = topo.inventory
    name = sw.name
    directions = topo.directions_of(name)  # every port without a peer faces "edge"
    default_cable, policy_mtu, serdes = inv.defaults.cable_length, inv.policy.mtu, asic.serdes_gbps
    peers = topo.peers_of(name)
    rows: list[_PortRow] = []
    port_peers: list[Peer | None] = []
    n_downs = 0
    # unpacked, not read by attribute: ~100k ports at 4,096 hosts
    for _, port, speed, lanes, mtu, admin_up, _ in topo.ports_of(name):
        peer = peers.get(port)
        port_peers.append(peer)
        pin = cable_pins.get((name, port)) if cable_pins else None
        if pin is not None:
            cable, defaulted = pin.cable_m, False
        elif peer is not None and peer.cable_m is not None:  # (inlined: ~100k ports)
            cable, defaulted = peer.cable_m, False
        else:
            cable, defaulted = default_cable, True
        lanes, mtu = lanes or speed // serdes or 1, mtu or policy_mtu  # speeds and SerDes rates are > 0
        if peer is None:
            rows.append((port, speed, lanes, mtu, cable, defaulted, admin_up, "none", "edge", False))
            continue
        direction = directions[port]
        n_downs += direction == "down" or direction == "peer"
        rows.append((port, speed, lanes, mtu, cable, defaulted, admin_up, peer.kind, direction,
                     admin_up and peer.lossless))
    # fan-in under up-down routing: a down-facing egress can be fed by every other cabled port;
    # an up-facing egress only by down-facing ports (valley-free: nothing arriving from above goes up).
    # The cabled ports are the declared ones with a peer (build_topology cables declared ports only, once).
    return rows, (max(1, len(peers) - 1), max(1, n_downs)), port_peers


def _port_facts(rows: list[_PortRow], fan_ins: tuple[int, int], peers: list[Peer | None]) -> list[_PortFacts]:
    """The facts of each port from :func:`_port_shapes`: its row, its fan-in (the up-facing egress fan-in
    when the port faces up, else the down-facing one) and its peer's name."""
    down, up = fan_ins
    return [_PortFacts(*row, up if row[8] == "up" else down, peer)
            for row, peer in zip(rows, _peer_names(peers))]


def _peer_names(peers: list[Peer | None]) -> list[str | None]:
    """``PortPlan.peer`` of each port: the far end as ``device:port``, None when not cabled."""
    return [None if p is None else f"{p.device}:{p.port}" for p in peers]


_Section = TypeVar("_Section", bound=Explained)
_T = TypeVar("_T")


def _pin(section: _Section, pins: dict[str, int | float | str], sources: dict[str, str]) -> _Section:
    """Return ``section`` with pinned values applied and marked "pinned by user" in its rationale, whose
    source is the pin's entry of ``sources`` (the override that pinned it, and its reason)."""
    if not pins:
        return section
    rationale = dict(section.rationale)
    update: dict[str, object] = {}
    for key, value in pins.items():
        if key not in type(section).model_fields:
            continue
        derived = getattr(section, key)
        update[key] = (type(derived)(value)
                       if isinstance(derived, (int, float)) and not isinstance(value, str) else value)
        old = rationale.get(key)
        rationale[key] = Rationale(
            formula="pinned by user", inputs={"value": value}, source=sources[key],
            note=f"derived value {derived}" + (f"; derivation: {old.formula}" if old else ""),
            pinned_by_user=True, derived_value=derived,
        )
    update["rationale"] = rationale
    return section.model_copy(update=update)


def _noted(section: _Section, input_name: str, text: str) -> _Section:
    """``section`` with ``text`` added to the note of each of its derived (not pinned) values whose rationale
    has the input ``input_name`` (e.g. a pinned ``cable_m`` behind xoff, a base RTT that counts one)."""
    why = {k: r.model_copy(update={"note": f"{r.note}; {text}" if r.note else text})
           if input_name in r.inputs and not r.pinned_by_user else r for k, r in section.rationale.items()}
    return section.model_copy(update={"rationale": why})


def _size_follows_pins(derived: Headroom, pinned: Headroom, shp: bool, cell_bytes: int) -> Headroom:
    """A profile whose xoff/xon are pinned but not its size: size = xon with a shared headroom pool, else
    the derived size moved by the pinned xon/xoff (keeping its rounding and speed overhead)."""
    size = pinned.xon_bytes if shp else (derived.size_bytes - derived.xon_bytes - derived.xoff_bytes
                                         + pinned.xon_bytes + pinned.xoff_bytes)
    if size == pinned.size_bytes:
        return pinned
    why = pinned.rationale["size_bytes"].model_copy(update={
        "note": f"follows the pinned xon/xoff: derived {derived.size_bytes} B -> {size} B"})
    return pinned.model_copy(update={"size_bytes": size, "size_cells": math.ceil(size / cell_bytes),
                                     "rationale": {**pinned.rationale, "size_bytes": why}})


class _Memo:
    """Per-plan caches: identical inputs give the identical (frozen) section, computed once.

    A 4,096-host fabric has ~100k switch ports but only a handful of distinct (speed, cable, fan-in)
    classes, so caching keeps derivation linear in ports with a small constant.
    """

    def __init__(self, inv: Inventory, catalog: Catalog, cable_pins: CablePins | None = None,
                 rtt_pins: str = ""):
        self.catalog = catalog
        #: the pinned cables (:func:`pinned_cables`) and what the base RTT says of those it counts
        #: (:func:`_base_rtt`; "" when it counts none): every value derived from the base RTT repeats it
        self.cable_pins: CablePins = cable_pins or {}
        self.rtt_pins = rtt_pins
        counts: dict[int, Counter[str]] = {}
        for (speed, model), n in Counter((n.speed, n.model) for h in inv.hosts for n in h.nics).items():
            counts.setdefault(speed, Counter())[model] += n
        self._nic_by_speed = {s: min(c, key=lambda m: (-c[m], m)) for s, c in counts.items()}
        self._cache: dict[tuple[object, ...], object] = {}
        self._ecn_names: dict[str, list[tuple[object, ...]]] = {}
        #: NIC class (model, speed, cable, MTU, DCQCN pins) -> its first NIC's plan (:func:`_nic_classes`)
        self.nic_classes: dict[tuple[object, ...], NicPlan] = {}
        #: PFC on the lossless priorities, one list every NIC shares (mlnx_qos --pfc)
        self.pfc_vector = [1 if p in inv.policy.lossless_priorities else 0 for p in range(8)]
        #: ECN profile name -> (its RT211 finding on the first switch that has it, every such switch's name
        #: in derivation order)
        self.pfc_bound: dict[str, tuple[Finding, list[str]]] = {}
        #: the profile names the switch being derived added to ``pfc_bound`` (see _SwitchShape.pfc_bound)
        self.pfc_bound_added: list[str] = []
        #: derived switch shapes (:func:`_shape_key` -> :class:`_SwitchShape`); ``reuse_shapes`` False
        #: derives every switch (tests compare both ways)
        self.shapes: dict[tuple[object, ...], _SwitchShape] = {}
        self.reuse_shapes = REUSE_SHAPES
        #: lossless ports of the switches derived so far (:func:`_derive_switch`; the plan summary's count)
        self.lossless_ports = 0
        #: a switch of a reused shape shares its ports with the shape's first switch, peers and all
        #: (``build_plan(findings_only=True)``); else they are copied with its own peers
        self.share_ports = False

    def get(self, key: tuple[object, ...], make: Callable[[], _T]) -> _T:
        """Return the cached value for ``key``, computing it with ``make()`` once."""
        try:
            # cast: safe, each key starts with a tag ("hr", "buf", "ecn", ...) that only one make() uses
            return cast(_T, self._cache[key])
        except KeyError:
            value = self._cache[key] = make()
            return value

    def credentials(self, device: Switch | Host) -> dict[str, str | None]:
        """``device.credentials.model_dump()`` (environment variable *names*), one dict per distinct set of
        references, shared by the devices that have it (plan dicts are never edited; ~6k devices at 4,096
        hosts, most with the same references)."""
        cred = device.credentials
        return self.get(("cred", tuple(cred.__dict__.items())), cred.model_dump)

    def unique_ecn(self, prof: EcnProfile) -> EcnProfile:
        """Give profiles with equal names but different thresholds, or values pinned by different overrides,
        distinct names plan-wide (``…_V2``), so a profile name means one set of numbers (and one reason for
        each pinned number) on every switch."""
        values = (prof.kmin_bytes, prof.kmax_bytes, prof.pmax_percent, prof.drop_min_bytes,
                  prof.drop_max_bytes, prof.drop_probability_percent,
                  tuple(r.source for r in prof.rationale.values() if r.pinned_by_user))
        seen = self._ecn_names.setdefault(prof.name, [])
        if values not in seen:
            seen.append(values)
        idx = seen.index(values)
        return prof if idx == 0 else prof.model_copy(update={"name": f"{prof.name}_V{idx + 1}"})

    def fabric_nic(self, speed_gbps: int) -> NicSpec:
        """The NIC model most hosts use at ``speed_gbps`` (its DCQCN parameters feed the ECN fluid check)."""
        return self.get(("nic", speed_gbps),
                        lambda: self.catalog.nic(self._nic_by_speed.get(speed_gbps, DEFAULT_NIC)))


class _RttPin(NamedTuple):
    """A pinned cable the base RTT counts (:func:`_longest_cables`): the pin, the tier of its cable (-1: a
    host cable, else the tier of the switch the cable goes up from) and, for a pin that shortens the
    inventory's longest cable of that tier, the length (m) the inventory records for it (else None)."""

    pin: CablePin
    tier: int
    recorded_m: float | None = None


def _longest_cables(topo: Topology, default: float, cable_pins: CablePins | None = None
                    ) -> tuple[float, dict[int, float], list[_RttPin]]:
    """(longest host cable, tier -> longest cable from a switch of that tier up to the next tier, the pins
    that move those longest cables), in metres; ``default`` stands for a cable without a length, and is the
    host cable when no host is cabled. A pinned cable (``cable_pins``, :func:`pinned_cables`) counts with
    its pinned length. The pins are :class:`_RttPin` (host cables first, then tier by tier): a pin that sets
    a longest length (an unpinned cable as long comes first), and a pin that shortens the cable the
    inventory records as the longest of its tier below the longest that remains (``recorded_m`` set; an
    unpinned cable recorded as long comes first, as then the longest does not move). Reads every cabled
    port once, switch by switch (~100k at 4,096 hosts), taking each switch's longest first."""
    if cable_pins:
        return _longest_pinned_cables(topo, default, cable_pins)
    tier_of = {name: topo.tier(name) for name in topo.switches}
    host_cable: float | None = None
    per_tier: dict[int, float] = {}
    for s, peers in topo.peers_by_switch.items():
        mine = tier_of[s]
        hosts = [p.cable_m or default for p in peers.values() if p.kind == "host"]
        if hosts:
            host_cable = max(hosts) if host_cable is None else max(host_cable, *hosts)
        # tier_of.get(device, -1): the device of a "switch" peer is a switch (tiers are 0..2)
        up = [p.cable_m or default for p in peers.values()
              if p.kind == "switch" and tier_of.get(p.device, -1) > mine]
        if up:
            per_tier[mine] = max(per_tier.get(mine, 0.0), *up)
    return (default if host_cable is None else host_cable), per_tier, []


#: a candidate for the longest cable of a tier: (length m, 1 unpinned / 0 pinned, the pin): an unpinned
#: cable wins a tie
_Longest = tuple[float, int, CablePin | None]


def _longest_pinned_cables(topo: Topology, default: float, cable_pins: CablePins
                           ) -> tuple[float, dict[int, float], list[_RttPin]]:
    """:func:`_longest_cables` of a fabric with pinned cables, port by port."""
    # tier (-1: host cables) -> the longest cable; and the same as the inventory records the lengths (the
    # pin kept only where it shortens the cable)
    longest: dict[int, _Longest] = {}
    recorded: dict[int, _Longest] = {}
    for tier, length, pin in _tiered_cables(topo, default, cable_pins):
        here = (length, 1, None) if pin is None else (pin.cable_m, 0, pin)
        _keep_longest(longest, tier, here)
        was = (length, 1, None) if pin is None or pin.cable_m >= length else (length, 0, pin)
        _keep_longest(recorded, tier, was)
    pins = _rtt_pins(longest, recorded)
    host = longest.pop(-1, (default, 1, None))
    return host[0], {t: v[0] for t, v in longest.items()}, pins


def _tiered_cables(topo: Topology, default: float, cable_pins: CablePins
                   ) -> Iterator[tuple[int, float, CablePin | None]]:
    """(tier, recorded length m, the pin or None) of every host cable (tier -1) and every cable from a
    switch up to the next tier (the tier of the lower switch), switch by switch; ``default`` stands for a
    cable without a length."""
    tier_of = {name: topo.tier(name) for name in topo.switches}
    for s, peers in topo.peers_by_switch.items():
        mine = tier_of[s]
        for port, p in peers.items():
            if p.kind == "host":
                tier = -1
            elif p.kind == "switch" and tier_of.get(p.device, -1) > mine:
                tier = mine
            else:
                continue
            yield tier, p.cable_m or default, cable_pins.get((s, port))


def _keep_longest(best: dict[int, _Longest], tier: int, here: _Longest) -> None:
    """Keep ``here`` as ``best[tier]`` when it is longer (or as long and unpinned where the kept one is
    pinned)."""
    kept = best.get(tier)
    if kept is None or here[:2] > kept[:2]:
        best[tier] = here


def _rtt_pins(longest: dict[int, _Longest], recorded: dict[int, _Longest]) -> list[_RttPin]:
    """The pins the base RTT names, tier by tier (host cables first): a pin that sets the longest cable of its
    tier, and one that shortens the cable the inventory records as the longest below the longest left."""
    pins: list[_RttPin] = []
    for tier in sorted(longest):
        length, _, pin = longest[tier]
        if pin is not None:
            pins.append(_RttPin(pin, tier))
        was_m, _, shortened = recorded[tier]
        if shortened is not None and was_m > length:
            pins.append(_RttPin(shortened, tier, was_m))
    return pins


def _base_rtt(inv: Inventory, topo: Topology, catalog: Catalog,
              cable_pins: CablePins | None = None) -> tuple[float, Rationale, str]:
    """Base RTT of the longest host-to-host path (hops and the longest cable of every tier), its rationale
    and what it says of the pinned cables it counts (``cable_pins``, :func:`pinned_cables`; "" when it
    counts none: the rationale's note then says nothing of pins)."""
    tiers = max(1, topo.tiers())
    hops = 2 * tiers - 1
    default = inv.defaults.cable_length
    host_cable, per_tier, pins = _longest_cables(topo, default, cable_pins)
    one_way_m = 2 * host_cable + 2 * sum(per_tier.values())
    latency_us: dict[tuple[str | None, str], float] = {}  # per distinct (asic, model): a fabric has a few
    for sw in inv.switches:
        if (sw.asic, sw.model) not in latency_us:
            latency_us[sw.asic, sw.model] = catalog.asic(asic_of(sw, catalog)).switch_latency_us
    latency = max(latency_us.values(), default=1.0)
    rtt, why = ecn.base_rtt_us(hops, one_way_m, inv.policy.nic_latency_us, latency)
    if not pins:
        return rtt, why, ""
    said = "base RTT counts pinned cable lengths: " + "; ".join(_rtt_pin_said(inv.policy, p) for p in pins)
    return rtt, why.model_copy(update={"note": f"{why.note}; {said}"}), said


def _rtt_pin_said(policy: Policy, rtt_pin: _RttPin) -> str:
    """What the base RTT note says of one pinned cable it counts (:class:`_RttPin`)."""
    pin = rtt_pin.pin
    shortened = ""
    if rtt_pin.recorded_m is not None:
        cable = "host cable" if rtt_pin.tier < 0 else f"cable from a tier-{rtt_pin.tier} switch up"
        shortened = f" instead of the recorded {rtt_pin.recorded_m} m (the inventory's longest {cable})"
    return (f"{pin.cable_m} m at {pin.pinned_end}{shortened}, pinned by "
            f"{override_label(policy, pin.override_index)}")


def _ecn_profile(speed_gbps: int, rtt_us: float, fan_in: int, trigger: int, params: dict[str, int],
                 separate: bool, profile: str, pins: dict[str, int | float | str], queue_buffer: int,
                 limits: _SharedLimits, objective: str = "throughput",
                 frame_bytes: int = 4096 + ROCE_HEADER_BYTES,
                 sources: dict[str, str] | None = None, rtt_pins: str = "") -> EcnProfile:
    prof = ecn.derive_ecn(speed_gbps, rtt_us, fan_in, trigger, params, separate, profile=profile,
                          overrides=pins or None, objective=objective, frame_bytes=frame_bytes,
                          queue_buffer_bytes=queue_buffer, pin_sources=sources)
    why = dict(prof.rationale)
    why["pfc_trigger_bytes"] = buffers.shared_limit_rationale(
        "pfc_trigger_bytes", trigger, limits.pool, limits.pg_th, "pg_dynamic_th", "fan_in", fan_in,
        note="the shared occupancy at which each of the fan-in's ingress PGs sends PFC XOFF; pg_dynamic_th "
             "is the lossless PG profile's (the catalog's lossless_dynamic_th where the profile sets none)")
    why["queue_buffer_bytes"] = buffers.shared_limit_rationale(
        "queue_buffer_bytes", queue_buffer, limits.egress, limits.egress_th, "egress_dynamic_th",
        "congested_queues", 1,
        note="the most one congested egress queue may hold; denominator for platforms that take ECN "
             "thresholds as a percent of the queue buffer")
    if prof.pfc_onset_bytes is not None:
        why["pfc_onset_bytes"] = Rationale(
            formula="min(fan_in x pfc_trigger_bytes, queue_buffer_bytes): the egress queue at which all the "
                    "fan-in's ingress PGs reach their PFC trigger, or the egress queue's own limit if lower",
            inputs={"fan_in": fan_in, "pfc_trigger_bytes": trigger, "queue_buffer_bytes": queue_buffer,
                    "pfc_onset_bytes": prof.pfc_onset_bytes},
            source="docs/derivation.md#ecn-before-pfc, docs/derivation.md#dynamic-threshold")
    shares = {k: v for name in ("pfc_trigger_bytes", "queue_buffer_bytes")
              for k, v in why[name].inputs.items() if k.endswith(("_pool_bytes", "_dynamic_th", "_alpha"))}
    for key in ("kmin_bytes", "kmax_bytes"):
        if key in why and not why[key].pinned_by_user and "pfc_trigger_bytes" in why[key].inputs:
            why[key] = why[key].model_copy(update={"inputs": {**why[key].inputs, **shares}})
    prof = prof.model_copy(update={"queue_buffer_bytes": queue_buffer, "rationale": why})
    return _noted(prof, "base_rtt_us", rtt_pins) if rtt_pins else prof


def _port_headroom(asic: AsicSpec, policy: Policy, sw: Switch, f: _PortFacts, shp: bool, model: str,
                   other_model: str, model_reason: str, findings: list[Finding], memo: _Memo) -> Headroom:
    """Headroom of one lossless port: derived (with the other model for comparison), then the inventory's
    pins applied and checked."""
    hr = memo.get(("hr", asic.id, f.speed_gbps, f.cable_m, f.mtu, f.lanes, model, shp),
                  lambda: headroom.with_model_comparison(
                      headroom.compute_headroom(asic, f.speed_gbps, f.cable_m, f.mtu, lanes=f.lanes,
                                                model=model, shared_headroom_pool=shp),
                      headroom.compute_headroom(asic, f.speed_gbps, f.cable_m, f.mtu, lanes=f.lanes,
                                                model=other_model, shared_headroom_pool=shp),
                      model_reason))
    pin = memo.cable_pins.get((sw.name, f.name)) if memo.cable_pins else None
    if pin is not None:  # the values that follow a pinned cable say where its length came from
        hr = memo.get(("hr-cable-pin", id(hr), pin), partial(
            _noted, hr, "cable_m", f"cable_m {pin.cable_m} pinned by inventory override for "
                                   f"{pin.label(policy)}"))
    sources = resolve_override_sources(policy, role=sw.role.value, device=sw.name, port=f.name,
                                       params=HEADROOM_PARAMS[:3])
    if not sources:
        return hr
    derived_hr = hr
    hr = _pin(hr, {k: v for k, (v, _) in sources.items()},
              {k: f"inventory override for {sw.name}:{f.name}, {override_label(policy, i)}"
               for k, (_, i) in sources.items()})
    if "size_bytes" not in sources:
        hr = _size_follows_pins(derived_hr, hr, shp, asic.cell_bytes)
    findings.extend(headroom.check_pinned_headroom(
        derived_hr, hr, {k: f"policy.overrides[{i}].set.{k}" for k, (_, i) in sources.items()}, shp,
        sw.name, f.name))
    hr = hr.model_copy(update={
        "profile": f"{hr.profile}_pinned_{f.name.replace('/', '_').replace(':', '_')}"[:63]})
    return headroom.static_pg_thresholds(hr, f.mtu, asic.cell_bytes)  # thresholds follow the pinned values


def _switch_headrooms(asic: AsicSpec, policy: Policy, sw: Switch, facts: list[_PortFacts], shp: bool,
                      n_prios: int, findings: list[Finding], memo: _Memo) -> dict[str, Headroom]:
    """Headroom per lossless port name, each checked for admission into the ASIC's buffer."""
    model, other_model, model_reason = headroom.select_headroom_model(asic, policy.headroom_model)
    headrooms: dict[str, Headroom] = {}
    # without pins a port's headroom is a function of its class: derived (and admission-checked) once
    per_class: dict[tuple[int, float, int, int], tuple[Headroom, bool]] | None = (
        None if policy.overrides else {})
    for f in facts:
        if not f.lossless:
            continue
        known = per_class.get((f.speed_gbps, f.cable_m, f.mtu, f.lanes)) if per_class is not None else None
        if known is None:
            hr = _port_headroom(asic, policy, sw, f, shp, model, other_model, model_reason, findings, memo)
            over = memo.get(("adm", asic.id, hr.xon_bytes, hr.xoff_bytes, hr.size_bytes, n_prios, f.lanes),
                            lambda: bool(
                                buffers.check_headroom_admission(asic, "-", "-", hr, n_prios, f.lanes)))
            if per_class is not None:
                per_class[(f.speed_gbps, f.cable_m, f.mtu, f.lanes)] = (hr, over)
        else:
            hr, over = known
        headrooms[f.name] = hr
        if over:
            findings.extend(buffers.check_headroom_admission(asic, sw.name, f.name, hr, n_prios, f.lanes))
    return headrooms


def _switch_buffers(asic: AsicSpec, policy: Policy, sw: Switch, facts: list[_PortFacts],
                    headrooms: dict[str, Headroom], shp: bool, n_prios: int, findings: list[Finding],
                    memo: _Memo) -> Buffers:
    """Pools and profiles of one switch, with the total-buffer and shared-headroom checks."""
    admin_up = sum(1 for f in facts if f.admin_up)
    # derive_buffers reads every field of each headroom (rationale included) and lists profiles in the order
    # the ports first use them: keyed by the headroom objects (shared from the "hr" memo unless pinned) in
    # first-use order with their counts; the memo keeps them, so their ids are not reused while it lives
    used = Counter(map(id, headrooms.values()))
    buf, _ = memo.get(("buf", asic.id, tuple(used.items()), admin_up, shp, policy.shp_oversubscription),
                      lambda: (buffers.derive_buffers(asic, [(n, h, n_prios) for n, h in headrooms.items()],
                                                      admin_up, shp, policy.shp_oversubscription),
                               list(headrooms.values())))
    if memo.get(("buf-check", id(buf)), lambda: bool(buffers.check_total_buffer(asic, "-", buf))):
        findings.extend(buffers.check_total_buffer(asic, sw.name, buf))
    findings.extend(buffers.check_shared_headroom_pool(
        sw.name, buf.shared_headroom_pool_bytes, [(n, h, n_prios) for n, h in headrooms.items()],
        policy.shp_oversubscription))
    return buf


@dataclass(frozen=True)
class _SharedLimits:
    """The shared pools and dynamic thresholds behind a port's PFC trigger and egress queue buffer
    (:func:`roce_tune.tuner.buffers.pg_shared_limit_bytes`); ``key`` tells them apart in the memo."""

    pool: BufferPool
    pg_th: int
    egress: BufferPool
    egress_th: int

    @property
    def key(self) -> tuple[object, ...]:
        reserved = [p.rationale["size_bytes"].inputs.get("reserved_bytes") if "size_bytes" in p.rationale
                    else None for p in (self.pool, self.egress)]
        return (self.pool.name, self.pool.size_bytes, self.pg_th, self.egress.name, self.egress.size_bytes,
                self.egress_th, *reserved)


@dataclass(frozen=True)
class _EcnInputs:
    """What every lossless port of one switch shares for its ECN profile."""

    asic: AsicSpec
    policy: Policy
    sw: Switch
    rtt_us: float
    prios: list[int]
    ecn_separate: bool
    pool: BufferPool
    egress: BufferPool
    profile_th: dict[str, int | None]
    egress_th: int
    queue_buffer: int


def _port_ecn(e: _EcnInputs, f: _PortFacts, hr: Headroom, ecn_profiles: dict[str, EcnProfile],
              findings: list[Finding], memo: _Memo) -> str:
    """Name of the ECN profile of one lossless port (a new profile is checked once and kept)."""
    policy, sw, asic = e.policy, e.sw, e.asic
    # PFC fires when the lossless PG's shared occupancy passes its dynamic threshold; the PG
    # profile (not the pool profile) carries the threshold SAI applies to it
    dyn_th = e.profile_th.get(hr.profile)
    limits = _SharedLimits(e.pool, asic.lossless_dynamic_th if dyn_th is None else dyn_th, e.egress,
                           e.egress_th)
    trigger = buffers.pg_shared_limit_bytes(e.pool.size_bytes, limits.pg_th, f.fan_in)
    nic = memo.fabric_nic(f.speed_gbps)
    params = memo.get(("dq", nic.id, f.speed_gbps), lambda: dcqcn.derive_dcqcn(
        nic, f.speed_gbps, policy.dcqcn, e.prios, policy.cnp_dscp, policy.cnp_priority)).params
    sources = resolve_override_sources(policy, role=sw.role.value, device=sw.name, port=f.name,
                                       params=ECN_PARAMS)
    pins = {k: v for k, (v, _) in sources.items()}
    # the key holds each pin's override entry: equal values pinned for different reasons differ in rationale
    prof = memo.get(("ecn", f.speed_gbps, e.rtt_us, f.fan_in, trigger, nic.id, e.ecn_separate,
                     e.queue_buffer, tuple(sorted(sources.items())), limits.key), lambda: _ecn_profile(
        f.speed_gbps, e.rtt_us, f.fan_in, trigger, params, e.ecn_separate,
        policy.ecn_profile.value, pins, e.queue_buffer, limits, policy.objective,
        policy.roce_mtu + ROCE_HEADER_BYTES, pin_sources(policy, sources), memo.rtt_pins))
    if pins:  # pinned values get their own name; equal pins share it (unique_ecn adds _V2 … for others)
        prof = prof.model_copy(update={"name": f"{prof.name}_PIN"})
    prof = memo.unique_ecn(prof)
    if prof.name not in ecn_profiles:
        ecn_profiles[prof.name] = prof
        for found in ecn.check_ecn(prof, sw.name, f.name):
            if found.rule == PFC_BOUND_RULE:  # one per profile, naming its switches (see _pfc_bound_findings)
                memo.pfc_bound.setdefault(prof.name, (found, []))[1].append(sw.name)
                memo.pfc_bound_added.append(prof.name)
            else:
                findings.append(found)
    return prof.name


#: the fluid check's "not on the ramp / PFC-bound" warning: a property of the ECN profile (one set of numbers
#: under one name plan-wide), so reported once per profile instead of once per switch that has it
PFC_BOUND_RULE = "RT211"
#: characters of switch names an RT211 message lists before "and N more"
_SWITCH_LIST_CHARS = 900


def _pfc_bound_findings(memo: _Memo) -> list[Finding]:
    """One RT211 per ECN profile whose fluid check failed: the first switch's finding (its location), with
    every switch that has the profile named in the message (as many as fit, then how many more)."""
    out = []
    for first, names in memo.pfc_bound.values():
        if len(names) > 1:
            shown: list[str] = []
            for name in names:
                if sum(len(n) + 2 for n in shown) + len(name) > _SWITCH_LIST_CHARS:
                    break
                shown.append(name)
            more = f" and {len(names) - len(shown)} more" if len(shown) < len(names) else ""
            first = first.model_copy(update={
                "message": f"{first.message} [same profile on {len(names)} switches: "
                           f"{', '.join(shown)}{more}]"})
        out.append(first)
    return out


def _port_rationale(f: _PortFacts, memo: _Memo) -> dict[str, Rationale]:
    """Why a port's fan-in, cable length and MTU are what they are (one dict per class of port: plan.json
    writes it once)."""
    why: dict[str, Rationale] = memo.get(
        ("why-port", f.direction, f.fan_in, f.cable_m, f.cable_defaulted, f.peer_kind == "none", f.mtu),
        lambda: {
        "fan_in": memo.get(("why-fan-in", f.direction, f.fan_in), lambda: Rationale(
            formula="down-facing egress: cabled ports - 1; "
                    "up-facing egress: down-facing ports (up-down routing)",
            inputs={"direction": f.direction, "fan_in": f.fan_in},
            source="docs/derivation.md#ecn-before-pfc, docs/derivation.md#pfc-deadlock")),
        "cable_m": memo.get(("why-cable", f.cable_m, f.cable_defaulted, f.peer_kind == "none"),
                            lambda: _cable_rationale(f)),
        "mtu": memo.get(("why-port-mtu", f.mtu), lambda: Rationale(
            formula="switch port mtu, else policy.mtu", inputs={"mtu_bytes": f.mtu},
            source="inventory; docs/derivation.md#headroom (xoff counts one port-MTU frame in flight)",
            note="above the hosts' netdev MTU (policy.host_mtu) plus headers, so no host frame is dropped; "
                 "a platform whose maximum is lower renders its maximum and says so (RT241)")),
    })
    return why


def _cable_rationale(f: _PortFacts) -> Rationale:
    """Why a port's cable length is what it is: its link's or NIC's, the default with a lint warning (RT107),
    or, for a port nothing is cabled to, the default that no value of the plan uses."""
    if not f.cable_defaulted:
        return Rationale(formula="inventory link/NIC cable_length", inputs={"cable_m": f.cable_m},
                         source="inventory")
    note = ("no cable to this port in the inventory: not lossless, so no headroom uses it"
            if f.peer_kind == "none" else "no cable length given: default used (lint warning)")
    return Rationale(formula="defaults.cable_length", inputs={"cable_m": f.cable_m}, source="inventory",
                     note=note)


def _ecn_inputs(asic: AsicSpec, policy: Policy, sw: Switch, rtt_us: float, prios: list[int],
                buf: Buffers) -> _EcnInputs:
    # separate non-ECT drop thresholds only where both the ASIC and the platform's syntax have them: the
    # plan never carries a number the rendered file cannot say (platforms/base.py ecn_drop_thresholds)
    ecn_separate = asic.ecn_separate_thresholds and get_platform(sw.platform.value).SPEC.ecn_drop_thresholds
    pool = next(p for p in buf.pools if p.name == "ingress_lossless_pool")
    egress = next((p for p in buf.pools if p.name == "egress_lossless_pool"), pool)
    profile_th = {p.name: p.dynamic_th for p in buf.profiles}
    egress_th = profile_th.get("egress_lossless_profile")
    egress_th = asic.lossless_dynamic_th if egress_th is None else egress_th
    queue_buffer = buffers.pg_shared_limit_bytes(egress.size_bytes, egress_th, 1)
    return _EcnInputs(asic, policy, sw, rtt_us, prios, ecn_separate, pool, egress, profile_th, egress_th,
                      queue_buffer)


def _ecn_profile_names(e: _EcnInputs, facts: list[_PortFacts], headrooms: dict[str, Headroom],
                       ecn_profiles: dict[str, EcnProfile], findings: list[Finding],
                       memo: _Memo) -> dict[str, str]:
    """ECN profile name per lossless port of one switch (:func:`_port_ecn`; new profiles go to
    ``ecn_profiles``, their findings to ``findings``).

    Without pins a port's profile follows from its headroom profile, fan-in and speed: the first port of each
    such class derives (and checks) it, the others repeat that answer, which had no side effect to repeat.
    """
    names: dict[str, str] = {}
    per_class: dict[tuple[str, int, int], str] | None = None if e.policy.overrides else {}
    for f in facts:
        if not f.lossless:
            continue
        hr = headrooms[f.name]
        klass = (hr.profile, f.fan_in, f.speed_gbps)
        name = per_class.get(klass) if per_class is not None else None
        if name is None:
            name = _port_ecn(e, f, hr, ecn_profiles, findings, memo)
            if per_class is not None:
                per_class[klass] = name
        names[f.name] = name
    return names


class _SwitchShape(NamedTuple):
    """One derived switch, without what names it: every switch of the same shape (:func:`_shape_key`) has
    these values. ``ports`` are the first such switch's; another's are copies with its own peers."""

    asic: str
    ports: list[PortPlan]
    buffers: Buffers
    ecn_profiles: list[EcnProfile]
    watchdog: Watchdog
    buffer_model: str | None
    #: ECN profiles whose RT211 this switch's plan shares (:func:`_pfc_bound_findings` names its switches)
    pfc_bound: list[str]
    #: how many of ``ports`` are lossless
    lossless_ports: int


def _pin_free(policy: Policy, sw: Switch) -> bool:
    """Whether no override in ``policy`` can apply to ``sw`` or any of its ports: each override whose role
    and device, where given, are the switch's (as ``resolve_override_sources`` matches them) could."""
    role = sw.role.value
    for o in policy.overrides:
        o_role = o.role.value if isinstance(o.role, Role) else o.role
        if (o_role is None or o_role == role) and (o.device is None or o.device == sw.name):
            return False
    return True


def _shape_key(policy: Policy, sw: Switch, asic: AsicSpec, rows: list[_PortRow],
               fan_ins: tuple[int, int]) -> tuple[object, ...] | None:
    """What the derivation of a switch reads, except its name and its peers' names; None when an override
    may apply to it (pins are resolved by device and port name: such a switch is always derived).

    Complete because, for a plan (one policy, defaults, catalog, base RTT and NIC mix, all fixed in
    :class:`_Memo`), :func:`_derive_shape` reads of the switch only: its ASIC (``asic.id``: buffers,
    headroom, ECN), platform (ECN drop thresholds, watchdog, buffer model), ``buffer_model``, role (override
    matching), and per port in order the facts of :data:`_PortRow` (name, speed, lanes, MTU, cable length
    and whether defaulted, admin state, peer kind, direction, lossless) and its fan-in, one of the switch's
    two ``fan_ins`` by direction (the inputs of headroom, buffers, ECN and the port rationale). Names of the
    switch and of its peers enter only its findings and ``PortPlan.peer``: a shape whose derivation had
    findings (other than RT211, kept per profile in ``memo``) is not reused, and peers are copied per switch
    (:func:`_derive_switch`). The plan-wide ECN profile names (``…_V2``) are the same for a repeated shape:
    the first derivation registered its values.
    """
    if policy.overrides and not _pin_free(policy, sw):
        return None
    return ("shape", asic.id, sw.platform.value, sw.role.value, sw.buffer_model, fan_ins, tuple(rows))


def _switch_core(policy: Policy, sw: Switch, asic: AsicSpec, facts: list[_PortFacts], rtt_us: float,
                 findings: list[Finding], memo: _Memo) -> tuple[dict[str, Headroom], Buffers,
                                                               dict[str, EcnProfile], dict[str, str]]:
    """Headroom per lossless port, buffers, ECN profiles by name and ECN profile name per lossless port of
    one switch, with their findings (and the plan-wide ECN profile names in ``memo``)."""
    prios = sorted(policy.lossless_priorities)
    shp = asic.shared_headroom_pool if policy.shared_headroom_pool is None else (
        policy.shared_headroom_pool and asic.shared_headroom_pool)
    headrooms = _switch_headrooms(asic, policy, sw, facts, shp, len(prios), findings, memo)
    buf = _switch_buffers(asic, policy, sw, facts, headrooms, shp, len(prios), findings, memo)
    ecn_in = _ecn_inputs(asic, policy, sw, rtt_us, prios, buf)
    ecn_profiles: dict[str, EcnProfile] = {}
    profile_names = _ecn_profile_names(ecn_in, facts, headrooms, ecn_profiles, findings, memo)
    return headrooms, buf, ecn_profiles, profile_names


def _cable_pins(inv: Inventory, sw: Switch, rows: list[_PortRow], peers: list[Peer | None],
                cable_pins: CablePins) -> dict[str, Rationale]:
    """The ``cable_m`` rationale of each port of ``sw`` whose cable an override pinned at either end
    (``cable_pins``, :func:`pinned_cables`; ``rows`` hold the pinned length already, :func:`_port_shapes`;
    ``peers`` per port, in the same order): port name -> "pinned by user", naming the override, its reason and
    the end it pins, with the cable's own length as the derived value."""
    out: dict[str, Rationale] = {}
    for row, peer in zip(rows, peers):
        name, cable_m = row[0], row[4]
        pin = cable_pins.get((sw.name, name))
        if pin is None:
            continue
        derived = peer.cable_m if peer is not None and peer.cable_m is not None else inv.defaults.cable_length
        far = pin.pinned_end != f"{sw.name}:{name}"
        out[name] = Rationale(
            formula="pinned by user" + (" (the far end of this cable)" if far else ""),
            inputs={"cable_m": cable_m}, source=f"inventory override for {pin.label(inv.policy)}",
            note=f"derived {derived} (inventory link/NIC cable_length, else defaults.cable_length); "
                 + ("a cable has one length: " if far else "")
                 + "the port's headroom and the fabric's base RTT use the pinned length",
            pinned_by_user=True, derived_value=derived)
    return out


def _derive_shape(policy: Policy, sw: Switch, asic: AsicSpec, facts: list[_PortFacts], rtt_us: float,
                  findings: list[Finding], memo: _Memo,
                  cable_pins: dict[str, Rationale] | None = None) -> _SwitchShape:
    """Derive one switch from its port facts: ports, buffers, ECN profiles, watchdog (``cable_pins``: the
    ``cable_m`` rationale of ports whose length is pinned, :func:`_cable_pins`)."""
    memo.pfc_bound_added = []
    headrooms, buf, ecn_profiles, profile_names = _switch_core(policy, sw, asic, facts, rtt_us, findings,
                                                               memo)
    prios = sorted(policy.lossless_priorities)
    ports: list[PortPlan] = []
    for f in facts:
        # model_construct: every field is already typed by the tuner; validating ~100k ports again
        # would dominate the plan time on large fabrics (PortPlan's schema is still what is published)
        why = _port_rationale(f, memo)
        if cable_pins and f.name in cable_pins:  # (a shared dict: copied, never edited)
            why = {**why, "cable_m": cable_pins[f.name]}
        ports.append(construct_trusted(PortPlan, rationale=why,  # fields in model order
            name=f.name, speed_gbps=f.speed_gbps, lanes=f.lanes, mtu=f.mtu, cable_m=f.cable_m,
            admin_up=f.admin_up, peer=f.peer, peer_kind=f.peer_kind, direction=f.direction,
            lossless=f.lossless, pfc_priorities=prios if f.lossless else [], headroom=headrooms.get(f.name),
            ecn_profile=profile_names.get(f.name), fan_in=f.fan_in))
    wd_sources = resolve_override_sources(policy, role=sw.role.value, device=sw.name, params=WATCHDOG_PARAMS)
    n_pfc = sum(1 for p in ports if p.lossless)
    wd = memo.get(  # keyed by each pin's override entry too (its rationale names the entry and its reason)
        ("wd", n_pfc, sw.platform.value, tuple(sorted(wd_sources.items()))), lambda: watchdog.derive_watchdog(
            n_pfc, policy.pfc_watchdog, policy.watchdog_action, sw.platform.value,
            overrides={k: v for k, (v, _) in wd_sources.items()} or None,
            pin_sources=pin_sources(policy, wd_sources)))
    return _SwitchShape(asic.id, ports, buf, [ecn_profiles[k] for k in sorted(ecn_profiles)], wd,
                        _buffer_model(sw, asic), memo.pfc_bound_added, n_pfc)


def _switch_shape(inv: Inventory, topo: Topology, catalog: Catalog, sw: Switch, rtt_us: float,
                  findings: list[Finding], memo: _Memo) -> tuple[_SwitchShape, list[Peer | None] | None]:
    """The derived shape of ``sw``, and its peers (per port) when the shape was reused from
    a switch of the same shape (:func:`_shape_key`) derived without findings; None when derived now (its
    ports then carry these peers; its findings went to ``findings``). Has every effect of deriving ``sw``
    beyond its own plan (findings, ECN names and RT211 carriers in ``memo``)."""
    asic = catalog.asic(asic_of(sw, catalog))
    rows, fan_ins, peers = _port_shapes(topo, sw, asic, memo.cable_pins)
    cable_pins = _cable_pins(inv, sw, rows, peers, memo.cable_pins) if memo.cable_pins else None
    # a pinned cable's rationale names its pin: a switch with one is derived, never a copy of another
    key = (_shape_key(inv.policy, sw, asic, rows, fan_ins) if memo.reuse_shapes and not cable_pins
           else None)
    shape = memo.shapes.get(key) if key is not None else None
    if shape is not None:
        for name in shape.pfc_bound:
            memo.pfc_bound[name][1].append(sw.name)
        return shape, peers
    found = len(findings)
    facts = _port_facts(rows, fan_ins, peers)
    shape = _derive_shape(inv.policy, sw, asic, facts, rtt_us, findings, memo, cable_pins)
    if key is not None and len(findings) == found:
        memo.shapes[key] = shape
    return shape, None


def _derive_switch(inv: Inventory, topo: Topology, catalog: Catalog, sw: Switch, rtt_us: float,
                   findings: list[Finding], memo: _Memo) -> SwitchPlan:
    shape, peers = _switch_shape(inv, topo, catalog, sw, rtt_us, findings, memo)
    memo.lossless_ports += shape.lossless_ports
    ports = shape.ports
    if peers is not None and not memo.share_ports:  # a reused shape: the ports of the switch it was derived
        ports = copy_each_trusted(ports, "peer", _peer_names(peers))  # for, with our peers
    return construct_trusted(SwitchPlan,
        name=sw.name, platform=sw.platform.value, role=sw.role.value, model=sw.model, asic=shape.asic,
        os_version=sw.os_version, buffer_model=shape.buffer_model,
        mgmt_host=sw.mgmt.host if sw.mgmt else None,
        mgmt_port=sw.mgmt.port if sw.mgmt else None, credentials=memo.credentials(sw),
        ports=ports, buffers=shape.buffers, ecn_profiles=shape.ecn_profiles, watchdog=shape.watchdog)


def _buffer_model(sw: Switch, asic: AsicSpec) -> str | None:
    """The switch's buffer-management model: the inventory's ``buffer_model``, else its platform's default
    for the ASIC family (``Capabilities.buffer_models``); None where the platform has no such choice."""
    models = get_platform(sw.platform.value).PLATFORM.capabilities.buffer_models
    return None if models is None else models.resolve(asic.family, sw.buffer_model)[0]


def _nic_values(inv: Inventory, catalog: Catalog, prios: list[int], model: str, speed: int, cable: float,
                mtu: int, sources: dict[str, tuple[int | float | str, int]],
                memo: _Memo, cable_pin: tuple[CablePin, float] | None = None
                ) -> tuple[Dcqcn, int, dict[str, Rationale]]:
    """DCQCN section, NIC xoff (bytes) and rationale of one NIC class (model, speed, cable, MTU,
    DCQCN pins: ``{param: (value, index of its override entry)}``, :func:`resolve_override_sources`;
    ``cable_pin``: the pin on the NIC's cable, :func:`pinned_cables`, and the length the inventory gives,
    when pinned: ``cable`` is the pinned length, and the rationale gains ``cable_m`` naming the pin)."""
    policy = inv.policy
    spec = catalog.nic(model)
    dq = memo.get(("dqh", spec.id, speed, tuple(sorted(sources.items()))), lambda: dcqcn.derive_dcqcn(
        spec, speed, policy.dcqcn, prios, policy.cnp_dscp, policy.cnp_priority,
        overrides={k: int(v) for k, (v, _) in sources.items()} or None,
        pin_sources=pin_sources(policy, sources)))
    xoff = memo.get(("nic-xoff", speed, cable, mtu), lambda: headroom.nic_xoff_bytes(speed, cable, mtu))
    why: dict[str, Rationale] = memo.get(("why-nic", speed, cable, mtu), lambda: {
        "nic_xoff_bytes": Rationale(
            formula="(301 + 2.16*cable_m)*speed_gbps + 2.72*mtu (kernel integer form, speed >= 40G)",
            inputs={"speed_gbps": speed, "cable_m": cable, "mtu_bytes": mtu},
            source="torvalds/linux drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c",
            note="the NIC derives this itself from mlnx_qos --cable_len; shown for review"),
        "mtu": Rationale(formula="nic.mtu or host.mtu or policy.host_mtu", inputs={"mtu_bytes": mtu},
                         source="inventory", note=f"RoCE MTU {policy.roce_mtu} needs netdev MTU >= 4200"),
    })
    if cable_pin is not None:
        pin, derived = cable_pin
        label = pin.label(policy)
        why = memo.get(("why-nic-pin", speed, cable, mtu, pin, derived), lambda: {
            **why,
            "nic_xoff_bytes": why["nic_xoff_bytes"].model_copy(update={
                "note": f"{why['nic_xoff_bytes'].note}; cable_m {pin.cable_m} pinned by inventory override "
                        f"for {label}"}),
            "cable_m": Rationale(
                formula="pinned by user (the switch end of this NIC's cable)", inputs={"cable_m": cable},
                source=f"inventory override for {label}",
                note=f"derived {derived} (nic.cable_length, else defaults.cable_length); a cable has one "
                     "length: mlnx_qos --cable_len and the NIC xoff use the pinned length",
                pinned_by_user=True, derived_value=derived),
        })
    return dq, xoff, why


#: what of a NIC the NCCL environment reads (nccl.derive_nccl_env, with the host's socket_ifname)
_NCCL_NIC_KEY = attrgetter("rail", "rdma_device", "rdma_port")


def _nic_classes(inv: Inventory, catalog: Catalog, cls: Classification, host: Host,
                 memo: _Memo) -> list[NicPlan]:
    """The plan of each NIC's class (model, speed, cable, MTU, DCQCN pins) for the NICs of ``host``, in
    order: the plan of the class's first NIC (its values and rationale are every NIC's of the class; only
    the identity and cabling fields name that first NIC). Derived once per class (32k NICs at 4,096 hosts,
    a handful of classes), kept in ``memo.nic_classes``."""
    policy = inv.policy
    # pins with their override entries: NICs pinned alike for different reasons are different classes
    pins = resolve_override_sources(policy, role="host", device=host.name, params=DCQCN_PARAMS)
    pins_key = tuple(sorted(pins.items()))
    # an override scoped to a NIC (port: its netdev, which lint RT121 accepts) pins that NIC only
    nic_scoped = bool(policy.overrides) and any(o.port is not None and o.device == host.name
                                                for o in policy.overrides)
    default_cable, host_mtu = inv.defaults.cable_length, host.mtu or policy.host_mtu
    cache = memo.nic_classes
    templates = []
    for nic in host.nics:
        if nic_scoped:
            pins = resolve_override_sources(policy, role="host", device=host.name, port=nic.netdev,
                                            params=DCQCN_PARAMS)
            pins_key = tuple(sorted(pins.items()))
        cable = nic.cable_length
        if cable is None:
            cable = default_cable
        # the switch end of the NIC's cable may be pinned: the NIC end is the same cable (_pinned_cables)
        pin = memo.cable_pins.get((host.name, nic.netdev)) if memo.cable_pins else None
        cable_pin = None if pin is None else (pin, cable)
        if pin is not None:
            cable = pin.cable_m
        key = (nic.model, nic.speed, cable, nic.mtu or host_mtu, pins_key, cable_pin)
        template = cache.get(key)
        if template is None:
            mtu, prios = nic.mtu or host_mtu, sorted(policy.lossless_priorities)
            dq, xoff, why = _nic_values(inv, catalog, prios, nic.model, nic.speed, cable, mtu, pins, memo,
                                        cable_pin)
            # construct_trusted: fields are typed by construction (see PortPlan in _derive_switch)
            template = cache[key] = construct_trusted(NicPlan, rationale=why,  # fields in model order
                model=nic.model, netdev=nic.netdev, rdma_device=nic.rdma_device, rdma_port=nic.rdma_port,
                pci_address=nic.pci_address, speed_gbps=nic.speed, rail=nic.rail, switch_port=nic.switch_port,
                trust=cls.trust, pfc_vector=memo.pfc_vector, dscp_to_priority=cls.dscp_to_priority,
                cable_m=cable, mtu=mtu, roce_mtu=policy.roce_mtu, roce_tos=cls.roce_tos,
                cnp_dscp=cls.cnp_dscp, cnp_priority=cls.cnp_priority, nic_xoff_bytes=xoff, dcqcn=dq)
        templates.append(template)
    return templates


def _nccl_env(inv: Inventory, cls: Classification, tiers: int, host: Host,
              memo: _Memo) -> tuple[dict[str, str], dict[str, Rationale]]:
    """The NCCL environment of ``host`` and its rationale, which follow from the host's RDMA NICs and
    socket_ifname (nccl.derive_nccl_env): one per distinct set, shared."""
    return memo.get(("nccl", tuple(map(_NCCL_NIC_KEY, host.nics)), host.socket_ifname),
                    lambda: nccl.derive_nccl_env(host, cls, inv.site, tiers))


def _derive_host(inv: Inventory, catalog: Catalog, cls: Classification, tiers: int, host: Host,
                 memo: _Memo) -> HostPlan:
    nics = []
    # each NIC a copy of its class's plan with its own identity and cabling
    for nic, template in zip(host.nics, _nic_classes(inv, catalog, cls, host, memo)):
        values = template.__dict__.copy()
        values["netdev"], values["rdma_device"] = nic.netdev, nic.rdma_device
        values["rdma_port"], values["pci_address"] = nic.rdma_port, nic.pci_address
        values["rail"], values["switch_port"] = nic.rail, nic.switch_port
        nics.append(construct_ordered(NicPlan, values))
    env, why = _nccl_env(inv, cls, tiers, host, memo)
    # construct_trusted: the values are typed (as the NICs'); the dicts are fresh or the memo's, never edited
    mgmt = host.mgmt
    return construct_trusted(HostPlan, name=host.name, mgmt_host=mgmt.host if mgmt else None,
                             mgmt_port=mgmt.port if mgmt else None,
                             credentials=memo.credentials(host),
                             nics=nics, nccl_env=env, nccl_rationale=why)


def _check_host(inv: Inventory, catalog: Catalog, cls: Classification, tiers: int, host: Host,
                memo: _Memo) -> consistency.HostNics:
    """Derive ``host`` as :func:`_derive_host` does (same steps, same errors), keeping only what the
    consistency check reads: each NIC's netdev with its class's plan, and the NCCL environment."""
    templates = _nic_classes(inv, catalog, cls, host, memo)
    env, _ = _nccl_env(inv, cls, tiers, host, memo)
    return consistency.HostNics(host.name, [(nic.netdev, t) for nic, t in zip(host.nics, templates)], env)


def build_plan(inv: Inventory, catalog: Catalog | None = None, *, inventory_file: str = "<memory>",
               inventory_sha256: str = "", lint_findings: list[Finding] | None = None,
               topology: Topology | None = None, findings_only: bool = False) -> Plan:
    """Derive the plan for a validated inventory.

    Args:
        inv: validated inventory (lint has already passed without errors).
        catalog: ASIC/NIC catalog (default: the shipped one).
        inventory_file / inventory_sha256: provenance written into the plan.
        lint_findings: warnings/infos from lint, carried into the plan.
        topology: ``build_topology(inv)`` when the caller has it already (lint's, so both share one).
        findings_only: a plan for its findings (``roce-tune lint``): the same findings, the same errors, the
            same switch values, but every host is derived and checked without keeping its plan
            (``plan.hosts`` is empty; the summary still counts the inventory's hosts and NICs), and a switch
            whose shape repeats an earlier switch's shares that switch's port plans, so its ``PortPlan.peer``
            names the earlier switch's peers (no check reads a peer's name). ~37k NIC plans and ~100k port
            copies fewer at 4,096 hosts.

    Returns:
        The plan; ``plan.findings`` holds lint findings plus every tuner safety finding (RT2xx).

    Raises:
        CatalogError: a model/ASIC/NIC id unknown to the catalog (lint reports these first).
    """
    with gc_paused():  # ~1M long-lived objects, no cycles: see roce_tune.gcpause
        return _build_plan(inv, catalog or load_catalog(), inventory_file, inventory_sha256, lint_findings,
                           topology or build_topology(inv), findings_only)


def _build_plan(inv: Inventory, catalog: Catalog, inventory_file: str, inventory_sha256: str,
                lint_findings: list[Finding] | None, topo: Topology, findings_only: bool) -> Plan:
    cls = classification.derive_classification(inv.policy)
    findings: list[Finding] = list(lint_findings or [])
    cable_pins = pinned_cables(inv, topo)
    rtt_us, rtt_why, rtt_pins = _base_rtt(inv, topo, catalog, cable_pins)
    memo = _Memo(inv, catalog, cable_pins, rtt_pins)
    memo.share_ports = findings_only
    switches = [_derive_switch(inv, topo, catalog, sw, rtt_us, findings, memo) for sw in inv.switches]
    findings.extend(_pfc_bound_findings(memo))
    tiers = topo.tiers()
    hosts: list[HostPlan] = []
    checked: list[consistency.HostNics] | None = None  # the hosts to check when the plan keeps none
    if not findings_only:
        hosts = [_derive_host(inv, catalog, cls, tiers, h, memo) for h in inv.hosts]
    else:
        checked = [_check_host(inv, catalog, cls, tiers, h, memo) for h in inv.hosts]
    # the plan's lossless ports are the tuner's rule (_port_shapes: admin-up and the link's ``lossless``), so
    # the analysis applies that rule itself instead of taking a set of ~100k (switch, port) tuples
    dl, uplink_findings = deadlock.analyze_fabric(topo, sorted(inv.policy.lossless_priorities))
    findings.extend(dl.flagged)
    findings.extend(uplink_findings)
    findings.extend(provenance.check_catalog_provenance(inv, catalog))
    notes = list(dl.notes)
    notes.append(f"base RTT {rtt_us:.2f} us: {rtt_why.formula} "
                 f"({', '.join(f'{k}={v}' for k, v in rtt_why.inputs.items())})"
                 + (f"; {rtt_pins}" if rtt_pins else ""))
    notes.append(f"objective {inv.policy.objective} (policy.objective; docs/derivation.md#objective): "
                 f"{ecn.OBJECTIVE_TRADE[inv.policy.objective]}")
    if not inv.policy.dcqcn:
        notes.append("DCQCN is off by policy: the fabric relies on PFC alone; watch PFC pause duration, "
                     "watchdog events and out_of_sequence counters "
                     "(docs/derivation.md#large-scale-practice, Meta SIGCOMM'24).")
    plan = Plan(
        generator=f"roce-tune {__version__}", site=inv.site.name, inventory_file=inventory_file,
        inventory_sha256=inventory_sha256,
        policy=inv.policy.model_dump(mode="json", exclude={"overrides"}),
        summary=PlanSummary(switches=len(switches), hosts=len(inv.hosts),
                            nics=sum(len(h.nics) for h in inv.hosts), lossless_ports=memo.lossless_ports,
                            tiers=tiers),
        classification=cls, switches=switches, hosts=hosts, deadlock=dl, findings=[], notes=notes)
    findings.extend(consistency.check_consistency(plan, checked))
    findings.sort(key=_finding_key)
    return plan.model_copy(update={"findings": findings})


def _finding_key(f: Finding) -> tuple[object, ...]:
    sev = {Severity.error: 0, Severity.warning: 1, Severity.info: 2}[f.severity]
    loc = f.location
    return (sev, loc.file or "", loc.line or 0, loc.col or 0, loc.device or "", loc.port or "",
            f.rule, f.message)


def build_partial_plan(loaded, catalog: Catalog, topo: Topology, device: str,  # type: ignore[no-untyped-def]
                       lint_findings: list[Finding], *, preceding: bool = True) -> Plan:
    """Derive only what the values of ``device`` depend on (``roce-tune explain``; the pipeline's
    :func:`roce_tune.pipeline.derive_device` lints first and passes lint's topology and findings).

    A switch's values depend on its own ports, the fabric's base RTT and NIC mix, and (for the names of its
    ECN profiles, ``…_V2``) the switches before it in the inventory; a host's on its NICs and the policy. So a
    switch derives the switches up to it, a host only itself; hosts, the deadlock analysis and the plan-wide
    checks are left out. Every value and rationale of ``device`` equals the full plan's.

    ``preceding`` False leaves the switches before ``device`` out of the plan: they still run every step with
    an effect on ``device`` or the findings (:func:`_switch_core`: ECN profile names, checks), but no port
    objects are built for them (``explain`` without a scorecard, which looks at nothing but ``device``).

    Returns:
        a partial plan: ``switches`` holds the switches derived (``device`` last; only ``device`` when
        ``preceding`` is False) or ``hosts`` the host; the
        summary counts what it holds, ``deadlock`` is empty, ``findings`` are lint's and those of the switches
        derived; a note says it is partial. An unknown ``device`` gives a plan with neither.

    Raises:
        ValueError, ArithmeticError, LookupError: on an input no lint rule caught (the pipeline turns them
            into RT299).
    """
    inv: Inventory = loaded.inventory
    cls = classification.derive_classification(inv.policy)
    findings = list(lint_findings)
    memo = _Memo(inv, catalog, pinned_cables(inv, topo))
    upto = next((i for i, sw in enumerate(inv.switches) if sw.name == device), -1)
    switches: list[SwitchPlan] = []
    if upto >= 0:
        rtt_us, _, memo.rtt_pins = _base_rtt(inv, topo, catalog, memo.cable_pins)
        before = inv.switches[:upto]
        if preceding:
            switches = [_derive_switch(inv, topo, catalog, sw, rtt_us, findings, memo) for sw in before]
        else:
            for sw in before:
                _switch_shape(inv, topo, catalog, sw, rtt_us, findings, memo)
        switches.append(_derive_switch(inv, topo, catalog, inv.switches[upto], rtt_us, findings, memo))
        findings.extend(_pfc_bound_findings(memo))
    tiers = topo.tiers()
    hosts = [] if upto >= 0 else [_derive_host(inv, catalog, cls, tiers, h, memo)
                                  for h in inv.hosts if h.name == device]
    findings.sort(key=_finding_key)
    return Plan(
        generator=f"roce-tune {__version__}", site=inv.site.name, inventory_file=str(loaded.path),
        inventory_sha256=loaded.sha256, policy=inv.policy.model_dump(mode="json", exclude={"overrides"}),
        summary=PlanSummary(switches=len(switches), hosts=len(hosts), nics=sum(len(h.nics) for h in hosts),
                            lossless_ports=sum(p.lossless for s in switches for p in s.ports), tiers=tiers),
        classification=cls, switches=switches, hosts=hosts, findings=findings,
        deadlock=DeadlockReport(nodes=0, edges=0, scenarios_checked=0, cycles=[], flagged=[], notes=[]),
        notes=[f"partial plan: only what the values of {device} depend on (roce-tune explain)"])


__all__ = ["build_partial_plan", "build_plan", "Location"]
