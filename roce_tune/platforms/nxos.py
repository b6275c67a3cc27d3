"""Cisco NX-OS (Nexus 9000) renderer: one CLI file per switch (``<name>.cfg``), applied after a checkpoint.

NX-OS models QoS as MQC policies on the fixed 8-queue system classes: a ``type qos`` policy classifies
DSCP into qos-groups (qos-group N = queue N), a system-wide ``type network-qos`` policy makes the
lossless classes no-drop with ``pause pfc-cos`` and sets their MTU, ``type queuing`` output policies
schedule and ECN-mark (one per ECN profile, attached per interface, so ports of different speeds get
their own thresholds), and ``type queuing`` input policies carry PFC headroom (one per headroom profile).

Syntax checked against:

* Cisco's ``roce_enable.py`` (Paresh Gupta, v0.30; read in full, repository path unresolved [S]) and the
  Azure Local TOR QoS reference [V], which agree: ``class-map type qos match-any``/``match dscp``, ``policy-map type qos``/``set qos-group``,
  ``policy-map type network-qos``/``class type network-qos c-8q-nqN``/``mtu``/``pause pfc-cos``,
  ``policy-map type queuing``/``class type queuing c-out-8q-qN``/``bandwidth remaining percent``/
  ``priority level 1``/``random-detect minimum-threshold X kbytes maximum-threshold Y kbytes
  drop-probability P weight 0 ecn``, ``system qos``/``service-policy type ...``,
  ``priority-flow-control mode on``, ``priority-flow-control watch-dog-interval on`` (global and per
  interface), unused queues at ``bandwidth remaining percent 0``.
* Ingress headroom: ``policy-map type queuing <in>``/``class type queuing c-in-qN``/``pause buffer-size
  B pause-threshold B resume-threshold B`` (bytes) — keyword order from the Microsoft Azure Stack HCI
  Nexus example and a 93180YC-EX lab write-up [S]; mandatory above 100 m of cable (Cisco QoS guide,
  PFC guidelines [V per VENDORS.md]). Attaching an input queuing policy per interface is [U].
* Watchdog timers [U]: ``priority-flow-control watch-dog interval <ms>`` (NDFC exposes 101..1000 ms,
  system default 100 ms), ``priority-flow-control watch-dog shutdown-multiplier <n>`` [S, one secondary
  source] and ``priority-flow-control auto-restore multiplier <n>`` (the NX-API REST guide names the
  sibling ``fixed-restore multiplier``). NX-OS always drops on a stuck no-drop queue (Cisco QoS guide);
  other plan actions are stated in a comment. Confirm these three lines on the target release.

Unit conversions done here (never in templates): ECN thresholds bytes -> ``kbytes`` (1 kbyte = 1024 B,
rounded down so a threshold never rises above the plan's); watchdog detection/restoration -> whole
multiples of the poll interval (rounded up, never shorter than the plan); PFC headroom from the plan's
SONiC-style profile (size/xoff/xon) to NX-OS's static buffer-size (= max(size, xon + xoff): a
shared-headroom-pool profile reserves only xon in size) / pause-threshold (= buffer-size - xoff, the
occupancy at which only the xoff headroom is left) / resume-threshold (= xon, capped at pause).
The network-qos MTU is system-wide per class, so it is the largest port MTU of the switch.
"""

from __future__ import annotations

import math
import re

from roce_tune.plan import EcnProfile, Headroom, Plan, PortPlan, SwitchPlan
from roce_tune.platforms.base import IOS_STYLE_SECRETS, PlatformSpec, SecretPattern, secret_re
from roce_tune.render.engine import render_template

SPEC = PlatformSpec(
    name="nxos",
    extension="cfg",
    aggregator="config.j2",
    sections=("maps", "pfc", "buffers", "ecn", "scheduler", "watchdog", "interfaces"),
    netmiko_device_type="cisco_nxos",
    commit="nxos-checkpoint",
    negate_prefix="no ",
    comment_prefix="!",
    indent=2,
    source="Cisco roce_enable.py (Paresh Gupta); Azure Local TOR QoS reference; Cisco Nexus 9000 QoS guide 10.5(x)",
    show_commands={
        "running_config": "show running-config",
        "checkpoint_diff": "show diff rollback-patch checkpoint {checkpoint} running-config",
        "pfc": "show interface priority-flow-control",
        "queuing": "show queuing interface",
        "watchdog": "show queuing pfc-queue detail",
        "network_qos": "show policy-map system type network-qos",
        "queuing_policy": "show policy-map interface type queuing",
    },
)

