"""The per-switch QoS state in one typed shape, whether it comes from a plan or from a running config.

Every platform reads its rendered or running configuration back into :class:`SwitchQos`
(``read_back`` in the platform contract), and :func:`expected_qos` projects a plan's switch onto the same
shape. Tests compare the two to prove "what is rendered is what the plan says"; ``audit`` compares a
live switch with the plan in the same terms ("priority 3 is not lossless on leaf1 Ethernet0").

Unknown is not zero: a field a configuration does not express (or a platform cannot) is ``None``, never
a default value; comparison (:func:`differences`) only judges fields both sides know.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from roce_tune.plan import Classification, PortPlan, SwitchPlan


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QueueEcn(_Frozen):
    """ECN/WRED on one egress queue, in bytes and percent as the plan states them.

    ``drop_*`` are the non-ECT drop thresholds where the configuration has them separately."""

    kmin_bytes: int | None = None
    kmax_bytes: int | None = None
    pmax_percent: float | None = None
    drop_min_bytes: int | None = None
    drop_max_bytes: int | None = None
    drop_probability_percent: float | None = None


class PortHeadroom(_Frozen):
    """The lossless PG's buffer as the configuration expresses it (any field may be absent)."""

    xon_bytes: int | None = None
    xoff_bytes: int | None = None
    size_bytes: int | None = None


class PortQos(_Frozen):
    """One port's lossless configuration."""

    name: str
    mtu: int | None = None
    pfc_priorities: list[int] | None = Field(None, description="priorities with PFC on; [] = PFC off")
    headroom: PortHeadroom | None = None
    ecn: dict[int, QueueEcn] | None = Field(None, description="egress queue -> ECN/WRED on that queue")
    watchdog: bool | None = Field(None, description="PFC watchdog on for this port's lossless queues")


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
    schedulers: list[Scheduler] | None = None
    watchdog: WatchdogQos | None = None
    buffer_model: str | None = Field(None, description="SONiC: traditional or dynamic")
    ports: dict[str, PortQos] = Field(default_factory=dict)


def _port_expected(sw: SwitchPlan, p: PortPlan, lossless_queues: list[int]) -> PortQos:
    ecn: dict[int, QueueEcn] | None = None
    if p.ecn_profile is not None:
        prof = next(e for e in sw.ecn_profiles if e.name == p.ecn_profile)
        ecn = {q: QueueEcn(kmin_bytes=prof.kmin_bytes, kmax_bytes=prof.kmax_bytes, pmax_percent=prof.pmax_percent,
                           drop_min_bytes=prof.drop_min_bytes, drop_max_bytes=prof.drop_max_bytes,
                           drop_probability_percent=prof.drop_probability_percent)
               for q in lossless_queues}
    hr = (PortHeadroom(xon_bytes=p.headroom.xon_bytes, xoff_bytes=p.headroom.xoff_bytes,
                       size_bytes=p.headroom.size_bytes) if p.headroom is not None else None)
    return PortQos(name=p.name, mtu=p.mtu, pfc_priorities=list(p.pfc_priorities), headroom=hr, ecn=ecn,
                   watchdog=sw.watchdog.enabled if p.lossless else None)


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
        schedulers=[Scheduler(queue=s.queue, mode=s.mode, weight_percent=s.weight_percent) for s in c.schedulers],
        watchdog=WatchdogQos(detection_ms=sw.watchdog.detection_ms, restoration_ms=sw.watchdog.restoration_ms,
                             poll_ms=sw.watchdog.poll_ms, action=sw.watchdog.action) if sw.watchdog.enabled else None,
        ports={p.name: _port_expected(sw, p, queues) for p in sw.ports})


def differences(expected: SwitchQos, seen: SwitchQos, prefix: str = "") -> list[str]:
    """Every field both sides know and that differs, as ``path: expected != seen`` lines.

    A ``None`` on either side is "not expressed / not read" and is not a difference: callers that
    require a field (e.g. a platform that must express headroom) check it for ``None`` themselves.
    """
    out: list[str] = []

    def walk(a: object, b: object, path: str) -> None:
        if a is None or b is None:
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


__all__ = ["PortHeadroom", "PortQos", "QueueEcn", "Scheduler", "SwitchQos", "WatchdogQos", "differences",
           "expected_qos"]
