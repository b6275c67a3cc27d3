"""Cisco NX-OS CLI -> :class:`~roce_tune.qos.SwitchQos` (``read_back``), and what of a plan NX-OS can say.

Input: roce-tune's ``<switch>.cfg`` or ``show running-config`` (2-space indented modes, ``!`` comments,
other class-maps/policies/interfaces, any order). Read (Nexus 9000 8-queue system classes):

* ``class-map type qos`` ``match dscp <list>`` (numbers, ranges, names such as ``af31``) and ``policy-map
  type qos`` ``class C`` / ``set qos-group N`` (``class-default`` for the rest) -> DSCP -> qos-group, which
  is the egress queue on the 8q templates (``c-out-8q-qN`` matches qos-group N): read as ``dscp_to_queue``.
  The policy is the one attached by most interfaces (``service-policy type qos input``) or ``system qos``.
  A whole configuration (it has ``system qos``) whose PFC ports and ``system qos`` attach no ``type qos``
  policy classifies nothing: every DSCP stays in qos-group 0, the default class (Cisco Nexus 9000 NX-OS QoS
  Configuration Guide, "Configuring Classification": unmatched traffic is class-default, qos-group 0);
  a policy named but not in the text (a partial capture) leaves the map unknown.
* ``policy-map type network-qos`` attached under ``system qos``: ``pause … pfc-cos <list>`` (the no-drop
  priorities; ``pause no-drop`` without ``pfc-cos``, Nexus 3000/5000: the ``match cos`` of the type-qos
  classes that set the class's qos-group, else unknown) and per-class ``mtu``.
* ``policy-map type queuing`` output classes ``c-out-8q-q-default|qN``: ``priority [level N]`` (strict),
  ``bandwidth remaining percent W`` or ``bandwidth percent W`` (DWRR; ``0`` = no guaranteed share, not a
  plan scheduler: skipped),
  ``random-detect minimum-threshold X <unit> maximum-threshold Y <unit> drop-probability P ... ecn``;
  ``random-detect threshold burst-optimized|mesh-optimized ecn`` and ``afd queue-desired N <unit> ecn``
  (Approximate Fair Drop) mark ECN without a Kmin/Kmax ramp: ECN on, thresholds unknown (Cisco Nexus 9000
  NX-OS QoS Configuration Guide 10.2(x), "Configuring Queuing and Scheduling": WRED thresholds, AFD with
  ECN);
  input classes ``c-in-qN``: ``pause buffer-size S pause-threshold P resume-threshold R`` (static-PG
  headroom).
* ``interface``: ``mtu``, ``priority-flow-control mode on|off`` (``on send-tlv``, NX-OS 10.x, is on;
  ``auto``/absent = DCBX-negotiated: unknown, None), ``priority-flow-control watch-dog-interval
  on|off``, ``service-policy`` lines (the name after the type and direction: a word after it, such as
  ``no-stats`` [U], is not the name; an interface without an output queuing policy uses the ``system
  qos`` one); the global ``priority-flow-control watch-dog-interval on|off``, which an interface without
  its own statement follows (Cisco Nexus 9000 NX-OS QoS Configuration Guide, "Configuring a Priority
  Flow Control Watchdog Interval": the command exists globally and per interface; roce-tune's own
  rendering states both).
* A partial capture (neither ``system qos`` nor ``hostname``: ``show running-config interface …``)
  leaves what the global statements decide unknown (None): the PFC CoS of ``mode on`` ports, the ECN of
  ports without an output queuing policy in the text, the watchdog of ports without their own statement.

Sources: Cisco Nexus 9000 NX-OS Quality of Service Configuration Guide (queuing, network-qos, PFC and
PFC watchdog chapters); see nxos.py for each statement's source.
"""

from __future__ import annotations

import re

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms.cli_readback import Block, after, cli_tree, dscp_list, id_list, to_bytes
from roce_tune.qos import (
    BYTES_ECN_BY_DESIGN,
    PortHeadroom,
    PortQos,
    QueueEcn,
    Scheduler,
    SwitchQos,
    WatchdogQos,
    expected_qos,
    majority,
)

