"""Junos ``set`` configuration -> :class:`~roce_tune.qos.SwitchQos` (``read_back``), and what of a plan Junos
can say.

Input: roce-tune's ``<switch>.set`` or ``show configuration | display set`` (any order, other
statements, ``#`` comments, bracket lists ``[ a b ]``, quoted words). Read under ``class-of-service``:

* ``forwarding-classes class FC queue-num Q`` (also the older ``forwarding-classes queue Q FC``),
  ``... class FC pfc-priority P``;
* ``classifiers dscp CL forwarding-class FC loss-priority LP code-points [ ... ]`` (6-bit strings or the
  standard aliases ``ef``, ``af11``…, ``cs0``…, ``be``, ``nc1``/``nc2``) -> DSCP -> queue (Junos has no TC);
* ``congestion-notification-profile P input dscp code-point BBBBBB pfc`` (PFC priorities of a port = the
  ``pfc-priority`` of the forwarding classes those code points classify to) and ``input ieee-802.1
  code-point BBB pfc`` (the 802.1p priority itself: 3-bit string, default alias or one of
  ``code-point-aliases ieee-802.1``), ``input cable-length M``,
  ``pfc-watchdog poll-interval|detection (polls)|recovery|watchdog-action``;
* ``drop-profiles D interpolate fill-level [ a b ]`` + ``drop-probability [ 0 p ]`` (or the segmented
  ``fill-level a drop-probability x`` pairs) — percent of the queue buffer, whole or decimal (decimal64
  from Junos OS Evolved 24.4R1: junos.py), kept in percent (``kmin_percent``/``kmax_percent``);
  ``schedulers S drop-profile-map ... drop-profile D``,
  ``explicit-congestion-notification`` (a drop profile without it drops instead of marking: not ECN),
  ``transmit-rate percent W`` / ``priority strict-high``; ``scheduler-maps M forwarding-class FC scheduler
  S``;
* ``interfaces IF congestion-notification-profile P | scheduler-map M | unit * classifiers dscp CL``; and
  ``set interfaces IF mtu N``, also from ``interfaces interface-range R`` for its members
  (:func:`_expand_ranges`).

Junos sizes PFC headroom itself from the CNP cable length: headroom is None, ``cable_m`` is read.
Sources: Juniper's DSCP-based PFC, congestion-notification-profile, PFC watchdog and drop-profiles pages
(see junos.py for the statement sources).
"""

from __future__ import annotations

import fnmatch
import math
import re
import shlex
from dataclasses import dataclass, field

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms.cli_readback import STANDARD_DSCP_NAMES
from roce_tune.platforms.junos import PHYSICAL_PORT
from roce_tune.qos import PortQos, QueueEcn, Scheduler, SwitchQos, WatchdogQos, expected_qos, majority

#: Not used by Junos (classifiers read as ``dscp_to_queue``): kept for the read-back contract
#: (contract.READBACK_NAMES).
UNMAPPED_DSCP_TC: int | None = 0
READBACK_FIELDS = frozenset(
    {
        "dscp_to_queue",
        "schedulers",
        "watchdog.detection_ms",
        "watchdog.restoration_ms",
        "watchdog.poll_ms",
        "watchdog.action",
        "ports.mtu",
        "ports.cable_m",
        "ports.pfc_priorities",
        "ports.ecn.kmin_percent",
        "ports.ecn.kmax_percent",
        "ports.ecn.pmax_percent",
        "ports.watchdog",
    }
)
#: Junos DSCP code-point aliases: the standard names plus Junos's ``be``/``nc1``/``nc2``.
DSCP_ALIASES: dict[str, int] = {**STANDARD_DSCP_NAMES, "be": 0, "nc1": 48, "nc2": 56}
STRICT_PRIORITIES = frozenset({"strict-high"})
#: Plan fields Junos has no statement for by design (not plan values it changes): field -> why.
READBACK_BY_DESIGN: dict[str, str] = {
    "dscp_to_tc": "Junos classifies DSCP straight to a forwarding class (queue); read back as dscp_to_queue",
    "tc_to_queue": "no traffic-class layer: forwarding class -> queue-num, read back as dscp_to_queue",
    "tc_to_pg": "Junos assigns the PFC priority group from the forwarding class's pfc-priority itself",
}


