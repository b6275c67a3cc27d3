"""Juniper Junos / QFX renderer: ``set`` commands per switch (``<name>.set``), loaded with ``load set``.

Model: one forwarding class per egress queue in use (``queue-num``; the lossless ones ``no-loss
pfc-priority P``), one DSCP classifier covering all 64 code points, DSCP-based PFC in a
congestion-notification profile (CNP) per cable length (its ``input cable-length`` and the code points'
``pfc mru`` are the Junos headroom knobs) that also carries the ``pfc-watchdog``; ECN as a drop profile
(``interpolate fill-level``, percent of the queue buffer) plus ``explicit-congestion-notification`` on the
lossless queue's scheduler; one scheduler map per ECN profile so ports of different speeds keep their own
thresholds. Every scheduler map also schedules Juniper's ``network-control`` class (queue 7, the
switch's own routing traffic) at Junos's default 5 %, taken from the largest lossy DWRR queue
(:func:`nc_donor`). Lossy ports get only their MTU (Junos default classification and scheduling).

Syntax checked against:

* Juniper "Configuring DSCP-based PFC for Layer 3 Untagged Traffic" and the ``pfc-priority`` /
  ``dscp (Input Congestion Notification)`` statement pages [V]: ``forwarding-classes class C queue-num Q
  no-loss pfc-priority P``, ``congestion-notification-profile N input dscp code-point BBBBBB pfc``,
  ``classifiers dscp`` with the no-loss class; one CNP per interface, DSCP- and 802.1p-PFC never in the
  same CNP, changing PFC briefly blocks the port (``congestion-notification-profile`` statement page).
* Juniper "PFC Watchdog" (cos-pfc-watchdog-configure) [V]: the watchdog only works on queues declared
  PFC queues with ``congestion-notification-profile N output ieee-802.1 code-point BBB flow-control-queue Q``
  (rendered for every lossless priority -> its queue, which also makes received PFC pause exactly the
  plan's lossless queues); ``pfc-watchdog`` under the CNP, defaults poll 100 ms, detection 2 polls,
  recovery 200 ms.
* Juniper's YANG for Junos OS Evolved 24.4R1 (``junos-conf-class-of-service``, github.com/Juniper/yang)
  [V]: ``pfc-watchdog`` is a presence container with ``poll-interval`` (uint16, ms), ``detection``
  (uint32, polls), ``recovery`` (uint16, ms) and ``watchdog-action`` (``drop`` | ``forward``), and
  ``junos:must ".. output"`` ("pfc-watchdog configurations mandate output config"). The plan action
  ``alert`` has no Junos equivalent: no action line (device default drop) and an RT241 finding.
* Juniper "PFC Watchdog" for Junos OS Evolved (AI-ML Data Center Feature Guide) [V]: supported from 23.4R2
  on QFX5230-64CD, QFX5240-64OD and QFX5240-64QD; QFX5130 and QFX5220 are not listed, so their
  ``pfc-watchdog`` is not rendered (RT241 warning, :data:`WATCHDOG_UNDOCUMENTED_MODELS`).
* Juniper 13.2 ``input (Congestion Notification)`` [V]: ``cable-length`` sits in the CNP ``input``
  stanza (metres); with DSCP input on Junos OS Evolved [U].
* Juniper ``mru (Congestion Notification Profiles)`` [V]: ``... input dscp code-point BBBBBB pfc mru N``
  (bytes); Junos sizes PFC headroom from cable length and MRU, and the MRU defaults to 2500 bytes for
  priority 3 and user-configured priorities, so every PFC code point carries the largest MTU of the CNP's
  lossless ports (the full-MTU frame the plan's headroom assumes).
* Apstra Terraform DCQCN configlet [S]: ``drop-profiles P interpolate fill-level [ a b ] drop-probability
  [ 0 p ]``, ``schedulers S drop-profile-map loss-priority any protocol any drop-profile P``, ``schedulers S
  explicit-congestion-notification``, ``transmit-rate percent``, ``priority strict-high``,
  ``scheduler-maps M forwarding-class C scheduler S``, ``interfaces <if> congestion-notification-profile``,
  ``scheduler-map``, ``unit * classifiers dscp``. QFX5100/5120 classic ETS (forwarding-class-sets +
  traffic-control-profiles) is not rendered: port scheduler maps are what QFX5130/5220+ (Evo) use.

* Decimal fill levels: Juniper's published YANG (github.com/Juniper/yang, ``junos-conf-class-of-service``,
  ``drop-profiles``, ``fill-level`` and ``interpolate fill-level``) [V] types them ``decimal64
  {fraction-digits 9; range "0 .. 100"}`` in Junos OS Evolved 24.4R1 (``24.4/24.4R1-EVO``, also the copy
  in the references folder), but ``uint32 {range "0 .. 100"}`` in Junos OS Evolved 23.4R1-EVO and
  24.2R1-EVO and in Junos OS (QFX) 18.2R3, 21.4R1 and 24.4R1 (``junos-qfx-conf-class-of-service``). Juniper's
  CLI reference pages for ``fill-level`` (QFX) say only "Range: 0 through 100" [V]. So fill levels carry
  up to 9 decimals only on a switch whose ``os_version`` is Junos OS Evolved 24.4R1 or later
  (:func:`decimal_fill_levels`: the release ends in ``-EVO`` or the model is one of the Evolved-only QFX
  models, :data:`EVOLVED_MODELS`); every other switch, and one without ``os_version``, gets whole percent
  with the RT241 warning/info below. Printed form (:func:`fill_level_text`): plain decimal, no exponent,
  no trailing zeros (whole values as integers, as Junos prints the uint32 form). How Junos itself echoes a
  decimal64 in ``show configuration`` is not documented in the sources above [U] (RFC 7950 §9.3.2's
  canonical form would be ``7.0``); the diff therefore compares fill levels by value
  (:func:`display_set_lines`), so ``7``, ``7.0`` and ``7.000000000`` are the same line.

Unit conversions (here, never in templates): ECN bytes -> percent of ``EcnProfile.queue_buffer_bytes``
(the plan must carry that denominator — without it rendering refuses): with decimal fill levels rounded
to the nearest 10^-9 %, which keeps the effective Kmin/Kmax (fill level x queue buffer / 100) within
``queue_buffer_bytes`` x 5e-12 bytes of the plan's, i.e. within one byte for any queue buffer below 200 GB;
otherwise whole percent, rounded down, Kmin at least 1 %. Watchdog detection -> polls (rounded up); cable
metres -> whole metres (rounded up); Pmax -> whole percent (``drop-probability`` is uint32 in every YANG
above).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import EcnProfile, Plan, PortPlan, SwitchPlan
from roce_tune.platforms.base import PlatformSpec, SecretPattern, secret_re
from roce_tune.platforms.templating import render_device_template

SPEC = PlatformSpec(
    name="junos",
    extension="set",
    aggregator="config.j2",
    sections=("maps", "pfc", "buffers", "ecn", "scheduler", "watchdog", "interfaces"),
    netmiko_device_type="juniper_junos",
    commit="junos-commit-confirmed",
    negate_prefix="delete ",
    comment_prefix="#",
    indent=0,
    source="Juniper DSCP-based PFC, congestion-notification-profile, PFC watchdog pages; Apstra DCQCN "
           "configlet",
    show_commands={
        "running_config": "show configuration class-of-service | display set",
        "candidate_diff": "show | compare",
        "pfc": "show class-of-service congestion-notification",
        "queues": "show interfaces queue",
        "pfc_counters": "show interfaces extensive",
        "forwarding_classes": "show class-of-service forwarding-class",
        "shared_buffer": "show class-of-service shared-buffer",
    },
)

#: Secrets in ``show configuration | display set`` that logs and restore points mask (``mask_secrets``):
#: ``encrypted-password "$6$…"``, TACACS+/RADIUS ``secret "$9$…"``, BGP/OSPF/SNMPv3 ``authentication-key``,
#: OSPF ``authentication md5 N key "$9$…"``,
#: ``privacy-key``, NTP ``authentication-key N type md5 value "$9$…"``, ``snmp community NAME``,
#: ``community-name``, ``pre-shared-key ascii-text``, ``simple-password``. Source: Junos OS CLI
#: reference (https://www.juniper.net/documentation/us/en/software/junos/cli-reference/).
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    secret_re(r"\b(?:encrypted-password|secret|privacy-key|community-name|simple-password|plain-text-password-value"
              r"|pre-shared-key\s+(?:ascii-text|hexadecimal))\s+(?P<secret>{value})"),
    secret_re(r"\bauthentication-key\s+(?!\d+\s+type\b)(?P<secret>{value})"),
    secret_re(r"\bauthentication-key\s+\d+\s+type\s+\S+\s+value\s+(?P<secret>{value})"),
    secret_re(r"^\s*(?:set\s+)?snmp\s+community\s+(?P<secret>{value})"),
    secret_re(r"\bauthentication\s+md5\s+\d+\s+key\s+(?P<secret>{value})"),
)

#: Names roce-tune owns on the device.
FC_NAME = "RT_Q{q}"
CLASSIFIER = "RT_DSCP"
CNP_NAME = "RT_PFC_{m}M"
DROP_PROFILE = "RT_ECN_{e}"
SCHEDULER = "RT_S_Q{q}"
ECN_SCHEDULER = "RT_S_Q{q}_{e}"
SCHEDULER_MAP = "RT_SM_{e}"
#: Juniper's default forwarding class for the switch's own routing-protocol traffic and its queue (QFX:
#: "traffic generated by the host is sent to the best effort queue (queue 0) or to the network control
#: queue (queue 7)", "Understanding Host Routing Engine Outbound Traffic Queues and Defaults").
NC_FC, NC_QUEUE = "network-control", 7
#: Scheduler roce-tune gives network-control in every scheduler map, and its guaranteed share: Junos's own
#: default network-control scheduler (``transmit-rate percent 5``, "Default Schedulers Overview").
NC_SCHEDULER, NC_TRANSMIT_PERCENT = "RT_S_NC", 5
#: Classifier loss priority for every code point (PFC/ECN do not use loss priority here) [S].
LOSS_PRIORITY = "low"
#: Strict scheduler priority keyword [S].
STRICT_PRIORITY = "strict-high"
#: Relative change of Kmin/Kmax by whole-percent rounding above which the output carries a WARNING.
FILL_LEVEL_WARN_FRACTION = 0.25
#: ``fraction-digits`` of the decimal64 ``fill-level`` in Juniper's YANG for Junos OS Evolved 24.4R1 [V].
FILL_LEVEL_FRACTION_DIGITS = 9
#: First release (major, minor, R) whose YANG types fill levels decimal64: Junos OS Evolved 24.4R1 [V]
#: (23.4R1-EVO and 24.2R1-EVO: uint32).
DECIMAL_FILL_LEVEL_RELEASE = (24, 4, 1)
#: QFX models that run only Junos OS Evolved (the junos-yang references README: "the release that
#: QFX5130/5220/5230/5240 run"; Juniper's AI-ML Data Center Feature Guide lists QFX5230/5240 on Evolved)
#: [S]; their ``os_version`` need not carry the ``-EVO`` suffix to count as Evolved.
EVOLVED_MODELS = re.compile(r"^QFX-?(?:5130|5220|5230|5240)(?:\b|-)", re.IGNORECASE)
_RELEASE_RE = re.compile(r"^(\d+)\.(\d+)R(\d+)", re.IGNORECASE)
#: Junos OS Evolved QFX models Juniper's PFC watchdog page does not list (it names QFX5230-64CD,
#: QFX5240-64OD and QFX5240-64QD, from Junos OS Evolved 23.4R2: "PFC Watchdog", AI-ML Data Center Feature
#: Guide, https://www.juniper.net/documentation/us/en/software/junos/ai-ml-evo/topics/topic-map/pfc-watchdog.html);
#: QFX5130 and QFX5220 run the same Junos OS Evolved CoS schema (github.com/Juniper/yang 24.4R1-EVO), so the
#: statements parse, but nothing documents a watchdog behind them. Their ``pfc-watchdog`` is not rendered
#: (RT241 warning) instead of a watchdog that monitors nothing. Other models (Junos OS QFX, unknown) keep it.
WATCHDOG_UNDOCUMENTED_MODELS = re.compile(r"^QFX-?(?:5130|5220)(?:\b|-)", re.IGNORECASE)
#: plan watchdog action -> ``pfc-watchdog watchdog-action`` enum of Juniper's YANG [V]; None = no equivalent.
WATCHDOG_ACTION: dict[str, str | None] = {"drop": "drop", "forward": "forward", "alert": None}
_TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,79}$")


def _token(value: str, what: str) -> str:
    """Return ``value`` if it is safe as one CLI word. Raises ValueError otherwise."""
    if not _TOKEN_RE.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a safe CLI word for Junos")
    return value


def code_point(dscp: int) -> str:
    """DSCP -> the 6-bit code point Junos writes. ``code_point(26) == "011010"``."""
    return format(dscp, "06b")


def watchdog_documented(model: str) -> bool:
    """False for a switch model whose Junos OS Evolved release has no documented PFC watchdog
    (:data:`WATCHDOG_UNDOCUMENTED_MODELS`: QFX5130, QFX5220); True for every other model."""
    return not WATCHDOG_UNDOCUMENTED_MODELS.match(model.strip())


def watchdog_rendered(switch: SwitchPlan) -> bool:
    """Whether ``switch``'s ``.set`` file carries ``pfc-watchdog``: the plan enables it and the model has
    it (:func:`watchdog_documented`)."""
    return switch.watchdog.enabled and watchdog_documented(switch.model)


def decimal_fill_levels(switch: SwitchPlan) -> bool:
    """Whether ``switch`` takes decimal ``fill-level`` values: its ``os_version`` is Junos OS Evolved
    (``…-EVO``, or any release on an :data:`EVOLVED_MODELS` model) at :data:`DECIMAL_FILL_LEVEL_RELEASE` or
    later. False without ``os_version`` or with a release that does not parse as ``<major>.<minor>R<n>``."""
    version = (switch.os_version or "").strip()
    m = _RELEASE_RE.match(version)
    if m is None:
        return False
    evolved = version.upper().endswith("-EVO") or EVOLVED_MODELS.match(switch.model.strip()) is not None
    return evolved and tuple(int(g) for g in m.groups()) >= DECIMAL_FILL_LEVEL_RELEASE


def _percent_to_digits(value_bytes: int, buf_bytes: int) -> Decimal:
    """``value_bytes`` x 100 / ``buf_bytes`` rounded half-up to :data:`FILL_LEVEL_FRACTION_DIGITS` decimals
    (integer arithmetic, so no float or decimal-context rounding on the way)."""
    scale = 10 ** FILL_LEVEL_FRACTION_DIGITS
    units, rest = divmod(value_bytes * 100 * scale, buf_bytes)
    units += 2 * rest >= buf_bytes
    return Decimal(units).scaleb(-FILL_LEVEL_FRACTION_DIGITS).normalize()


def fill_levels(ecn: EcnProfile, exact: bool = False) -> tuple[Decimal, Decimal]:
    """Kmin/Kmax as percent of the queue buffer: with ``exact`` (a switch where
    :func:`decimal_fill_levels`) to the nearest 10^-9 % (effective bytes within one byte of the plan's for
    a queue buffer below 200 GB); otherwise whole percent, rounded down, Kmin >= 1.

    Raises:
        ValueError: the plan lacks ``queue_buffer_bytes``, or the levels cannot keep 0 < Kmin < Kmax <= 100.
    """
    buf = ecn.queue_buffer_bytes
    if buf is None or buf <= 0:
        raise ValueError(f"ECN profile {ecn.name}: Junos takes ECN thresholds as percent of the queue "
                         "buffer; the plan does not carry EcnProfile.queue_buffer_bytes to convert against")
    if exact:
        lo, hi = _percent_to_digits(ecn.kmin_bytes, buf), _percent_to_digits(ecn.kmax_bytes, buf)
    else:
        lo, hi = Decimal(max(1, ecn.kmin_bytes * 100 // buf)), Decimal(ecn.kmax_bytes * 100 // buf)
    if not 0 < lo < hi <= 100:
        kind = "decimal fill levels" if exact else "whole percent"
        raise ValueError(f"ECN profile {ecn.name}: Kmin {ecn.kmin_bytes} B / Kmax {ecn.kmax_bytes} B of a "
                         f"{buf} B queue buffer become {fill_level_text(lo)}% / {fill_level_text(hi)}%: "
                         f"{kind} cannot express this ramp")
    return lo, hi


def fill_level_text(value: Decimal) -> str:
    """A fill level as the ``set`` line writes it: plain decimal, no exponent, no trailing zeros, a whole
    value without a decimal point (``Decimal("7.500") -> "7.5"``, ``Decimal("7E+1") -> "70"``)."""
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def fill_level_bytes(percent: Decimal, buf_bytes: int) -> Decimal:
    """The queue occupancy (bytes, unrounded) a fill level of ``percent`` % of ``buf_bytes`` stands for."""
    return percent * buf_bytes / 100


def _shown_bytes(percent: Decimal, buf_bytes: int, exact: bool) -> int:
    """Effective bytes for notes and messages: nearest byte for decimal fill levels, rounded down (the
    whole-percent convention) otherwise."""
    eff = fill_level_bytes(percent, buf_bytes)
    return int(eff.to_integral_value(rounding=ROUND_HALF_UP if exact else ROUND_FLOOR))


def fill_level_warnings(ecn: EcnProfile, exact: bool = False) -> list[str]:
    """Kmin/Kmax that the fill levels (:func:`fill_levels` with ``exact``) move by more than
    :data:`FILL_LEVEL_WARN_FRACTION`; never any with ``exact`` within its one-byte bound.

    Raises:
        ValueError: as :func:`fill_levels`.
    """
    lo, hi = fill_levels(ecn, exact)
    buf = ecn.queue_buffer_bytes or 0
    out = []
    for what, plan_b, pct in (("Kmin", ecn.kmin_bytes, lo), ("Kmax", ecn.kmax_bytes, hi)):
        eff = _shown_bytes(pct, buf, exact)
        if abs(eff - plan_b) > FILL_LEVEL_WARN_FRACTION * plan_b:
            out.append(f"{'decimal' if exact else 'whole-percent'} fill levels move {what} from {plan_b} B "
                       f"to {eff} B (1 % of this queue buffer is {buf // 100} B)")
    return out


def _nc_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 (info): the network-control scheduler and the guaranteed share it takes (:func:`nc_donor`)."""
    if not any(p.lossless for p in switch.ports):
        return []
    donor = nc_donor(plan)
    if donor is None:
        return []
    return [Finding(
        rule="RT241", severity=Severity.info, location=Location(device=switch.name),
        message=f"Junos network-control (queue {NC_QUEUE}, the switch's own BGP/LACP/LLDP) gets scheduler "
                f"{NC_SCHEDULER} at transmit-rate {NC_TRANSMIT_PERCENT} % in every scheduler map; {donor[0]} "
                f"guarantees {donor[1] - NC_TRANSMIT_PERCENT} % instead of the plan's {donor[1]} % (excess "
                "bandwidth is still shared)",
        fix="none needed; without it routing traffic has no scheduler on lossless ports")]


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 warnings for what this platform's syntax changes in the plan: one per ECN profile in use
    whose Kmin/Kmax whole-percent fill levels move by more than :data:`FILL_LEVEL_WARN_FRACTION`, and
    one when the plan's watchdog action has no Junos equivalent.

    Raises:
        ValueError: as :func:`fill_levels` (render raises the same, as RT240).
    """
    by_name = {e.name: e for e in switch.ecn_profiles}
    used = sorted({p.ecn_profile for p in switch.ports if p.lossless and p.ecn_profile in by_name}, key=str)
    out = _nc_findings(plan, switch)
    wd = switch.watchdog
    if wd.enabled and not watchdog_rendered(switch):
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=Location(device=switch.name),
            message=f"Junos PFC watchdog not rendered for {switch.model}: Juniper documents pfc-watchdog on "
                    "Junos OS Evolved only for QFX5230-64CD, QFX5240-64OD and QFX5240-64QD (PFC Watchdog, "
                    "AI-ML Data Center Feature Guide); a pause storm on this switch is not detected by it",
            fix="watch PFC pause counters with `roce-tune verify`; confirm watchdog support for this model "
                "and release in Juniper's Feature Explorer before adding it by hand"))
    elif wd.enabled and WATCHDOG_ACTION.get(wd.action) is None:
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=Location(device=switch.name),
            message=f"Junos PFC watchdog has no action {wd.action!r} (watchdog-action is drop or forward): "
                    "no action is rendered, so the device default (drop: flush the stalled queue) applies",
            fix="set policy.watchdog_action to drop or forward for Junos switches, or accept the drop "
                "default"))
    exact = decimal_fill_levels(switch)
    for name in used:
        moved = fill_level_warnings(by_name[name], exact)
        if moved:
            out.append(Finding(
                rule="RT241", severity=Severity.warning, location=Location(device=switch.name),
                message=f"Junos ECN profile {name}: {'; '.join(moved)}",
                fix="the ramp stays below the PFC trigger, but marking starts later than derived: confirm "
                    "with verify (ECN marks vs PFC pauses), or pin kmin/kmax to whole percents of the queue "
                    f"buffer{_DECIMAL_HINT}"))
        else:
            out += _fill_level_info(switch.name, by_name[name], exact)
    return out + _syntax_info(switch)


#: what a whole-percent fill-level finding adds to its fix: the release that takes the plan's bytes exactly
_DECIMAL_HINT = ("; Junos OS Evolved 24.4R1 and later take decimal fill levels: give the switch's os_version "
                 "in the inventory to render the plan's bytes exactly")


def _fill_level_info(device: str, ecn: EcnProfile, exact: bool = False) -> list[Finding]:
    """RT241 (info) when the fill levels / Pmax change the plan's ECN ramp by less than the warning
    threshold: the change is small but the file does not say the plan's bytes. Decimal fill levels
    (``exact``) within one byte of the plan's Kmin/Kmax, with a whole Pmax, give none."""
    lo, hi = fill_levels(ecn, exact)
    buf = ecn.queue_buffer_bytes or 0
    pmax = max(1, min(100, round(ecn.pmax_percent)))
    if exact:
        same = all(abs(fill_level_bytes(pct, buf) - b) < 1 for pct, b in ((lo, ecn.kmin_bytes),
                                                                          (hi, ecn.kmax_bytes)))
    else:
        same = lo * buf == ecn.kmin_bytes * 100 and hi * buf == ecn.kmax_bytes * 100
    if same and pmax == ecn.pmax_percent:
        return []
    kind = "decimal" if exact else "whole-percent"
    return [Finding(
        rule="RT241", severity=Severity.info, location=Location(device=device),
        message=f"Junos ECN profile {ecn.name}: Kmin/Kmax {ecn.kmin_bytes}/{ecn.kmax_bytes} B become "
                f"{kind} fill levels {fill_level_text(lo)}..{fill_level_text(hi)}% of the {buf} B queue "
                f"buffer (= {_shown_bytes(lo, buf, exact)}..{_shown_bytes(hi, buf, exact)} B), Pmax "
                f"{ecn.pmax_percent}% -> {pmax}%",
        fix="none needed; " + ("Junos drop-probability is whole percent" if exact else
                               "pin kmin/kmax to whole percents of the queue buffer to render them exactly"
                               + _DECIMAL_HINT))]


