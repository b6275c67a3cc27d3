"""Resolution of user-pinned values (``policy.overrides``) for one device or port, and which pinned keys each
tuner stage takes (the tuner's composer and the lint rules read them).

Precedence, lowest to highest: site (no scope) < role < device < device + port. Later entries of
the same scope win over earlier ones, so an inventory reads top to bottom like a config file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from roce_tune.inventory.models import Inventory, Override, Policy, Role

if TYPE_CHECKING:
    from roce_tune.inventory.topology import Topology

HEADROOM_PARAMS = ("xoff_bytes", "xon_bytes", "size_bytes", "cable_m")
ECN_PARAMS = ("kmin_bytes", "kmax_bytes", "pmax_percent")
WATCHDOG_PARAMS = ("detection_ms", "restoration_ms", "poll_ms", "action")
DCQCN_PARAMS = (
    "rpg_time_reset_us", "rpg_byte_reset_bytes", "rpg_threshold", "rpg_ai_rate_mbps", "rpg_hai_rate_mbps",
    "rpg_gd", "rpg_min_dec_fac_percent", "rpg_min_rate_mbps", "rate_to_set_on_first_cnp_mbps", "dce_tcp_g",
    "dce_tcp_rtt_us", "rate_reduce_monitor_period_us", "initial_alpha_value", "min_time_between_cnps_us",
)


def override_rank(o: Override) -> int:
    """How specific an override's scope is: 0 site (no scope), 1 role, 2 device, 3 device + port (a higher
    rank wins; among equal ranks the later entry wins, see the module docstring)."""
    if o.port:
        return 3
    if o.device:
        return 2
    if o.role:
        return 1
    return 0


def resolve_override_sources(
    policy: Policy, *, role: str, device: str, port: str | None = None, params: tuple[str, ...] | None = None
) -> dict[str, tuple[int | float | str, int]]:
    """Like :func:`resolve_overrides`, with the index in ``policy.overrides`` of the entry each value
    comes from: ``{param: (value, index)}`` (lint points its findings at ``policy.overrides[index]``)."""
    if not policy.overrides:
        return {}
    applicable = []
    for idx, o in enumerate(policy.overrides):
        if not _scope_matches(o, role, device) or (o.port is not None and o.port != port):
            continue
        applicable.append((override_rank(o), idx, o))
    out: dict[str, tuple[int | float | str, int]] = {}
    for _, idx, o in sorted(applicable, key=lambda t: (t[0], t[1])):
        for k, v in o.set.items():
            if params is None or k in params:
                out[k] = (v, idx)
    return out


def override_label(policy: Policy, index: int) -> str:
    """How a pinned value's rationale names the override entry it comes from: its position in the
    inventory and its ``reason``, e.g. ``policy.overrides[2] (reason: vendor TAC advice)``, or
    ``policy.overrides[2] (no reason given)``; a reason's line breaks and runs of blanks become one blank
    (plan.md lists it as one line). Raises IndexError for an index ``policy`` does not have."""
    reason = " ".join((policy.overrides[index].reason or "").split())
    return f"policy.overrides[{index}] " + (f"(reason: {reason})" if reason else "(no reason given)")


def pin_sources(policy: Policy, sources: dict[str, tuple[int | float | str, int]]) -> dict[str, str]:
    """``{param: rationale source}`` of the pins of :func:`resolve_override_sources` (its result is
    ``sources``): ``inventory override`` and the entry's :func:`override_label`."""
    return {k: f"inventory override {override_label(policy, i)}" for k, (_, i) in sources.items()}


def resolve_overrides(
    policy: Policy, *, role: str, device: str, port: str | None = None, params: tuple[str, ...] | None = None
) -> dict[str, int | float | str]:
    """Return the pinned values that apply to ``device`` (and ``port``) of ``role``.

    Args:
        policy: the site policy holding ``overrides``.
        role: ``leaf``/``spine``/``superspine`` for switches, ``host`` for hosts.
        device: device name.
        port: port name, or None for device-level values (port-scoped overrides then do not apply).
        params: keep only these parameter names (None = all).

    Returns:
        ``{param: value}``; empty when nothing is pinned.
    """
    if not policy.overrides:
        return {}
    return {k: v for k, (v, _) in resolve_override_sources(policy, role=role, device=device, port=port,
                                                          params=params).items()}


class CablePin(NamedTuple):
    """A cable whose length an override pins (``cable_m`` in ``policy.overrides[].set``), as both of its ends
    see it: the pinned length (m), the index of the winning override entry in ``policy.overrides`` and the
    switch port it pins (``device:port``; the far end, for the end the override does not name)."""

    cable_m: float
    override_index: int
    pinned_end: str

    def label(self, policy: Policy) -> str:
        """The pin as a rationale names it: ``lab-leaf1:Ethernet0, policy.overrides[0] (reason: ...)``."""
        return f"{self.pinned_end}, {override_label(policy, self.override_index)}"


#: (switch, port) or (host, NIC netdev) -> the pin on the cable at that end (:func:`pinned_cables`)
CablePins = dict[tuple[str, str], CablePin]