#: Junos's default IEEE 802.1p code-point aliases, the names a configuration may use for the 3-bit
#: priorities (Juniper, "Understanding CoS Code-Point Aliases", Table 1 "Default IEEE 802.1 Code-Point
#: Aliases",
#: https://juniper.net/documentation/en_US/junos13.2/topics/concept/cos-qfx-series-code-points-understanding.html);
#: ``code-point-aliases ieee-802.1 NAME BITS`` in the configuration adds or overrides one
PCP_ALIASES: dict[str, int] = {"be": 0, "be1": 1, "ef": 2, "ef1": 3, "af11": 4, "af12": 5, "nc1": 6, "nc2": 7}


def pcp_code_point(word: str) -> int | None:
    """An IEEE 802.1p code point: ``011`` / ``ef1`` -> 3; None for a word that is neither.

    >>> pcp_code_point("011"), pcp_code_point("ef1"), pcp_code_point("x")
    (3, 3, None)
    """
    if len(word) == 3 and set(word) <= {"0", "1"}:
        return int(word, 2)
    return PCP_ALIASES.get(word.lower())


def code_point(word: str) -> int | None:
    """``011010`` / ``af31`` -> 26; None for a word that is neither."""
    if len(word) == 6 and set(word) <= {"0", "1"}:
        return int(word, 2)
    return DSCP_ALIASES.get(word.lower())


def _words(line: str) -> list[str] | None:
    """``set`` line -> words after ``set`` (a ``[ ... ]`` list becomes one word ``"[a b]"``); None if not a
    set."""
    try:
        w = shlex.split(line, comments=False)
    except ValueError:
        w = line.split()
    if not w or w[0] != "set":
        return None
    out: list[str] = []
    i = 1
    while i < len(w):
        if w[i] == "[":
            j = w.index("]", i) if "]" in w[i:] else len(w)
            out.append("[" + " ".join(w[i + 1 : j]) + "]")
            i = j + 1
        else:
            out.append(w[i])
            i += 1
    return out


def _list(word: str) -> list[str]:
    return word.strip("[]").split()


@dataclass
class _Cos:
    """Everything read from the configuration, by statement."""

    fc_queue: dict[str, int] = field(default_factory=dict)
    fc_pfc: dict[str, int] = field(default_factory=dict)
    classifiers: dict[str, dict[int, str]] = field(default_factory=dict)
    cnp_pfc_dscp: dict[str, set[int]] = field(default_factory=dict)
    cnp_pfc_pcp: dict[str, set[str]] = field(default_factory=dict)  # code points as written (bits, alias)
    pcp_aliases: dict[str, str] = field(default_factory=dict)  # ``code-point-aliases ieee-802.1 NAME BITS``
    cnp_cable: dict[str, float] = field(default_factory=dict)
    cnp_wd: dict[str, dict[str, str]] = field(default_factory=dict)
    drop_fill: dict[str, list[float]] = field(default_factory=dict)
    drop_prob: dict[str, list[float]] = field(default_factory=dict)
    sched: dict[str, dict[str, str]] = field(default_factory=dict)
    smaps: dict[str, dict[str, str]] = field(default_factory=dict)
    ifaces: dict[str, dict[str, str]] = field(default_factory=dict)
    mtu: dict[str, int] = field(default_factory=dict)
    top: set[str] = field(default_factory=set)  # the top-level statements present (``class-of-service`` …)


def _fc(c: _Cos, w: list[str]) -> None:
    if len(w) >= 5 and w[1] == "class":
        if w[3] == "queue-num":
            c.fc_queue[w[2]] = int(w[4])
        elif w[3] == "pfc-priority":
            c.fc_pfc[w[2]] = int(w[4])
    elif len(w) >= 4 and w[1] == "queue" and w[2].isdigit():
        c.fc_queue[w[3]] = int(w[2])