def _syntax_info(switch: SwitchPlan) -> list[Finding]:
    """RT241 (info) for plan values Junos syntax carries differently: headroom (sized by Junos from the CNP
    cable length), cable lengths rounded up to whole metres, watchdog detection rounded up to whole polls."""
    where = Location(device=switch.name)
    out = []
    lossless = [p for p in switch.ports if p.lossless]
    if any(p.headroom is not None for p in lossless):
        out.append(Finding(
            rule="RT241", severity=Severity.info, location=where,
            message="Junos sizes PFC headroom itself from each congestion-notification profile's "
                    "cable-length: the plan's per-port headroom (xon/xoff/size) is not configured",
            fix="compare with 'show class-of-service shared-buffer' after apply"))
    odd = sorted({p.cable_m for p in lossless if p.cable_m != _cable_whole_m(p)})
    if odd:
        out.append(Finding(
            rule="RT241", severity=Severity.info, location=where,
            message=f"Junos cable-length is whole metres: plan cable lengths {odd} m rounded up",
            fix="none needed (a longer cable only adds headroom)"))
    wd = switch.watchdog
    if watchdog_rendered(switch) and wd.detection_ms % wd.poll_ms:
        polls = math.ceil(wd.detection_ms / wd.poll_ms)
        out.append(Finding(
            rule="RT241", severity=Severity.info, location=where,
            message=f"Junos pfc-watchdog detection is whole polls: plan detection {wd.detection_ms} ms "
                    f"rendered as {polls} x {wd.poll_ms} ms = {polls * wd.poll_ms} ms",
            fix="pin detection_ms to a multiple of poll_ms"))
    return out


