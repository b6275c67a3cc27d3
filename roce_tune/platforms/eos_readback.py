"""Arista EOS CLI -> :class:`~roce_tune.qos.SwitchQos` (``read_back``), and what of a plan EOS can say.

Input: roce-tune's ``<switch>.cfg`` or ``show running-config`` (3-space indented modes, ``!`` comments,
unrelated blocks, ``qos profile`` blocks in any order and possibly entered several times). Read:

* ``qos map dscp <list> to traffic-class N`` (lists with spaces, commas or ranges), ``qos map traffic-class
  <list> to tx-queue Q``; TC 7 -> tx-queue 7 is fixed on EOS (eos.FIXED_TC_QUEUE) and read as such.
* per ``qos profile`` and per ``interface`` (interface lines override its ``service-profile``):
  ``priority-flow-control on`` + ``priority-flow-control priority N no-drop`` (PFC priorities; without
  ``on`` PFC is off), ``uc-tx-queue``/``tx-queue N`` with ``random-detect ecn minimum-threshold X <unit>
  maximum-threshold Y <unit> max-mark-probability P``, ``random-detect drop ... drop-probability P``,
  ``priority strict`` / ``no priority`` + ``bandwidth percent W``, ``priority-flow-control pause watchdog``
  and ``... port action drop|notify-only|errdisable``; ``mtu`` on the interface; ``qos trust dscp|cos`` and
  ``no qos trust`` (trust disabled) -> the port's trust (``dscp``, ``pcp``, ``none``), the interface's own
  line over its profile's (pyavd eos_cli_config_gen ethernet_interfaces/port_channel_interfaces/qos_profiles
  ``qos.trust``: dscp | cos | disabled, rendered ``qos trust <mode>`` / ``no qos trust``). An interface
  that states no trust keeps None: the EOS default trust is not read (no source roce-tune holds states it),
  so the audit lists the RoCE classification of such a port as not checked.
* ``priority-flow-control pause watchdog default timeout|recovery-time|polling-interval <s>``, a port's
  or profile's ``priority-flow-control pause watchdog port timer timeout T polling-interval P
  recovery-time R [forced]`` (which replaces the defaults on it; the switch-wide timers are those most
  PFC ports have) and the global ``priority-flow-control pause watchdog action``.
* PFC precedence: the interface's own ``priority-flow-control on`` / ``no priority-flow-control`` /
  ``priority-flow-control priority N no-drop|drop`` over its service-profile's; the global
  ``priority-flow-control all off`` turns PFC off on every interface (pyavd eos_cli_config_gen schema
  ``priority_flow_control.all_off``: "Disable PFC on all interfaces."; its templates print ``no
  priority-flow-control`` and ``priority-flow-control priority N drop`` for the off forms).

EOS has no per-port headroom roce-tune writes (see eos.py), no TC -> PG map and no cable length: those
fields stay None. Units: ``bytes`` exact; ``kbytes``/``mbytes`` x1024 [U: EOS manual wording "kilobytes"];
``segments``/``milliseconds`` not converted (None).
"""

from __future__ import annotations

from decimal import Decimal

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms.cli_readback import Block, after, cli_tree, id_list, to_bytes
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
        "watchdog.restoration_ms",
        "watchdog.poll_ms",
        "watchdog.action",
        "ports.trust",
        "ports.mtu",
        "ports.pfc_priorities",
        "ports.ecn.kmin_bytes",
        "ports.ecn.kmax_bytes",
        "ports.ecn.pmax_percent",
        "ports.ecn.drop_min_bytes",
        "ports.ecn.drop_max_bytes",
        "ports.ecn.drop_probability_percent",
        "ports.watchdog",
    }
)
#: EOS per-port stuck-queue action -> plan action (inverse of eos.WATCHDOG_ACTION); errdisable stays itself.
ACTION_FROM_EOS: dict[str, str] = {"drop": "drop", "notify-only": "alert", "errdisable": "errdisable"}
#: Plan fields EOS has no statement for by design (not plan values it changes): field -> why.
READBACK_BY_DESIGN: dict[str, str] = {
    **BYTES_ECN_BY_DESIGN,
    "tc_to_pg": "EOS assigns priority groups to traffic classes itself; there is no TC -> PG configuration",
    "cable_m": "EOS has no cable-length knob (headroom is the platform's own, see the headroom RT241)",
    **TC_MAPS_BY_DESIGN,
}
#: The TC of a DSCP no ``qos map dscp`` line names: None = unknown. ``qos map dscp <list> to traffic-class
#: N`` changes only the DSCPs it lists in EOS's default DSCP -> traffic-class map (Arista EOS User Manual,
#: "Quality of Service", QoS Data Fields and Traffic Classes: default maps, ``qos map``), which a running
#: configuration does not print and roce-tune does not model: the audit lists such a DSCP as not checked.
UNMAPPED_DSCP_TC: int | None = None
_QUEUE_WORDS = ("uc-tx-queue", "tx-queue")
_FIXED_TC_QUEUE = {7: 7}