def _classifier(c: _Cos, w: list[str]) -> None:
    # classifiers dscp CL forwarding-class FC loss-priority LP code-points X
    if len(w) >= 9 and w[1] == "dscp" and w[3] == "forwarding-class" and w[7] == "code-points":
        table = c.classifiers.setdefault(w[2], {})
        for cp in _list(w[8]):
            d = code_point(cp)
            if d is not None:
                table[d] = w[4]


def _cnp(c: _Cos, w: list[str]) -> None:
    name, rest = w[1], w[2:]
    if rest[:3] == ["input", "dscp", "code-point"] and len(rest) >= 5 and rest[4] == "pfc":
        d = code_point(rest[3])
        if d is not None:
            c.cnp_pfc_dscp.setdefault(name, set()).add(d)
    elif rest[:3] == ["input", "ieee-802.1", "code-point"] and len(rest) >= 5 and rest[4] == "pfc":
        c.cnp_pfc_pcp.setdefault(name, set()).add(rest[3])
    elif rest[:2] == ["input", "cable-length"] and len(rest) >= 3:
        c.cnp_cable[name] = float(rest[2])
    elif rest[:1] == ["pfc-watchdog"]:
        wd = c.cnp_wd.setdefault(name, {})
        if len(rest) >= 3:
            wd[rest[1]] = rest[2]


def _drop_profile(c: _Cos, w: list[str]) -> None:
    name, rest = w[1], w[2:]
    if rest[:1] == ["interpolate"] and len(rest) >= 3:
        target = (
            c.drop_fill if rest[1] == "fill-level" else c.drop_prob if rest[1] == "drop-probability" else None
        )
        if target is not None:  # `[ a b ]`, or one line per value as `display set` prints a leaf-list
            target.setdefault(name, []).extend(float(x) for x in _list(rest[2]))
    elif len(rest) >= 4 and rest[0] == "fill-level" and rest[2] == "drop-probability":
        c.drop_fill.setdefault(name, []).append(float(rest[1]))
        c.drop_prob.setdefault(name, []).append(float(rest[3]))


def _scheduler(c: _Cos, w: list[str]) -> None:
    s = c.sched.setdefault(w[1], {})
    rest = w[2:]
    if rest[:2] == ["transmit-rate", "percent"] and len(rest) >= 3:
        s["rate"] = rest[2]
    elif rest[:1] == ["transmit-rate"] and len(rest) >= 3 and rest[2] == "percent":
        s["rate"] = rest[1]
    elif rest[:1] == ["priority"] and len(rest) >= 2:
        s["priority"] = rest[1]
    elif rest[:1] == ["explicit-congestion-notification"]:
        s["ecn"] = "on"
    elif rest[:1] == ["drop-profile-map"] and "drop-profile" in rest:
        s["drop"] = rest[rest.index("drop-profile") + 1]


def _cos_iface(c: _Cos, w: list[str]) -> None:
    d = c.ifaces.setdefault(w[1], {})
    rest = w[2:]
    if rest[:1] == ["congestion-notification-profile"] and len(rest) >= 2:
        d["cnp"] = rest[1]
    elif rest[:1] == ["scheduler-map"] and len(rest) >= 2:
        d["smap"] = rest[1]
    elif rest[:1] == ["unit"] and rest[2:4] == ["classifiers", "dscp"] and len(rest) >= 5:
        d["classifier"] = rest[4]


def _aliases(c: _Cos, w: list[str]) -> None:
    # code-point-aliases ieee-802.1 NAME BITS (a configured alias over the default one)
    if len(w) >= 4 and w[1] == "ieee-802.1":
        c.pcp_aliases[w[2]] = w[3]