def _fcs(plan: Plan) -> list[dict[str, object]]:
    cls = plan.classification
    queues = sorted({cls.tc_to_queue[cls.dscp_to_tc[d]] for d in cls.dscp_to_tc}
                    | {s.queue for s in cls.schedulers})
    by_queue: dict[int, list[int]] = {}
    for p in cls.lossless_priorities:
        by_queue.setdefault(cls.pfc_priority_to_queue[p], []).append(p)
    out = []
    for q in queues:
        prios = by_queue.get(q, [])
        if len(prios) > 1:
            raise ValueError(f"queue {q} carries lossless priorities {prios}; a Junos class has one "
                             "pfc-priority")
        dscps = sorted(d for d in cls.dscp_to_tc if cls.tc_to_queue[cls.dscp_to_tc[d]] == q)
        out.append({"name": FC_NAME.format(q=q), "queue": q, "pfc_priority": prios[0] if prios else None,
                    "code_points": " ".join(code_point(d) for d in dscps)})
    return out


def _cable_whole_m(p: PortPlan) -> int:
    """The port's cable length as a congestion-notification profile's ``cable-length`` (whole metres, at
    least 1: rounded up, so the device sizes at least the plan's headroom)."""
    return max(1, math.ceil(p.cable_m))


def _cnp_name(p: PortPlan) -> str:
    return CNP_NAME.format(m=_cable_whole_m(p))


def _cnps(lossless_ports: list[PortPlan]) -> list[dict[str, object]]:
    """One congestion-notification profile per whole-metre cable length, shortest first: its name, its
    ``cable-length`` and the ``mru`` of its PFC code points (the largest MTU of its ports: Junos sizes
    headroom from both, the MRU defaulting to 2500 bytes)."""
    cables = sorted({_cnp_name(p): _cable_whole_m(p) for p in lossless_ports}.items(), key=lambda kv: kv[1])
    return [{"name": name, "cable_m": metres,
             "mru": max(p.mtu for p in lossless_ports if _cnp_name(p) == name)} for name, metres in cables]


