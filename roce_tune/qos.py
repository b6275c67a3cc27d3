"""The per-switch QoS state in one typed shape, whether it comes from a plan or from a running config.

Every platform reads its rendered or running configuration back into :class:`SwitchQos`
(``read_back`` in the platform contract), and :func:`expected_qos` projects a plan's switch onto the same
shape. Tests compare the two to prove "what is rendered is what the plan says"; ``audit`` compares a
live switch with the plan in the same terms ("priority 3 is not lossless on leaf1 Ethernet0").

Unknown is not zero: a field a configuration does not express (or a platform cannot) is ``None``, never
a default value; comparison (:func:`differences`) only judges fields both sides know.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.plan import Classification, PortPlan, SwitchPlan

_T = TypeVar("_T")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QueueEcn(_Frozen):
    """ECN/WRED on one egress queue, in bytes and percent as the plan states them.

    ``drop_*`` are the non-ECT drop thresholds where the configuration has them separately.
    ``kmin_percent``/``kmax_percent`` are the ramp as percent of the queue buffer, for platforms that take
    thresholds that way (Junos ``drop-profiles ... interpolate fill-level``): a read-back of such a
    configuration has only these, the plan has them where it knows the queue buffer
    (``EcnProfile.queue_buffer_bytes``), and the two are compared in percent."""

    kmin_bytes: int | None = None
    kmax_bytes: int | None = None
    pmax_percent: float | None = None
    drop_min_bytes: int | None = None
    drop_max_bytes: int | None = None
    drop_probability_percent: float | None = None
    kmin_percent: float | None = None
    kmax_percent: float | None = None


class PortHeadroom(_Frozen):
    """The lossless PG's buffer as the configuration expresses it (any field may be absent).

    ``xon``/``xoff``/``size`` as SONiC's BUFFER_PROFILE; ``static_buffer``/``pause_threshold``/
    ``resume_threshold`` as platforms that reserve a static PG buffer with pause/resume occupancies
    (NX-OS ``pause buffer-size ... pause-threshold ... resume-threshold``)."""

    xon_bytes: int | None = None
    xoff_bytes: int | None = None
    size_bytes: int | None = None
    static_buffer_bytes: int | None = None
    pause_threshold_bytes: int | None = None
    resume_threshold_bytes: int | None = None


class PortQos(_Frozen):
    """One port's lossless configuration."""

    name: str
    mtu: int | None = None
    cable_m: float | None = Field(default=None, description="cable length the platform sizes headroom from")
    pfc_priorities: list[int] | None = Field(default=None, description="priorities with PFC on; [] = PFC off")
    headroom: PortHeadroom | None = None
    ecn: dict[int, QueueEcn] | None = Field(default=None,
                                            description="egress queue -> ECN/WRED on that queue")
    watchdog: bool | None = Field(default=None, description="PFC watchdog on for this port's lossless queues")
    trust: str | None = Field(default=None, description="what the port classifies ingress traffic by, where "
                              "its own configuration (or a profile it binds) states it: dscp, pcp, both "
                              "(DSCP for IP, PCP otherwise), port (no marking: the port default) or none "
                              "(trust disabled); None = not stated here (the switch's trust applies); never "
                              "planned")
    scope: str | None = Field(default=None, description="the part of the switch's configuration that states "
                              "the port where it has several (a SONiC multi-ASIC namespace, asic0 …); never "
                              "planned, so never a difference")


class Scheduler(_Frozen):
    """One egress queue's scheduling."""

    queue: int
    mode: str = Field(description="strict or dwrr")
    weight_percent: int | None = None


class WatchdogQos(_Frozen):
    """Switch-wide PFC watchdog timers and action, where configured."""

    detection_ms: int | None = None
    restoration_ms: int | None = None
    poll_ms: int | None = None
    action: str | None = None


