"""Arista EOS renderer: one CLI file per switch (``<name>.cfg``), applied inside a config session.

Templates (``templates/eos/``) only print; this module turns the plan into syntax-ready values
(seconds for the watchdog, bytes for ECN, ``uc-tx-queue`` vs ``tx-queue``) from the data tables below.

Layout of the output: global DSCP/TC maps; one ``qos profile`` per ECN profile (ports of different
speeds get their own thresholds), entered once per section (trust+maps, PFC, ECN, scheduler, watchdog)
so a reviewer finds each section by name — EOS merges re-entered modes; global PFC watchdog timers;
per interface ``mtu`` and, on lossless ports only, ``service-profile``.

Syntax checked against:

* aristanetworks/avd ``eos_cli_config_gen`` templates ``qos.j2``, ``qos-profiles.j2``,
  ``ethernet-interface-tx-queues.j2``, ``ethernet-interface-uc-tx-queues.j2``, ``priority-flow-control.j2``
  and the molecule QoS docs [V]: ``qos map dscp <list> to traffic-class N``, ``qos map traffic-class N to
  tx-queue Q``, ``qos trust dscp``, ``no priority`` / ``priority strict``, ``bandwidth percent``,
  ``random-detect ecn minimum-threshold X <unit> maximum-threshold Y <unit> max-mark-probability P weight W``
  (units segments|bytes|kbytes|mbytes|milliseconds, thresholds 1..256000000, probability 1..100 integer,
  weight 0..15), ``random-detect drop ... drop-probability``, ``random-detect ecn count``,
  ``priority-flow-control on``, ``priority-flow-control priority N no-drop``,
  ``priority-flow-control pause watchdog`` (+ ``port action``), ``priority-flow-control pause watchdog
  default timeout|recovery-time|polling-interval <s>``, ``service-profile``.
* AVD ``qos_profiles[].priority_flow_control.watchdog.action`` [V] (``docs/tables/qos-profiles.md``):
  the per-port stuck-queue action ``priority-flow-control pause watchdog port action drop|notify-only``
  overrides the EOS default, error-disable. Plan ``drop`` -> ``drop``, ``alert`` -> ``notify-only``;
  ``forward`` (keep forwarding the paused queue) has none: ``drop`` is rendered and RT241 says so.
* [S] a 2026 EOS 4.36 RoCE write-up (GitHub, "Arista_EOS_RoCEv2_Lossless_Config"): watchdog times in
  seconds (timeout/recovery 0.01..60, polling 0.005..30), ``polling <= min(timeout, recovery) / 2`` or EOS
  substitutes its own; TC 7 <-> tx-queue 7 is fixed; ``uc-tx-queue`` is a sub-mode on Trident/Tomahawk
  (7050X/7060X/7388X5), ``tx-queue`` on Jericho (7280R/7800R), the map target is always ``tx-queue``.
  The same source notes the watchdog only monitors queues with guaranteed bandwidth on Trident II
  (``bandwidth guaranteed``); roce-tune does not render that (not a knob on TH/Jericho) — see gaps.
* [S] scheduling: EOS tx-queues default to strict priority, served from the highest number down, and
  ``no priority`` on queue N makes N *and every lower-numbered queue* round-robin whatever they are
  configured as: ``show qos interfaces`` prints such a queue ``RR / SP`` (operational / configured), e.g.
  queue 2 ``no priority`` with queues 1 and 0 left strict shows all three RR ("Understanding the output of
  show qos interface", aristaeos.blogspot.com/2020/09/understanding-output-of-show-qos.html, from the EOS
  QoS chapter's transmit-queue section). So the strict queues must sit above every round-robin queue:
  roce-tune writes exactly the plan's queues (DWRR ``no priority`` + ``bandwidth percent``, CNP
  ``priority strict``), leaves the others at the device default (strict, no traffic mapped), and refuses
  a plan whose CNP queue is numbered below a DWRR queue (:func:`check_queue_order`, RT240): EOS would
  run the CNP queue round-robin, without a bandwidth share, instead of ahead of the RoCE data.
* [S] interface MTU: every Arista example uses ``mtu 9214`` (the EOS L3 maximum); plan MTUs above it are
  clamped here and the clamp is written as a comment.

Gaps, said in the output too: per-port PFC headroom. AVD (pyavd 6.4 ``eos_cli_config_gen`` schema) models
buffers only as ``platform.trident.mmu``: a queue profile applied to the whole switch (``platform trident mmu
queue profile P`` / ``ingress headroom N`` / ``ingress priority-group G reserved N``, ``... apply``) and a
``headroom-pool limit`` — one headroom for every port, not the plan's per-port xoff, and a platform-wide MMU
change; so roce-tune does not write it. Arista's 2025 TOI
"PFC Fair Adaptive Dynamic Threshold (FADT)" (arista.com/en/support/toi/tag/pfc, Oct 2025) describes
reserving headroom per interface/priority through PFC profiles, but its command syntax is not in any
public source read for this module (searched: Arista TOI index pages, AVD schema/templates, EOS manual
excerpts; the only headroom syntax found, ``platform trident mmu queue profile`` / ``ingress headroom``
in an Intel Habana guide, is a platform-wide Trident profile, not per-port and not an Arista source).
So the plan's headroom is listed as a comment only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import EcnProfile, Plan, PortPlan, SwitchPlan
from roce_tune.platforms.base import IOS_STYLE_SECRETS, CannotExpress, PlatformSpec, SecretPattern
from roce_tune.platforms.templating import render_device_template

SPEC = PlatformSpec(
    name="eos",
    extension="cfg",
    aggregator="config.j2",
    sections=("maps", "pfc", "buffers", "ecn", "scheduler", "watchdog", "interfaces"),
    netmiko_device_type="arista_eos",
    commit="eos-session-timer",
    ecn_drop_thresholds=True,
    negate_prefix="no ",
    comment_prefix="!",
    indent=3,
    source="aristanetworks/avd eos_cli_config_gen j2templates (qos, qos-profiles, tx-queues, "
           "priority-flow-control)",
    show_commands={
        "running_config": "show running-config",
        "session_diff": "show session-config diffs",
        "maps": "show qos maps",
        "pfc": "show priority-flow-control",
        "pfc_counters": "show priority-flow-control counters detail",
        "watchdog": "show priority-flow-control counters watchdog",
        "ecn": "show qos interfaces ecn",
        "ecn_counters": "show qos interfaces ecn counters queue",
        "queue_drops": "show interfaces counters queue detail",
    },
)

#: Secrets in ``show running-config`` that logs and restore points mask (``mask_secrets``): EOS prints
#: the IOS-style forms (``username admin role network-admin secret sha512 $6$…``, ``tacacs-server key 7 …``,
#: ``snmp-server community …``, ``snmp-server user U G v3 localized ID auth sha K priv aes K``, BGP
#: ``neighbor … password 7 …``, ``ntp authentication-key N md5 7 …``) [Arista EOS User Manual].
SECRET_PATTERNS: tuple[SecretPattern, ...] = IOS_STYLE_SECRETS

#: Per-queue config sub-mode by ASIC family (catalog ``family``): unicast queues on Broadcom XGS
#: (Trident/Tomahawk), one queue set on DNX (Jericho). [V] AVD has both; [S] family split.
QUEUE_KEYWORD_BY_FAMILY: dict[str, str] = {"tomahawk": "uc-tx-queue", "trident": "uc-tx-queue",
                                           "jericho": "tx-queue"}
#: plan trust -> ``qos trust`` keyword [V AVD].
TRUST_KEYWORD: dict[str, str] = {"dscp": "dscp", "pcp": "cos"}
#: plan watchdog action -> EOS per-port stuck-queue action [V AVD qos_profiles: drop | notify-only; default
#: errdisable]; None = no EOS equivalent (rendered as :data:`WATCHDOG_FALLBACK_ACTION`, RT241 finding).
WATCHDOG_ACTION: dict[str, str | None] = {"drop": "drop", "alert": "notify-only", "forward": None}
#: What a plan action without EOS equivalent becomes: drop still un-sticks the queue (errdisable, the EOS
#: default, would take the whole port down).
WATCHDOG_FALLBACK_ACTION = "drop"
#: EOS watchdog timer -> (smallest ms, largest ms, step ms) it accepts. [S] ranges (timeout and recovery
#: 0.01..60 s, polling 0.005..30 s); [V] AVD schema ``priority_flow_control.watchdog``: timeout and
#: recovery-time at most 2 decimals (10 ms steps), polling-interval at most 3 (1 ms). A plan value outside
#: is rounded/clamped into it with a note and an RT241 finding (:func:`watchdog_timers_ms`).
WATCHDOG_TIMER_MS: dict[str, tuple[int, int, int]] = {
    "timeout": (10, 60_000, 10), "recovery-time": (10, 60_000, 10), "polling-interval": (5, 30_000, 1)}
#: TC -> tx-queue pairs EOS fixes (control traffic) and does not accept in ``qos map`` [S].
FIXED_TC_QUEUE: dict[int, int] = {7: 7}
#: Largest interface MTU EOS accepts (L3 MTU) [S].
MAX_MTU = 9214
#: ECN threshold unit: EOS takes plain bytes, so plan values go out exactly (no rounding) [V AVD].
ECN_UNIT = "bytes"
#: Instantaneous queue depth for marking (``weight 0``) — RoCE practice [S].
ECN_WEIGHT = 0
#: Profile names are printed into CLI lines; anything else is refused.
_TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,79}$")


def _token(value: str, what: str) -> str:
    """Return ``value`` if it is safe as one CLI word. Raises ValueError otherwise."""
    if not _TOKEN_RE.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a safe CLI word for EOS")
    return value


def seconds(ms: int) -> str:
    """Milliseconds -> EOS seconds text without trailing zeros.

    >>> seconds(200), seconds(50), seconds(1500)
    ('0.2', '0.05', '1.5')
    """
    return format((Decimal(ms) / 1000).normalize(), "f")


def queue_keyword(switch: SwitchPlan) -> str:
    """``uc-tx-queue`` or ``tx-queue`` for this switch's ASIC (catalog family, else id without ``-N``).

    Raises:
        KeyError: an ASIC family EOS support is not recorded for (lists the known ones).
    """
    from roce_tune.catalog import asic_family

    family = asic_family(switch.asic)
    if family not in QUEUE_KEYWORD_BY_FAMILY:
        known = ", ".join(sorted(QUEUE_KEYWORD_BY_FAMILY))
        raise KeyError(f"{switch.name}: no EOS queue keyword for ASIC family {family!r}; known: {known}")
    return QUEUE_KEYWORD_BY_FAMILY[family]


def profile_name(ecn: EcnProfile) -> str:
    """The ``qos profile`` name for ports using ``ecn``: the ECN profile's own name (one profile each)."""
    return _token(ecn.name, "qos profile name")