def _ecn_profiles(switch: SwitchPlan) -> list[dict[str, object]]:
    by_name = {e.name: e for e in switch.ecn_profiles}
    used = sorted({p.ecn_profile for p in switch.ports if p.lossless}, key=str)
    exact = decimal_fill_levels(switch)
    out: list[dict[str, object]] = []
    for name in used:
        if name not in by_name:
            raise ValueError(f"{switch.name}: a lossless port names ECN profile {name!r}, not one of "
                             f"{sorted(by_name)}")
        ecn = by_name[name]
        lo, hi = fill_levels(ecn, exact)
        pmax = max(1, min(100, round(ecn.pmax_percent)))
        buf = ecn.queue_buffer_bytes or 0
        notes = [(f"{ecn.name} ({ecn.speed_gbps}G): plan Kmin {ecn.kmin_bytes} B, Kmax {ecn.kmax_bytes} B, "
                  f"Pmax {ecn.pmax_percent}% of a {buf} B queue buffer -> fill-level "
                  f"{fill_level_text(lo)}..{fill_level_text(hi)}% "
                  f"(= {_shown_bytes(lo, buf, exact)}..{_shown_bytes(hi, buf, exact)} B)")]
        notes += [f"WARNING: {w}" for w in fill_level_warnings(ecn, exact)]
        if ecn.drop_min_bytes is not None:
            notes.append("plan drop thresholds not rendered: non-ECT traffic is dropped on the same profile")
        out.append({"ecn": _token(ecn.name, "ECN profile name"),
                    "drop_profile": DROP_PROFILE.format(e=ecn.name),
                    "map": SCHEDULER_MAP.format(e=ecn.name),
                    "fill": f"{fill_level_text(lo)} {fill_level_text(hi)}", "prob": f"0 {pmax}",
                    "notes": notes})
    return out


def _schedulers(plan: Plan, ecn_profiles: list[dict[str, object]]) -> tuple[list[dict[str, object]],
                                                                            list[dict[str, object]]]:
    """Scheduler definitions and scheduler-map entries (lossless queues get one scheduler per ECN profile)."""
    cls = plan.classification
    lossless = set(cls.lossless_queues)
    defs: list[dict[str, object]] = []
    entries: list[dict[str, object]] = []
    for s in sorted(cls.schedulers, key=lambda s: s.queue):
        if s.mode == "dwrr" and s.weight_percent is None:
            raise ValueError(f"scheduler {s.name} (queue {s.queue}) is dwrr without a weight")
        names = ([(e["map"], ECN_SCHEDULER.format(q=s.queue, e=e["ecn"]),
                   e["drop_profile"]) for e in ecn_profiles]
                 if s.queue in lossless else [(e["map"], SCHEDULER.format(q=s.queue),
                                               None) for e in ecn_profiles])
        for sm, sched, drop in names:
            if not any(d["name"] == sched for d in defs):
                defs.append({"name": sched, "strict": s.mode == "strict", "weight": s.weight_percent,
                             "drop_profile": drop})
            entries.append({"map": sm, "fc": FC_NAME.format(q=s.queue), "scheduler": sched})
    _network_control(plan, defs, entries, [str(e["map"]) for e in ecn_profiles])
    entries.sort(key=lambda e: (str(e["map"]), str(e["fc"])))
    return defs, entries


def nc_donor(plan: Plan) -> tuple[str, int, int] | None:
    """The lossy DWRR queue whose guaranteed rate gives :data:`NC_TRANSMIT_PERCENT` to network-control:
    ``(scheduler name, plan weight, queue)`` of the largest-weight non-lossless DWRR queue (lowest queue on
    a tie), or None when the plan schedules queue :data:`NC_QUEUE` itself (network-control shares its
    scheduler).

    Raises:
        ValueError: no lossy DWRR queue has more than :data:`NC_TRANSMIT_PERCENT` to give.
    """
    cls = plan.classification
    if any(s.queue == NC_QUEUE for s in cls.schedulers):
        return None
    lossy = sorted(((s.weight_percent, -s.queue, s.queue) for s in cls.schedulers if s.mode == "dwrr"
                    and s.queue not in cls.lossless_queues and s.weight_percent is not None), reverse=True)
    if not lossy or lossy[0][0] <= NC_TRANSMIT_PERCENT:
        raise ValueError(f"no lossy DWRR queue with more than {NC_TRANSMIT_PERCENT} % to share with Junos "
                         f"network-control (queue {NC_QUEUE}, the switch's own routing traffic)")
    weight, _, queue = lossy[0]
    return SCHEDULER.format(q=queue), int(weight), queue


def _network_control(plan: Plan, defs: list[dict[str, object]], entries: list[dict[str, object]],
                     maps: list[str]) -> None:
    """Give Junos's network-control class (queue 7: BGP, LACP, LLDP the switch sends) a scheduler in every
    map: Juniper warns that a class without one in the interface's scheduler map "might lack adequate buffer
    space" (CoS guide, custom forwarding classes) and that the host-outbound queue "must be properly
    configured on all interfaces". The :data:`NC_TRANSMIT_PERCENT` share comes out of :func:`nc_donor`'s
    queue, so guaranteed rates still add up to the plan's total; a plan that schedules queue 7 itself lends
    network-control that queue's scheduler."""
    donor = nc_donor(plan)
    if donor is None:
        own = {str(e["map"]): str(e["scheduler"]) for e in entries if e["fc"] == FC_NAME.format(q=NC_QUEUE)}
        entries.extend({"map": sm, "fc": NC_FC, "scheduler": own[sm]} for sm in maps)
        return
    for d in defs:
        if d["name"] == donor[0]:
            d["weight"] = donor[1] - NC_TRANSMIT_PERCENT
    defs.append({"name": NC_SCHEDULER, "strict": False, "weight": NC_TRANSMIT_PERCENT, "drop_profile": None})
    entries.extend({"map": sm, "fc": NC_FC, "scheduler": NC_SCHEDULER} for sm in maps)


def _watchdog(switch: SwitchPlan) -> dict[str, object]:
    wd = switch.watchdog
    notes = [f"plan detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms, poll {wd.poll_ms} ms"]
    action = WATCHDOG_ACTION.get(wd.action)
    if wd.enabled and not watchdog_rendered(switch):
        notes.append(f"not rendered: Juniper documents no PFC watchdog for {switch.model} (RT241)")
    elif action is None:
        notes.append(f"plan action {wd.action!r} has no Junos watchdog-action (drop | forward): the device "
                     "default (drop) applies (RT241)")
    return {"enabled": watchdog_rendered(switch), "planned": wd.enabled, "poll": wd.poll_ms,
            "detection": math.ceil(wd.detection_ms / wd.poll_ms), "recovery": wd.restoration_ms,
            "action": action, "notes": notes}


def _flow_control(plan: Plan) -> list[dict[str, object]]:
    """``output ieee-802.1 code-point BBB flow-control-queue Q`` for every lossless priority (PFC queues)."""
    cls = plan.classification
    return [{"code_point": format(p, "03b"), "queue": cls.pfc_priority_to_queue[p]}
            for p in sorted(cls.lossless_priorities)]


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, object]:
    """Everything the Junos templates print, already in Junos syntax/units.

    Raises:
        ValueError: the plan cannot be expressed on Junos (no queue buffer for ECN percentages,
            several lossless priorities on one queue, unsafe names).
    """
    cls = plan.classification
    ecn_profiles = _ecn_profiles(switch)
    sched_defs, sm_entries = _schedulers(plan, ecn_profiles)
    lossless_ports = [p for p in switch.ports if p.lossless]
    ecn_map = {e["ecn"]: e["map"] for e in ecn_profiles}
    interfaces = []
    for p in switch.ports:
        notes = [] if p.admin_up else ["admin down in the inventory; roce-tune does not change admin state"]
        if not p.lossless:
            notes.append(f"lossy ({p.peer_kind}/{p.direction}): MTU only, Junos default classification and "
                         "scheduling")
        interfaces.append({"name": _token(p.name, "interface name"), "mtu": p.mtu, "peer": p.peer,
                           "notes": notes,
                           "cnp": _cnp_name(p) if p.lossless else None,
                           "scheduler_map": ecn_map[p.ecn_profile] if p.lossless and p.ecn_profile else None})
    return {
        "c": SPEC.comment_prefix,
        "sections": SPEC.sections,
        "switch": {"name": switch.name, "model": switch.model, "asic": switch.asic, "role": switch.role},
        "plan": {"site": plan.site, "generator": plan.generator, "schema": plan.schema_version},
        "classifier": CLASSIFIER,
        "loss_priority": LOSS_PRIORITY,
        "fcs": _fcs(plan),
        "roce_code_points": [code_point(d) for d in sorted(cls.roce_dscp)],
        "cnps": _cnps(lossless_ports),
        "flow_control": _flow_control(plan),
        "headroom_total": switch.buffers.headroom_total_bytes,
        "ecn_profiles": ecn_profiles,
        "scheduler_defs": sched_defs,
        "scheduler_map_entries": sm_entries,
        "scheduler_notes": [f.message for f in _nc_findings(plan, switch)],
        "strict_priority": STRICT_PRIORITY,
        "watchdog": _watchdog(switch),
        "interfaces": interfaces,
    }


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as Junos ``set`` commands: ``{"<name>.set": text}``.

    Raises:
        ValueError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    text = render_device_template(SPEC.name, SPEC.aggregator, switch.name, build_context(plan, switch),
                                  ("switch", "name"))
    return {f"{switch.name}.{SPEC.extension}": text}