class SwitchQos(_Frozen):
    """A switch's QoS as one typed value: maps, scheduler, watchdog, buffer model and per-port state."""

    dscp_to_tc: dict[int, int] | None = None
    tc_to_queue: dict[int, int] | None = None
    tc_to_pg: dict[int, int] | None = None
    dscp_to_queue: dict[int, int] | None = Field(
        default=None, description="DSCP -> egress queue, for platforms that classify to a queue without a TC "
                          "(Junos forwarding classes)")
    schedulers: list[Scheduler] | None = None
    watchdog: WatchdogQos | None = None
    buffer_model: str | None = Field(default=None, description="SONiC: traditional or dynamic")
    trust: str | None = Field(default=None, description="what the switch classifies ingress traffic by where "
                              "no port states its own (the words of PortQos.trust); None = not stated: the "
                              "platform's default; never planned")
    ports: dict[str, PortQos] = Field(default_factory=dict)


def _percent_of(value: int, whole: int | None) -> float | None:
    return value * 100 / whole if whole else None


def _port_expected(sw: SwitchPlan, p: PortPlan, lossless_queues: list[int]) -> PortQos:
    ecn: dict[int, QueueEcn] | None = None
    if p.ecn_profile is not None:
        prof = next(e for e in sw.ecn_profiles if e.name == p.ecn_profile)
        qb = prof.queue_buffer_bytes
        ecn = {q: QueueEcn(kmin_bytes=prof.kmin_bytes, kmax_bytes=prof.kmax_bytes,
                           pmax_percent=prof.pmax_percent,
                           drop_min_bytes=prof.drop_min_bytes, drop_max_bytes=prof.drop_max_bytes,
                           drop_probability_percent=prof.drop_probability_percent,
                           kmin_percent=_percent_of(prof.kmin_bytes, qb),
                           kmax_percent=_percent_of(prof.kmax_bytes, qb))
               for q in lossless_queues}
    h = p.headroom
    hr = (PortHeadroom(xon_bytes=h.xon_bytes, xoff_bytes=h.xoff_bytes, size_bytes=h.size_bytes,
                       static_buffer_bytes=h.static_buffer_bytes,
                       pause_threshold_bytes=h.pause_threshold_bytes,
                       resume_threshold_bytes=h.resume_threshold_bytes) if h is not None else None)
    return PortQos(name=p.name, mtu=p.mtu, cable_m=p.cable_m, pfc_priorities=list(p.pfc_priorities),
                   headroom=hr,
                   ecn=ecn, watchdog=sw.watchdog.enabled if p.lossless else None)


def expected_qos(classification: Classification, sw: SwitchPlan) -> SwitchQos:
    """The plan's switch ``sw`` as a :class:`SwitchQos`: everything the plan states for it.

    Args:
        classification: the plan's classification (maps, lossless queues, schedulers).
        sw: the switch.
    """
    c = classification
    queues = sorted(c.lossless_queues)
    return SwitchQos(
        dscp_to_tc=dict(c.dscp_to_tc), tc_to_queue=dict(c.tc_to_queue), tc_to_pg=dict(c.tc_to_pg),
        dscp_to_queue={d: c.tc_to_queue[tc] for d, tc in c.dscp_to_tc.items() if tc in c.tc_to_queue},
        schedulers=[Scheduler(queue=s.queue, mode=s.mode, weight_percent=s.weight_percent)
                    for s in c.schedulers],
        watchdog=WatchdogQos(detection_ms=sw.watchdog.detection_ms, restoration_ms=sw.watchdog.restoration_ms,
                             poll_ms=sw.watchdog.poll_ms, action=sw.watchdog.action) if sw.watchdog.enabled
                             else None,
        ports={p.name: _port_expected(sw, p, queues) for p in sw.ports})