#: Not used by NX-OS (it classifies to ``dscp_to_queue``; an unmatched DSCP is ``class-default``'s, read as
#: such): kept for the read-back contract (contract.READBACK_NAMES).
UNMAPPED_DSCP_TC: int | None = 0
READBACK_FIELDS = frozenset(
    {
        "dscp_to_queue",
        "schedulers",
        "ports.mtu",
        "ports.pfc_priorities",
        "ports.headroom.static_buffer_bytes",
        "ports.headroom.pause_threshold_bytes",
        "ports.headroom.resume_threshold_bytes",
        "ports.ecn.kmin_bytes",
        "ports.ecn.kmax_bytes",
        "ports.ecn.pmax_percent",
        "ports.watchdog",
    }
)
#: Plan fields NX-OS has no statement for by design: field -> why.
READBACK_BY_DESIGN: dict[str, str] = {
    **BYTES_ECN_BY_DESIGN,
    "dscp_to_tc": "NX-OS classifies DSCP to a qos-group, which is the egress queue: read back as "
                  "dscp_to_queue",
    "tc_to_queue": "qos-group N is queue N on the 8q system classes: read back as dscp_to_queue",
    "tc_to_pg": "the ingress class c-in-qN is fixed by the qos-group",
    "cable_m": "NX-OS takes the headroom itself (static PG buffer, pause/resume thresholds), not a cable "
               "length",
    "xon_bytes": "NX-OS headroom is the static-PG view (buffer size, pause/resume thresholds), read back as "
                 "such",
    "xoff_bytes": "NX-OS headroom is the static-PG view (buffer size, pause/resume thresholds), read back as "
                  "such",
    "size_bytes": "NX-OS headroom is the static-PG view (buffer size, pause/resume thresholds), read back as "
                  "such",
}
_QUEUE_CLASS = re.compile(r"^c-(?P<dir>out|in)-(?:8q-)?q(?P<q>\d|-default)$")


def _class_queue(name: str) -> tuple[str, int] | None:
    m = _QUEUE_CLASS.match(name)
    if not m:
        return None
    return m.group("dir"), 0 if m.group("q") == "-default" else int(m.group("q"))


def system_defined(name: str) -> bool:
    """A policy NX-OS defines itself (``default-8q-nq-policy``, ``default-8q-out-policy``,
    ``default-in-policy`` …: the ``default-`` names of the Nexus 9000 QoS guide's system-defined policies),
    which the running configuration does not print: it pauses nothing and marks no ECN."""
    return name.startswith("default-")


def _policies(root: Block, kind: str) -> dict[str, Block]:
    return {b.words()[3]: b for b in root.starting("policy-map", "type", kind) if len(b.words()) == 4}


def _classify(root: Block, policy: Block | None) -> dict[int, int] | None:
    if policy is None:
        return None
    cmaps = {b.words()[-1]: b for b in root.starting("class-map", "type", "qos")}
    out: dict[int, int] = {}
    default = None
    for c in policy.starting("class"):
        group = next((int(s.words()[-1]) for s in c.starting("set", "qos-group")), None)
        name = c.words()[-1]
        if group is None:
            continue
        if name == "class-default":
            default = group
            continue
        for m in cmaps[name].starting("match", "dscp") if name in cmaps else []:
            for d in dscp_list(" ".join(m.words()[2:])):
                out.setdefault(d, group)
    if default is not None:
        out.update({d: default for d in range(64) if d not in out})
    return out or None


def _random_detect(words: list[str]) -> QueueEcn | None:
    """A queuing class's ``random-detect … ecn`` or ``afd queue-desired … ecn`` line as its ECN marking.

    ``random-detect threshold burst-optimized|mesh-optimized ecn`` (WRED with the switch's own thresholds)
    and ``afd queue-desired N <unit> ecn`` (Approximate Fair Drop marking at a queue depth; Cisco: "ECN can
    be enabled with AFD on a particular class of traffic to mark the congestion state instead of dropping")
    mark ECN without a Kmin/Kmax ramp: ECN is on, its thresholds are not a plan ramp (None, not compared).
    Without ``ecn`` the line drops, it does not mark: None."""
    if "ecn" not in words:
        return None
    if words[0] == "afd" or "minimum-threshold" not in words:
        return QueueEcn()
    i, j = words.index("minimum-threshold"), words.index("maximum-threshold")
    prob = after(words, "drop-probability")
    return QueueEcn(
        kmin_bytes=to_bytes(words[i + 1], words[i + 2]),
        kmax_bytes=to_bytes(words[j + 1], words[j + 2]),
        pmax_percent=float(prob) if prob is not None else None,
    )