# --- LLDP and show version (roce-tune import lldp / lint --lldp) -----------------------------------
import json as _json  # noqa: E402

from roce_tune.platforms import lldp as _lldp  # noqa: E402


def _data(entry: dict[str, object], key: str) -> str | None:
    v = entry.get(key)
    if isinstance(v, list) and v and isinstance(v[0], dict):
        d = v[0].get("data")
        return None if d is None else str(d)
    return None


def parse_lldp_json(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors | display json``: ``lldp-neighbors-information[0].lldp-neighbor-information[]``
    with Junos's ``[{"data": …}]`` leaves: ``lldp-local-port-id`` (``lldp-local-interface`` on older
    releases), ``lldp-remote-system-name``, ``lldp-remote-port-id`` + ``-subtype`` or
    ``lldp-remote-port-description``. Our own parser (JSON; ntc-templates
    ``juniper_junos_show_lldp_neighbors`` reads the text form).

    Raises:
        LldpParseError: not JSON, or no ``lldp-neighbors-information``.
    """
    doc = _lldp.json_block(text)
    info = doc.get("lldp-neighbors-information") if isinstance(doc, dict) else None
    if not isinstance(info, list):
        raise _lldp.LldpParseError("no 'lldp-neighbors-information': not 'show lldp neighbors | display "
                                   "json'", 0)
    out: list[_lldp.LldpNeighbor] = []
    starts = _lldp.marker_lines(text, '"lldp-local-port-id"', '"lldp-local-interface"')
    for block in info:
        for n in block.get("lldp-neighbor-information") or []:
            start = starts[len(out)] if len(out) < len(starts) else 0
            local = _data(n, "lldp-local-port-id") or _data(n, "lldp-local-interface") or ""
            name, is_mac = _lldp.remote_port_name(_data(n, "lldp-remote-port-id-subtype"),
                                                  _data(n, "lldp-remote-port-id"),
                                                  _data(n, "lldp-remote-port-description"))
            out.append(_lldp.LldpNeighbor(_physical(local), _data(n, "lldp-remote-system-name"), name, is_mac,
                                          _lldp.line_of(text, f'"{local}"', start)))
    return out


_BRIEF_HEAD_RE = re.compile(r"^Local Interface\s+(?:Parent Interface\s+)?Chassis Id\s+Port info\s+"
                            r"System Name\s*$")


def _physical(port: str) -> str:
    """A local port without its logical unit (``xe-0/0/1.0`` on older EX releases -> ``xe-0/0/1``)."""
    return re.sub(r"^((?:[a-z]{2,3}|et)-\d+/\d+/\d+(?::\d+)?)\.\d+$", r"\1", port)


def parse_lldp_brief_text(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors`` (text): ``Local Interface  [Parent Interface]  Chassis Id  Port info  System
    Name`` rows (the Parent Interface column, ``ae0`` or ``-``, is absent on some releases). Port info is the
    neighbour's port description when it sends one, else its port ID: a host's netdev (lldpd), a switch's
    port name. Words are read by position; a Port info or System Name with spaces is cut at the
    System Name column. Our own parser (ntc-templates ``juniper_junos_show_lldp_neighbors`` needs the
    Parent Interface column).

    Raises:
        LldpParseError: no header; a row with fewer columns than the header.
    """
    lines = text.splitlines()
    head = next((i for i, t in enumerate(lines) if _BRIEF_HEAD_RE.match(t)), None)
    if head is None:
        raise _lldp.LldpParseError("no 'Local Interface … Chassis Id  Port info  System Name' header", 0)
    hdr = lines[head]
    fixed = 3 if "Parent Interface" in hdr else 2  # local, [parent,] chassis id
    name_at = hdr.index("System Name")
    out = []
    for i in range(head + 1, len(lines)):
        t = lines[i].rstrip()
        if not t.strip():
            continue
        words = t.split()
        if len(words) < fixed + 1:
            raise _lldp.LldpParseError(f"row {t.strip()!r} does not fit the table's columns", i)
        if len(words) <= fixed + 2:
            port, system = words[fixed], (words[fixed + 1] if len(words) > fixed + 1 else None)
        else:
            after = t.index(words[fixed - 1]) + len(words[fixed - 1])  # the end of the Chassis Id cell
            port, system = _lldp.split_near(t, after, name_at)
        name, is_mac = _lldp.remote_port_name(None, port, None)
        out.append(_lldp.LldpNeighbor(_physical(words[0]), system, name, is_mac, i))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``show lldp neighbors | display json`` for ``ends``."""
    def d(v: str) -> list[dict[str, str]]:
        return [{"data": v}]

    rows = []
    for e in ends:
        pid = _lldp.mac_of(e.remote_system, e.remote_port) if e.remote_is_host else e.remote_port
        rows.append({"lldp-local-port-id": d(e.local_port), "lldp-local-parent-interface-name": d("-"),
                     "lldp-remote-chassis-id-subtype": d("Mac address"),
                     "lldp-remote-chassis-id": d(_lldp.mac_of(e.remote_system, "chassis")),
                     "lldp-remote-port-id-subtype": d("Mac address" if e.remote_is_host
                                                      else "Interface name"),
                     "lldp-remote-port-id": d(pid), "lldp-remote-port-description": d(e.remote_port),
                     "lldp-remote-system-name": d(e.remote_system)})
    return _json.dumps({"lldp-neighbors-information": [{"attributes": {"junos:style": "brief"},
                                                         "lldp-neighbor-information": rows}]},
                       indent=4) + "\n"


def parse_show_version(text: str) -> _lldp.DeviceFacts:
    """``show version`` through ntc-templates ``juniper_junos_show_version`` (``Model: qfx5130-32cd`` ->
    ``QFX5130-32CD``, ``Junos: 23.4R2-S2.1``).

    Junos OS Evolved's output (``Yocto:``, ``Linux Kernel:`` lines, which the template refuses) and releases
    without a ``Junos:`` line (``JUNOS Base OS boot [14.1X53-D46.7]``) are read from their ``Hostname:``,
    ``Model:`` and release lines directly; ``show version | display json`` (``software-information``) too.

    Raises:
        LldpParseError: no ``Hostname:`` / ``host-name`` in the text.
    """
    if re.search(r"^\s*\{", text, re.M):
        return _parse_version_json(text)
    try:
        rows = _lldp.parse_ntc("juniper_junos_show_version", text)
    except _lldp.LldpParseError:
        rows = []
    row = rows[0] if rows else _version_lines(text)
    model = row.get("model") or ""
    release = (row.get("junos_version") or "").strip() or _base_release(text)
    return _lldp.DeviceFacts(model=model.upper() or None, os_version=release,
                             hostname=row.get("hostname") or None)


def _version_lines(text: str) -> dict[str, str]:
    """``Hostname:``, ``Model:``, ``Junos:`` of a ``show version`` (first of each: a virtual chassis lists
    its members).

    Raises:
        LldpParseError: no ``Hostname:`` line.
    """
    out: dict[str, str] = {}
    for key, name in (("Hostname", "hostname"), ("Model", "model"), ("Junos", "junos_version")):
        m = re.search(rf"^{key}:\s*(\S+)", text, re.M)
        if m is not None:
            out[name] = m.group(1)
    if "hostname" not in out:
        raise _lldp.LldpParseError("no 'Hostname:' line: not Junos 'show version'", 0)
    return out


def _base_release(text: str) -> str | None:
    """The release of an output without a ``Junos:`` line: ``JUNOS Base OS boot [14.1X53-D46.7]``."""
    m = re.search(r"^JUNOS (?:Base OS boot|Software Release) \[([^\]]+)\]", text, re.M)
    return m.group(1) if m else None


def _parse_version_json(text: str) -> _lldp.DeviceFacts:
    """``show version | display json``: ``software-information[0]`` with ``host-name``, ``product-model``,
    ``junos-version`` (Junos's ``[{"data": …}]`` leaves).

    Raises:
        LldpParseError: not JSON, or no ``software-information``.
    """
    doc = _lldp.json_block(text)
    info = doc.get("software-information") if isinstance(doc, dict) else None
    if not isinstance(info, list) or not info or not isinstance(info[0], dict):
        raise _lldp.LldpParseError("no 'software-information': not 'show version | display json'", 0)
    model = _data(info[0], "product-model") or ""
    return _lldp.DeviceFacts(model=model.upper() or None, os_version=_data(info[0], "junos-version"),
                             hostname=_data(info[0], "host-name"))


def render_version(device: str, model: str, os_version: str | None) -> str:
    """``show version`` as Junos prints it."""
    return (f"Hostname: {device}\nModel: {model.lower()}\nJunos: {os_version or '23.4R2-S2.1'}\n"
            "JUNOS OS Kernel 64-bit  [20240101.0a1b2c3_builder_stable_12]\n"
            "JUNOS OS libs [20240101.0a1b2c3_builder_stable_12]\n")


LLDP_FORMATS = (
    _lldp.CaptureFormat("show lldp neighbors | display json", _lldp.SHOW_LLDP_NEIGHBORS + r".*display\s+json",
                        lambda t: '"lldp-neighbors-information"' in t, parse_lldp_json,
                        "roce-tune (Junos JSON)"),
    _lldp.CaptureFormat("show lldp neighbors", _lldp.SHOW_LLDP_NEIGHBORS + r"(?!.*display\s+json)",
                        lambda t: bool(re.search(_BRIEF_HEAD_RE.pattern, t, re.M)), parse_lldp_brief_text,
                        "roce-tune (Junos text)"),
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("show version", _lldp.SHOW_VERSION,
                        lambda t: bool(re.search(r"^Junos:\s", t, re.M)) or "JUNOS" in t
                        or '"software-information"' in t,
                        parse_show_version, "ntc-templates juniper_junos_show_version"),
)
LLDP_RENDER_COMMAND = "show lldp neighbors | display json"
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "admin@{device}> "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
from roce_tune.platforms import contract as _c  # noqa: E402

#: the read-back names (_c.READBACK_NAMES) of junos_readback, imported on first use
__getattr__ = _c.lazy_attributes(__name__, "roce_tune.platforms.junos_readback", _c.READBACK_NAMES)

_WORD_RE = re.compile(r'"[^"]*"|\S+')


def display_set_lines(text: str) -> str:
    """``text`` with every ``set … [ v1 v2 ]`` line as one ``set … v1`` line per value, the way ``show
    configuration | display set`` prints a leaf-list (Juniper's Apstra DCQCN configlets, taken from that
    output, read ``interpolate fill-level 10`` / ``interpolate fill-level 50`` and one ``code-points`` line
    per code point); a drop-profile fill level in :func:`fill_level_text` form (compared by value:
    ``7.500000000`` = ``7.5``); other lines, comments and quoted words unchanged. Rendered files keep the
    bracket form (one statement per list, as Juniper's reference pages write it); the diff compares, and
    pushes, per value.
    """
    out: list[str] = []
    for line in text.splitlines():
        words = _WORD_RE.findall(line)
        if (line.lstrip().startswith(("set ", "delete ")) and len(words) > 3 and words[-1] == "]"
                and "[" in words):
            at = len(words) - 1 - words[::-1].index("[")
            head = " ".join(words[:at])
            out.extend(_fill_level_by_value(f"{head} {value}") for value in words[at + 1:-1])
        else:
            out.append(_fill_level_by_value(line))
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


_FILL_LEVEL_LINE = re.compile(r"^(\s*(?:set|delete)\s+class-of-service\s+drop-profiles\s+\S+\s+"
                              r"(?:interpolate\s+)?fill-level\s+)(\S+)(.*)$")


def _fill_level_by_value(line: str) -> str:
    """``line`` with a drop-profile fill level in :func:`fill_level_text` form (``7.50`` / ``7.0`` ->
    ``7.5`` / ``7``), so the diff compares fill levels by value whatever form the device echoes a decimal64
    in; any other line, or a value that is not a number, unchanged."""
    m = _FILL_LEVEL_LINE.match(line)
    if m is None:
        return line
    try:
        value = Decimal(m.group(2))
    except InvalidOperation:
        return line
    if not value.is_finite():
        return line
    return f"{m.group(1)}{fill_level_text(value)}{m.group(3)}"


#: diff data: ``set class-of-service`` lines are authoritative; a line is removed with ``delete``; leaf-lists
#: compared one value per line (:func:`display_set_lines`)
DIFF = _c.DiffRules(
    kind="set", owned_roots=("set class-of-service ",), negate=("set ", "delete "),
    keep_lines=display_set_lines,
    disruptive=((r"^\+set class-of-service interfaces \S+ congestion-notification-profile",
                 "Junos QFX blocks the whole port while it reprograms PFC (loss on every queue)"),
                (r"^[+-]set class-of-service congestion-notification-profile \S+ input ",
                 "a congestion-notification profile's PFC input (code points, MRU, cable length) changes on "
                 "every port bound to it: Junos QFX blocks each such port while it reprograms PFC (loss on "
                 "every queue)"),
                (r"^[+-]set class-of-service shared-buffer",
                 "a shared-buffer partition change re-carves the buffer")),
)


#: comment of the confirming ``commit`` (:func:`_push`)
CONFIRM_COMMENT = "confirmed"
#: the device's refusal of ``commit confirmed`` in ``configure private`` (some Junos releases/platforms:
#: ``error: commit confirmed not supported for private configuration``, Juniper/py-junos-eznc pull request
#: #954; Juniper's XML-protocol guide, "Commit the Candidate Configuration Only After Confirmation", says a
#: confirmed commit cannot be performed on a private copy): whitespace, case, "is" and for/in/with tolerated,
#: nothing else matches
PRIVATE_CONFIRM_REFUSED = re.compile(
    r"\berror:\s*commit\s+confirmed\s+(?:is\s+)?not\s+supported\s+(?:for|in|with)\s+(?:a\s+|the\s+)?"
    r"private\s+(?:configuration|mode|database|candidate)", re.IGNORECASE)


def _push(s: _c.PushSession, commands: list[str], _patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``configure private`` -> ``commit check`` -> ``commit confirmed N`` -> read back -> ``commit`` -> read
    back again (a confirm that comes after the timer ran out confirms nothing: see ``Driver.confirmed``).

    A device that refuses ``commit confirmed`` in ``configure private`` (:data:`PRIVATE_CONFIRM_REFUSED`)
    committed nothing: its private candidate is discarded, that nothing was committed is proven
    (:func:`_nothing_committed`), and the same steps run again in ``configure exclusive`` (which locks the
    shared candidate; Junos refuses it while another session holds the lock or the shared candidate holds
    uncommitted changes, and the push then fails before any change). ``progress["config_mode"]`` records
    the mode (``private`` / ``exclusive``: the rollback and the confirm use it) and the apply report carries
    a warning when it is ``exclusive``.

    ``progress`` keeps the change (``commands``, ``desired``, ``ports``; recorded by the driver) so that a
    rollback, also on a new session, can tell whether any of it is still active."""
    command = f"commit confirmed {_confirm_minutes(s.opts.confirm_s)} comment {s.opts.tag}"
    s.progress["config_mode"] = "private"
    if not _load_and_commit(s, commands, "private", command):
        _nothing_committed(s)
        s.progress["config_mode"] = "exclusive"
        s.warn(f"{s.device or 'device'}: `{command}` was refused in `configure private` (error: commit "
               "confirmed not supported for private configuration); pushed from `configure exclusive` "
               "instead, which locked the shared candidate for the push")
        _load_and_commit(s, commands, "exclusive", command)
    s.progress["committed"] = True
    s.conn.exit_config_mode()
    s.verify(desired, ports)
    _configure(s, str(s.progress["config_mode"]))
    s.progress["confirm_sent"] = True  # from here the confirm may have landed even if its reply is lost
    s.commit_checked(f"commit comment {CONFIRM_COMMENT}", "confirm")
    s.progress["confirmed"] = True
    s.conn.exit_config_mode()
    s.confirmed(desired, ports)


def _load_and_commit(s: _c.PushSession, commands: list[str], mode: str, command: str) -> bool:
    """In ``configure <mode>``: load ``commands``, ``show | compare``, ``commit check``, then ``command``
    (the ``commit confirmed``). Returns False, still in configuration mode, when the device refused it as
    unsupported in private mode (:data:`PRIVATE_CONFIRM_REFUSED`); True when it committed.

    Raises:
        PushError: the device refused the mode, a line, the check or the commit for any other reason."""
    _configure(s, mode)
    s.config_set(commands, f"configure {mode}")  # already in configuration mode: sends the lines only
    s.cmd("show | compare", "diff", r"#")
    s.commit_checked("commit check", "check")
    s.progress["commit_sent"] = True  # from here the commit may have landed even if its reply is lost
    s.progress[_c.CHANGE_SENT] = True  # the candidate changed nothing before this commit
    try:
        s.commit_checked(command)
    except Exception as err:  # the driver's PushError quotes the device's error line
        if mode != "private" or getattr(err, "stage", None) != "commit" or not PRIVATE_CONFIRM_REFUSED.search(
                str(err)):
            raise
        return False
    return True


def _nothing_committed(s: _c.PushSession) -> None:
    """After the device refused ``commit confirmed`` in ``configure private``: discard the private candidate
    (``rollback 0``), leave configuration mode and prove that nothing was committed (no commit with
    roce-tune's comment in ``show system commit``, none of the change active) before the push may start
    again; only then are ``progress["commit_sent"]`` and the change-sent mark cleared.

    Raises:
        PushError("commit"): the history or the running configuration shows the change after all (the
            driver's rollback then undoes it as a commit whose reply was lost)."""
    s.check(s.cmd("rollback 0", "commit", r"#"), "commit", ["rollback 0"])
    s.conn.exit_config_mode()
    tag = s.opts.tag
    if any(comment == tag for _, _, comment in parse_commit_history(s.cmd("show system commit", "commit"))):
        s.fail("commit", f"the device refused `commit confirmed` in `configure private`, yet `show system "
                         f"commit` lists a commit with comment {tag}: not retried in `configure exclusive`")
    if s.change_active(s.progress):
        s.fail("commit", "the device refused `commit confirmed` in `configure private`, yet some of the "
                         "change is active: not retried in `configure exclusive`")
    s.progress["commit_sent"] = False
    s.progress[_c.CHANGE_SENT] = False


#: what Junos answers a ``configure exclusive`` it refuses: another session holds the lock (its user,
#: terminal, pid and edit level follow on the next lines) or the shared candidate holds uncommitted changes
_EXCLUSIVE_REFUSED = re.compile(r"(?m)^\s*error:\s*(configuration database (?:locked|modified).*)$")


def _configure(s: _c.PushSession, mode: str, boundary: bool = True) -> None:
    """Enter ``configure <mode>`` (``private`` or ``exclusive``) and wait for either prompt: Junos refuses
    private mode while the shared candidate holds someone's uncommitted change (``error: shared
    configuration database modified``) and exclusive mode while another session holds the lock (``error:
    configuration database locked by:`` and who, on the lines after it) or the shared candidate is modified
    (``error: configuration database modified``), and stays at the operational prompt, which netmiko's
    ``config_mode`` only noticed as a read timeout, the device's reason lost. ``boundary`` False inside a
    rollback (no stop point there).

    Raises:
        PushError("send"): the device refused configuration mode (its error line; for exclusive mode, who
            holds the lock).
    """
    prompt = rf"{re.escape(str(s.conn.base_prompt))}[>#]\s*$"
    out = s.cmd(f"configure {mode}", "send", prompt, boundary=boundary)
    refused = _EXCLUSIVE_REFUSED.search(out) if mode == "exclusive" else None
    if refused:
        holder = [ln.strip() for ln in out[refused.end():].splitlines() if ln.strip()
                  and not re.search(rf"{re.escape(str(s.conn.base_prompt))}[>#]\s*$", ln)]
        s.fail("send", f"{s.device or 'device'}: device refused `configure exclusive` ({refused.group(1)}"
                       + (f" {' '.join(holder[:3])}" if holder else "")
                       + "): the shared candidate is locked by another session or holds someone's "
                         "uncommitted change; nothing was changed")
    s.check(out, "send", [f"configure {mode}"])


#: ``progress["rollback_outcome"]`` after :func:`_rollback` (the apply report carries it)
ROLLED_BACK = "rolled back by roce-tune (`rollback N` + `commit`, N = the configuration before its commit)"
REVERTED_BY_DEVICE = ("no rollback needed: the device had already reverted the change by itself (its "
                      "`commit confirmed` timer ran out before the confirm), none of it is active")
NOT_COMMITTED = "no rollback needed: the `commit confirmed` did not take effect, none of the change is active"
#: one entry of ``show system commit``: ``<index>   <timestamp> by <user> via <method>[ <note>]``, its
#: comment (when given) on the next line, indented
_COMMIT_ENTRY = re.compile(r"^(\d+)\s+(\S.*?)\s*$")


def parse_commit_history(text: str) -> list[tuple[int, str, str]]:
    """``show system commit`` as (rollback index, entry line, comment), newest first.

    Junos lists the last 50 commits, index 0 = the active configuration, one line each
    (``0   2026-12-01 10:00:05 UTC by admin via cli``), the commit's comment, if any, on the following
    indented line (Junos OS CLI reference, "show system commit",
    https://juniper.net/documentation/en_US/junos12.2/topics/reference/command-summary/show-system-commit.html).
    Lines that are neither (a ``rescue`` entry, a pending-commit note) are skipped.
    """
    out: list[tuple[int, str, str]] = []
    for line in text.splitlines():
        m = _COMMIT_ENTRY.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2), ""))
        elif out and line[:1].isspace() and line.strip() and not out[-1][2]:
            index, entry, _ = out[-1]
            out[-1] = (index, entry, line.strip())
    return out


