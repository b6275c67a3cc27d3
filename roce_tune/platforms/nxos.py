"""Cisco NX-OS (Nexus 9000) renderer: one CLI file per switch (``<name>.cfg``), applied after a checkpoint.

NX-OS models QoS as MQC policies on the fixed 8-queue system classes: a ``type qos`` policy classifies
DSCP into qos-groups (qos-group N = queue N), a system-wide ``type network-qos`` policy makes the
lossless classes no-drop with ``pause pfc-cos`` and sets their MTU, ``type queuing`` output policies
schedule and ECN-mark (one per ECN profile, attached per interface, so ports of different speeds get
their own thresholds), and ``type queuing`` input policies carry PFC headroom (one per headroom profile).

Syntax checked against:

* Cisco's ``roce_enable.py`` (Paresh Gupta, v0.30; read in full, repository path unresolved [S]) and the
  Azure Local TOR QoS reference [V], which agree: ``class-map type qos match-any``/``match dscp``,
  ``policy-map type qos``/``set qos-group``,
  ``policy-map type network-qos``/``class type network-qos c-8q-nqN``/``mtu``/``pause pfc-cos``,
  ``policy-map type queuing``/``class type queuing c-out-8q-qN``/``bandwidth remaining percent``/
  ``priority level 1``/``random-detect minimum-threshold X kbytes maximum-threshold Y kbytes
  drop-probability P weight 0 ecn``, ``system qos``/``service-policy type ...``,
  ``priority-flow-control mode on``, ``priority-flow-control watch-dog-interval on`` (global and per
  interface), unused queues at ``bandwidth remaining percent 0``.
* Ingress headroom: ``policy-map type queuing <in>``/``class type queuing c-in-qN``/``pause buffer-size
  B pause-threshold B resume-threshold B`` (bytes) — keyword order from the Microsoft Azure Stack HCI
  Nexus example and a 93180YC-EX lab write-up [S]; mandatory above 100 m of cable (Cisco QoS guide,
  PFC guidelines [V per docs/derivation.md#platform-syntax]). Attaching an input queuing policy per interface
  is [U]. The three numbers are the tuner's static-PG view of the plan's headroom
  (``Headroom.static_buffer_bytes``,
  ``pause_threshold_bytes``, ``resume_threshold_bytes``: resume one MTU below pause), printed as they are.
* Watchdog [V]: ``priority-flow-control watch-dog-interval on`` (Cisco Nexus 9000 NX-OS QoS Configuration
  Guide 7.x "Configuring a Priority Flow Control Watchdog Interval"; Azure Local TOR reference). The
  guide (10.5(x) "Configuring Priority Flow Control") describes the watchdog interval, shutdown and
  auto/fixed restore multipliers and a 100 ms poll timer, and on a stuck no-drop queue NX-OS always drops;
  the exact CLI of the interval and multiplier commands was not found in a Cisco source read for this
  module, so they are not rendered: the device defaults apply and :func:`render_findings` reports the
  plan's timers as RT241. Searched again (docs/pages/code/issues corpora) for the watch-dog interval,
  shutdown-multiplier, auto-restore and fixed-restore commands; what exists is [U] for rendering:
  the NX-API REST SDK guide 9.3(x) "Configuring Priority Flow Control" (developer.cisco.com) gives the DME
  attribute ``platformPriorFlowCtrlWd.fixedRestoreMultiplier`` (example ``1``, added 9.3(3)) and a CLI
  equivalent that starts ``priority-flow-control fixed-restore`` (the rest, and the range, not in the copy
  read); the QoS guides 9.2(x)/10.5(x) describe the "watchdog interval", "auto + fixed multiplier",
  "shutdown multiplier" and "interface multiplier" without the command lines; the 7.x guide's procedure
  page was not readable; ``priority-flow-control watch-dog shutdown-multiplier 1`` appears only in a
  non-Cisco study note [S]; Cisco Intersight's ``fabric.PfcWatchDog`` (UCS fabric interconnects, another
  product) has interval default 500 ms, shutdown multiplier <= 10. Missing: a Cisco command reference or
  configuration-guide procedure with the keyword order, ranges and defaults of those four commands.
  The NX-OS test emulator models only ``watch-dog-interval {on|off}`` (tests/emulators/nxos.py
  ``ARGUMENT_GRAMMAR``).

Unit conversions done here (never in templates): ECN thresholds bytes -> ``kbytes`` (1 kbyte = 1024 B,
rounded down so a threshold never rises above the plan's). PFC headroom needs no conversion: the plan's
static-PG numbers are bytes already.
The network-qos MTU is system-wide per class, so it is the largest port MTU of the switch.
"""

from __future__ import annotations