def _queuing(policy: Block | None) -> tuple[dict[int, QueueEcn], list[Scheduler], PortHeadroom | None]:
    ecn: dict[int, QueueEcn] = {}
    scheds: list[Scheduler] = []
    headroom = None
    for c in policy.starting("class", "type", "queuing") if policy else []:
        dq = _class_queue(c.words()[-1])
        if dq is None:
            continue
        direction, q = dq
        for b in c.children.values():
            w = b.words()
            if w[0] in ("random-detect", "afd") and (e := _random_detect(w)) is not None:
                ecn[q] = e
            elif w[0] == "priority":
                scheds.append(Scheduler(queue=q, mode="strict"))
            elif (weight := _bandwidth_percent(w)) is not None and weight > 0:
                scheds.append(Scheduler(queue=q, mode="dwrr", weight_percent=weight))
            elif w[:2] == ["pause", "buffer-size"] and direction == "in":
                headroom = PortHeadroom(
                    static_buffer_bytes=int(w[2]),
                    pause_threshold_bytes=_int(after(w, "pause-threshold")),
                    resume_threshold_bytes=_int(after(w, "resume-threshold")),
                )
    return ecn, sorted(scheds, key=lambda s: s.queue), headroom


def _bandwidth_percent(words: list[str]) -> int | None:
    """The share of ``bandwidth remaining percent W`` or ``bandwidth percent W`` (both DWRR weights of the
    queue), else None."""
    if words[:3] == ["bandwidth", "remaining", "percent"] and len(words) > 3:
        return _int(words[3])
    if words[:2] == ["bandwidth", "percent"] and len(words) > 2:
        return _int(words[2])
    return None


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.isdigit() else None


def _service(block: Block, kind: str, direction: str) -> str | None:
    """The policy name of ``service-policy type <kind> <direction> NAME [no-stats]`` (the name is the fifth
    word: a trailing ``no-stats`` is not it)."""
    return next((w[4] for b in block.starting("service-policy", "type", kind, direction)
                 if len(w := b.words()) > 4), None)


def _no_drop_cos(root: Block) -> list[int] | None:
    """The PFC CoS values of the ``system qos`` network-qos policy: each class's ``pause … pfc-cos <list>``
    (Nexus 9000 ``pause pfc-cos 3``; Nexus 3000/5000 ``pause no-drop pfc-cos 3``, or ``pause buffer-size …
    pfc-cos 3``); a ``pause no-drop`` class without ``pfc-cos`` pauses the CoS values that the type-qos
    policies classify into its qos-group (:func:`_class_cos`). None when such a class's CoS the
    configuration does not state (classified by DSCP, or its class-maps not captured), and when the
    text is partial (neither ``system qos`` nor ``hostname``: ``show running-config interface …``) or its
    network-qos policy is not in the text: unknown, not "no PFC"."""
    found = _network_qos_policy(root)
    if found is None:
        return None
    cos: set[int] = set()
    for c in found.children.values():
        for p in c.starting("pause"):
            w = p.words()
            if "pfc-cos" in w:
                cos.update(id_list(" ".join(_id_words(w[w.index("pfc-cos") + 1:]))))
            elif "no-drop" in w:
                by_group = _class_cos(root, c.words()[-1])
                if not by_group:
                    return None
                cos.update(by_group)
    return sorted(cos)