_COS = {
    "code-point-aliases": _aliases,
    "forwarding-classes": _fc,
    "classifiers": _classifier,
    "congestion-notification-profile": _cnp,
    "drop-profiles": _drop_profile,
    "schedulers": _scheduler,
    "interfaces": _cos_iface,
}


def _inactive(w: list[str], inactive: list[list[str]]) -> bool:
    return any(p and w[:len(p)] == p for p in inactive)


def _active_set_words(text: str) -> list[list[str]]:
    """The words of each ``set`` line of ``text`` that is in effect, configuration groups inherited
    (:func:`_inherit`): ``show configuration | display set`` prints an inactive statement as its ``set``
    line(s) and a ``deactivate <path>`` line (Junos CLI User Guide, "Deactivate and Reactivate Statements and
    Identifiers"); a ``set`` line under a deactivated path is left out, also one a group gives it."""
    inactive: list[list[str]] = []
    sets: list[list[str]] = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("deactivate "):
            inactive.append(_words("set" + s[len("deactivate"):]) or [])
        elif w := _words(s):
            sets.append(w)
    active = _inherit(_expand_ranges([w for w in sets if not _inactive(w, inactive)]))
    return [w for w in active if not _inactive(w, inactive)]


#: ``*`` in an interface-range ``member`` field: ports 0 through 47 (Juniper, "Interface Ranges for Physical
#: Interfaces": the wildcard does not take the interface type's port count into account)
_MEMBER_ALL = range(48)
_IFNAME = re.compile(r"^(?P<type>[a-z]+)-(?P<fpc>\d+)/(?P<pic>\d+)/(?P<port>\d+)(?::(?P<chan>\d+))?$")


def _member_field(text: str) -> list[int]:
    """One field of a ``member`` name: ``*`` (0..47), ``[low-high]``, ``[n1,n2,...]`` or a number; [] if
    none of them."""
    if text == "*":
        return list(_MEMBER_ALL)
    body = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    out: list[int] = []
    for part in (x.strip() for x in body.split(",")):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or not (hi.isdigit() or not hi):
            return []
        out += range(int(lo), int(hi or lo) + 1)
    return out


def _members(word: str) -> list[str]:
    """``et-0/0/[4-7]`` / ``et-0/*/[0,2]`` / ``et-0/0/1:2`` -> the interface names it stands for (a
    prefix without ``-`` or a field that is no number pattern: the word itself)."""
    kind, dash, rest = word.partition("-")
    fields = re.split(r"([/:])", rest)
    if not dash or len(fields) < 5:
        return [word]
    names = [kind + "-"]
    for f in fields:
        nums = [str(n) for n in _member_field(f)] if f not in ("/", ":") else [f]
        if not nums:
            return [word]
        names = [n + x for n in names for x in nums]
    return names


def _member_range(first: str, last: str) -> list[str]:
    """``member-range et-0/0/0 to et-0/0/7`` -> the interfaces from ``first`` to ``last`` in order: every
    port between them in a PIC (channels of one port between two channelized names); a range that crosses
    PICs takes ports 0..47 of each PIC it crosses (PIC numbers up to the higher end's: the chassis's real
    port count is not in the configuration); [first, last] when they are not two names of one type."""
    a, b = _IFNAME.match(first), _IFNAME.match(last)
    if not a or not b or a["type"] != b["type"] or (a["chan"] is None) != (b["chan"] is None):
        return [first, last]
    lo = tuple(int(a[k]) for k in ("fpc", "pic", "port"))
    hi = tuple(int(b[k]) for k in ("fpc", "pic", "port"))
    if a["chan"] is not None:
        if lo != hi:
            return [first, last]
        return [f"{first.rsplit(':', 1)[0]}:{c}" for c in range(int(a["chan"]), int(b["chan"]) + 1)]
    top = max(lo[2], hi[2], _MEMBER_ALL[-1])
    pics = range(max(lo[1], hi[1]) + 1)
    return [f"{a['type']}-{fpc}/{pic}/{port}" for fpc in range(lo[0], hi[0] + 1) for pic in pics
            for port in range(top + 1) if lo <= (fpc, pic, port) <= hi]