import hashlib
import re

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Classification, EcnProfile, Headroom, Plan, PortPlan, SwitchPlan
from roce_tune.platforms.base import IOS_STYLE_SECRETS, PlatformSpec, SecretPattern, secret_re
from roce_tune.platforms.templating import render_device_template
from roce_tune.ranges import id_runs

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
    source="Cisco roce_enable.py (Paresh Gupta); Azure Local TOR QoS reference; Cisco Nexus 9000 QoS guide "
           "10.5(x)",
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
#: Watchdog poll timer NX-OS uses (Cisco QoS guide 10.5(x): "poll timer of 100ms") [V].
DEFAULT_WATCHDOG_INTERVAL_MS = 100
#: Policy names roce-tune owns on the device (prefix keeps them apart from operator policies).
POLICY = {"classify": "RT_CLASSIFY", "network": "RT_NETWORK_QOS", "lossy_out": "RT_EGRESS_LOSSY"}
_TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,79}$")
#: Longest class-map / policy-map name NX-OS takes: "can be up to 40 characters" (Cisco Nexus 9000 NX-OS QoS
#: Configuration Guide, "Configuring Classification" and "Creating Policy Maps"; Batfish's NX-OS grammar
#: ``class_map_name`` / ``policy_map_name``: "1-40 characters").
MAX_NAME_LEN = 40
#: Hex digits of the name's sha256 kept when a name is shortened (with the ``_`` before them).
_NAME_HASH_HEX = 6


def _token(value: str, what: str) -> str:
    """Return ``value`` if it is safe as one CLI word. Raises ValueError otherwise."""
    if not _TOKEN_RE.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a safe CLI word for NX-OS")
    return value


def _cls(template: str, queue: int) -> str:
    return template.replace("q{q}", "q-default") if queue == DEFAULT_QUEUE else template.format(q=queue)


def dscp_ranges(dscps: list[int]) -> str:
    """``[24, 25, 26, 30]`` -> ``"24-26,30"`` (the ``match dscp`` list form).

    >>> dscp_ranges([0, 1, 2, 5, 7, 8])
    '0-2,5,7-8'
    """
    return id_runs(dscps)