def _network_qos_policy(root: Block) -> Block | None:
    """The network-qos policy ``system qos`` attaches (an empty block for none or a system-defined one);
    None when it is not in the text: a partial capture (neither ``system qos`` nor ``hostname``), or a
    policy attached by a name the text does not define."""
    system = root.children.get("system qos")
    if system is None and not root.starting("hostname"):
        return None  # a partial capture (``show running-config interface …``): the policy is not in it
    name = next((w[3] for b in (system or Block("")).starting("service-policy", "type", "network-qos")
                 if len(w := b.words()) > 3), None)
    policy = _policies(root, "network-qos").get(name or "")
    if name is not None and policy is None and not system_defined(name):
        return None  # attached but not captured
    return policy or Block("")


def _id_words(words: list[str]) -> list[str]:
    """The leading words of ``words`` that are id lists (``3``, ``3,4``, ``2-4``)."""
    out = []
    for w in words:
        if not re.fullmatch(r"[\d,-]+", w):
            break
        out.append(w)
    return out


def _class_cos(root: Block, nq_class: str) -> set[int]:
    """The CoS values the ``policy-map type qos`` policies classify into the qos-groups that
    ``class-map type network-qos <nq_class>`` matches (``match qos-group N``; a type-qos class ``set
    qos-group N`` whose ``class-map type qos`` has ``match cos <list>``). Empty when none is stated."""
    groups = {g for b in root.starting("class-map", "type", "network-qos") if b.words()[-1] == nq_class
              for m in b.starting("match", "qos-group") for g in id_list(" ".join(m.words()[2:]))}
    cmaps = {b.words()[-1]: b for b in root.starting("class-map", "type", "qos")}
    cos: set[int] = set()
    for policy in _policies(root, "qos").values():
        for c in policy.starting("class"):
            sets = {int(w[-1]) for s in c.starting("set", "qos-group") if (w := s.words())[-1].isdigit()}
            if sets & groups and c.words()[-1] in cmaps:
                for m in cmaps[c.words()[-1]].starting("match", "cos"):
                    cos.update(id_list(" ".join(m.words()[2:])))
    return cos


def _watchdog_state(lines: list[str] | dict[str, Block]) -> bool | None:
    """``priority-flow-control watch-dog-interval on|off`` among ``lines``: True/False, None if not stated."""
    states = [ln.split()[-1] for ln in lines if ln.startswith("priority-flow-control watch-dog-interval ")]
    return {"on": True, "off": False}.get(states[-1]) if states else None


def _port(
    b: Block, queuing: dict[str, Block], sys_out: str | None, no_drop: list[int] | None,
    glob_wd: bool | None, whole: bool,
) -> tuple[PortQos, list[Scheduler]]:
    """One ``interface`` block: its QoS and the schedulers of its output queuing policy. An interface
    without its own ``watch-dog-interval`` statement has the global one's state (``glob_wd``; None:
    unknown). ``whole``: the text is a whole configuration (it has ``system qos`` or ``hostname``); in a
    partial one, a port whose output queuing policy is not in the text has unknown ECN (None), not
    "none"."""
    lines = b.child_lines()
    own_wd = _watchdog_state(lines)
    mode = next((ln.split()[2] for ln in lines if ln.startswith("priority-flow-control mode ")), None)
    out_name = _service(b, "queuing", "output") or sys_out
    out_known = (out_name in queuing or system_defined(out_name)) if out_name else whole
    ecn, sc, _ = _queuing(queuing.get(out_name or ""))
    _, _, headroom = _queuing(queuing.get(_service(b, "queuing", "input") or ""))
    mtu = next((_int(ln.split()[1]) for ln in lines if ln.startswith("mtu ")), None)
    pfc = (list(no_drop) if no_drop is not None else None) if mode == "on" else [] if mode == "off" else None
    return PortQos(
        name=b.words()[1],
        mtu=mtu,
        pfc_priorities=pfc,
        headroom=headroom,
        ecn=ecn if out_known else None,
        watchdog=own_wd if own_wd is not None else glob_wd,
    ), sc