def _expand_ranges(sets: list[list[str]]) -> list[list[str]]:
    """``sets`` with every ``interfaces interface-range R <statement>`` stated for each member of R
    (``member-range A to B``, ``member NAME``, :func:`_members`), placed before the other statements so that
    an interface's own statement wins over its range's, and a range listed first over a later one (last
    written wins in :func:`_parse`); the members are then configured objects that group wildcards match
    (Juniper, "Configuring Interface Ranges for EX Series Switches with ELS": "Configuration Inheritance
    for Member Interfaces", "Member Interfaces Inheriting Configuration from Configuration Groups")."""
    members: dict[str, list[str]] = {}
    stmts: dict[str, list[list[str]]] = {}
    rest: list[list[str]] = []
    for w in sets:
        if w[:2] != ["interfaces", "interface-range"] or len(w) < 4:
            rest.append(w)
        elif w[3] == "member-range" and len(w) >= 7 and w[5] == "to":
            members.setdefault(w[2], []).extend(_member_range(w[4], w[6]))
        elif w[3] == "member" and len(w) >= 5:
            members.setdefault(w[2], []).extend(_members(w[4]))
        else:
            stmts.setdefault(w[2], []).append(w[3:])
    expanded = [["interfaces", m, *s] for r in reversed(list(stmts)) for m in members.get(r, [])
                for s in stmts[r]]
    return expanded + rest


def _group_names(word: str) -> list[str]:
    return _list(word) if word.startswith("[") else [word]


def _matches(pattern: str, word: str) -> bool:
    """A group's word matches a configured one: itself, or a ``<pattern>`` (``*``, ``?``, ``[...]``,
    ``[!...]``) that matches it whole (Junos CLI User Guide, "Using Wildcards with Configuration Groups")."""
    if pattern.startswith("<") and pattern.endswith(">"):
        return fnmatch.fnmatchcase(word, pattern[1:-1])
    return pattern == word


def _expand(rest: list[str], at: list[str], objects: list[list[str]]) -> list[list[str]]:
    """``rest`` (a group statement's words below level ``at``) with each ``<pattern>`` replaced by every
    object configured at that place that it matches (a wildcard creates nothing)."""
    out: list[list[str]] = [[]]
    for word in rest:
        if not (word.startswith("<") and word.endswith(">")):
            out = [done + [word] for done in out]
            continue
        grown: list[list[str]] = []
        for done in out:
            where = at + done
            names = dict.fromkeys(o[len(where)] for o in objects
                                  if len(o) > len(where) + 1 and o[:len(where)] == where)
            grown += [done + [n] for n in names if _matches(word, n)]
        out = grown
    return out


@dataclass
class _Groups:
    """A configuration's ``groups`` (name -> statements), where ``apply-groups`` / ``apply-groups-except``
    name them (level, group), and the local statements."""

    groups: dict[str, list[list[str]]] = field(default_factory=dict)
    applied: dict[tuple[str, ...], list[str]] = field(default_factory=dict)
    excepted: list[tuple[list[str], str]] = field(default_factory=list)
    local: list[list[str]] = field(default_factory=list)


def _split_groups(sets: list[list[str]]) -> _Groups:
    out = _Groups()
    for w in sets:
        verb = next((v for v in ("apply-groups", "apply-groups-except") if v in w[:-1]), None)
        if w[0] == "groups" and len(w) >= 3:
            out.groups.setdefault(w[1], []).append(w[2:])
        elif verb == "apply-groups":
            i = w.index(verb)
            out.applied.setdefault(tuple(w[:i]), []).extend(_group_names(w[i + 1]))
        elif verb is not None:
            i = w.index(verb)
            out.excepted.extend((w[:i], g) for g in _group_names(w[i + 1]))
        else:
            out.local.append(w)
    return out