def differences(expected: SwitchQos, seen: SwitchQos, prefix: str = "", lost: bool = False) -> list[str]:
    """Every field both sides know and that differs, as ``path: expected != seen`` lines.

    A ``None`` on either side is "not expressed / not read" and is not a difference: callers that
    require a field (e.g. a platform that must express headroom) check it for ``None`` themselves
    (:func:`missing_fields`). With ``lost=True`` a value ``expected`` has and ``seen`` lacks (None) is a
    difference too: what a platform's syntax drops from the plan (``expressible_qos``) is listed.
    """
    out: list[str] = []

    def walk(a: object, b: object, path: str) -> None:
        if a is None or b is None:
            if lost and a is not None:
                out.append(f"{path}: {a!r} != None")
            return
        if isinstance(a, BaseModel) and isinstance(b, BaseModel):
            for name in type(a).model_fields:
                walk(getattr(a, name), getattr(b, name), f"{path}.{name}" if path else name)
        elif isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b), key=str):
                if k not in a or k not in b:
                    out.append(f"{path}[{k}]: {'missing' if k not in b else 'unexpected'}")
                else:
                    walk(a[k], b[k], f"{path}[{k}]")
        elif isinstance(a, list) and isinstance(b, list) and a and isinstance(a[0], BaseModel):
            if len(a) != len(b):
                out.append(f"{path}: {len(a)} entries != {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}[{i}]")
        elif a != b:
            out.append(f"{path}: {a!r} != {b!r}")

    walk(expected, seen, prefix)
    return out


def _values(obj: object, parts: list[str]) -> list[tuple[str, object]]:
    """(path, value) of every instance of the dotted field path under ``obj`` (dicts are walked by key)."""
    if not parts:
        return [("", obj)]
    if obj is None:
        return []
    if isinstance(obj, dict):
        return [(f"[{k}]{p}", v) for k in sorted(obj, key=str) for p, v in _values(obj[k], parts)]
    if isinstance(obj, list):
        return [(f"[{i}]{p}", v) for i, x in enumerate(obj) for p, v in _values(x, parts)]
    head, rest = parts[0], parts[1:]
    return [(f".{head}{p}", v) for p, v in _values(getattr(obj, head), rest)]


def missing_fields(seen: SwitchQos, expected: SwitchQos, fields: frozenset[str]) -> list[str]:
    """Paths of ``fields`` (dotted, e.g. ``ports.headroom.xoff_bytes``, ``watchdog.poll_ms``) that
    ``expected`` has and ``seen`` does not (None): a platform that expresses a field but whose read-back
    lost it. Instances are matched by path (port name, queue), so a port ``seen`` lacks is listed too."""
    out = []
    for f in sorted(fields):
        have = dict(_values(seen, f.split(".")))
        for path, value in _values(expected, f.split(".")):
            if value is not None and have.get(path) is None:
                out.append(f"{f}{path}" if not path.startswith(".") else path[1:])
    return out


def majority(values: list[_T]) -> _T | None:
    """The most common of ``values`` (first seen wins a tie); None for an empty list. Read-backs use it
    for a switch-wide value that a configuration states per port or per profile."""
    best: _T | None = None
    counts: list[tuple[_T, int]] = []
    for v in values:
        for i, (w, n) in enumerate(counts):
            if w == v:
                counts[i] = (w, n + 1)
                break
        else:
            counts.append((v, 1))
    top = 0
    for v, n in counts:
        if n > top:
            best, top = v, n
    return best


#: ``READBACK_BY_DESIGN`` entries shared by platforms: ECN written in bytes (the percent view is for
#: platforms that take fill levels) and a DSCP->queue map that follows from the TC maps they read back.
BYTES_ECN_BY_DESIGN: dict[str, str] = {
    "kmin_percent": "thresholds are written in bytes; the percent view of the same ramp is for percent "
                    "platforms",
    "kmax_percent": "thresholds are written in bytes; the percent view of the same ramp is for percent "
                    "platforms",
}
TC_MAPS_BY_DESIGN: dict[str, str] = {
    "dscp_to_queue": "derived from dscp_to_tc and tc_to_queue, which are read back",
}

__all__ = ["BYTES_ECN_BY_DESIGN", "TC_MAPS_BY_DESIGN", "PortHeadroom", "PortQos", "QueueEcn", "Scheduler",
           "SwitchQos",
           "WatchdogQos", "differences", "expected_qos", "majority", "missing_fields"]