def _ecn_line(ecn: EcnProfile) -> dict[str, object]:
    pmax = max(1, min(100, round(ecn.pmax_percent)))
    notes = []
    if pmax != ecn.pmax_percent:
        notes.append(f"plan Pmax {ecn.pmax_percent}% rendered as {pmax}% (EOS takes whole percent 1..100)")
    drop = None
    if ecn.drop_min_bytes is not None or ecn.drop_max_bytes is not None:
        if ecn.drop_min_bytes is None or ecn.drop_max_bytes is None or ecn.drop_probability_percent is None:
            raise ValueError(f"ECN profile {ecn.name}: drop_min_bytes, drop_max_bytes and "
                             "drop_probability_percent must be given together")
        prob = max(1, min(100, round(ecn.drop_probability_percent)))
        drop = {"min": ecn.drop_min_bytes, "max": ecn.drop_max_bytes, "prob": prob}
    return {"kmin": ecn.kmin_bytes, "kmax": ecn.kmax_bytes, "unit": ECN_UNIT, "pmax": pmax,
            "weight": ECN_WEIGHT, "drop": drop, "notes": notes}


def _profiles(plan: Plan, switch: SwitchPlan) -> list[dict[str, object]]:
    by_name = {e.name: e for e in switch.ecn_profiles}
    groups: dict[str, list[PortPlan]] = {}
    for p in switch.ports:
        if p.lossless:
            if p.ecn_profile is None or p.ecn_profile not in by_name:
                raise ValueError(f"{switch.name}:{p.name} is lossless but names ECN profile "
                                 f"{p.ecn_profile!r}, not one of {sorted(by_name)}")
            groups.setdefault(p.ecn_profile, []).append(p)
    out = []
    for name in sorted(groups):
        prios = {tuple(p.pfc_priorities) for p in groups[name]}
        if len(prios) != 1:
            raise ValueError(f"{switch.name}: ports with ECN profile {name} differ in PFC priorities "
                             f"{sorted(prios)}")
        ecn = by_name[name]
        out.append({"name": profile_name(ecn), "ecn_name": ecn.name, "speed_gbps": ecn.speed_gbps,
                    "pfc_priorities": list(next(iter(prios))), "ecn": _ecn_line(ecn),
                    "ports": [p.name for p in groups[name]]})
    return out