def _ms(seconds: str) -> int:
    return int(Decimal(seconds) * 1000)


def _maps(root: Block) -> tuple[dict[int, int] | None, dict[int, int] | None]:
    dscp: dict[int, int] = {}
    tcq: dict[int, int] = {}
    for b in root.starting("qos", "map"):
        w = b.words()
        if len(w) < 6 or w[-3] != "to":
            continue
        if w[2] == "dscp" and w[-2] == "traffic-class":
            dscp.update({d: int(w[-1]) for d in id_list(" ".join(w[3:-3]))})
        elif w[2] == "traffic-class" and w[-2] == "tx-queue":
            tcq.update({tc: int(w[-1]) for tc in id_list(" ".join(w[3:-3]))})
    if tcq:
        tcq = {**_FIXED_TC_QUEUE, **tcq}
    return dscp or None, tcq or None


def _queue_ecn(q: Block) -> QueueEcn | None:
    ecn = drop = None
    for b in q.children.values():
        w = b.words()
        if w[:2] == ["random-detect", "ecn"] and "minimum-threshold" in w:
            ecn = w
        elif w[:2] == ["random-detect", "drop"] and "minimum-threshold" in w:
            drop = w
    if ecn is None:
        return None

    def thr(words: list[str], key: str) -> int | None:
        i = words.index(key) if key in words else -1
        return to_bytes(words[i + 1], words[i + 2]) if 0 <= i < len(words) - 2 else None

    def pct(words: list[str] | None, key: str) -> float | None:
        v = after(words, key) if words else None
        return float(v) if v is not None else None

    return QueueEcn(
        kmin_bytes=thr(ecn, "minimum-threshold"),
        kmax_bytes=thr(ecn, "maximum-threshold"),
        pmax_percent=pct(ecn, "max-mark-probability"),
        drop_min_bytes=thr(drop, "minimum-threshold") if drop else None,
        drop_max_bytes=thr(drop, "maximum-threshold") if drop else None,
        drop_probability_percent=pct(drop, "drop-probability"),
    )


def _queues(blocks: list[Block]) -> dict[int, Block]:
    out: dict[int, Block] = {}
    for blk in blocks:
        for b in blk.children.values():
            w = b.words()
            if len(w) == 2 and w[0] in _QUEUE_WORDS and w[1].isdigit():
                merged = out.setdefault(int(w[1]), Block(b.line))
                merged.children.update(b.children)
    return out


def _scheduler(q: int, blk: Block) -> Scheduler | None:
    lines = blk.child_lines()
    bw = next((b.words()[-1] for b in blk.starting("bandwidth", "percent")), None)
    if "priority strict" in lines:
        return Scheduler(queue=q, mode="strict")
    if "no priority" in lines or bw is not None:
        return Scheduler(queue=q, mode="dwrr", weight_percent=int(bw) if bw is not None else None)
    return None