def _inherit(sets: list[list[str]]) -> list[list[str]]:
    """``sets`` with ``groups`` inherited where ``apply-groups`` names them: the group's statements below the
    level of the ``apply-groups`` (top level: all of them), ``<pattern>`` words matched against the objects
    configured there. Order gives Junos's priority with last-written-wins readers: inherited statements
    before the local ones (the local configuration overrides a group), a group listed first after (so over)
    the ones listed after it, a deeper level's after a shallower one's; ``apply-groups-except G`` at a level
    keeps G's statements out of it and below. Junos CLI User Guide, "Configuration Groups" ("Applying a Junos
    Configuration Group": the first group listed takes priority; ``show | display inheritance``)."""
    g = _split_groups(sets)
    inherited: list[list[str]] = []
    for at_t, names in sorted(g.applied.items(), key=lambda kv: len(kv[0])):
        at = list(at_t)
        for name in reversed(names):
            for stmt in g.groups.get(name, []):
                if len(stmt) <= len(at) or not all(_matches(p, a) for p, a in zip(stmt, at)):
                    continue
                inherited += [at + x for x in _expand(stmt[len(at):], at, g.local)
                              if not any((at + x)[:len(e)] == e and eg == name for e, eg in g.excepted)]
    return inherited + g.local


def _parse(text: str) -> _Cos:
    c = _Cos()
    for w in _active_set_words(text):
        c.top.add(w[0])
        if w[0] == "class-of-service" and len(w) >= 3 and w[1] in _COS:
            if w[1] == "scheduler-maps":
                continue
            _COS[w[1]](c, w[1:])
        elif w[:2] == ["class-of-service", "scheduler-maps"] and len(w) >= 7 and w[3] == "forwarding-class":
            c.smaps.setdefault(w[2], {})[w[4]] = w[6]
        elif w[0] == "interfaces" and len(w) >= 2:
            c.ifaces.setdefault(w[1], {})
            if len(w) >= 4 and w[2] == "mtu" and w[3].isdigit():
                c.mtu[w[1]] = int(w[3])
    return c


def _ecn(c: _Cos, smap: str | None) -> dict[int, QueueEcn]:
    out = {}
    for fc, s in sorted((c.smaps.get(smap or "") or {}).items()):
        sc = c.sched.get(s, {})
        fill, prob = c.drop_fill.get(sc.get("drop", "")), c.drop_prob.get(sc.get("drop", ""))
        if sc.get("ecn") and fill and fc in c.fc_queue:
            out[c.fc_queue[fc]] = QueueEcn(
                kmin_percent=fill[0], kmax_percent=fill[-1], pmax_percent=prob[-1] if prob else None
            )
    return out


def _schedulers(c: _Cos, smap: str | None) -> list[Scheduler] | None:
    out = []
    for fc, s in (c.smaps.get(smap or "") or {}).items():
        sc, q = c.sched.get(s, {}), c.fc_queue.get(fc)
        if q is None:
            continue
        if sc.get("priority") in STRICT_PRIORITIES:
            out.append(Scheduler(queue=q, mode="strict"))
        elif "rate" in sc:
            out.append(Scheduler(queue=q, mode="dwrr", weight_percent=int(float(sc["rate"]))))
    return sorted(out, key=lambda s: s.queue) or None


def _watchdog(wd: dict[str, str] | None) -> WatchdogQos | None:
    if wd is None:
        return None
    poll = int(wd["poll-interval"]) if "poll-interval" in wd else None
    det = int(wd["detection"]) * poll if "detection" in wd and poll is not None else None
    return WatchdogQos(
        detection_ms=det,
        restoration_ms=int(wd["recovery"]) if "recovery" in wd else None,
        poll_ms=poll,
        action=wd.get("watchdog-action"),
    )