def kbytes(n_bytes: int) -> int:
    """Bytes -> NX-OS kbytes (1024 B), rounded down, at least 1. ``kbytes(150000) == 146``."""
    return max(1, n_bytes // ECN_UNIT_BYTES)


def policy_name(prefix: str, body: str) -> str:
    """``prefix + body`` as an NX-OS policy/class name of at most :data:`MAX_NAME_LEN` characters.

    A name that fits is kept as it is; a longer one keeps ``prefix``, the start of ``body`` and ``_`` + the
    first :data:`_NAME_HASH_HEX` hex digits of ``sha256(body)``, so it is deterministic and two bodies that
    share their first characters still get different names.

    >>> policy_name("RT_INGRESS_", "pg_lossless_400000_20m_profile")
    'RT_INGRESS_pg_lossless_400000_20m_99c663'

    Raises:
        ValueError: the result is not a safe CLI word.
    """
    name = f"{prefix}{body}"
    if len(name) > MAX_NAME_LEN:
        digest = hashlib.sha256(body.encode()).hexdigest()[:_NAME_HASH_HEX]
        keep = MAX_NAME_LEN - len(prefix) - _NAME_HASH_HEX - 1
        name = f"{prefix}{body[:keep].rstrip('_-./:')}_{digest}"
    return _token(name, "policy name")


def egress_policy(ecn: EcnProfile) -> str:
    """Output queuing policy name for ports using ``ecn`` (:func:`policy_name`)."""
    return policy_name("RT_EGRESS_", ecn.name)


def ingress_policy(hr: Headroom) -> str:
    """Input queuing (headroom) policy name for ports using headroom profile ``hr`` (:func:`policy_name`)."""
    return policy_name("RT_INGRESS_", hr.profile)


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
    """Plan PG profile -> NX-OS ``pause buffer-size / pause-threshold / resume-threshold`` (bytes), the
    tuner's static-PG view (:func:`roce_tune.tuner.headroom.static_pg_thresholds`) printed as it is.

    Raises:
        ValueError: the plan carries no static-PG thresholds, or they leave no hysteresis.
    """
    size, pause, resume = hr.static_buffer_bytes, hr.pause_threshold_bytes, hr.resume_threshold_bytes
    if size is None or pause is None or resume is None:
        raise ValueError(f"headroom profile {hr.profile}: the plan carries no static-PG buffer/pause/resume "
                         "thresholds (derive the plan with roce-tune's tuner)")
    if not 0 < resume < pause < size:
        raise ValueError(f"headroom profile {hr.profile}: buffer {size} B, pause {pause} B, resume {resume} "
                         "B need 0 < resume < pause < buffer")
    note = (f"{hr.profile}: plan size {hr.size_bytes} B, xoff {hr.xoff_bytes} B, xon {hr.xon_bytes} B -> "
            f"static PG buffer {size} B, pause at {pause} B, resume at {resume} B")
    return {"policy": ingress_policy(hr), "queues": [_cls(IN_CLASS, q) for q in queues], "size": size,
            "pause": pause, "resume": resume, "note": note}


def _watchdog(switch: SwitchPlan) -> dict[str, object]:
    wd = switch.watchdog
    notes = [(f"plan detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms, poll {wd.poll_ms} "
              f"ms, action {wd.action}: not rendered (no Cisco source for the interval/multiplier CLI); "
              f"device defaults apply (poll {DEFAULT_WATCHDOG_INTERVAL_MS} ms, drop) (RT241)")]
    return {"enabled": wd.enabled, "notes": notes}


def _ecn_findings(switch: SwitchPlan) -> list[Finding]:
    """RT241 (info) per ECN profile in use whose thresholds are not whole kbytes or whose Pmax is
    fractional."""
    out = []
    used = {p.ecn_profile for p in switch.ports if p.lossless}
    for e in sorted(switch.ecn_profiles, key=lambda e: e.name):
        if e.name not in used:
            continue
        kmin, kmax = kbytes(e.kmin_bytes), kbytes(e.kmax_bytes)
        pmax = max(1, min(100, round(e.pmax_percent)))
        if (kmin * ECN_UNIT_BYTES, kmax * ECN_UNIT_BYTES, float(pmax)) != (e.kmin_bytes, e.kmax_bytes,
                                                                           e.pmax_percent):
            out.append(Finding(
                rule="RT241", severity=Severity.info, location=Location(device=switch.name),
                message=f"NX-OS ECN profile {e.name}: Kmin/Kmax {e.kmin_bytes}/{e.kmax_bytes} B rendered as "
                        f"{kmin}/{kmax} {ECN_UNIT} (= {kmin * ECN_UNIT_BYTES}/{kmax * ECN_UNIT_BYTES} B, "
                        f"rounded down), Pmax {e.pmax_percent}% as {pmax}%",
                fix="none needed; pin kmin/kmax to multiples of 1024 B to render them exactly"))
    return out


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241: NX-OS renders only ``priority-flow-control watch-dog-interval on``; the plan's watchdog
    timers (and an action other than drop) are left at the device defaults. RT241 (info) for ECN thresholds
    rounded to whole kbytes."""
    wd = switch.watchdog
    if not wd.enabled:
        return _ecn_findings(switch)
    return _ecn_findings(switch) + [Finding(
        rule="RT241", severity=Severity.warning, location=Location(device=switch.name),
        message=(f"NX-OS PFC watchdog: plan detection {wd.detection_ms} ms / restoration {wd.restoration_ms} "
                 f"ms / poll {wd.poll_ms} ms / action {wd.action} are not rendered (no Cisco source found "
                 "for the watch-dog interval and multiplier commands); the device defaults apply (poll "
                 f"{DEFAULT_WATCHDOG_INTERVAL_MS} ms, drop on a stuck no-drop queue)"),
        fix="set the watchdog timers on the switch by hand after checking the command reference of its NX-OS "
            "release; verify with 'show queuing pfc-queue detail'")]


def _lossless_groups(switch: SwitchPlan) -> dict[str, EcnProfile]:
    by_name = {e.name: e for e in switch.ecn_profiles}
    used = {}
    for p in switch.ports:
        if p.lossless:
            if p.ecn_profile not in by_name:
                raise ValueError(f"{switch.name}:{p.name} is lossless but names ECN profile "
                                 f"{p.ecn_profile!r}, not one of {sorted(by_name)}")
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
            "egress": egress_policy(ecn_by_name[p.ecn_profile]) if p.lossless and p.ecn_profile
            else POLICY["lossy_out"],
            "ingress": ingress_policy(p.headroom) if p.lossless and p.headroom else None, "notes": notes}


def _network_classes(cls: Classification) -> list[dict[str, str]]:
    """network-qos classes, one per queue in use (and the default queue), with the CoS values they pause."""
    nq_queues = sorted(set(cls.tc_to_queue.values()) | {DEFAULT_QUEUE})
    pause_cos = {q: sorted(p for p, pq in cls.pfc_priority_to_queue.items()
                           if pq == q and p in cls.lossless_priorities) for q in nq_queues}
    return [{"cls": _cls(NQ_CLASS, q), "pause_cos": " ".join(str(p) for p in pause_cos[q])}
            for q in nq_queues]


def _schedulers(cls: Classification) -> list[dict[str, object]]:
    """Egress scheduling of the 8 output queues: strict, or DWRR with the plan's weight (unscheduled
    queues get :data:`UNSCHEDULED_WEIGHT`).

    Raises:
        ValueError: a DWRR scheduler without a weight.
    """
    scheduled = {s.queue: s for s in cls.schedulers}
    sched: list[dict[str, object]] = []
    for q in range(8):
        s = scheduled.get(q)
        if s is not None and s.mode == "dwrr" and s.weight_percent is None:
            raise ValueError(f"scheduler {s.name} (queue {q}) is dwrr without a weight")
        sched.append({"cls": _cls(OUT_CLASS, q), "queue": q, "strict": s is not None and s.mode == "strict",
                      "weight": UNSCHEDULED_WEIGHT if s is None else s.weight_percent,
                      "level": STRICT_LEVEL})
    return sched


def _check_unique_names(switch: SwitchPlan, ecn_by_name: dict[str, EcnProfile],
                        headrooms: dict[str, dict[str, object]]) -> None:
    """Raise ValueError when two profiles of ``switch`` got the same (shortened) policy name."""
    owner: dict[str, str] = {v: f"policy {k}" for k, v in POLICY.items()}
    sources = [(egress_policy(e), f"ECN profile {k}") for k, e in ecn_by_name.items()]
    sources += [(str(h["policy"]), f"headroom profile {k}") for k, h in headrooms.items()]
    for name, what in sources:
        if owner.setdefault(name, what) != what:
            raise ValueError(f"{switch.name}: {what} and {owner[name]} both render as NX-OS policy {name}; "
                             "rename one of the profiles")


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
    sched = _schedulers(cls)
    headrooms: dict[str, dict[str, object]] = {}
    for p in switch.ports:
        if p.lossless and p.headroom is not None and p.headroom.profile not in headrooms:
            headrooms[p.headroom.profile] = _headroom(p.headroom, sorted(cls.lossless_queues))
    _check_unique_names(switch, ecn_by_name, headrooms)
    return {
        "c": SPEC.comment_prefix,
        "sections": SPEC.sections,
        "switch": {"name": switch.name, "model": switch.model, "asic": switch.asic, "role": switch.role},
        "plan": {"site": plan.site, "generator": plan.generator, "schema": plan.schema_version},
        "policy": POLICY,
        "classes": classes,
        "default_qos_group": default_q,
        "network": _network_classes(cls),
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
    text = render_device_template(SPEC.name, SPEC.aggregator, switch.name, build_context(plan, switch),
                                  ("switch", "name"))
    return {f"{switch.name}.{SPEC.extension}": text}


# --- LLDP and show version (roce-tune import lldp / lint --lldp) -----------------------------------
import json as _json  # noqa: E402

from roce_tune.platforms import lldp as _lldp  # noqa: E402
from roce_tune.platforms.nxos_counters import canonical_port  # noqa: E402


def parse_lldp_json(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors detail | json``: ``TABLE_nbor_detail.ROW_nbor_detail`` (one object, or a list
    for several), each with ``l_port_id`` (abbreviated), ``sys_name``, ``port_id``, ``port_type`` (when
    given) and ``port_desc``. Our own parser (JSON; ntc-templates ``cisco_nxos_show_lldp_neighbors_detail``
    reads the text form).

    ``show lldp neighbors | json`` (the brief table) is read too: ``TABLE_nbor.ROW_nbor``, whose
    ``chassis_id`` is the Device ID column (the system name, or the chassis MAC of a neighbour without one)
    and which has no port description.

    Raises:
        LldpParseError: not JSON, or neither ``TABLE_nbor_detail`` nor ``TABLE_nbor``.
    """
    doc = _lldp.json_block(text)
    brief = isinstance(doc, dict) and "TABLE_nbor_detail" not in doc and isinstance(doc.get("TABLE_nbor"),
                                                                                    dict)
    table = doc.get("TABLE_nbor" if brief else "TABLE_nbor_detail") if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        raise _lldp.LldpParseError("no 'TABLE_nbor_detail': not 'show lldp neighbors detail | json'", 0)
    rows = table.get("ROW_nbor" if brief else "ROW_nbor_detail") or []
    rows = [rows] if isinstance(rows, dict) else rows
    out: list[_lldp.LldpNeighbor] = []
    starts = _lldp.marker_lines(text, '"l_port_id"')
    for r in rows:
        start = starts[len(out)] if len(out) < len(starts) else 0
        local = str(r.get("l_port_id") or "")
        name, is_mac = _lldp.remote_port_name(r.get("port_type"), r.get("port_id"), r.get("port_desc"))
        system = _nx_system(r.get("chassis_id")) if brief else r.get("sys_name") or None
        out.append(_lldp.LldpNeighbor(canonical_port(local), system, name, is_mac,
                                      _lldp.line_of(text, f'"{local}"', start)))
    return out