def rollback_index(history: list[tuple[int, str, str]], tag: str) -> tuple[int | None, str]:
    """The N of ``rollback N`` that loads the configuration from before roce-tune's ``commit confirmed``
    (the entry whose comment is ``tag``): its index + 1, when every newer entry is roce-tune's own confirm
    (comment :data:`CONFIRM_COMMENT`; a confirm that landed although its reply was lost moves roce-tune's
    commit to index 1, so a fixed ``rollback 1`` would load the change again).

    Returns:
        (N, "") or (None, why not: the tag is not in the history, or someone else committed after
        roce-tune and ``rollback N`` would discard that too).
    """
    ours = next((index for index, _, comment in history if comment == tag), None)
    if ours is None:
        return None, (f"no commit with comment {tag!r} in `show system commit` (the last 50 commits); "
                      "find the configuration before it by hand")
    foreign = [f"{index}: {entry}" + (f" ({comment})" if comment else "") for index, entry, comment in history
               if index < ours and comment != CONFIRM_COMMENT]
    if foreign:
        return None, (f"{len(foreign)} later commit(s) by others would be discarded by "
                      f"`rollback {ours + 1}`: "
                      + "; ".join(foreign[:3]) + "; left as is for an engineer to merge by hand")
    return ours + 1, ""


