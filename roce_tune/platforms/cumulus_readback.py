"""Cumulus Linux NVUE commands -> :class:`~roce_tune.qos.SwitchQos` (``read_back``), and what of a plan NVUE
can say.

Input: roce-tune's ``<switch>.nvue.sh`` or ``nv config show -o commands`` (``nv set`` lines in any order,
shell-quoted words, interface ranges/lists such as ``swp1-4,swp7``, ``#`` comments, unrelated settings).
Both the CL 5.14 keywords (``enable``/``disable``, ``on``/``off``) and the later ones
(``enabled``/``disabled``) are understood. Read:

* ``qos mapping <profile> trust l2|l3|both|port`` -> the trust (``pcp``, ``dscp``, ``both``, ``port``) of
  the switch (``default-global``) or of the ports binding the profile (CumulusNetworks/docs cumulus-linux-53
  "Quality of Service", Classification: ``nv set qos mapping <profile> trust l2`` trusts 802.1p, ``l3`` DSCP,
  ``port`` ignores markings; ``both``, both markings, as in NVIDIA Onyx's ``qos trust [port | L2 | L3 |
  both]``, https://docs.nvidia.com/networking/display/NVIDIAOnyxUserManualv3104504LTS/QoS+Commands [S]).
  A configuration that states no trust keeps None: the
  docs give no default trust, so the audit lists the RoCE classification as not checked;
* ``qos mapping <profile> dscp <list> switch-priority SP`` -> DSCP -> TC (NVUE's switch priority is the
  plan's TC), ``qos egress-queue-mapping <profile> switch-priority SP traffic-class Q`` -> TC -> queue;
* ``qos pfc <profile> switch-priority <list>`` (a collection: the lines add up) / ``tx``/``rx`` /
  ``cable-length M``;
* ``qos congestion-control <profile> traffic-class <list> ecn|min-threshold|max-threshold|probability``;
* ``qos egress-scheduler <profile> traffic-class <list> mode strict|dwrr`` / ``bw-percent W``;
* ``qos pfc-watchdog polling-interval P`` / ``robustness N`` (detection = N x P; the only action is drop);
* ``interface <ifs> qos pfc|congestion-control|egress-scheduler|mapping profile P``,
  ``interface <ifs> qos pfc-watchdog state``, ``interface <ifs> link mtu N``.

A port uses its bound profile, else ``default-global``. Only ports the text names are read: NVUE's
``default-global`` applies to every port, but the commands do not list them. ``qos roce mode`` alone
implies NVIDIA's RoCE defaults, which are not read as values (unknown is None, never a default): under
lossless RoCE mode a port without a stated PFC profile has unknown PFC, and under any RoCE mode one without
a congestion-control profile unknown ECN. So has a port bound to a PFC or congestion-control profile the text
does not define (a filtered capture: NVUE binds only profiles that exist).
Sources: CumulusNetworks/docs cumulus-linux-514 QoS and RoCE pages; nvue-reference QoS (see cumulus.py).
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.qos import (
    BYTES_ECN_BY_DESIGN,
    TC_MAPS_BY_DESIGN,
    PortQos,
    QueueEcn,
    Scheduler,
    SwitchQos,
    WatchdogQos,
    expected_qos,
    majority,
)

READBACK_FIELDS = frozenset(
    {
        "dscp_to_tc",
        "tc_to_queue",
        "schedulers",
        "watchdog.detection_ms",
        "watchdog.poll_ms",
        "watchdog.action",
        "ports.cable_m",
        "ports.pfc_priorities",
        "ports.ecn.kmin_bytes",
        "ports.ecn.kmax_bytes",
        "ports.ecn.pmax_percent",
        "ports.watchdog",
        "ports.mtu",
        "trust",
        "ports.trust",
    }
)
#: Plan fields NVUE has no statement for by design: field -> why.
READBACK_BY_DESIGN: dict[str, str] = {
    **BYTES_ECN_BY_DESIGN,
    "tc_to_pg": "NVUE assigns priority groups from the PFC profile's switch priorities itself",
    **TC_MAPS_BY_DESIGN,
}
DEFAULT = "default-global"
#: The switch priority (TC) of a DSCP no ``qos mapping default-global dscp`` line names: None = unknown.
#: The lines change entries of NVUE's default DSCP -> switch-priority mapping (Cumulus Linux 5.14
#: "Quality of Service": default ``default-global`` mapping; ``nv config show`` lists only what was set),
#: which roce-tune does not model: the audit lists such a DSCP as not checked.
UNMAPPED_DSCP_TC: int | None = None
ON_WORDS = frozenset({"enable", "enabled", "on"})
#: The only PFC-watchdog mitigation Cumulus has (cumulus.WATCHDOG_ACTIONS).
WATCHDOG_ACTION = "drop"


def ports_of(spec: str) -> list[str]:
    """NVUE interface lists as ``nv config show -o commands`` compresses them -> the interface names: ranges
    (``swp1-3``, ``swp1-swp3``), breakout ranges (``swp1s0-3``: swp1s0..swp1s3) and parts without a prefix,
    which continue the previous part's (``swp1,6-7`` = swp1, swp6, swp7; ``vlan200,300``).

    >>> ports_of("swp1-3,swp7"), ports_of("swp1s0"), ports_of("swp1,6-7,swp9s0-1")
    (['swp1', 'swp2', 'swp3', 'swp7'], ['swp1s0'], ['swp1', 'swp6', 'swp7', 'swp9s0', 'swp9s1'])
    """
    out: list[str] = []
    prefix = ""
    for part in spec.split(","):
        if m := re.match(r"[A-Za-z_][A-Za-z_\-]*?(?=\d|$)", part):
            prefix = m.group(0)
        elif part[:1].isdigit():
            part = prefix + part
        r = re.fullmatch(r"(?P<base>.*?)(?P<lo>\d+)-(?:(?P=base))?(?P<hi>\d+)", part)
        if r and r.group("base") and int(r.group("lo")) <= int(r.group("hi")):
            out.extend(f"{r.group('base')}{i}" for i in range(int(r.group("lo")), int(r.group("hi")) + 1))
        else:
            out.append(part)
    return out


def _ids(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


@dataclass
class _Nv:
    dscp: dict[str, dict[int, int]] = field(default_factory=dict)
    egress: dict[str, dict[int, int]] = field(default_factory=dict)
    pfc: dict[str, dict[str, str]] = field(default_factory=dict)
    cc: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    sched: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    wd: dict[str, str] = field(default_factory=dict)
    ifaces: dict[str, dict[str, str]] = field(default_factory=dict)
    roce: dict[str, str] = field(default_factory=dict)  # ``qos roce`` settings: mode, enable, state
    trust: dict[str, str] = field(default_factory=dict)  # mapping profile -> trust word (TRUST_FROM_NVUE)


def _qos_roce(nv: _Nv, w: list[str]) -> None:
    nv.roce.update({w[1]: w[2]} if len(w) >= 3 else {"mode": "lossless"})


def _roce_lossless(nv: _Nv) -> bool:
    """Whether ``qos roce`` is on in lossless mode (``nv set qos roce``, ``… mode lossless``, ``… enable on``
    or ``… state enabled``: lossless is RoCE's default mode, CL 5.14/5.15 RoCE page)."""
    off = nv.roce.get("enable", nv.roce.get("state", "on")) not in ON_WORDS
    return bool(nv.roce) and not off and nv.roce.get("mode", "lossless") == "lossless"


def _qos_watchdog(nv: _Nv, w: list[str]) -> None:
    if len(w) >= 3:
        nv.wd[w[1]] = w[2]


#: ``qos mapping <profile> trust`` keyword -> the trust word of :class:`~roce_tune.qos.SwitchQos`
TRUST_FROM_NVUE = {"l2": "pcp", "l3": "dscp", "both": "both", "port": "port"}


def _qos_mapping(nv: _Nv, w: list[str]) -> None:
    if len(w) >= 4 and w[2] == "trust" and w[3] in TRUST_FROM_NVUE:
        nv.trust[w[1]] = TRUST_FROM_NVUE[w[3]]
    elif len(w) >= 6 and w[2] == "dscp" and w[4] == "switch-priority":
        nv.dscp.setdefault(w[1], {}).update({d: int(w[5]) for d in _ids(w[3])})


def _qos_egress(nv: _Nv, w: list[str]) -> None:
    if len(w) >= 6 and w[2] == "switch-priority" and w[4] == "traffic-class":
        nv.egress.setdefault(w[1], {}).update({sp: int(w[5]) for sp in _ids(w[3])})


def _qos_pfc(nv: _Nv, w: list[str]) -> None:
    """``switch-priority`` is a collection: each line adds its ids (``nv config show`` prints one per id)."""
    if len(w) >= 4:
        prof = nv.pfc.setdefault(w[1], {})
        if w[2] == "switch-priority" and prof.get(w[2]):
            prof[w[2]] = f"{prof[w[2]]},{w[3]}"
        else:
            prof[w[2]] = w[3]


def _qos_per_tc(nv: _Nv, w: list[str]) -> None:
    if len(w) >= 6 and w[2] == "traffic-class":
        table = nv.cc if w[0] == "congestion-control" else nv.sched
        for tc in _ids(w[3]):
            table.setdefault(w[1], {}).setdefault(tc, {})[w[4]] = w[5]


#: ``nv set qos <kind> ...`` -> reader of the words from ``<kind>`` on.
_QOS = {
    "roce": _qos_roce,
    "pfc-watchdog": _qos_watchdog,
    "mapping": _qos_mapping,
    "egress-queue-mapping": _qos_egress,
    "pfc": _qos_pfc,
    "congestion-control": _qos_per_tc,
    "egress-scheduler": _qos_per_tc,
}


def _qos(nv: _Nv, w: list[str]) -> None:
    reader = _QOS.get(w[0])
    if reader is not None:
        reader(nv, w)


def _iface(nv: _Nv, w: list[str]) -> None:
    rest = w[1:]
    for port in ports_of(w[0]):
        d = nv.ifaces.setdefault(port, {})
        if rest[:1] == ["qos"] and len(rest) >= 4 and rest[2] == "profile":
            d[rest[1]] = rest[3]
        elif rest[:3] == ["qos", "pfc-watchdog", "state"] and len(rest) >= 4:
            d["watchdog"] = rest[3]
        elif rest[:2] == ["link", "mtu"] and len(rest) >= 3:
            d["mtu"] = rest[2]


def _parse(text: str) -> _Nv:
    nv = _Nv()
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("nv set "):
            continue
        try:
            w = shlex.split(s)[2:]
        except ValueError:
            w = s.split()[2:]
        if w[:1] == ["qos"] and len(w) > 1:
            _qos(nv, w[1:])
        elif w[:1] == ["interface"] and len(w) > 2:
            _iface(nv, w[1:])
    return nv


def _ecn(nv: _Nv, profile: str | None) -> dict[int, QueueEcn]:
    out = {}
    for tc, d in sorted((nv.cc.get(profile or "") or {}).items()):
        if d.get("ecn") in ON_WORDS:
            prob = d.get("probability")
            out[tc] = QueueEcn(
                kmin_bytes=int(d["min-threshold"]) if "min-threshold" in d else None,
                kmax_bytes=int(d["max-threshold"]) if "max-threshold" in d else None,
                pmax_percent=float(prob) if prob is not None else None,
            )
    return out


def _schedulers(nv: _Nv, profile: str | None) -> list[Scheduler] | None:
    out = []
    for tc, d in sorted((nv.sched.get(profile or "") or {}).items()):
        if d.get("mode") == "strict":
            out.append(Scheduler(queue=tc, mode="strict"))
        elif d.get("mode") == "dwrr":
            out.append(
                Scheduler(
                    queue=tc, mode="dwrr", weight_percent=int(d["bw-percent"]) if "bw-percent" in d else None
                )
            )
    return out or None


def _pfc(nv: _Nv, profile: str | None) -> tuple[list[int], float | None]:
    p = nv.pfc.get(profile or "")
    if p is None:
        return [], None
    off = p.get("tx") not in ON_WORDS and p.get("rx") not in ON_WORDS and ("tx" in p or "rx" in p)
    prios = [] if off or "switch-priority" not in p else sorted(set(_ids(p["switch-priority"])))
    return prios, float(p["cable-length"]) if "cable-length" in p else None


def _watchdog(nv: _Nv) -> WatchdogQos | None:
    if not nv.wd:
        return None
    poll = int(nv.wd["polling-interval"]) if "polling-interval" in nv.wd else None
    robust = int(nv.wd["robustness"]) if "robustness" in nv.wd else None
    return WatchdogQos(
        poll_ms=poll, detection_ms=poll * robust if poll and robust else None, action=WATCHDOG_ACTION
    )


def read_back(text: str) -> SwitchQos:
    """Parse NVUE ``nv set`` commands (rendered or ``nv config show -o commands``) into :class:`SwitchQos`.

    Ports are the interfaces the text names; each uses its bound profiles, else ``default-global``. Never
    raises on unknown commands: they are ignored."""
    nv = _parse(text)
    ports = {}
    for name, d in sorted(nv.ifaces.items()):
        if not name.startswith("swp"):
            continue
        prios: list[int] | None
        prios, cable = _pfc(nv, pfc_profile := d.get("pfc", DEFAULT))
        if pfc_profile not in nv.pfc and (_roce_lossless(nv) or pfc_profile != DEFAULT):
            # RoCE lossless mode's own PFC, or a bound profile the text does not hold (a filtered capture:
            # NVUE binds only existing profiles): not stated, unknown (not off)
            prios = None
        cc_profile = d.get("congestion-control", DEFAULT)
        mapping = d.get("mapping", DEFAULT)
        ports[name] = PortQos(
            name=name,
            trust=nv.trust.get(mapping) if mapping != DEFAULT else None,
            mtu=int(d["mtu"]) if "mtu" in d else None,
            cable_m=cable,
            pfc_priorities=prios,
            ecn=(None if cc_profile not in nv.cc and (nv.roce or cc_profile != DEFAULT)
                 else _ecn(nv, cc_profile)),
            watchdog=d.get("watchdog") in ON_WORDS,
        )
    sched_profile = majority([d.get("egress-scheduler", DEFAULT) for d in nv.ifaces.values()]) or DEFAULT
    return SwitchQos(
        dscp_to_tc=nv.dscp.get(DEFAULT) or None,
        tc_to_queue=nv.egress.get(DEFAULT) or None,
        schedulers=_schedulers(nv, sched_profile),
        watchdog=_watchdog(nv),
        trust=nv.trust.get(DEFAULT),
        ports=ports,
    )


def expressible_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as the NVUE output carries it: every port (each gets its MTU), cable
    length in whole metres (rounded up), no headroom or restoration timer, watchdog action drop; lossy ports
    with the ``default-global`` PFC/ECN settings when those are the lossless ports' (NVUE applies
    default-global to every port). Each change is an RT241 finding of cumulus.render_findings."""
    from roce_tune.platforms import cumulus

    exp = expected_qos(plan.classification, switch)
    ctx = cumulus.build_context(plan, switch)
    glob_pfc = next((g for g in ctx["pfc"] if not g["bound"]), None)
    glob_ecn = next((e for e in ctx["ecn"] if not e["bound"]), None)
    lossless = {p.name for p in switch.ports if p.lossless}
    ports = {}
    for n, p in exp.ports.items():
        upd: dict[str, object] = {"headroom": None, "cable_m": float(max(1, math.ceil(p.cable_m)))
                                  if p.cable_m is not None else None}
        if n not in lossless:
            upd.update(pfc_priorities=list(glob_pfc["priorities"]) if glob_pfc else [],
                       cable_m=float(glob_pfc["cable"]) if glob_pfc else None,
                       ecn={q: QueueEcn(kmin_bytes=glob_ecn["min"], kmax_bytes=glob_ecn["max"],
                                        pmax_percent=float(glob_ecn["probability"]))
                            for q in glob_ecn["queues"]}
                       if glob_ecn else None)
        ports[n] = p.model_copy(update=upd)
    wd = exp.watchdog.model_copy(update={"restoration_ms": None}) if exp.watchdog is not None else None
    return exp.model_copy(update={"ports": ports, "watchdog": wd})