#: Secrets in ``show running-config`` that logs and restore points mask (``mask_secrets``): the IOS-style
#: forms in NX-OS spelling (``username admin password 5 $5$… role network-admin``, ``tacacs-server key 7
#: "…"``, ``snmp-server user U network-admin auth md5 0x… priv 0x… localizedkey``, BGP ``password 3 …``,
#: ``ntp authentication-key N md5 KEY 7``) plus ``hmac-secret``/``passphrase`` lines. Source: Cisco Nexus
#: 9000 Series NX-OS Security and System Management configuration guides.
SECRET_PATTERNS: tuple[SecretPattern, ...] = IOS_STYLE_SECRETS + (
    secret_re(r"\b(?:hmac-secret|passphrase)\s+(?:[0-9]\s+)?(?P<secret>{value})"),
)

#: Fixed system class names by queue (8q template) [V].
NQ_CLASS = "c-8q-nq{q}"
OUT_CLASS = "c-out-8q-q{q}"
IN_CLASS = "c-in-q{q}"
#: Queue 0 is the "default" class in every 8q system class family [V].
DEFAULT_QUEUE = 0
#: Weight given to queues the plan does not schedule, so the plan's weights are the only ones [V Azure].
UNSCHEDULED_WEIGHT = 0
#: ``random-detect`` threshold unit and its size in bytes.
ECN_UNIT, ECN_UNIT_BYTES = "kbytes", 1024
#: Strict priority level for the plan's strict queues (one level: CNP) [V].
STRICT_LEVEL = 1
#: ``weight 0``: mark on the instantaneous queue depth [V roce_enable.py].
ECN_WEIGHT = 0
#: Watchdog interval NX-OS uses when none is configured; the interval line is left out at this value [S NDFC].
DEFAULT_WATCHDOG_INTERVAL_MS = 100
#: Watchdog multipliers accepted by the CLI [U].
SHUTDOWN_MULTIPLIER_RANGE = (1, 10)
RESTORE_MULTIPLIER_RANGE = (1, 100)
#: Policy names roce-tune owns on the device (prefix keeps them apart from operator policies).
POLICY = {"classify": "RT_CLASSIFY", "network": "RT_NETWORK_QOS", "lossy_out": "RT_EGRESS_LOSSY"}
_TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,79}$")


def _token(value: str, what: str) -> str:
    """Return ``value`` if it is safe as one CLI word. Raises ValueError otherwise."""
    if not _TOKEN_RE.match(value):
        raise ValueError(f"{what} {value!r} is not a safe CLI word for NX-OS")
    return value


def _cls(template: str, queue: int) -> str:
    return template.replace("q{q}", "q-default") if queue == DEFAULT_QUEUE else template.format(q=queue)


def dscp_ranges(dscps: list[int]) -> str:
    """``[24, 25, 26, 30]`` -> ``"24-26,30"`` (the ``match dscp`` list form).

    >>> dscp_ranges([0, 1, 2, 5, 7, 8])
    '0-2,5,7-8'
    """
    out, run = [], [dscps[0]]
    for d in dscps[1:]:
        if d == run[-1] + 1:
            run.append(d)
        else:
            out.append(run)
            run = [d]
    out.append(run)
    return ",".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in out)