def _rollback(s: _c.PushSession, progress: dict[str, object]) -> None:
    """Discard the uncommitted candidate; after the confirmed commit, ``rollback N`` + ``commit`` only while
    some of the change is active, N from ``show system commit`` (:func:`rollback_index`), in the mode the
    push committed from (``progress["config_mode"]``: ``configure private``, or ``configure exclusive`` on a
    device that refused ``commit confirmed`` in private mode).

    When the device has already reverted the change by itself (its ``commit confirmed`` timer ran out), the
    running configuration no longer holds it and nothing is rolled back; ``progress["rollback_outcome"]``
    says which happened (:data:`ROLLED_BACK`, :data:`REVERTED_BY_DEVICE`).

    Raises:
        PushError("rollback"): the device rejected the rollback or its commit; roce-tune's commit is not in
            the history or others committed after it (nothing is rolled back then); or the change is still
            active after it (the driver then retries on a new session; an unconfirmed change still reverts
            on the device's timer).
    """
    if s.conn.check_config_mode():
        if not progress.get("committed"):  # also before leaving `configure exclusive`: Junos would ask
            s.conn.send_command("rollback 0", expect_string=r"#")  # to discard, which netmiko does not answer
        s.conn.exit_config_mode()
    if not progress.get("committed") and not progress.get("commit_sent"):
        return
    tag = str(progress.get("tag", s.opts.tag))
    mode = str(progress.get("config_mode", "private"))  # the mode the push committed from

    def undo() -> None:
        text = s.cmd("show system commit", "rollback")
        history = parse_commit_history(text)
        index, why = rollback_index(history, tag)
        if index is None:
            s.refuse_rollback(why + _refused_state(s, history, tag, text))
        _configure(s, mode, boundary=False)
        s.check(s.conn.send_command(f"rollback {index}", expect_string=r"#"), "rollback")
        s.check(s.conn.send_command(f"commit comment {tag}-rollback", expect_string=r"#",
                                    read_timeout=s.timeout("rollback")), "rollback")
        s.conn.exit_config_mode()

    # a commit whose reply was lost (timeout, dropped session) may have landed: undo it only if it is active
    s.undo_active(progress, undo, ROLLED_BACK,
                  REVERTED_BY_DEVICE if progress.get("committed") else NOT_COMMITTED)


#: most lines of ``show system rollback N compare 0`` a refused rollback quotes
_DISCARD_LINES = 12


def _refused_state(s: _c.PushSession, history: list[tuple[int, str, str]], tag: str, commits: str) -> str:
    """For a refused rollback: whether the change still reverts by itself, and what the later commits by
    others changed since roce-tune's (``show system rollback <ours> compare 0``: ``+`` they added, ``-``
    they removed), i.e. what ``rollback N`` would discard besides roce-tune's own change."""
    pending = re.search(PUSH.confirm_check[1], commits) if PUSH.confirm_check is not None else None
    state = (". A `commit confirmed` is still pending: Junos reverts to the configuration before it when its "
             "timer runs out" if pending else
             ". No `commit confirmed` is pending (a later commit confirmed it): nothing reverts by itself")
    ours = next((index for index, _, comment in history if comment == tag), None)
    if not ours:
        return state
    command = f"show system rollback {ours} compare 0"
    lines = [ln.rstrip() for ln in s.cmd(command, "rollback").splitlines()
             if ln.strip().startswith(("[edit", "+", "-"))]
    more = f"\n  … {len(lines) - _DISCARD_LINES} more line(s)" if len(lines) > _DISCARD_LINES else ""
    return (f"{state}. What `rollback {ours + 1}` would discard besides roce-tune's change (`{command}`):\n  "
            + ("\n  ".join(lines[:_DISCARD_LINES]) + more if lines else "(no configuration difference)"))