def _maps(plan: Plan) -> tuple[list[dict[str, object]], list[dict[str, int]]]:
    cls = plan.classification
    by_tc: dict[int, list[int]] = {}
    for dscp in sorted(cls.dscp_to_tc):
        by_tc.setdefault(cls.dscp_to_tc[dscp], []).append(dscp)
    dscp_maps = [{"dscps": " ".join(str(d) for d in by_tc[tc]), "tc": tc} for tc in sorted(by_tc)]
    tc_maps = []
    for tc in sorted(cls.tc_to_queue):
        queue = cls.tc_to_queue[tc]
        if tc in FIXED_TC_QUEUE:  # not accepted in ``qos map``; a differing plan value is an RT241 finding
            if FIXED_TC_QUEUE[tc] != queue and tc in cls.dscp_to_tc.values():
                raise ValueError(f"EOS fixes traffic-class {tc} to tx-queue {FIXED_TC_QUEUE[tc]}; plan maps "
                                 f"it to {queue} and classifies DSCPs to it")
            continue
        tc_maps.append({"tc": tc, "queue": queue})
    return dscp_maps, tc_maps


def watchdog_timers_ms(switch: SwitchPlan) -> dict[str, tuple[int, int]]:
    """The plan's watchdog timers as EOS takes them: ``{"timeout" | "recovery-time" | "polling-interval":
    (plan_ms, eos_ms)}``, ``eos_ms`` rounded half up to the step and clamped into :data:`WATCHDOG_TIMER_MS`.

    >>> from types import SimpleNamespace as N
    >>> sw = N(watchdog=N(detection_ms=15, restoration_ms=70_000, poll_ms=2))
    >>> watchdog_timers_ms(sw)  # doctest: +NORMALIZE_WHITESPACE
    {'timeout': (15, 20), 'recovery-time': (70000, 60000), 'polling-interval': (2, 5)}
    """
    wd = switch.watchdog
    out = {}
    plan_ms = {"timeout": wd.detection_ms, "recovery-time": wd.restoration_ms, "polling-interval": wd.poll_ms}
    for key, ms in plan_ms.items():
        lo, hi, step = WATCHDOG_TIMER_MS[key]
        out[key] = (ms, min(hi, max(lo, (ms + step // 2) // step * step)))
    return out


def _watchdog(switch: SwitchPlan) -> dict[str, object]:
    wd = switch.watchdog
    timers = watchdog_timers_ms(switch)
    notes = []
    for key, (plan_ms, ms) in timers.items():
        lo, hi, step = WATCHDOG_TIMER_MS[key]
        if ms != plan_ms:
            notes.append(f"plan {key} {plan_ms} ms rendered as {seconds(ms)} s "
                         f"(EOS takes {seconds(lo)}..{seconds(hi)} s in {seconds(step)} s steps)")
    poll, det, rest = timers["polling-interval"][1], timers["timeout"][1], timers["recovery-time"][1]
    if 2 * poll > min(det, rest):
        notes.append(f"polling {poll} ms > min(timeout, recovery)/2: EOS may substitute its own polling "
                     "interval and log a warning")
    action = WATCHDOG_ACTION[wd.action]
    if action is None:
        action = WATCHDOG_FALLBACK_ACTION
        notes.append(f"plan action {wd.action!r} has no EOS equivalent (drop | notify-only | default "
                     f"errdisable): rendered as {action} (RT241)")
    return {"enabled": wd.enabled, "timeout": seconds(det), "recovery": seconds(rest),
            "polling": seconds(poll), "action": action, "notes": notes}


def _watchdog_findings(switch: SwitchPlan, where: Location) -> list[Finding]:
    """RT241 for an enabled watchdog whose action or timers EOS cannot take as planned."""
    wd = switch.watchdog
    if not wd.enabled:
        return []
    out = []
    if WATCHDOG_ACTION.get(wd.action) is None:
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=where,
            message=f"EOS PFC watchdog has no action {wd.action!r} (port action drop | notify-only, default "
                    f"errdisable): rendered as {WATCHDOG_FALLBACK_ACTION}",
            fix="set policy.watchdog_action to drop or alert for EOS switches, or accept drop"))
    for key, (plan_ms, ms) in watchdog_timers_ms(switch).items():
        if ms != plan_ms:
            lo, hi, step = WATCHDOG_TIMER_MS[key]
            out.append(Finding(
                rule="RT241", severity=Severity.warning, location=where,
                message=f"EOS PFC watchdog {key} takes {seconds(lo)}..{seconds(hi)} s in {seconds(step)} s "
                        f"steps: plan {plan_ms} ms rendered as {seconds(ms)} s",
                fix=f"pin the watchdog timer to a multiple of {step} ms within {lo}..{hi} ms "
                    "for EOS switches"))
    return out


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 warnings for what EOS syntax changes in the plan: a watchdog action without EOS equivalent
    (rendered as drop), watchdog timers outside EOS's range or steps (:func:`watchdog_timers_ms`), port
    MTUs above :data:`MAX_MTU` (clamped), fractional Pmax / drop probabilities (whole percent), a plan TC ->
    queue pair that EOS fixes otherwise (:data:`FIXED_TC_QUEUE`, info), and the per-port headroom EOS output
    does not configure."""
    where = Location(device=switch.name)
    out = _watchdog_findings(switch, where)
    cls = plan.classification
    for tc, fixed in sorted(FIXED_TC_QUEUE.items()):
        if cls.tc_to_queue.get(tc, fixed) != fixed:
            out.append(Finding(
                rule="RT241", severity=Severity.info, location=where,
                message=f"EOS fixes traffic-class {tc} to tx-queue {fixed} (the switch's own control "
                        f"traffic, strict priority by default): the plan's TC {tc} -> queue "
                        f"{cls.tc_to_queue[tc]} is not rendered (no DSCP is classified to it)",
                fix="none needed; rendering refuses a plan that classifies DSCPs to that traffic class"))
    clamped = sorted(p.name for p in switch.ports if p.mtu > MAX_MTU)
    if clamped:
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=where,
            message=f"plan MTU {max(p.mtu for p in switch.ports)} is above the EOS maximum {MAX_MTU}: "
                    f"rendered as mtu {MAX_MTU} on {len(clamped)} port(s) "
                    f"({', '.join(clamped[:4])}{' ...' if len(clamped) > 4 else ''})",
            fix=f"set policy.mtu to {MAX_MTU} or less for a fabric with EOS switches (hosts' MTU stays below "
                "it)"))
    for e in switch.ecn_profiles:
        for what, v in (("Pmax", e.pmax_percent), ("drop probability", e.drop_probability_percent)):
            if v is not None and max(1, min(100, round(v))) != v:
                out.append(Finding(
                    rule="RT241", severity=Severity.warning, location=where,
                    message=f"ECN profile {e.name}: {what} {v}% rendered as {max(1, min(100, round(v)))}% "
                            "(EOS takes whole percent 1..100)", fix="pin a whole-percent value"))
    if any(p.headroom is not None for p in switch.ports):
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=where,
            message="EOS output does not configure per-port PFC headroom (xon/xoff/size): the switch keeps "
                    "its own; the plan's values are listed as comments", fix="check 'show "
                                                                             "priority-flow-control' after "
                                                                             "apply"))
    return out


def _interfaces(switch: SwitchPlan, profiles: list[dict[str, object]]) -> list[dict[str, object]]:
    port_profile = {port: prof["name"] for prof in profiles for port in cast("list[str]", prof["ports"])}
    out = []
    for p in switch.ports:
        notes = []
        mtu = min(p.mtu, MAX_MTU)
        if mtu != p.mtu:
            notes.append(f"plan MTU {p.mtu} clamped to the EOS maximum {MAX_MTU}")
        if not p.admin_up:
            notes.append("admin down in the inventory; roce-tune does not change admin state")
        if not p.lossless:
            notes.append(f"lossy ({p.peer_kind}/{p.direction}): no PFC, no RoCE service-profile")
        out.append({"name": _token(p.name, "interface name"), "mtu": mtu,
                    "profile": port_profile.get(p.name), "peer": p.peer, "notes": notes})
    return out


def _headroom_rows(switch: SwitchPlan) -> list[dict[str, object]]:
    return [{"port": p.name, "profile": p.headroom.profile, "xoff": p.headroom.xoff_bytes,
             "xon": p.headroom.xon_bytes, "size": p.headroom.size_bytes, "cable_m": p.cable_m}
            for p in switch.ports if p.lossless and p.headroom is not None]


def check_queue_order(schedulers: Sequence[Mapping[str, object]]) -> None:
    """Refuse a strict tx-queue numbered below a round-robin one (module docstring, scheduling [S]).

    ``schedulers`` are :func:`build_context`'s rows (``queue`` int, ``strict`` bool).

    Raises:
        CannotExpress: names the strict queue, the round-robin queue(s) above it and the policy fix.
    """
    rr = sorted(cast("int", s["queue"]) for s in schedulers if not s["strict"])
    for s in schedulers:
        queue = cast("int", s["queue"])
        above = [q for q in rr if q > queue]
        if not s["strict"] or not above:
            continue
        fix = "set policy.cnp_priority above every lossless priority (6 is usual)" if max(rr) < 6 else ""
        fix += (" or " if fix else "") + f"move the lossless priorities below the CNP priority {queue}"
        raise CannotExpress(
            f"CNP tx-queue {queue} (priority strict) is numbered below round-robin tx-queue(s) "
            f"{', '.join(map(str, above))} (no priority): EOS runs every queue below a round-robin one "
            f"round-robin too, so CNPs would share the port with RoCE data instead of going first", fix)


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, object]:
    """Everything the EOS templates print, already in EOS syntax/units (no arithmetic left for Jinja).

    Raises:
        ValueError: the plan cannot be expressed on EOS (unknown ECN profile, remapped TC 7, unsafe names,
            a strict queue below a round-robin one: :func:`check_queue_order`).
        KeyError: unknown ASIC family.
    """
    cls = plan.classification
    dscp_maps, tc_maps = _maps(plan)
    profiles = _profiles(plan, switch)
    schedulers = []
    for s in sorted(cls.schedulers, key=lambda s: s.queue):
        if s.mode == "dwrr" and s.weight_percent is None:
            raise ValueError(f"scheduler {s.name} (queue {s.queue}) is dwrr without a weight")
        schedulers.append({"queue": s.queue, "strict": s.mode == "strict", "weight": s.weight_percent,
                           "name": s.name})
    check_queue_order(schedulers)
    return {
        "c": SPEC.comment_prefix,
        "sections": SPEC.sections,
        "switch": {"name": switch.name, "model": switch.model, "asic": switch.asic, "role": switch.role},
        "plan": {"site": plan.site, "generator": plan.generator, "schema": plan.schema_version},
        "trust": TRUST_KEYWORD[cls.trust],
        "dscp_maps": dscp_maps,
        "tc_maps": tc_maps,
        "queue_kw": queue_keyword(switch),
        "profiles": profiles,
        "lossless_queues": sorted(cls.lossless_queues),
        "cnp_queue": cls.cnp_queue,
        "schedulers": schedulers,
        "watchdog": _watchdog(switch),
        "headroom_rows": _headroom_rows(switch),
        "interfaces": _interfaces(switch, profiles),
    }


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as EOS CLI: ``{"<name>.cfg": text}``.

    Raises:
        ValueError / KeyError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    text = render_device_template(SPEC.name, SPEC.aggregator, switch.name, build_context(plan, switch),
                                  ("switch", "name"))
    return {f"{switch.name}.{SPEC.extension}": text}


# --- LLDP and show version (roce-tune import lldp / lint --lldp) -----------------------------------
import json as _json  # noqa: E402

from roce_tune.platforms import lldp as _lldp  # noqa: E402


def parse_lldp_json(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors detail | json``: ``lldpNeighbors`` keyed by local interface, each with
    ``lldpNeighborInfo[]`` (``systemName``, ``neighborInterfaceInfo.interfaceIdType`` / ``interfaceId_v2``
    / ``interfaceId`` (quoted in older EOS) / ``interfaceDescription``). Our own parser (JSON; the
    ntc-templates ``arista_eos_show_lldp_neighbors_detail`` template reads the text form).

    ``show lldp neighbors | json`` (the brief table) is read too: ``lldpNeighbors`` is then a list of
    ``{port, neighborDevice, neighborPort}``, without port description.

    Raises:
        LldpParseError: not JSON, or no ``lldpNeighbors``.
    """
    doc = _lldp.json_block(text)
    table = doc.get("lldpNeighbors") if isinstance(doc, dict) else None
    if isinstance(table, list):
        return _parse_lldp_brief_json(text, table)
    if not isinstance(table, dict):
        raise _lldp.LldpParseError("no 'lldpNeighbors' object: not 'show lldp neighbors detail | json'", 0)
    out = []
    for ifname, entry in table.items():
        for n in (entry or {}).get("lldpNeighborInfo") or []:
            info = n.get("neighborInterfaceInfo") or {}
            name, is_mac = _lldp.remote_port_name(info.get("interfaceIdType"),
                                                  info.get("interfaceId_v2") or info.get("interfaceId"),
                                                  info.get("interfaceDescription"))
            out.append(_lldp.LldpNeighbor(ifname, n.get("systemName") or None, name, is_mac,
                                          _lldp.key_line(text, ifname)))
    return out


#: EOS's short names of its ports in text tables: ``Et1/1`` -> ``Ethernet1/1``, ``Ma1`` -> ``Management1``
_MGMT_ABBREV_RE = re.compile(r"^Ma(?=\d+(?:/\d+)*$)")
_DETAIL_IFACE_RE = re.compile(r"^Interface\s+(?P<ifname>\S+)\s+detected\s+\d+\s+LLDP\s+neighbors?:")
_DETAIL_FIELD_RE = re.compile(r"^\s+-?\s*(?P<key>Port ID type|Port ID|Port Description|System Name)\s*:\s*"
                              r"(?P<value>.*?)\s*$")


def _text_port(name: str) -> str:
    """A local port as an EOS text table abbreviates it, by its full name (``Et3/1``, ``Ma1``)."""
    return full_port_name(_MGMT_ABBREV_RE.sub("Management", name))


def _unquoted(value: str | None) -> str | None:
    """An EOS detail value without its quotes (``"Ethernet1"`` -> ``Ethernet1``); None when empty."""
    v = (value or "").strip()
    v = v[1:-1] if len(v) >= 2 and v[0] == v[-1] == '"' else v
    return v or None


def parse_lldp_detail_text(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors detail`` (text): ``Interface <port> detected <n> LLDP neighbors:``, then per
    neighbour a ``Neighbor …`` line and ``- Port ID type: Interface name (5)``, ``Port ID : "Ethernet1"``,
    ``- Port Description: "…"``, ``- System Name: "…"`` (the first ``Port ID`` of a neighbour is its port:
    the link-aggregation TLV prints another). Our own parser (ntc-templates
    ``arista_eos_show_lldp_neighbors_detail`` keeps no port description, the name of a host NIC).

    Raises:
        LldpParseError: no ``Interface … detected … LLDP neighbors:`` line; a neighbour without a Port ID.
    """
    out: list[_lldp.LldpNeighbor] = []
    local: str | None = None
    cur: tuple[str, int] | None = None
    fields: dict[str, str] = {}
    seen_iface = False

    def flush() -> None:
        if cur is None:
            return
        if "Port ID" not in fields:
            raise _lldp.LldpParseError(f"the neighbour on {cur[0]} has no 'Port ID' line", cur[1])
        st = re.sub(r"\s*\(\d+\)$", "", fields.get("Port ID type", ""))
        name, is_mac = _lldp.remote_port_name(st, _unquoted(fields["Port ID"]),
                                              _unquoted(fields.get("Port Description")))
        out.append(_lldp.LldpNeighbor(cur[0], _unquoted(fields.get("System Name")), name, is_mac, cur[1]))

    for i, line in enumerate(text.splitlines()):
        m = _DETAIL_IFACE_RE.match(line)
        if m is not None:
            flush()
            local, cur, fields, seen_iface = m["ifname"], None, {}, True
        elif local is not None and re.match(r"^\s+Neighbor\s", line):
            flush()
            cur, fields = (local, i), {}
        elif cur is not None and (f := _DETAIL_FIELD_RE.match(line)) is not None:
            fields.setdefault(f["key"], f["value"])
    flush()
    if not seen_iface:
        raise _lldp.LldpParseError("no 'Interface … detected … LLDP neighbors:' line: not 'show lldp "
                                   "neighbors detail'", 0)
    return out


_BRIEF_HEAD_RE = re.compile(r"^Port\s+Neighbor Device ID\s+Neighbor Port ID\s+TTL\s*$")


def parse_lldp_brief_text(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors`` (text): ``Port  Neighbor Device ID  Neighbor Port ID  TTL`` rows (local ports
    abbreviated, ``Et1/1``, ``Ma1``). A row of four words is read by word; a longer one (a port ID with a
    space, ``Ethernet 1/1``) at the header's column offsets. A Device ID that is a MAC is the chassis ID of a
    neighbour without a system name. The table has no port description: a host NIC (a MAC port ID) has no
    name here (``show lldp neighbors detail`` has it). Our own parser (ntc-templates
    ``arista_eos_show_lldp_neighbors`` reads no port ID with a space).

    Raises:
        LldpParseError: no header; a row without a TTL.
    """
    lines = text.splitlines()
    head = next((i for i, t in enumerate(lines) if _BRIEF_HEAD_RE.match(t)), None)
    if head is None:
        raise _lldp.LldpParseError("no 'Port  Neighbor Device ID  Neighbor Port ID  TTL' header", 0)
    cols = [lines[head].index(c) for c in ("Neighbor Device ID", "Neighbor Port ID")]
    out = []
    for i in range(head + 1, len(lines)):
        t = lines[i].rstrip()
        if not t.strip() or set(t.strip()) <= {"-", " "}:
            continue
        words = t.split()
        if len(words) < 4 or not words[-1].isdigit():
            raise _lldp.LldpParseError(f"row {t.strip()!r} does not fit the table's columns", i)
        if len(words) == 4:
            system, pid = words[1], words[2]
        else:
            system, pid = _lldp.split_near(t.rsplit(None, 1)[0], len(words[0]), cols[1])
        name, is_mac = _lldp.remote_port_name(None, pid, None)
        out.append(_lldp.LldpNeighbor(_text_port(words[0]), None if _lldp.is_mac(system) else system, name,
                                      is_mac, i))
    return out


def _parse_lldp_brief_json(text: str, rows: list[Any]) -> list[_lldp.LldpNeighbor]:
    """The rows of ``show lldp neighbors | json``; a neighbourDevice that is a MAC is a neighbour without a
    system name (EOS shows its chassis ID)."""
    out = []
    starts = _lldp.marker_lines(text, '"port"')
    for k, r in enumerate(x for x in rows if isinstance(x, dict)):
        local, system = str(r.get("port") or ""), r.get("neighborDevice") or None
        system = None if _lldp.is_mac(system) else system
        name, is_mac = _lldp.remote_port_name(None, r.get("neighborPort"), None)
        out.append(_lldp.LldpNeighbor(_text_port(local), system, name, is_mac,
                                      starts[k] if k < len(starts) else 0))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``show lldp neighbors detail | json`` for ``ends``."""
    table = {}
    for e in ends:
        if e.remote_is_host:
            info = {"interfaceIdType": "macAddress", "interfaceId": _lldp.mac_of(e.remote_system,
                                                                                 e.remote_port),
                    "interfaceId_v2": _lldp.mac_of(e.remote_system, e.remote_port),
                    "interfaceDescription": e.remote_port}
        else:
            info = {"interfaceIdType": "interfaceName", "interfaceId": f'"{e.remote_port}"',
                    "interfaceId_v2": e.remote_port, "interfaceDescription": e.remote_port}
        table[e.local_port] = {"lldpNeighborInfo": [{
            "chassisIdType": "macAddress", "chassisId": _lldp.mac_of(e.remote_system, "chassis"),
            "systemName": e.remote_system, "ttl": 120, "neighborInterfaceInfo": info}]}
    return _json.dumps({"tablesLastChangeTime": 0, "lldpNeighbors": table}, indent=2) + "\n"


def parse_show_version(text: str) -> _lldp.DeviceFacts:
    """``show version`` through ntc-templates ``arista_eos_show_version`` (``Arista DCS-7060DX5-64S`` and
    ``DCS-7060DX5-64S-F`` -> model ``7060DX5-64S``, the catalog's; ``Software image version`` -> OS
    release); ``show version | json`` (``modelName``, ``version``) read directly.

    Raises:
        LldpParseError: no model or version in the text.
    """
    if text.lstrip().startswith("{"):
        doc = _lldp.json_block(text)
        model, ver = doc.get("modelName"), doc.get("version")
    else:
        rows = _lldp.parse_ntc("arista_eos_show_version", text)
        if not rows:
            raise _lldp.LldpParseError("ntc-templates arista_eos_show_version found no version", 0)
        model, ver = rows[0].get("model"), rows[0].get("image")
    model = model[4:] if model and model.startswith("DCS-") else model
    model = _lldp.catalog_model(model) or model  # 7060DX5-64S-F (front-to-rear airflow) is the 7060DX5-64S
    return _lldp.DeviceFacts(model=model or None, os_version=ver or None)


def render_version(device: str, model: str, os_version: str | None) -> str:
    """``show version`` (text) as EOS prints it."""
    return (f"Arista DCS-{model}\nHardware version: 11.00\nSerial number: JPE00000001\n"
            "Hardware MAC address: 0200.0000.0001\nSystem MAC address: 0200.0000.0001\n\n"
            f"Software image version: {os_version or '4.32.1F'}\nArchitecture: x86_64\n"
            "Internal build version: 4.32.1F-0000000.4321F\nInternal build ID: 0a1b2c3d\n"
            "Image format version: 3.0\nImage optimization: Default\n\nUptime: 2 weeks, 1 day, 3 hours and 4 "
            "minutes\nTotal memory: 32593580 kB\nFree memory: 27055904 kB\n")


LLDP_FORMATS = (
    _lldp.CaptureFormat("show lldp neighbors detail | json", _lldp.SHOW_LLDP_NEIGHBORS + r".*\|\s*json",
                        lambda t: '"lldpNeighbors"' in t, parse_lldp_json, "roce-tune (EOS JSON)"),
    _lldp.CaptureFormat("show lldp neighbors detail", _lldp.SHOW_LLDP_NEIGHBORS + r"(?!.*\|\s*json)",
                        lambda t: bool(re.search(_DETAIL_IFACE_RE.pattern, t, re.M)),
                        parse_lldp_detail_text, "roce-tune (EOS text)"),
    _lldp.CaptureFormat("show lldp neighbors", _lldp.SHOW_LLDP_NEIGHBORS + r"(?!.*\|\s*json)",
                        lambda t: bool(re.search(_BRIEF_HEAD_RE.pattern, t, re.M)), parse_lldp_brief_text,
                        "roce-tune (EOS text)"),
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("show version", _lldp.SHOW_VERSION,
                        lambda t: bool(re.search(r"^Arista\s+\S+", t, re.M)) or '"modelName"' in t,
                        parse_show_version, "ntc-templates arista_eos_show_version"),
)
LLDP_RENDER_COMMAND = "show lldp neighbors detail | json"
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "{device}# "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
import time as _time  # noqa: E402

from roce_tune.platforms import contract as _c  # noqa: E402
from roce_tune.platforms.contract import HierPlatformName as _HierPlatform  # noqa: E402

#: the read-back names (_c.READBACK_NAMES) of eos_readback, imported on first use
__getattr__ = _c.lazy_attributes(__name__, "roce_tune.platforms.eos_readback", _c.READBACK_NAMES)

#: diff data (docs/derivation.md#platform-syntax): roce-tune owns its ``qos profile ROCE…`` sections
DIFF = _c.DiffRules(
    kind="hier", hier_platform=_HierPlatform.ARISTA_EOS, indent=3,
    owned_sections=(r"^qos profile ROCE", ),
    idempotent=(("qos profile ", "tx-queue ", "random-detect ecn "),
                ("qos profile ", "tx-queue ", "bandwidth "),
                ("qos profile ", "priority-flow-control pause watchdog "),
                # one service-profile per port: the new one replaces it, and the dry run shows the old one go
                ("interface ", "service-profile "),
                # one global watchdog value each: a new timeout replaces the old one (dry run: - old, + new)
                ("priority-flow-control pause watchdog default timeout ",),
                ("priority-flow-control pause watchdog default recovery-time ",),
                ("priority-flow-control pause watchdog default polling-interval ",),
                ("priority-flow-control pause watchdog action ",)),
    # global maps hold one value per DSCP / CoS / TC: `qos map dscp 26 to traffic-class 3` moves DSCP 26 off
    # a running `qos map dscp 24 26 to traffic-class 1` (EOS User Manual, Quality of Service chapter, "qos map
    # dscp to traffic-class"; running-config lists the DSCPs of one traffic class on one line)
    keyed=tuple(rf"^qos map {src} (?P<keys>\d+(?:[ ,-]+\d+)*) to {dst} (?P<value>\d+)$"
                for src, dst in (("dscp", "traffic-class"), ("cos", "traffic-class"),
                                 ("traffic-class", "tx-queue"), ("traffic-class", "dscp"))),
    stale=(rf"^qos profile {_c.OWN_NAME_RE}$",),
    disruptive=((r"^\+\s*priority-flow-control (on|priority \d+ no-drop)", _c.PFC_ON),
                (r"^\+\s*service-profile ",
                 "a new QoS profile on a live port reprograms its queues and PFC")),
)


def _push(s: _c.PushSession, commands: list[str], _patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``configure session`` -> ``commit timer`` -> read back -> ``configure session X commit`` -> read back
    again: a confirm that comes after the timer ran out finds the session no longer pending and confirms
    nothing (``Driver.confirm``)."""
    if s.opts.confirm_s >= _DAY_S:  # _hms would wrap: 90000 s became `commit timer 01:00:00`
        s.fail("preflight", f"--confirm-seconds {s.opts.confirm_s} does not fit `commit timer hh:mm:ss` "
                            f"(below {_DAY_S} s); nothing was sent")
    session = s.opts.tag
    s.progress["session"] = True
    s.config_set(commands, f"configure session {session}")
    s.cmd("show session-config diffs", "diff", r"#")
    _unchanged_since_read(s)
    hms = _hms(s.opts.confirm_s)
    s.progress[_c.CHANGE_SENT] = True  # the session's lines change nothing until this commit
    s.check(s.cmd(f"commit timer {hms}", "commit", r"#"), "commit", [f"commit timer {hms}"])
    s.progress["committed"] = True
    s.cmd("end", "commit", r"#")
    s.verify(desired, ports)
    s.confirm(f"configure session {session} commit", desired, ports, r"#")


def _unchanged_since_read(s: _c.PushSession) -> None:
    """Fail (nothing committed: the session is aborted) when the running-config is no longer the one the
    change was computed from: a session is a copy of the running-config taken when it opened, and its commit
    makes the running-config that copy, so someone else's change made meanwhile would be undone silently
    (EOS User Manual, "Configuration Sessions": https://www.arista.com/en/um-eos)."""
    if not s.running:
        return
    # `| include .`: its non-blank lines (blank ones are not compared); a command of its own in the log
    now = s.cmd("show running-config | include .", "diff", r"\(config-s-[^)]*\)#")

    def lines(text: str) -> list[str]:
        return [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.startswith("show running")]
    if lines(now) != lines(s.running):
        s.fail("diff", "the running-config changed since roce-tune read it (someone else's change, made "
                       "while the configuration session was staged); committing the session would undo that "
                       "change. The session is aborted: re-run apply to diff against the new configuration")


#: one day in seconds: ``commit timer`` takes ``hh:mm:ss``, and :func:`_hms` formats below it only
_DAY_S = 86_400


def _hms(confirm_s: int) -> str:
    """The ``commit timer`` argument: ``hh:mm:ss`` (``confirm_s`` below :data:`_DAY_S`)."""
    return _time.strftime("%H:%M:%S", _time.gmtime(confirm_s))


#: ``progress["rollback_outcome"]`` after :func:`_rollback` of a timer commit (the apply report carries it)
ROLLED_BACK = "rolled back by roce-tune (`configure session {tag} abort`)"
REVERTED_BY_DEVICE = ("no rollback needed: EOS had already restored the configuration from before the "
                      "session by itself (its `commit timer` ran out before the confirm), none of the change "
                      "is active")


def _rollback(s: _c.PushSession, progress: dict[str, object]) -> None:
    """``abort`` an open session before its commit; after the timer commit, ``configure session X abort``
    (reverts it while the timer runs) only while some of the change is active: when the timer already ran
    out, EOS has restored the configuration from before the session by itself and the session is no longer
    pending. ``progress["rollback_outcome"]`` says which (:data:`ROLLED_BACK`, :data:`REVERTED_BY_DEVICE`).

    Raises:
        PushError("rollback"): the change is still active after the abort (a confirmed session: see
            :func:`_left_as_is`).
    """
    if s.conn.check_config_mode():
        if not progress.get("committed"):
            s.conn.send_command("abort", expect_string=r"#")  # discard the open session
        else:
            s.conn.exit_config_mode()
    if not progress.get("session"):
        return
    abort = f"configure session {progress.get('tag', s.opts.tag)} abort"
    if not progress.get("committed"):
        s.cmd(abort, "rollback", r"#")
        return
    s.undo_active(progress, lambda: s.check(s.cmd(abort, "rollback", r"#"), "rollback", [abort]),
                  ROLLED_BACK.format(tag=progress.get("tag", s.opts.tag)), REVERTED_BY_DEVICE)


def _expired(tag: str, confirm_s: int) -> str:
    return (f"EOS restored the configuration from before configuration session {tag} by itself when its "
            f"`commit timer {_hms(confirm_s)}` ran out, so `configure session {tag} commit` found the "
            "session no longer pending")


def _left_as_is(progress: dict[str, object], tag: str, confirm_s: int) -> str:
    if progress.get("confirmed"):
        return (f"confirmed (`configure session {tag} commit`): no timer reverts it; revert by hand in a new "
                "configuration session")
    if progress.get("confirm_sent"):
        return (f"the confirm `configure session {tag} commit` was sent but its reply never came: if `show "
                f"configuration sessions detail` still lists {tag} as pending, EOS reverts it by itself "
                f"within {confirm_s} s (now: `configure session {tag} abort`); else the change is final: "
                "revert by hand in a new configuration session")
    if progress.get("committed"):
        return (f"committed with a commit timer: EOS reverts it by itself within {confirm_s} s; "
                f"to revert now: `configure session {tag} abort`")
    return (f"running config unchanged; the uncommitted session {tag} may be left: `no configure session "
            f"{tag}`")


PUSH = _c.PushMethod(
    netmiko_device_type="arista_eos", read_running="show running-config",
    error_pattern=r"% ?(Invalid|Incomplete|Ambiguous|Error)",
    push=_push, rollback=_rollback, left_as_is=_left_as_is,
    confirm_check=("show configuration sessions detail", r"pendingCommitTimer"), expired=_expired,
    save=("write memory", r"(?m)^Copy completed successfully\.?\s*$"), save_expect=r"#",
    desired_file="{name}.cfg",
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "ecn_drop", "scheduler", "dscp_map", "headroom", "mtu"),
    watchdog_note="Arista EOS watchdog defaults not found [gap]: SONiC start_default values (EOS takes "
                  "seconds: timeout, recovery-time, polling-interval)",
    watchdog_poll_half=("; EOS polling <= half the timeout",
                        "EOS requires the polling interval at most half the timeout"),
)

# ---------------------------------------------------------------------------------------- INVENTORY
# port names that tell the platform (import) and the vendors whose hardware it runs on (lint RT125)
#: ``Et1``, ``Et49/1``, ``Eth1/1/1``, ``ethernet1/1`` (EOS prints ``Et<N>`` in ``show interfaces status`` and
#: ``show lldp neighbors``, and its CLI takes any case and prefix): the ``Ethernet`` interface
_ABBREV_RE = re.compile(r"^(?:et|eth|ethernet)(?=\d+(?:/\d+)*$)", re.IGNORECASE)


def full_port_name(name: str) -> str:
    """A front-panel port as EOS configures it: ``Et1/1`` / ``Eth1/1`` / ``eth1/1`` -> ``Ethernet1/1``;
    other names (``Management1``, ``Port-Channel10``, ``Ethernet1/1``) unchanged.

    >>> full_port_name("Et49/1"), full_port_name("eth1/1/1"), full_port_name("Ethernet3")
    ('Ethernet49/1', 'Ethernet1/1/1', 'Ethernet3')
    """
    return _ABBREV_RE.sub("Ethernet", name)


#: ``Ethernet1/1`` is NX-OS's shape too: only the three-level breakout form ``Ethernet1/1/1`` tells EOS
INVENTORY = _c.InventoryFacts(
    port_name_hint=r"^Ethernet\d+/\d+/\d+$",
    vendors=frozenset({"arista"}),
    mgmt_port=r"Management\d+(?:/\d+)*",
    full_port_name=full_port_name,
    # EthernetN (fixed), EthernetN/M (a cage or its breakout lane), EthernetS/N/M (modular: linecard/cage/
    # lane); EthernetN/M.V is a subinterface, Port-ChannelN a LAG
    physical_port=r"Ethernet\d+(?:/\d+){0,2}",
    physical_port_examples=("Ethernet1/1", "Ethernet3/1/1"),
)

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
ANSIBLE = _c.AnsibleConnection(
    group_vars={"ansible_connection": _c.NETWORK_CLI, "ansible_network_os": "arista.eos.eos",
                "ansible_become": True, "ansible_become_method": "enable"},
    source="arista.eos collection (network_cli + eos cliconf; enable mode by become)")

# ---------------------------------------------------------------------------------------- COUNTERS
# which show commands give the switch counters verify reads, and their parsers: eos_counters.py
from roce_tune.platforms.eos_counters import COUNTERS  # noqa: E402

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render, check=build_context, render_findings=render_findings,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
    counters=COUNTERS,
    ansible=ANSIBLE,
    inventory=INVENTORY,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("arista-eos",)


# ------------------------------------------------------------------------------------- audit captures
# What `roce-tune audit` recognises in a capture and runs with --live (roce_tune.platforms.captures).
from roce_tune.platforms.captures import CaptureFormat as _CaptureFormat  # noqa: E402
from roce_tune.platforms.eos_counters import (  # noqa: E402
    parse_eos_ecn_counters,
    parse_eos_pfc_counters_json,
)

#: ``show running-config`` (whole or a section): EOS's header comment, or the EOS-only QoS statements
#: (``qos map dscp … to traffic-class``, ``qos profile``, ``service-profile``, an interface's
#: ``priority-flow-control on`` / ``priority-flow-control priority N no-drop``, the global
#: ``priority-flow-control pause watchdog …`` / ``all off``, a queue's ``random-detect ecn
#: minimum-threshold``).
CAPTURE_FORMATS: tuple[_CaptureFormat, ...] = (
    _CaptureFormat(name="show running-config", kind="running_config",
                   # NX-OS says ``priority-flow-control mode on`` and ``random-detect minimum-threshold``
                   pattern=r"^! Command: show running-config|^! device: .*EOS-|^qos map dscp [\d ,-]+ to "
                           r"traffic-class|^qos profile \S+|^\s+service-profile \S+|"
                           r"^\s+priority-flow-control (?:on\s*$|priority \d+ (?:no-)?drop)|"
                           r"^priority-flow-control (?:pause watchdog|all off)|"
                           r"^\s+random-detect ecn minimum-threshold "),
    _CaptureFormat(name="show priority-flow-control counters | json", kind="pfc_counters_json",
                   pattern=r'"interfaceCounters"', command=r"priority-flow-control",
                   parse=parse_eos_pfc_counters_json),
    _CaptureFormat(name="show qos interfaces ecn counters queue", kind="ecn_counters_queue",
                   pattern=r"Tx-Queue\s+ECN Marked", parse=parse_eos_ecn_counters),
)
#: read-only commands ``audit --live`` runs (``{port}``: each lossless port of the plan)
CAPTURE_COMMANDS: tuple[str, ...] = (
    "show running-config", "show priority-flow-control counters | json",
    "show qos interfaces {port} ecn counters queue")