class _Port:
    """One interface's effective QoS: its service-profile's lines, then its own."""

    def __init__(self, iface: Block, profiles: dict[str, Block], pfc_all_off: bool = False):
        self.pfc_all_off = pfc_all_off
        prof = next((b.words()[1] for b in iface.starting("service-profile")), None)
        self.blocks = ([profiles[prof]] if prof in profiles else []) + [iface]
        #: the interface binds a ``qos profile`` the text does not hold (a partial capture): what the profile
        #: gives (PFC, ECN, watchdog) is unknown
        self.profile_missing = prof is not None and prof not in profiles
        self.lines = {ln for b in self.blocks for ln in b.child_lines()}
        self.queues = _queues(self.blocks)
        mtu = next((b.words()[1] for b in iface.starting("mtu")), None)
        self.mtu = int(mtu) if mtu is not None and mtu.isdigit() else None

    def pfc(self) -> list[int] | None:
        """No-drop priorities: the profile's statements, then the interface's own, which win (``no
        priority-flow-control`` turns off what the profile turns on, ``priority-flow-control priority N
        drop`` undoes a profile's ``no-drop``); none under the global ``priority-flow-control all off``;
        None (unknown) when the bound profile is not in the text and the interface does not turn PFC off."""
        if self._pfc_unknown():
            return None
        on = False
        no_drop: dict[int, bool] = {}
        for blk in self.blocks:
            for w in (ln.split() for ln in blk.child_lines()):
                if w == ["priority-flow-control", "on"]:
                    on = True
                elif w == ["no", "priority-flow-control"]:
                    on = False
                elif (len(w) == 4 and w[:2] == ["priority-flow-control", "priority"] and w[2].isdigit()
                      and w[3] in ("no-drop", "drop")):
                    no_drop[int(w[2])] = w[3] == "no-drop"
        return [] if self.pfc_all_off or not on else sorted(p for p, nd in no_drop.items() if nd)

    def _pfc_unknown(self) -> bool:
        """The bound profile is not in the text and nothing else turns PFC off (the interface's ``no
        priority-flow-control``, the global ``all off``)."""
        return self.profile_missing and not self.pfc_all_off and "no priority-flow-control" not in self.lines

    def action(self) -> str | None:
        words = [
            ln.split()
            for ln in self.lines
            if ln.startswith("priority-flow-control pause watchdog port action ")
        ]
        return ACTION_FROM_EOS.get(words[0][-1], words[0][-1]) if words else None

    def timers(self) -> dict[str, int] | None:
        """``priority-flow-control pause watchdog port timer timeout T polling-interval P recovery-time R
        [forced]`` (seconds; pyavd eos_cli_config_gen qos_profiles/ethernet_interfaces templates) as
        {keyword: ms}; None when the port has no timer of its own."""
        for ln in self.lines:
            w = ln.split()
            if w[:5] == ["priority-flow-control", "pause", "watchdog", "port", "timer"]:
                return {k: _ms(v) for k, v in zip(w[5::2], w[6::2]) if k in _TIMER_WORDS}
        return None

    def trust(self) -> str | None:
        """``dscp``, ``pcp`` (``qos trust cos``) or ``none`` (``no qos trust``): the interface's own statement
        over its service-profile's; None where neither states one."""
        found: str | None = None
        for blk in self.blocks:
            for w in (ln.split() for ln in blk.child_lines()):
                if w == ["no", "qos", "trust"]:
                    found = "none"
                elif len(w) == 3 and w[:2] == ["qos", "trust"] and w[2] in _TRUST_FROM_EOS:
                    found = _TRUST_FROM_EOS[w[2]]
        return found

    def qos(self, name: str) -> PortQos:
        ecn = {q: e for q, b in sorted(self.queues.items()) if (e := _queue_ecn(b)) is not None}
        watchdog = "priority-flow-control pause watchdog" in self.lines
        return PortQos(
            name=name,
            trust=self.trust(),
            mtu=self.mtu,
            pfc_priorities=self.pfc(),
            ecn=None if self.profile_missing and not ecn else ecn,
            watchdog=None if self.profile_missing and not watchdog else watchdog,
        )

    def schedulers(self) -> list[Scheduler]:
        return [s for q, b in sorted(self.queues.items()) if (s := _scheduler(q, b)) is not None]


_TIMER_WORDS = ("timeout", "polling-interval", "recovery-time")
#: ``qos trust <mode>`` -> the trust word of :class:`~roce_tune.qos.PortQos` (eos.TRUST_KEYWORD reversed)
_TRUST_FROM_EOS = {"dscp": "dscp", "cos": "pcp"}