def _scope_matches(o: Override, role: str, device: str) -> bool:
    """Whether override ``o``'s role and device, where given, are ``role`` and ``device`` (its port is matched
    by the caller: :func:`resolve_override_sources` matches it, :func:`pinned_cables` asks per port)."""
    o_role = o.role.value if isinstance(o.role, Role) else o.role
    return (o_role is None or o_role == role) and (o.device is None or o.device == device)


def pinned_cables(inv: Inventory, topo: Topology) -> CablePins:
    """Every cable end whose length a ``cable_m`` pin sets; empty when no override pins ``cable_m``.

    An engineer pins ``cable_m`` on a switch port because the real cable differs from the inventory (a 100 m
    run recorded as 3 m, an inventory imported from a source nobody may edit). The pin states the length of
    the *cable*, so it holds at both of its ends: the far end's switch port (its ingress headroom absorbs
    what is in flight on that cable), the NIC cabled to the port (``mlnx_qos --cable_len`` and the NIC xoff
    follow the same length: the inventory's one ``cable_length`` of a host cable is what both ends read) and
    the fabric's base RTT. Where both ends are pinned, the more specific override wins (port over device over
    role over site; the later of equals), as overrides resolve for one port: a cable has one length.
    The tuner (:mod:`roce_tune.tuner.compose`: headroom, base RTT, the NIC's cable_len and xoff) and lint
    (RT128: the NIC end within what ``mlnx_qos --cable_len`` keeps) read it.

    Shapes: ``{(switch, port) | (host, netdev): CablePin}``; declared switch ports without a cable keep
    their own pin (their headroom is unused); external peers are not keyed.
    """
    out: CablePins = {}
    for (name, port), (pin, far, theirs) in _pinned_ends(inv, topo).items():
        if far is not None and theirs is not None and (theirs.rank, theirs.override_index) > (pin.rank,
                                                                                              pin.override_index):
            pin = theirs
        out[name, port] = pin.pin
        if far is not None and theirs is None:  # (a pinned far end finds the same winner itself)
            out[far] = pin.pin
    return out


class _EndPin(NamedTuple):
    """The pin an override sets on one switch port: its rank (:func:`override_rank`), entry index and pin."""

    rank: int
    override_index: int
    pin: CablePin


_PinnedEnds = dict[tuple[str, str], tuple[_EndPin, tuple[str, str] | None, _EndPin | None]]


def _pinned_ends(inv: Inventory, topo: Topology) -> _PinnedEnds:
    """Every switch port a ``cable_m`` override resolves on: ``{(switch, port): (its own pin, the cable's far
    end (device, port) or None, the far end's own pin or None)}`` (switch-to-switch and switch-to-host
    cables have a far end; a port without a cable or to an external peer has none)."""
    policy = inv.policy
    entries = [o for o in policy.overrides if "cable_m" in o.set]
    if not entries:
        return {}
    ends: dict[tuple[str, str], _EndPin] = {}
    for sw in inv.switches:
        if not any(_scope_matches(o, sw.role.value, sw.name) for o in entries):
            continue
        for _, port, *_ in topo.ports_of(sw.name):
            src = resolve_override_sources(policy, role=sw.role.value, device=sw.name, port=port,
                                           params=("cable_m",)).get("cable_m")
            if src is not None:
                ends[sw.name, port] = _EndPin(override_rank(policy.overrides[src[1]]), src[1],
                                              CablePin(float(src[0]), src[1], f"{sw.name}:{port}"))
    out: _PinnedEnds = {}
    for (name, port), own in ends.items():
        peer = topo.peers_of(name).get(port)
        far = (peer.device, peer.port) if peer is not None and peer.kind in ("host", "switch") else None
        out[name, port] = (own, far, ends.get(far) if far is not None else None)
    return out


class CablePinConflict(NamedTuple):
    """Both ends of one cable pinned to different lengths: the pin that wins (its length is the cable's,
    :func:`pinned_cables`) and the pin that loses (its ``cable_m`` is used nowhere on this cable)."""

    winner: CablePin
    loser: CablePin


def conflicting_cable_pins(inv: Inventory, topo: Topology) -> list[CablePinConflict]:
    """Every cable whose two switch ends resolve ``cable_m`` from different overrides with different lengths
    (metres), once per cable, in the order of the switches' ports; empty without such cables. The winner is
    the more specific override (:func:`pinned_cables`: port over device over role over site, the later of
    equals); lint RT141 reports the loser, which ``pinned_cables`` would otherwise drop silently."""
    out: list[CablePinConflict] = []
    for (name, port), (own, far, theirs) in _pinned_ends(inv, topo).items():
        if far is None or theirs is None or (name, port) > far or own.pin.cable_m == theirs.pin.cable_m:
            continue  # one end, an agreeing pin, or the cable already seen from its other end
        ours, other = (own.rank, own.override_index), (theirs.rank, theirs.override_index)
        win, lose = (theirs, own) if other > ours else (own, theirs)
        out.append(CablePinConflict(win.pin, lose.pin))
    return out