def kbytes(n_bytes: int) -> int:
    """Bytes -> NX-OS kbytes (1024 B), rounded down, at least 1. ``kbytes(150000) == 146``."""
    return max(1, n_bytes // ECN_UNIT_BYTES)


def egress_policy(ecn: EcnProfile) -> str:
    """Output queuing policy name for ports using ``ecn``."""
    return _token(f"RT_EGRESS_{ecn.name}", "policy name")


def ingress_policy(hr: Headroom) -> str:
    """Input queuing (headroom) policy name for ports using headroom profile ``hr``."""
    return _token(f"RT_INGRESS_{hr.profile}", "policy name")


def _classes(plan: Plan) -> tuple[list[dict[str, object]], int | None]:
    """DSCP match classes per queue, and the queue class-default goes to (None = all matched)."""
    cls = plan.classification
    by_queue: dict[int, list[int]] = {}
    for dscp in sorted(cls.dscp_to_tc):
        by_queue.setdefault(cls.tc_to_queue[cls.dscp_to_tc[dscp]], []).append(dscp)
    special = set(cls.lossless_queues) | {cls.cnp_queue}
    ordinary = sorted((q for q in by_queue if q not in special), key=lambda q: (-len(by_queue[q]), q))
    default_q = ordinary[0] if ordinary else None
    classes = [{"name": f"RT_Q{q}", "dscps": dscp_ranges(by_queue[q]), "queue": q}
               for q in sorted(by_queue) if q != default_q]
    return classes, default_q


def _ecn(ecn: EcnProfile) -> dict[str, object]:
    prob = max(1, min(100, round(ecn.pmax_percent)))
    notes = [(f"plan Kmin {ecn.kmin_bytes} B / Kmax {ecn.kmax_bytes} B / Pmax {ecn.pmax_percent}% "
              f"({ecn.speed_gbps}G); NX-OS takes {ECN_UNIT} (x{ECN_UNIT_BYTES} B, rounded down)")]
    if ecn.drop_min_bytes is not None:
        notes.append(f"plan drop thresholds {ecn.drop_min_bytes}..{ecn.drop_max_bytes} B not rendered: one "
                     "random-detect per class; non-ECT traffic is dropped on the marking ramp")
    return {"policy": egress_policy(ecn), "min": kbytes(ecn.kmin_bytes), "max": kbytes(ecn.kmax_bytes),
            "unit": ECN_UNIT, "prob": prob, "weight": ECN_WEIGHT, "notes": notes}


def _headroom(hr: Headroom, queues: list[int]) -> dict[str, object]:
    """Plan PG profile -> NX-OS ``pause buffer-size / pause-threshold / resume-threshold`` (bytes).

    The NX-OS PG is static: it needs the plan's xon + xoff at least (a shared-headroom-pool profile
    reserves only xon in ``size``), pause is sent when only the xoff headroom is left, resume at xon.

    Raises:
        ValueError: the profile leaves nothing below the xoff headroom (no pause point).
    """
    size = max(hr.size_bytes, hr.xon_bytes + hr.xoff_bytes)
    pause = size - hr.xoff_bytes
    if pause <= 0:
        raise ValueError(f"headroom profile {hr.profile}: size {hr.size_bytes} B / xon {hr.xon_bytes} B leave no "
                         f"pause point below xoff {hr.xoff_bytes} B")
    note = f"{hr.profile}: plan size {hr.size_bytes} B, xoff {hr.xoff_bytes} B, xon {hr.xon_bytes} B"
    if size != hr.size_bytes:
        note += f" (shared-headroom profile: buffer-size = xon + xoff = {size} B)"
    return {"policy": ingress_policy(hr), "queues": [_cls(IN_CLASS, q) for q in queues], "size": size,
            "pause": pause, "resume": min(hr.xon_bytes, pause), "note": note}


def _watchdog(switch: SwitchPlan) -> dict[str, object]:
    wd = switch.watchdog
    shut = math.ceil(wd.detection_ms / wd.poll_ms)
    restore = math.ceil(wd.restoration_ms / wd.poll_ms)
    notes = [f"plan detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms, poll {wd.poll_ms} ms"]
    lo, hi = SHUTDOWN_MULTIPLIER_RANGE
    if not lo <= shut <= hi:
        notes.append(f"shutdown multiplier {shut} outside {lo}..{hi}: clamped")
        shut = min(max(shut, lo), hi)
    lo, hi = RESTORE_MULTIPLIER_RANGE
    if not lo <= restore <= hi:
        notes.append(f"restore multiplier {restore} outside {lo}..{hi}: clamped")
        restore = min(max(restore, lo), hi)
    if wd.action != "drop":
        notes.append(f"plan action {wd.action!r}: NX-OS always drops on a stuck no-drop queue")
    interval = None if wd.poll_ms == DEFAULT_WATCHDOG_INTERVAL_MS else wd.poll_ms
    return {"enabled": wd.enabled, "interval": interval, "shutdown": shut, "restore": restore, "notes": notes}


def _lossless_groups(switch: SwitchPlan) -> dict[str, EcnProfile]:
    by_name = {e.name: e for e in switch.ecn_profiles}
    used = {}
    for p in switch.ports:
        if p.lossless:
            if p.ecn_profile not in by_name:
                raise ValueError(f"{switch.name}:{p.name} is lossless but names ECN profile {p.ecn_profile!r}, "
                                 f"not one of {sorted(by_name)}")
            used[p.ecn_profile] = by_name[p.ecn_profile]
    return dict(sorted(used.items()))


def _interface(p: PortPlan, ecn_by_name: dict[str, EcnProfile]) -> dict[str, object]:
    notes = []
    if not p.admin_up:
        notes.append("admin down in the inventory; roce-tune does not change admin state")
    if not p.lossless:
        notes.append(f"lossy ({p.peer_kind}/{p.direction}): PFC off, default classification, no ECN")
    return {"name": _token(p.name, "interface name"), "mtu": p.mtu, "peer": p.peer, "lossless": p.lossless,
            "classify": POLICY["classify"] if p.lossless else None,
            "egress": egress_policy(ecn_by_name[p.ecn_profile]) if p.lossless and p.ecn_profile else POLICY["lossy_out"],
            "ingress": ingress_policy(p.headroom) if p.lossless and p.headroom else None, "notes": notes}


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, object]:
    """Everything the NX-OS templates print, already in NX-OS syntax/units.

    Raises:
        ValueError: the plan cannot be expressed (unknown ECN profile, unsafe names, empty headroom).
    """
    cls = plan.classification
    if not switch.ports:
        raise ValueError(f"{switch.name}: no ports in the plan; nothing to render")
    classes, default_q = _classes(plan)
    ecn_by_name = _lossless_groups(switch)
    egress = [_ecn(e) for e in ecn_by_name.values()]
    lossy_policy = POLICY["lossy_out"] if any(not p.lossless for p in switch.ports) else None
    nq_queues = sorted(set(cls.tc_to_queue.values()) | {DEFAULT_QUEUE})
    pause_cos = {q: sorted(p for p, pq in cls.pfc_priority_to_queue.items()
                           if pq == q and p in cls.lossless_priorities) for q in nq_queues}
    scheduled = {s.queue: s for s in cls.schedulers}
    sched = []
    for q in range(8):
        s = scheduled.get(q)
        if s is not None and s.mode == "dwrr" and s.weight_percent is None:
            raise ValueError(f"scheduler {s.name} (queue {q}) is dwrr without a weight")
        sched.append({"cls": _cls(OUT_CLASS, q), "queue": q, "strict": s is not None and s.mode == "strict",
                      "weight": UNSCHEDULED_WEIGHT if s is None else s.weight_percent,
                      "level": STRICT_LEVEL})
    headrooms: dict[str, dict[str, object]] = {}
    for p in switch.ports:
        if p.lossless and p.headroom is not None and p.headroom.profile not in headrooms:
            headrooms[p.headroom.profile] = _headroom(p.headroom, sorted(cls.lossless_queues))
    return {
        "c": SPEC.comment_prefix,
        "sections": SPEC.sections,
        "switch": {"name": switch.name, "model": switch.model, "asic": switch.asic, "role": switch.role},
        "plan": {"site": plan.site, "generator": plan.generator, "schema": plan.schema_version,
                 "inventory_file": plan.inventory_file, "inventory_sha256": plan.inventory_sha256},
        "policy": POLICY,
        "classes": classes,
        "default_qos_group": default_q,
        "network": [{"cls": _cls(NQ_CLASS, q), "pause_cos": " ".join(str(p) for p in pause_cos[q])}
                    for q in nq_queues],
        "network_mtu": max(p.mtu for p in switch.ports),
        "lossless_out": [_cls(OUT_CLASS, q) for q in sorted(cls.lossless_queues)],
        "egress": egress,
        "scheduler_policies": [e["policy"] for e in egress] + ([lossy_policy] if lossy_policy else []),
        "schedulers": sched,
        "headrooms": [headrooms[k] for k in sorted(headrooms)],
        "watchdog": _watchdog(switch),
        "interfaces": [_interface(p, ecn_by_name) for p in switch.ports],
    }


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as NX-OS CLI: ``{"<name>.cfg": text}``.

    Raises:
        ValueError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    text = render_template(SPEC.name, SPEC.aggregator, **build_context(plan, switch))
    return {f"{switch.name}.{SPEC.extension}": text}