_NX_HEAD_RE = re.compile(r"^Device ID\s+Local Intf\s+Hold-time\s+Capability\s+Port ID\s*$")
#: a row of ``show lldp neighbors``: the Device ID may hold spaces (``PowerEdge R750``) or be on the line
#: above (over 20 characters), Capability may be empty, the Port ID may hold spaces
_NX_ROW_RE = re.compile(r"^(?P<dev>\S.*?)?\s+(?P<local>[A-Za-z][\w/.:-]*\d)\s+\d+\s+"
                        r"(?:[BRTCWPSO](?:,\s?)?)*\s+(?P<port>\S.*?)\s*$")
_NX_TOTAL_RE = re.compile(r"^Total entries displayed:\s*\d+\s*$")


def _nx_system(name: str | None) -> str | None:
    """A Device ID / System Name as a system name: None for ``null`` or a MAC (a neighbour without a name:
    NX-OS shows its chassis ID)."""
    v = (name or "").strip()
    return None if not v or v.lower() == "null" or _lldp.is_mac(v) else v


def parse_lldp_brief_text(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors`` (text): ``Device ID  Local Intf  Hold-time  Capability  Port ID`` rows under
    the ``Capability codes`` legend; a Device ID over 20 characters is alone on its line and the row goes on
    below. The table has no port description: a host NIC (a MAC port ID) has no name here (``show lldp
    neighbors detail`` has it). Our own parser (ntc-templates ``cisco_nxos_show_lldp_neighbors`` reads no
    Device ID or Port ID with a space).

    Raises:
        LldpParseError: no header; a line under it that is no row; a ``Total entries displayed`` that
            differs from the rows read.
    """
    lines = text.splitlines()
    head = next((i for i, t in enumerate(lines) if _NX_HEAD_RE.match(t)), None)
    if head is None:
        raise _lldp.LldpParseError("no 'Device ID  Local Intf  Hold-time  Capability  Port ID' header", 0)
    out: list[_lldp.LldpNeighbor] = []
    pending: tuple[str, int] | None = None  # a Device ID alone on its line, and the line
    for i in range(head + 1, len(lines)):
        t = lines[i].rstrip()
        if not t.strip() or _NX_TOTAL_RE.match(t):
            continue
        m = _NX_ROW_RE.match(t)
        if m is not None and (m["dev"] is not None or pending is not None):
            dev, at = (m["dev"], i) if m["dev"] is not None else (pending[0], pending[1])  # type: ignore[index]
            name, is_mac = _lldp.remote_port_name(None, m["port"], None)
            out.append(_lldp.LldpNeighbor(canonical_port(m["local"]), _nx_system(dev), name, is_mac, at))
            pending = None
        elif pending is None and not t[0].isspace():
            pending = (t.strip(), i)
        else:
            raise _lldp.LldpParseError(f"line {t.strip()!r} is no row of the table", i)
    if pending is not None:
        raise _lldp.LldpParseError(f"the Device ID {pending[0]!r} has no row (the capture is cut off)",
                                   pending[1])
    _lldp.check_total(text, len(out))
    return out


_NX_DETAIL_RE = re.compile(r"^(?P<key>Chassis id|Port id|Local Port id|Port Description|System Name):\s*"
                           r"(?P<value>.*?)\s*$", re.IGNORECASE)


def parse_lldp_detail_text(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp neighbors detail`` (text): an entry per neighbour from its ``Chassis id:`` line, with
    ``Port id:``, ``Local Port id:``, ``Port Description:`` and ``System Name:`` (``null`` when not sent).
    Our own parser (ntc-templates ``cisco_nxos_show_lldp_neighbors_detail`` keeps no port description,
    the name of a host NIC).

    Raises:
        LldpParseError: no ``Chassis id:`` entry and no ``Total entries displayed: 0``; an entry without a
            ``Port id`` or ``Local Port id``; a total that differs from the entries read.
    """
    entries: list[tuple[int, dict[str, str]]] = []
    for i, line in enumerate(text.splitlines()):
        m = _NX_DETAIL_RE.match(line)
        if m is None:
            continue
        key = m["key"].lower()
        if key == "chassis id":
            entries.append((i, {}))
        elif entries:
            entries[-1][1].setdefault(key, m["value"])
    if not entries and not re.search(r"^Total entries displayed:\s*0\s*$", text, re.M):
        raise _lldp.LldpParseError("no 'Chassis id:' entry: not 'show lldp neighbors detail'", 0)
    out = []
    for i, f in entries:
        if "port id" not in f or "local port id" not in f:
            raise _lldp.LldpParseError("an entry without 'Port id:' and 'Local Port id:' (the capture is "
                                       "cut off)", i)
        desc = f.get("port description")
        desc = None if (desc or "").lower() == "null" else desc
        name, is_mac = _lldp.remote_port_name(None, f["port id"], desc)
        out.append(_lldp.LldpNeighbor(canonical_port(f["local port id"]), _nx_system(f.get("system name")),
                                      name, is_mac, i))
    _lldp.check_total(text, len(out))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``show lldp neighbors detail | json`` for ``ends`` (local ports abbreviated as NX-OS does)."""
    rows = []
    for e in ends:
        pid = _lldp.mac_of(e.remote_system, e.remote_port) if e.remote_is_host else e.remote_port
        rows.append({"chassis_type": "Mac Address", "chassis_id": _lldp.mac_of(e.remote_system, "chassis"),
                     "l_port_id": e.local_port.replace("Ethernet", "Eth", 1),
                     "port_type": "Mac Address" if e.remote_is_host else "Interface Name", "port_id": pid,
                     "ttl": 120, "port_desc": e.remote_port, "sys_name": e.remote_system, "sys_desc": "",
                     "enabled_capability": "S" if e.remote_is_host else "B, R"})
    return _json.dumps({"TABLE_nbor_detail": {"ROW_nbor_detail": rows[0] if len(rows) == 1 else rows},
                        "neigh_count": len(rows)}, indent=2) + "\n"


_NXOS_VER_RE = re.compile(r"^(\d+)\.(\d+)\((\w+)\)(.*)$")


def _nxos_release(ver: str) -> str | None:
    """``10.3(4a)`` -> ``10.3.4a`` (the inventory's os_version takes no parentheses); NX-OS 10.x's release
    label (``10.4(2) [Feature Release]``) left out."""
    m = _NXOS_VER_RE.match(re.sub(r"\s*\[[^\]]*\]\s*$", "", ver.strip()))
    return f"{m.group(1)}.{m.group(2)}.{m.group(3)}{m.group(4).strip()}" if m else (ver.strip() or None)


def _nxos_model(chassis: str) -> str | None:
    """``Nexus9000 C9364D-GX2A Chassis`` / ``C9364D-GX2A`` -> ``N9K-C9364D-GX2A`` (the catalog's id)."""
    m = re.search(r"\b(N9K-)?(C9\w+(?:-\w+)*)", chassis)
    if m is None:
        return chassis.strip() or None
    return f"N9K-{m.group(2)}"


def _parse_version_json(text: str) -> _lldp.DeviceFacts:
    """``show version | json``: ``nxos_ver_str`` (``kickstart_ver_str`` on older releases), ``chassis_id``
    (``Nexus9000 C9364D-GX2A Chassis``), ``host_name``.

    Raises:
        LldpParseError: not JSON, or no version string.
    """
    doc = _lldp.json_block(text)
    ver = str(doc.get("nxos_ver_str") or doc.get("kickstart_ver_str") or "") if isinstance(doc, dict) else ""
    if not ver:
        raise _lldp.LldpParseError("no 'nxos_ver_str' in the JSON: not NX-OS 'show version | json'", 0)
    return _lldp.DeviceFacts(model=_nxos_model(str(doc.get("chassis_id") or "")),
                             os_version=_nxos_release(ver), hostname=doc.get("host_name") or None)


def parse_show_version(text: str) -> _lldp.DeviceFacts:
    """``show version`` through ntc-templates ``cisco_nxos_show_version``: ``cisco Nexus9000 C9364D-GX2A
    Chassis`` -> model ``N9K-C9364D-GX2A`` (the catalog's product id), ``NXOS: version 10.3(4a)`` -> OS
    release ``10.3.4a`` (the inventory's os_version takes no parentheses); ``show version | json`` read
    directly.

    Raises:
        LldpParseError: no NX-OS version in the text.
    """
    if re.search(r"^\s*\{", text, re.M):
        return _parse_version_json(text)
    rows = _lldp.parse_ntc("cisco_nxos_show_version", text)
    if not rows:
        raise _lldp.LldpParseError("ntc-templates cisco_nxos_show_version found no version (the output must "
                                   "run to its 'Reason:' line)", 0)
    plat, ver = rows[0].get("platform") or "", rows[0].get("os") or ""
    model = (plat if plat.startswith("N9K-") else f"N9K-{plat}") if plat else None
    return _lldp.DeviceFacts(model=model, os_version=_nxos_release(ver),
                             hostname=rows[0].get("hostname") or None)


def render_version(device: str, model: str, os_version: str | None) -> str:
    """``show version`` as NX-OS prints it (abridged to the lines around what is read)."""
    m = re.match(r"^(\d+)\.(\d+)\.(\w+)$", os_version or "10.3.4a")
    ver = f"{m.group(1)}.{m.group(2)}({m.group(3)})" if m else (os_version or "10.3(4a)")
    chassis = model[4:] if model.startswith("N9K-") else model
    return ("Cisco Nexus Operating System (NX-OS) Software\nTAC support: http://www.cisco.com/tac\n\n"
            f"Software\n  BIOS: version 05.47\n  NXOS: version {ver}\n  BIOS compile time:  04/06/2022\n"
            f"  NXOS image file is: bootflash:///nxos64-cs.{ver}.M.bin\n\n"
            f"Hardware\n  cisco Nexus9000 {chassis} Chassis\n  Intel(R) Xeon(R) CPU D-1633N @ 2.50GHz\n"
            f"  Processor Board ID FDO00000001\n\n  Device name: {device}\n  bootflash:   53298520 kB\n\n"
            "Kernel uptime is 12 day(s), 3 hour(s), 4 minute(s), 5 second(s)\n\n"
            "Last reset\n  Reason: Unknown\n")


LLDP_FORMATS = (
    _lldp.CaptureFormat("show lldp neighbors detail | json", _lldp.SHOW_LLDP_NEIGHBORS + r".*\|\s*json",
                        lambda t: '"TABLE_nbor_detail"' in t or '"TABLE_nbor"' in t, parse_lldp_json,
                        "roce-tune (NX-OS JSON)"),
    _lldp.CaptureFormat("show lldp neighbors detail", _lldp.SHOW_LLDP_NEIGHBORS + r"(?!.*\|\s*json)",
                        lambda t: bool(re.search(r"^Local Port id:", t, re.M | re.I)), parse_lldp_detail_text,
                        "roce-tune (NX-OS text)"),
    _lldp.CaptureFormat("show lldp neighbors", _lldp.SHOW_LLDP_NEIGHBORS + r"(?!.*\|\s*json)",
                        lambda t: bool(re.search(_NX_HEAD_RE.pattern, t, re.M)), parse_lldp_brief_text,
                        "roce-tune (NX-OS text)"),
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("show version", _lldp.SHOW_VERSION,
                        lambda t: "Cisco Nexus Operating System" in t or "NXOS: version" in t
                        or '"nxos_ver_str"' in t or '"kickstart_ver_str"' in t,
                        parse_show_version, "ntc-templates cisco_nxos_show_version"),
)
LLDP_RENDER_COMMAND = "show lldp neighbors detail | json"
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "{device}# "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
from roce_tune.platforms import contract as _c  # noqa: E402
from roce_tune.platforms.checkpoints import CheckpointCommands as _CheckpointCommands  # noqa: E402
from roce_tune.platforms.checkpoints import limit_error as _limit_error  # noqa: E402
from roce_tune.platforms.checkpoints import prune_after_push as _prune_after_push  # noqa: E402
from roce_tune.platforms.checkpoints import to_free as _to_free  # noqa: E402
from roce_tune.platforms.contract import HierPlatformName as _HierPlatform  # noqa: E402

#: the read-back names (_c.READBACK_NAMES) of nxos_readback, imported on first use
__getattr__ = _c.lazy_attributes(__name__, "roce_tune.platforms.nxos_readback", _c.READBACK_NAMES)

#: diff data: every class-map/policy-map roce-tune renders is named RT_…; the old patterns (ROCE/CNP/QOS_)
#: are kept for configs rendered before that naming
DIFF = _c.DiffRules(
    kind="hier", hier_platform=_HierPlatform.CISCO_NXOS,
    owned_sections=(r"^class-map type \S+ match-\S+ (RT_|ROCE|CNP)",
                    r"^policy-map type \S+ (RT_|QOS_|ROCE|qos_network)"),
    stale=(r"^class-map type \S+ match-\S+ RT_\S+$", r"^policy-map type \S+ RT_\S+$"),
    disruptive=((r"^\+\s*mtu \d+",
                 "a network-qos MTU change re-carves the buffers (all ports pause briefly)"),
                (r"^\+\s*pause buffer-size",
                 "a new ingress headroom (pause buffer-size) re-carves the port buffer")),
    idempotent=(("policy-map type network-qos ", "class type network-qos ", "mtu "),
                ("policy-map type network-qos ", "class type network-qos ", "pause "),
                ("policy-map type queuing ", "class type queuing ", "bandwidth "),
                ("policy-map type queuing ", "class type queuing ", "random-detect "),
                ("policy-map type queuing ", "class type queuing ", "priority level "),
                # one policy per type and direction on a port ("The device allows only one queuing policy per
                # interface", Nexus 9000 QoS configuration guide, "Attaching and Detaching a QoS Policy
                # Action") and one network-qos policy: the new line replaces the old, which the dry run shows
                ("interface ", "service-policy type queuing input "),
                ("interface ", "service-policy type queuing output "),
                ("interface ", "service-policy type qos input "),
                ("interface ", "priority-flow-control mode "),
                ("system qos", "service-policy type network-qos "),
                # on | off, globally and per port: the new state replaces the old one
                ("priority-flow-control watch-dog-interval ",),
                ("interface ", "priority-flow-control watch-dog-interval ")),
)


#: User checkpoints an NX-OS switch keeps: "You can create up to ten checkpoints of your configuration per
#: switch"; names must be unique, ``no checkpoint <name>`` removes one, ``show checkpoint summary`` lists them
#: (Cisco Nexus 3548 NX-OS System Management Configuration Guide, "Configuring Rollback",
#: https://www.easymanua.ls/cisco/nexus-3548/manual/683163?p=126) [V].
MAX_USER_CHECKPOINTS = 10
#: one entry of ``show checkpoint summary``: ``1) <name>:`` then Created by / Created at / Size / Description
_CHECKPOINT_ENTRY_RE = re.compile(r"^\s*\d+\)\s+(\S+?):\s*$")


def user_checkpoints(summary: str) -> list[str]:
    """Names of the user checkpoints in ``show checkpoint summary`` output, in the order listed (the
    ``System Checkpoint Summary`` part, NX-OS's own ``system-fm-*`` checkpoints, is left out)."""
    names = []
    for line in summary.splitlines():
        if line.strip().lower().startswith("system checkpoint"):
            break
        m = _CHECKPOINT_ENTRY_RE.match(line)
        if m:
            names.append(m.group(1))
    return names


#: how retention lists and deletes NX-OS checkpoints (roce_tune.platforms.checkpoints)
CHECKPOINTS = _CheckpointCommands(list_command="show checkpoint summary", parse=user_checkpoints,
                                  delete_command="no checkpoint {name}", limit=MAX_USER_CHECKPOINTS)


def _checkpoint_names(s: _c.PushSession, stage: str) -> list[str]:
    """The switch's user checkpoints. Raises PushError(stage) when the device rejects the command."""
    command = CHECKPOINTS.list_command
    return user_checkpoints(s.check(s.cmd(command, stage), stage, [command]))


def _delete_checkpoint(s: _c.PushSession, name: str, stage: str) -> None:
    """``no checkpoint <name>``. Raises PushError(stage) when the device rejects it."""
    command = CHECKPOINTS.delete_command.format(name=name)
    s.check(s.cmd(command, stage), stage, [command])


def _make_room(s: _c.PushSession) -> None:
    """Before the checkpoint: a switch at its limit of user checkpoints gets room by deleting roce-tune's own
    oldest ones; when the operator's checkpoints alone fill it, fail before anything changed.

    Raises:
        PushError("checkpoint"): the limit is reached and not enough checkpoints are roce-tune's, or a delete
            was refused (nothing was changed either way).
    """
    names = _checkpoint_names(s, "checkpoint")
    free = _to_free(names, MAX_USER_CHECKPOINTS)
    if free is None:
        s.fail("checkpoint", _limit_error(s.device or "the switch", names, MAX_USER_CHECKPOINTS, "NX-OS",
                                          CHECKPOINTS))
    for name in free:
        _delete_checkpoint(s, name, "checkpoint")
        s.progress.setdefault("pruned", []).append(name)


def _push(s: _c.PushSession, commands: list[str], _patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``checkpoint`` (room made first at the device's limit) -> config -> read back (NX-OS has no
    commit-confirm)."""
    s.cmd("terminal dont-ask", "checkpoint")
    _make_room(s)
    s.check(s.cmd(f"checkpoint {s.opts.tag}", "checkpoint"), "checkpoint", [f"checkpoint {s.opts.tag}"])
    s.progress["checkpoint"] = True
    s.progress["rollback_point"] = (f"checkpoint {s.opts.tag} (to return to it: "
                                    f"`rollback running-config checkpoint {s.opts.tag} atomic`)")
    s.progress[_c.CHANGE_SENT] = True  # each configuration line takes effect as it is sent
    s.config_set(commands, "configure terminal")
    s.conn.exit_config_mode()
    s.verify(desired, ports)


def _rollback(s: _c.PushSession, progress: dict[str, object]) -> None:
    """``rollback running-config checkpoint X atomic``, only once configuration lines were sent (before them
    nothing changed: nothing to roll back)."""
    if not progress.get(_c.CHANGE_SENT):
        return
    if s.conn.check_config_mode():
        s.conn.exit_config_mode()
    if progress.get("checkpoint"):
        tag = progress.get("tag", s.opts.tag)
        s.check(s.cmd(f"rollback running-config checkpoint {tag} atomic", "rollback"), "rollback")


def _cleanup(s: _c.PushSession, progress: dict[str, object]) -> None:
    """After a push that succeeded: delete roce-tune's own checkpoints older than the newest
    ``keep_checkpoints`` (the one just taken always stays); a refused ``no checkpoint`` is a warning."""
    _prune_after_push(s, CHECKPOINTS, progress)


def _left_as_is(progress: dict[str, object], tag: str, _confirm_s: int) -> str | None:
    if progress.get("checkpoint"):
        return (f"may be half-configured (NX-OS has no commit-confirm); to revert: "
                f"`rollback running-config checkpoint {tag} atomic`")
    return None


PUSH = _c.PushMethod(
    netmiko_device_type="cisco_nxos", read_running="show running-config",
    error_pattern=r"% ?(Invalid|Incomplete|Ambiguous)|ERROR:",
    push=_push, rollback=_rollback, left_as_is=_left_as_is, cleanup=_cleanup, checkpoints=CHECKPOINTS,
    save=("copy running-config startup-config", r"(?m)^Copy complete\.\s*$"), save_expect=r"#",
    desired_file="{name}.cfg",
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "scheduler", "dscp_map", "headroom", "mtu"),
    watchdog_note="NX-OS default multipliers not captured [gap]: SONiC start_default values (interval + "
                  "shutdown/restore multipliers)",
)

# ---------------------------------------------------------------------------------------- INVENTORY
# port names that tell the platform (import) and the vendors whose hardware it runs on (lint RT125)
INVENTORY = _c.InventoryFacts(
    port_name_hint=r"^Ethernet\d+/\d+$",
    vendors=frozenset({"cisco"}),
    mgmt_port=r"mgmt\d+",
    full_port_name=canonical_port,  # Eth1/1, Et1/1, eth1/1, e1/1 -> Ethernet1/1
    # EthernetS/P, EthernetS/P/B after "interface breakout module S port P map ..." (Cisco NX-API "Configuring
    # Breakout on High-Bandwidth Interfaces": "show ... interface ethernet 1/1/1"); EthernetS/P.V is a
    # subinterface, port-channelN a LAG
    physical_port=r"Ethernet\d+/\d+(?:/\d+)?",
    physical_port_examples=("Ethernet1/1", "Ethernet1/1/2"),
)

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
ANSIBLE = _c.AnsibleConnection(
    group_vars={"ansible_connection": _c.NETWORK_CLI, "ansible_network_os": "cisco.nxos.nxos"},
    source="cisco.nxos collection (network_cli + nxos cliconf)")

# ---------------------------------------------------------------------------------------- COUNTERS
# which show commands give the switch counters verify reads, and their parsers: nxos_counters.py
from roce_tune.platforms.nxos_counters import COUNTERS  # noqa: E402

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render, check=build_context, render_findings=render_findings,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
    counters=COUNTERS,
    ansible=ANSIBLE,
    inventory=INVENTORY,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("nx-os", "cisco-nxos", "cisco-nx-os")


# ------------------------------------------------------------------------------------- audit captures
# What `roce-tune audit` recognises in a capture and runs with --live (roce_tune.platforms.captures).
from roce_tune.platforms.captures import CaptureFormat as _CaptureFormat  # noqa: E402
from roce_tune.platforms.nxos_counters import (  # noqa: E402
    parse_nxos_pfc_interfaces,
    parse_nxos_pfc_queue_detail,
    parse_nxos_queuing_interface,
    queuing_evidence_line,
)

#: ``show running-config``: NX-OS's ``!Command:`` header (no blank after ``!``), its ``version N.N(N)``
#: line, or the NX-OS-only ``policy-map type network-qos`` / ``system qos`` statements.
CAPTURE_FORMATS: tuple[_CaptureFormat, ...] = (
    _CaptureFormat(name="show running-config", kind="running_config",
                   pattern=r"^!Command: show running-config|^version \d+\.\d+\(\d+\w*\)|"
                           r"^policy-map type (?:network-qos|queuing) \S+|^system qos\s*$"),
    _CaptureFormat(name="show queuing pfc-queue detail", kind="pfc_queue_detail",
                   pattern=r"(?i)Total (?:Ingress )?pkts dropped", command=r"pfc-queue",
                   parse=parse_nxos_pfc_queue_detail, port_name=canonical_port),
    _CaptureFormat(name="show queuing interface", kind="queuing_interface", pattern=r"QOS GROUP \d",
                   parse=parse_nxos_queuing_interface, port_name=canonical_port,
                   evidence=queuing_evidence_line),
    _CaptureFormat(name="show interface priority-flow-control", kind="pfc_interfaces",
                   pattern=r"RxPPP\s+TxPPP",
                   parse=parse_nxos_pfc_interfaces, port_name=canonical_port),
)
#: read-only commands ``audit --live`` runs (``{port}``: each lossless port of the plan)
CAPTURE_COMMANDS: tuple[str, ...] = (
    "show running-config", "show interface priority-flow-control", "show queuing pfc-queue detail",
    "show queuing interface {port}")