def _pfc(c: _Cos, cnp: str | None, classifier: str | None) -> list[int]:
    """The PFC priorities of a port bound to profile ``cnp``: its IEEE 802.1p code points, and the
    ``pfc-priority`` of the forwarding classes its DSCP code points classify to (``classifier``)."""
    table = c.classifiers.get(classifier or "", {})
    by_dscp = {c.fc_pfc[table[d]] for d in c.cnp_pfc_dscp.get(cnp or "", set())
               if d in table and table[d] in c.fc_pfc}
    by_pcp = {pcp_code_point(c.pcp_aliases.get(w, w)) for w in c.cnp_pfc_pcp.get(cnp or "", set())}
    return sorted(by_dscp | {p for p in by_pcp if p is not None})


def _port(c: _Cos, name: str, classifier: str | None) -> PortQos:
    i = c.ifaces.get(name, {})
    cnp = i.get("cnp")
    return PortQos(
        name=name,
        mtu=c.mtu.get(name),
        cable_m=c.cnp_cable.get(cnp or ""),
        pfc_priorities=_pfc(c, cnp, i.get("classifier") or classifier),
        ecn=_ecn(c, i.get("smap")),
        watchdog=bool(cnp and cnp in c.cnp_wd),
    )


#: the interfaces ``class-of-service interfaces all`` binds: the switch's Ethernet ports
_SWITCH_PORT = re.compile(PHYSICAL_PORT)


def _bindings(c: _Cos, names: list[str]) -> dict[str, dict[str, str]]:
    """Each interface's CoS bindings: ``class-of-service interfaces all`` (Ethernet ports), overridden by
    every wildcard name that matches it (``et-0/0/*``; a longer pattern over a shorter one), overridden by
    its own statements. Juniper, "Assigning CoS Components to Interfaces" (QFX): components bound to one
    interface, to several by wildcard, or (congestion-notification profile, forwarding-class set) to all."""
    patterns = sorted((n for n in c.ifaces if "*" in n), key=len)
    out: dict[str, dict[str, str]] = {}
    for n in names:
        bound = dict(c.ifaces.get("all", {})) if _SWITCH_PORT.fullmatch(n) else {}
        for p in patterns:
            if fnmatch.fnmatchcase(n, p):
                bound.update(c.ifaces[p])
        bound.update(c.ifaces.get(n, {}))
        out[n] = bound
    return out


def _interface_names(c: _Cos) -> list[str]:
    """The configured interfaces (not ``all``, a wildcard name or ``interfaces interface-range``)."""
    return sorted(n for n in set(c.mtu) | set(c.ifaces)
                  if "*" not in n and n not in ("all", "interface-range"))


def read_back(text: str) -> SwitchQos:
    """Parse Junos ``set`` configuration (rendered or ``show configuration | display set``, also with
    ``| display inheritance``) into :class:`SwitchQos`. Configuration groups are inherited where
    ``apply-groups`` names them (:func:`_inherit`); CoS bound to ``all`` or a wildcard interface name applies
    to the configured interfaces it matches, an interface's own statement first (:func:`_bindings`). The
    switch-wide classifier, scheduler and watchdog are those of most ports with a congestion-notification
    profile. A text with neither ``class-of-service`` nor ``version``/``system`` statements (a part of the
    configuration, e.g. ``show configuration interfaces | display set``) leaves the ports' PFC, ECN and
    watchdog unknown (None). Unknown statements are ignored; never raises on them."""
    c = _parse(text)
    names = _interface_names(c)
    c.ifaces = _bindings(c, names)
    bound = [c.ifaces[n] for n in names if c.ifaces.get(n, {}).get("cnp")]  # PFC ports' bindings

    def common(key: str) -> str | None:
        return majority([b[key] for b in bound if b.get(key)])

    cl = common("classifier") or (next(iter(c.classifiers)) if len(c.classifiers) == 1 else None)
    table = c.classifiers.get(cl or "") or {}
    dscp_q = {d: c.fc_queue[fc] for d, fc in sorted(table.items()) if fc in c.fc_queue}
    wd = majority([c.cnp_wd[b["cnp"]] for b in bound if b["cnp"] in c.cnp_wd])
    return SwitchQos(
        dscp_to_queue=dscp_q or None,
        schedulers=_schedulers(c, common("smap")),
        watchdog=_watchdog(wd),
        ports=_without_cos_unknown(c, {n: _port(c, n, cl) for n in names}),
    )