def read_back(text: str) -> SwitchQos:
    """Parse NX-OS configuration text (rendered or ``show running-config``) into :class:`SwitchQos`.

    Never raises on unknown lines: they are ignored."""
    root = cli_tree(text, "!")
    # a whole configuration: ``system qos``, or ``hostname`` (``show running-config`` prints it, a section
    # such as ``show running-config interface …`` or ``ipqos`` does not)
    whole = "system qos" in root.children or bool(root.starting("hostname"))
    system = root.children.get("system qos") or Block("system qos")
    glob = _watchdog_state(root.children)
    # no global statement: off in a whole configuration, unknown in a partial one (interfaces only)
    glob_wd = glob is True if whole or glob is not None else None
    ports, scheds, classify = _ports(root, system, glob_wd, whole)
    return SwitchQos(
        dscp_to_queue=_dscp_to_queue(root, system, classify),
        schedulers=majority([s for s in scheds if s]) or None,
        watchdog=WatchdogQos() if glob_wd else None,
        ports=ports,
    )


def _ports(
    root: Block, system: Block, glob_wd: bool | None, whole: bool
) -> tuple[dict[str, PortQos], list[list[Scheduler]], list[str | None]]:
    """Every ``interface NAME`` block of ``root`` (``system``: the ``system qos`` block, whose output queuing
    policy an interface without its own uses; ``glob_wd``: the global watchdog state, None unknown;
    ``whole``: the text has ``system qos``, see :func:`_port`) as (port name ->
    :class:`PortQos`, the schedulers of each PFC port, the input ``type qos`` policy name of each PFC port
    or None), the last two in interface order."""
    queuing = _policies(root, "queuing")
    sys_out = _service(system, "queuing", "output")
    no_drop = _no_drop_cos(root)
    ports: dict[str, PortQos] = {}
    scheds: list[list[Scheduler]] = []
    classify: list[str | None] = []
    for b in root.starting("interface"):
        if len(b.words()) != 2:
            continue
        port, sc = _port(b, queuing, sys_out, no_drop, glob_wd, whole)
        ports[port.name] = port
        if port.pfc_priorities:
            scheds.append(sc)
            classify.append(_service(b, "qos", "input"))
    return ports, scheds, classify


def _dscp_to_queue(root: Block, system: Block, classify: list[str | None]) -> dict[int, int] | None:
    """DSCP -> qos-group (= queue) of the ``type qos`` policy most PFC ports attach (``classify``: each PFC
    port's input policy name or None), else the one ``system`` (``system qos``) attaches. A whole
    configuration whose PFC ports and ``system qos`` attach none maps every DSCP to 0 (class-default); a
    policy not in the text, or no PFC port in a partial capture: None (unknown)."""
    qos_name = majority([c for c in classify if c]) or _service(system, "qos", "input")
    dscp = _classify(root, _policies(root, "qos").get(qos_name or ""))
    if dscp is None and qos_name is None and classify and "system qos" in root.children:
        dscp = dict.fromkeys(range(64), 0)  # nothing classifies: every packet stays in qos-group 0
    return dscp


def expressible_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as NX-OS carries it: DSCP -> qos-group (= queue), ECN thresholds in
    whole kbytes (x1024 B, rounded down, nxos.kbytes) with whole-percent drop probability, headroom as the
    static-PG view, no watchdog timers or action (RT241, nxos.render_findings)."""
    from roce_tune.platforms import nxos

    exp = expected_qos(plan.classification, switch)
    ports = {}
    for n, p in exp.ports.items():
        ecn = (
            {
                q: QueueEcn(
                    kmin_bytes=nxos.kbytes(e.kmin_bytes) * nxos.ECN_UNIT_BYTES if e.kmin_bytes else None,
                    kmax_bytes=nxos.kbytes(e.kmax_bytes) * nxos.ECN_UNIT_BYTES if e.kmax_bytes else None,
                    pmax_percent=float(max(1, min(100, round(e.pmax_percent)))) if e.pmax_percent else None,
                )
                for q, e in p.ecn.items()
            }
            if p.ecn is not None
            else None
        )
        hr = (
            p.headroom.model_copy(update={"xon_bytes": None, "xoff_bytes": None, "size_bytes": None})
            if p.headroom
            else None
        )
        ports[n] = p.model_copy(update={"ecn": ecn, "headroom": hr, "cable_m": None})
    return exp.model_copy(
        update={"ports": ports, "watchdog": None, "dscp_to_tc": None, "tc_to_queue": None, "tc_to_pg": None}
    )
