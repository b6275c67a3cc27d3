"""Resolution of user-pinned values (``policy.overrides``) for one device or port, and which pinned keys each
tuner stage takes (the tuner's composer and the lint rules read them).

Precedence, lowest to highest: site (no scope) < role < device < device + port. Later entries of
the same scope win over earlier ones, so an inventory reads top to bottom like a config file.
"""

from __future__ import annotations

from roce_tune.inventory.models import Override, Policy, Role

HEADROOM_PARAMS = ("xoff_bytes", "xon_bytes", "size_bytes", "cable_m")
ECN_PARAMS = ("kmin_bytes", "kmax_bytes", "pmax_percent")
WATCHDOG_PARAMS = ("detection_ms", "restoration_ms", "poll_ms", "action")
DCQCN_PARAMS = (
    "rpg_time_reset_us", "rpg_byte_reset_bytes", "rpg_threshold", "rpg_ai_rate_mbps", "rpg_hai_rate_mbps",
    "rpg_gd", "rpg_min_dec_fac_percent", "rpg_min_rate_mbps", "rate_to_set_on_first_cnp_mbps", "dce_tcp_g",
    "dce_tcp_rtt_us", "rate_reduce_monitor_period_us", "initial_alpha_value", "min_time_between_cnps_us",
)


def _rank(o: Override) -> int:
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
        if o.role is not None and (o.role.value if isinstance(o.role, Role) else o.role) != role:
            continue
        if o.device is not None and o.device != device:
            continue
        if o.port is not None and o.port != port:
            continue
        applicable.append((_rank(o), idx, o))
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