def _without_cos_unknown(c: _Cos, ports: dict[str, PortQos]) -> dict[str, PortQos]:
    """``ports``, with PFC, ECN and watchdog unknown (None) when the text is a part of the configuration
    without the CoS hierarchy (``show configuration interfaces | display set``: neither
    ``class-of-service`` nor ``version``/``system`` statements); a whole configuration without CoS has
    none, as read."""
    if "class-of-service" in c.top or c.top & {"version", "system"}:
        return ports
    return {n: p.model_copy(update={"pfc_priorities": None, "ecn": None, "watchdog": None})
            for n, p in ports.items()}


def _nc_lent(plan: Plan, switch: SwitchPlan, exp: SwitchQos) -> SwitchQos:
    """``exp`` with the queue that lends Junos network-control its share (junos.nc_donor) at the rendered
    weight, on a switch with lossless ports (the ones with scheduler maps)."""
    from roce_tune.platforms import junos

    donor = junos.nc_donor(plan) if any(p.lossless for p in switch.ports) else None
    if donor is None or not exp.schedulers:
        return exp
    lent = donor[1] - junos.NC_TRANSMIT_PERCENT
    return exp.model_copy(update={"schedulers": [
        s.model_copy(update={"weight_percent": lent}) if s.queue == donor[2] else s for s in exp.schedulers]})


def expressible_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as Junos can carry it: DSCP -> queue (no TC/PG maps), ECN as
    percent fill levels of the queue buffer (junos.fill_levels: to 10^-9 % where junos.decimal_fill_levels,
    whole percent otherwise, each the value of the rendered text) with whole-percent Pmax, cable length in
    whole metres (rounded up), watchdog detection as whole polls, an action without Junos equivalent absent,
    no watchdog at all on a model without a documented one (junos.watchdog_rendered),
    no headroom (Junos sizes it from the cable length), the lossy queue that lends network-control its
    share (junos.nc_donor) at its plan weight less junos.NC_TRANSMIT_PERCENT on a switch with lossless
    ports. Changes carry RT241 findings (junos.render_findings)."""
    from roce_tune.platforms import junos

    exp = _nc_lent(plan, switch, expected_qos(plan.classification, switch))
    profiles = {e.name: e for e in switch.ecn_profiles}
    exact = junos.decimal_fill_levels(switch)
    ports = {}
    for p in switch.ports:
        q = exp.ports[p.name]
        ecn = None
        if q.ecn is not None and p.ecn_profile in profiles:
            lo, hi = junos.fill_levels(profiles[p.ecn_profile], exact)
            pmax = float(max(1, min(100, round(profiles[p.ecn_profile].pmax_percent))))
            ecn = {
                k: QueueEcn(kmin_percent=float(lo), kmax_percent=float(hi), pmax_percent=pmax) for k in q.ecn
            }
        ports[p.name] = q.model_copy(
            update={
                "ecn": ecn,
                "headroom": None,
                "cable_m": float(max(1, math.ceil(p.cable_m))) if p.lossless else None,
            }
        )
    wd = exp.watchdog if junos.watchdog_rendered(switch) else None
    if wd is None:  # a model without a documented watchdog: none rendered (junos.watchdog_documented)
        ports = {n: q.model_copy(update={"watchdog": False}) for n, q in ports.items()}
    else:
        det = (
            math.ceil(wd.detection_ms / wd.poll_ms) * wd.poll_ms
            if wd.detection_ms is not None and wd.poll_ms
            else wd.detection_ms
        )
        wd = wd.model_copy(update={"detection_ms": det, "action": junos.WATCHDOG_ACTION.get(wd.action or "")})
    return exp.model_copy(
        update={"ports": ports, "watchdog": wd, "dscp_to_tc": None, "tc_to_queue": None, "tc_to_pg": None}
    )