def _watchdog(root: Block, ports: list[_Port]) -> WatchdogQos | None:
    """Switch-wide watchdog: the ``default`` timers, overridden by the port timers most lossless ports
    have (a port's ``port timer`` replaces the defaults on it), and the action as :meth:`_Port.action`."""
    timers: dict[str, int] = {}
    for b in root.starting("priority-flow-control", "pause", "watchdog", "default"):
        w = b.words()
        if len(w) == 6:
            timers[w[4]] = _ms(w[5])
    own = majority([tuple(sorted(t.items())) for p in ports if (t := p.timers())])
    timers.update(dict(own or ()))
    glob = next(
        (b.words()[-1] for b in root.starting("priority-flow-control", "pause", "watchdog", "action")), None
    )
    action = majority([a for p in ports if (a := p.action()) is not None])
    action = action or (ACTION_FROM_EOS.get(glob, glob) if glob else None)
    if not timers and action is None:
        return None
    return WatchdogQos(
        detection_ms=timers.get("timeout"),
        restoration_ms=timers.get("recovery-time"),
        poll_ms=timers.get("polling-interval"),
        action=action,
    )


def read_back(text: str) -> SwitchQos:
    """Parse EOS configuration text (rendered or ``show running-config``) into :class:`SwitchQos`.

    Ports are the ``interface`` blocks; the switch-wide scheduler and watchdog action are those of most
    PFC-enabled ports (:func:`~roce_tune.qos.majority`). An interface bound to a ``service-profile`` the text
    does not hold (a partial capture) has its PFC, ECN and watchdog unknown (None) where its own lines do
    not state them. Never raises on unknown lines: they are ignored.
    """
    root = cli_tree(text, "!")
    profiles = {b.words()[2]: b for b in root.starting("qos", "profile") if len(b.words()) == 3}
    all_off = "priority-flow-control all off" in root.children
    ifaces = {b.words()[1]: _Port(b, profiles, all_off) for b in root.starting("interface")
              if len(b.words()) == 2}
    lossless = [p for p in ifaces.values() if p.pfc()]
    dscp, tcq = _maps(root)
    scheds = majority([s for p in lossless if (s := p.schedulers())])
    return SwitchQos(
        dscp_to_tc=dscp,
        tc_to_queue=tcq,
        schedulers=scheds,
        watchdog=_watchdog(root, lossless),
        ports={n: p.qos(n) for n, p in ifaces.items()},
    )


def expressible_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as EOS can carry it: MTU clamped to eos.MAX_MTU, Pmax and drop
    probability as whole percent 1..100, watchdog timers in EOS's range and steps
    (eos.watchdog_timers_ms), the watchdog action mapped (``forward`` -> eos.WATCHDOG_FALLBACK_ACTION),
    no TC -> PG map, headroom or cable length, the TC -> tx-queue pairs EOS fixes (eos.FIXED_TC_QUEUE) in
    place of the plan's. Each change has an RT241 finding (eos.render_findings)."""
    from roce_tune.platforms import eos

    exp = expected_qos(plan.classification, switch)

    def pct(v: float | None) -> float | None:
        return float(max(1, min(100, round(v)))) if v is not None else None

    ports = {}
    for n, p in exp.ports.items():
        ecn = (
            {
                q: e.model_copy(
                    update={
                        "pmax_percent": pct(e.pmax_percent),
                        "kmin_percent": None,
                        "kmax_percent": None,
                        "drop_probability_percent": pct(e.drop_probability_percent),
                    }
                )
                for q, e in p.ecn.items()
            }
            if p.ecn is not None
            else None
        )
        ports[n] = p.model_copy(
            update={
                "mtu": min(p.mtu, eos.MAX_MTU) if p.mtu is not None else None,
                "ecn": ecn,
                "headroom": None,
                "cable_m": None,
            }
        )
    wd = exp.watchdog
    if wd is not None:
        timers = {k: ms for k, (_, ms) in eos.watchdog_timers_ms(switch).items()}
        wd = wd.model_copy(update={"detection_ms": timers["timeout"],
                                   "restoration_ms": timers["recovery-time"],
                                   "poll_ms": timers["polling-interval"]})
    if wd is not None and wd.action is not None:
        eos_action = eos.WATCHDOG_ACTION.get(wd.action) or eos.WATCHDOG_FALLBACK_ACTION
        wd = wd.model_copy(update={"action": ACTION_FROM_EOS[eos_action]})
    tcq = {**exp.tc_to_queue, **eos.FIXED_TC_QUEUE} if exp.tc_to_queue is not None else None
    return exp.model_copy(update={"ports": ports, "watchdog": wd, "tc_to_pg": None, "dscp_to_queue": None,
                                  "tc_to_queue": tcq})