def _confirm_minutes(confirm_s: int) -> int:
    """``commit confirmed N``'s N: the confirm timer ``confirm_s`` (seconds) rounded UP to whole minutes, at
    least 1 (the CLI's ``commit confirmed`` and the XML protocol's ``<confirm-timeout>`` take minutes,
    1-65,535: "Commit the Candidate Configuration Only After Confirmation Using the Junos XML Protocol",
    https://juniper.net/documentation/us/en/software/junos/junos-xml-protocol/topics/task/junos-xml-protocol-configuration-committing-with-confirmation.html
    ). Never shorter than asked: a window cut short could revert a push before its read-back and confirm."""
    return max(1, math.ceil(confirm_s / 60))


def _confirm_window(confirm_s: int) -> str | None:
    """What ``--confirm-seconds confirm_s`` becomes on Junos when it is not a whole number of minutes."""
    minutes = _confirm_minutes(confirm_s)
    if minutes * 60 == confirm_s:
        return None
    return (f"Junos `commit confirmed` counts whole minutes: --confirm-seconds {confirm_s} is rounded up to "
            f"`commit confirmed {minutes}` ({minutes * 60} s) on Junos devices")


def _expired(_tag: str, confirm_s: int) -> str:
    minutes = _confirm_minutes(confirm_s)
    return (f"Junos rolled back to the configuration before `commit confirmed {minutes}` by itself "
            "(`show system commit` lists its rollback commit)")


def _left_as_is(progress: dict[str, object], tag: str, confirm_s: int) -> str:
    minutes = _confirm_minutes(confirm_s)
    mode = progress.get("config_mode", "private")
    revert = (f"to revert: `rollback N` and `commit` in `configure {mode}`, N = the entry below roce-tune's "
              f"commit (comment {tag}) in `show system commit`")
    if progress.get("confirmed"):
        return f"confirmed (`commit`): no timer reverts it; {revert}"
    if progress.get("confirm_sent"):
        return (f"the confirming `commit` was sent but its reply never came: if `show system commit` shows "
                f"no `commit confirmed, rollback in` at 0, the change is final; else Junos reverts it within "
                f"{minutes} min. {revert}")
    if progress.get("committed") or progress.get("commit_sent"):
        head = f"committed with `commit confirmed {minutes}`:" if progress.get("committed") else (
            f"`commit confirmed {minutes}` was sent but its reply never came: if `show system commit` lists "
            f"roce-tune's commit (comment {tag}),")
        return (f"{head} Junos reverts it by itself within {minutes} min; to revert now: "
                f"{revert.removeprefix('to revert: ')}")
    return f"nothing committed: the {mode} session's candidate is discarded when the session closes"


#: a ``show system commit`` entry 0 still waiting for its confirming commit (Junos prints the note on it)
_PENDING_CONFIRM = re.compile(r"(?m)^0\s+(\S.*commit confirmed, rollback in.*?)\s*$")


def probe_pending_confirm(run: Callable[[str], str]) -> str | None:
    """Why apply must not push to this switch now (or None): entry 0 of ``show system commit`` is a ``commit
    confirmed`` still waiting for its confirming commit (someone's trial change, or a killed run's). A later
    ``commit`` (or ``commit check``) confirms it (Junos CLI reference, ``commit``, option ``confirmed``:
    https://www.juniper.net/documentation/us/en/software/junos/cli/topics/ref/command/commit.html), so
    roce-tune's own commits would make that change permanent instead of letting it roll back. ``run`` runs
    one read-only command and returns its output."""
    m = _PENDING_CONFIRM.search(run("show system commit"))
    if m is None:
        return None
    by = re.search(r"\bby (\S+)", m.group(1))
    who = by.group(1) if by else "its author"
    return (f"a `commit confirmed` is waiting for its confirming commit (`show system commit`: 0 "
            f"{m.group(1)}): roce-tune's own commit would confirm it and make that change permanent, so "
            f"nothing was sent; let it roll back or have {who} confirm it (`commit`), then run roce-tune "
            "again")


PUSH = _c.PushMethod(
    netmiko_device_type="juniper_junos", read_running="show configuration | display set",
    error_pattern=r"(syntax error|unknown command|error:)",
    push=_push, rollback=_rollback, left_as_is=_left_as_is, confirm_window=_confirm_window,
    confirm_check=("show system commit", r"(?m)^0\s.*commit confirmed, rollback in"), expired=_expired,
    commit_success=(r"(?m)^commit complete\s*$", "commit complete"),  # a Junos commit is also its save
    desired_file="{name}.set", probe=lambda run: probe_pending_confirm(run),
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "scheduler", "dscp_map", "headroom", "mtu"),
    watchdog_note="congestion-notification-profile ... pfc-watchdog: detection counted in polls (200/100 = "
                  "2); on Junos Evolved the recovery action is global and shared by all ports",
    watchdog_fixed_ms=(("poll_ms", 100), ("detection_ms", 200), ("restoration_ms", 200)),
    watchdog_fixed_formula="Juniper default",
    watchdog_fixed_source="Junos 'PFC watchdog' docs: poll 100 ms, detection 2 polls (200 ms), recovery 200 "
                          "ms (docs/derivation.md#pfc-watchdog)",
)

# ---------------------------------------------------------------------------------------- INVENTORY
#: a physical (front-panel) Ethernet port's name: physical<:channel>.logical without the logical unit,
#: type-fpc/pic/port and ``:N`` a channelized (breakout) port (Junos "Interface Naming Overview",
#: juniper.net/documentation/en_US/junos12.2/topics/concept/interfaces-interface-naming-overview.html):
#: lint RT139's shape and the ports ``class-of-service interfaces all`` binds (read-back)
PHYSICAL_PORT = r"(?:ge|xe|mge|et)-\d+/\d+/\d+(?::\d+)?"
# port names that tell the platform (import) and the vendors whose hardware it runs on (lint RT125)
INVENTORY = _c.InventoryFacts(
    port_name_hint=r"^(?:et|xe|ge|ae)-\d+/\d+/\d+",
    vendors=frozenset({"juniper"}),
    mgmt_port=r"(?:em|fxp|me)\d+|re\d+:mgmt-\d+",
    # PHYSICAL_PORT; ``.N`` would be a logical unit and aeN an aggregate, neither a port
    physical_port=PHYSICAL_PORT,
    physical_port_examples=("et-0/0/0", "et-0/0/0:1"),
)

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
#: ``junos_config`` needs NETCONF (it calls ``load_configuration``/``lock`` RPCs the Junos cliconf lacks), so
#: the default is network_cli + ``cli_command`` (``configure private`` / ``load set terminal`` / ``commit
#: confirmed``); the ``netconf`` choice selects ansible.netcommon.netconf and the ``junos_config`` path.
ANSIBLE = _c.AnsibleConnection(
    group_vars={"ansible_connection": _c.NETWORK_CLI, "ansible_network_os": "junipernetworks.junos.junos"},
    alternatives={"netconf": {"ansible_connection": "ansible.netcommon.netconf", "ansible_port": 830}},
    source="junipernetworks.junos collection (junos_config, cliconf and netconf plugins)")

# ---------------------------------------------------------------------------------------- COUNTERS
# which show commands give the switch counters verify reads, and their parsers: junos_counters.py
from roce_tune.platforms.junos_counters import COUNTERS  # noqa: E402

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render, check=build_context, render_findings=render_findings,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
    counters=COUNTERS,
    ansible=ANSIBLE,
    inventory=INVENTORY,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("juniper-junos",)


# ------------------------------------------------------------------------------------- audit captures
# What `roce-tune audit` recognises in a capture and runs with --live (roce_tune.platforms.captures).
from roce_tune.platforms.captures import CaptureFormat as _CaptureFormat  # noqa: E402
from roce_tune.platforms.junos_counters import evidence_line as counter_evidence_line  # noqa: E402
from roce_tune.platforms.junos_counters import (  # noqa: E402
    parse_junos_extensive_pfc,
    parse_junos_interfaces_queue,
)

#: ``show configuration | display set`` (whole, or ``show configuration class-of-service | display set``).
CAPTURE_FORMATS: tuple[_CaptureFormat, ...] = (
    _CaptureFormat(name="show configuration | display set", kind="running_config",
                   pattern=r"^set (?:class-of-service|interfaces|version|system|chassis) "),
    _CaptureFormat(name="show interfaces extensive", kind="extensive_pfc",
                   pattern=r"MAC Priority Flow Control Statistics", parse=parse_junos_extensive_pfc,
                   evidence=counter_evidence_line),
    _CaptureFormat(name="show interfaces queue", kind="interfaces_queue", pattern=r"^\s*Queue:\s*\d+",
                   parse=parse_junos_interfaces_queue, evidence=counter_evidence_line),
)
#: read-only commands ``audit --live`` runs (``{port}``: each lossless port of the plan). The configuration
#: with ``| display inheritance``: Junos prints what groups and interface ranges give each statement in place
#: and leaves ``groups``/``apply-groups`` out (Junos XML protocol guide, "Specify How to Display Inheritance
#: for Configuration Groups and Interface Ranges": ``inherit="inherit"`` = the CLI's ``show | display
#: inheritance``), so nothing of what the switch runs depends on roce-tune's own group expansion.
CAPTURE_COMMANDS: tuple[str, ...] = (
    "show configuration | display inheritance | display set", "show interfaces queue",
    "show interfaces extensive")
