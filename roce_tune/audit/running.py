"""A switch's running configuration in a capture: recognised by content (each platform's
``CAPTURE_FORMATS``, :mod:`roce_tune.platforms.captures`), read with the platform's ``read_back`` into a
:class:`~roce_tune.qos.SwitchQos`, and judged.

With a plan, the running configuration is compared with the plan's QoS as the platform can state it
(:func:`roce_tune.qos.differences`): every difference becomes a finding in the field's words with a rule of
its family. Without a plan, the checks that need none run against the policy: PFC on the RoCE priority
(RT420), the RoCE DSCP classified into the lossless queue (RT414), ECN/WRED bound to the lossless queue
of every PFC port (RT431), port MTU at least the hosts' MTU (RT442).

Evidence: a ``SwitchQos`` carries no line numbers, so :func:`locate` finds the capture lines that state
a port's setting: the first line naming the port together with one of the setting's words; else the
first line with such a word in the few lines after a line naming the port (a JSON row) or in the block
indented under it however long (a CLI interface), before another port is named; else the port's first
line plus the first line anywhere with such a word (a profile the port binds, e.g. an EOS ``qos
profile``); without a port, that line alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from roce_tune.audit.expect import Expect
from roce_tune.audit.model import Ev, SwitchObs, Val
from roce_tune.findings import Severity
from roce_tune.qos import PortQos, QueueEcn, Scheduler, SwitchQos, WatchdogQos, differences
from roce_tune.ranges import id_runs

if TYPE_CHECKING:
    from roce_tune.audit.checks import Out

__all__ = ["WORDS", "check_running", "locate", "read_running"]

#: setting -> words (lower case) a configuration line stating it contains, on any platform's syntax
WORDS: dict[str, tuple[str, ...]] = {
    "pfc": ("pfc", "priority-flow-control", "no-drop", "no-loss", "switch-priority", "pause"),
    "ecn": ("wred", "ecn", "random-detect", "drop-profile", "congestion-control", "threshold"),
    "dscp": ("dscp", "code-point"),
    "mtu": ("mtu",),
    "headroom": ("buffer", "xoff", "headroom", "pause", "cable"),
    "watchdog": ("watchdog", "pfcwd", "pfc_wd", "watch-dog", "detection", "restoration"),
    "scheduler": ("scheduler", "bandwidth", "dwrr", "strict", "bw-percent", "transmit-rate"),
    "trust": ("trust",),
}


#: lines after a port's line that may still state its settings (a JSON row, an indented block)
_NEAR = 8


def read_running(sw: SwitchObs, platform: str, text: str, lines: list[tuple[int, str]], ev: Ev) -> None:
    """Read ``text`` (a running configuration of ``platform``) into ``sw.running``.

    Raises:
        ValueError: the platform's read-back cannot read the text (its message names line/column).
    """
    from roce_tune.platforms import platform as platform_impl

    qos = platform_impl(platform).read_back(text)
    sw.platform = platform
    sw.running = Val(qos, ev)
    sw.running_lines = lines
    sw.families.setdefault("running_config", ev)


def _port_re(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w/]){re.escape(name.lower())}(?![\w/])")


def _at_port(sw: SwitchObs, port: str, low: list[tuple[int, str]],
             has: Callable[[str], bool]) -> list[int] | None:
    """Lines stating a setting of ``port``: [the line naming both], [the setting line just after a line
    naming the port, before another port], [the port's first line] (caller adds the setting line), None."""
    assert sw.running is not None
    pat = _port_re(port)
    others = [_port_re(p) for p in sw.running.value.ports if p != port]
    at = [i for i, (_, t) in enumerate(low) if pat.search(t)]
    both = next((low[i][0] for i in at if has(low[i][1])), None)
    if both is not None:
        return [both]
    for i in at:
        near = _just_after(low[i + 1:max(i + 1 + _NEAR, _block_end(low, i))], [pat, *others], has)
        if near is not None:
            return [near]
    return [low[at[0]][0]] if at else None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _block_end(low: list[tuple[int, str]], i: int) -> int:
    """The index after the lines indented under ``low[i]`` (an interface's CLI block, however long: a
    ``show running-config`` interface has description, addresses … before its QoS lines)."""
    j = i + 1
    while j < len(low) and (not low[j][1].strip() or _indent(low[j][1]) > _indent(low[i][1])):
        j += 1
    return j


def _just_after(lines: list[tuple[int, str]], ports: list[re.Pattern[str]],
                has: Callable[[str], bool]) -> int | None:
    """The first of ``lines`` with the setting, before a line naming any port."""
    for no, t in lines:
        if has(t):
            return no
        if any(p.search(t) for p in ports):
            return None
    return None


def locate(sw: SwitchObs, port: str | None, what: str, value: str | None = None) -> list[Ev]:
    """The capture lines that state setting ``what`` (a :data:`WORDS` key) of ``port`` (see module doc):
    one line, or the port's line and the line stating the setting where they differ (a profile the port
    binds)."""
    assert sw.running is not None
    file = sw.running.ev.file
    words = WORDS.get(what, (what,))
    low = [(no, t.lower()) for no, t in sw.running_lines]

    def has(t: str) -> bool:
        return any(w in t for w in words) and (value is None or value.lower() in t)

    anywhere = next((no for no, t in low if has(t)), None)
    if anywhere is None and value is not None:
        return locate(sw, port, what)
    if port is not None:
        found = _at_port(sw, port, low, has)
        if found is not None:
            return [Ev(file, no) for no in found] + ([Ev(file, anywhere)] if anywhere is not None and
                                                      len(found) == 1 and not has(dict(low)[found[0]])
                                                     else [])
    return [Ev(file, anywhere if anywhere is not None else sw.running.ev.line)]


def _ids(v: Iterable[int] | None) -> str:
    return ",".join(map(str, sorted(v))) if v else "none"


# ---------------------------------------------------------------------------------------------- checks
def _roce_ports(q: SwitchQos, lossless: list[int]) -> list[PortQos]:
    return [p for p in q.ports.values() if p.pfc_priorities and set(lossless) & set(p.pfc_priorities)]


def skip_no_dscp_map(sw: SwitchObs, out: Out) -> None:
    """RT414 (and with a plan the map's other entries, RT415) is not checked when the running configuration
    states no DSCP classification at all (neither a DSCP -> TC nor a DSCP -> queue map read): a capture
    without it, or a switch that classifies by another field (CoS/802.1p). Listed, never passed."""
    assert sw.running is not None
    q = sw.running.value
    if q.dscp_to_tc is None and q.dscp_to_queue is None:
        out.skip("RT414", sw.name, "the queue of the RoCE DSCP, which the running configuration does not "
                 "state: it holds no DSCP classification roce-tune reads (not in the capture, or the switch "
                 "classifies by another field such as CoS/802.1p): capture the whole running configuration"
                 f", or the DSCP map the switch runs{_maps_command(sw)}")


def unmapped_dscp_tc(sw: SwitchObs) -> int | None:
    """The TC a DSCP absent from ``sw``'s running DSCP map gets: the platform read-back's
    ``UNMAPPED_DSCP_TC`` (None: the platform's own default map, which the configuration does not state —
    unknown), 0 where the platform does not say."""
    from roce_tune.platforms import get_platform

    if not sw.platform:
        return 0
    return getattr(get_platform(sw.platform), "UNMAPPED_DSCP_TC", 0)


def _queue_of_dscp(q: SwitchQos, dscp: int, unmapped_tc: int | None = 0) -> tuple[int | None, str]:
    """(egress queue the running config gives ``dscp``, how: ``DSCP 26 → TC 3 → queue 3``); None unknown
    (no map, or ``dscp`` absent from a TC map whose unstated entries are the platform's default:
    ``unmapped_tc`` None)."""
    if q.dscp_to_queue is not None and q.dscp_to_tc is None:
        qu = q.dscp_to_queue.get(dscp, 0)
        return qu, (f"DSCP {dscp} → queue "
                    f"{qu}{'' if dscp in q.dscp_to_queue else ' (not classified: default)'}")
    if q.dscp_to_tc is None or (dscp not in q.dscp_to_tc and unmapped_tc is None):
        return None, ""
    tc = q.dscp_to_tc.get(dscp, unmapped_tc or 0)
    queue = (q.tc_to_queue or {}).get(tc, tc)
    return queue, (f"DSCP {dscp} → TC {tc}{'' if dscp in q.dscp_to_tc else ' (not in the map: default)'}"
                   f" → queue {queue}")


#: why a port's PFC is unknown from its running configuration, and what tells it
_PFC_LEFT_TO_SWITCH = ("which the running configuration does not state (left to the switch: automatic/DCBX, "
                       "or a RoCE mode's defaults; or set by a policy or profile the capture does not hold): "
                       "`show interface priority-flow-control` or `nv show qos roce`, or capture the whole "
                       "running configuration")


def _policy_pfc(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """RT420 without a plan: a port with PFC on other priorities than RoCE's; no port with PFC at all."""
    assert sw.running is not None
    q, lossless = sw.running.value, sorted(exp.lossless_priorities)
    known = [p for p in q.ports.values() if p.pfc_priorities is not None]
    for p in known:
        missing = [x for x in lossless if x not in (p.pfc_priorities or [])]
        if p.pfc_priorities and missing:
            out.add("RT420", Severity.error, sw.name, p.name,
                    f"priority {_ids(missing)} is not lossless on {sw.name} {p.name} (running config: PFC on "
                    f"{_ids(p.pfc_priorities)}; {exp.source}: PFC on {_ids(lossless)})",
                    f"enable PFC on priority {_ids(lossless)} on {p.name}", locate(sw, p.name, "pfc"))
    if known and not any(p.pfc_priorities for p in known):
        out.add("RT420", Severity.error, sw.name, None,
                f"no port of {sw.name} has PFC on RoCE priority {_ids(lossless)} (running config: PFC off on "
                f"all {len(known)} ports)",
                f"enable PFC on priority {_ids(lossless)} on the ports facing RoCE hosts and switches",
                locate(sw, None, "pfc"))
    elif not known and q.ports:
        out.skip("RT420", sw.name, f"the PFC state per port, {_PFC_LEFT_TO_SWITCH}")


#: what tells the class of a DSCP the running DSCP map leaves to the platform's default map
_UNMAPPED_NEEDS = ("the traffic class of DSCP {dscp}, which the running configuration's DSCP map does not "
                   "name (the platform's default map applies): the switch's DSCP map as it runs{command}")


def _maps_command(sw: SwitchObs) -> str:
    """`` (`show qos maps`)``: the show command of ``sw``'s platform that prints its DSCP map as it runs (the
    platform module's ``SPEC.show_commands["maps"]``), "" where the platform names none."""
    from roce_tune.platforms import get_platform

    spec = getattr(get_platform(sw.platform), "SPEC", None) if sw.platform else None
    command = spec.show_commands.get("maps") if spec is not None else None
    return f" (`{command}`)" if command else ""


def _policy_dscp(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """RT414 without a plan: the RoCE DSCP lands in a queue that is not lossless."""
    assert sw.running is not None
    unmapped = unmapped_dscp_tc(sw)
    for dscp in exp.roce_dscp:
        queue, how = _queue_of_dscp(sw.running.value, dscp, unmapped)
        if queue is None and sw.running.value.dscp_to_tc is not None:
            out.skip("RT414", sw.name, _UNMAPPED_NEEDS.format(dscp=dscp, command=_maps_command(sw)))
        if queue is not None and queue not in exp.lossless_queues:
            out.add("RT414", Severity.error, sw.name, None,
                    f"{sw.name} classifies RoCE into a lossy queue: {how}, but the lossless queue is "
                    f"{_ids(exp.lossless_queues)} ({exp.source})",
                    f"map DSCP {dscp} to the lossless TC/queue {exp.lossless_queues[0]} (and bind the map to "
                    "the RoCE ports)", locate(sw, None, "dscp", str(dscp)))


def skip_unread_mtu(sw: SwitchObs, ports: Iterable[PortQos], out: Out, want: SwitchQos | None = None) -> None:
    """RT442 is not checked on ``ports`` whose MTU the running configuration does not state (no MTU
    statement read for the port, or a capture without the interfaces) and, with ``want``, the plan sets:
    listed as not checked, never passed as "no difference"."""
    names = sorted(p.name for p in ports
                   if p.mtu is None and (want is None or want.ports[p.name].mtu is not None))
    if names:
        out.skip("RT442", sw.name, f"the MTU of {', '.join(names)}, which the running configuration does not "
                 "state (no MTU statement read for them: the platform default applies, or the capture lacks "
                 "the interfaces): capture the interfaces' configuration or their operational MTU")


def _no_ramp(e: QueueEcn) -> bool:
    return all(v is None for v in (e.kmin_bytes, e.kmax_bytes, e.kmin_percent, e.kmax_percent))


def skip_unread_ramp(sw: SwitchObs, ports: dict[str, PortQos], want: SwitchQos, out: Out) -> None:
    """RT434 is not checked on a planned ECN queue that the running configuration marks without a
    Kmin/Kmax ramp roce-tune reads (the read-back's ECN entry has no threshold: NX-OS AFD ``queue-desired``
    or WRED ``threshold burst-optimized``, thresholds in segments or time): listed, never passed."""
    names = sorted({n for n, p in ports.items() for q, e in (p.ecn or {}).items()
                    if _no_ramp(e) and (w := want.ports[n].ecn) and q in w and not _no_ramp(w[q])})
    if names:
        out.skip("RT434", sw.name, f"the ECN thresholds of {', '.join(names)}, which the running "
                 "configuration marks without a Kmin/Kmax ramp roce-tune reads (e.g. NX-OS AFD "
                 "`queue-desired`, WRED `threshold burst-optimized`, or thresholds in segments/time): "
                 "compare them with the plan's ramp by hand")


def skip_unread_headroom(sw: SwitchObs, ports: dict[str, PortQos], want: SwitchQos, out: Out) -> None:
    """RT426 is not checked on a planned lossless port whose headroom the running configuration does not
    state (no lossless buffer profile read for the port: e.g. a SONiC dynamic buffer model, whose
    ``BUFFER_PG`` rows name no profile and whose headroom buffermgrd computes): listed, never passed."""
    names = sorted(n for n, p in ports.items() if p.headroom is None and want.ports[n].headroom is not None)
    if names:
        out.skip("RT426", sw.name, f"the headroom of {', '.join(names)}, which the running configuration "
                 "does not state (no lossless buffer profile with xon/xoff read for them: the switch "
                 "computes it, e.g. a dynamic buffer model, or reserves none): capture the buffer profiles "
                 "in use, or compare the port's headroom with the plan's by hand")


def skip_unread_ecn(sw: SwitchObs, ports: Iterable[PortQos], out: Out) -> None:
    """RT431 (and with a plan RT434) is not checked on ``ports`` whose ECN the running configuration does
    not state (``ecn`` None: a profile bound but not in the capture, a RoCE mode's defaults): listed,
    never read as "no ECN"."""
    names = sorted(p.name for p in ports if p.ecn is None)
    if names:
        out.skip("RT431", sw.name, f"the ECN/WRED of {', '.join(names)}, which the running configuration "
                 "does not state (the ECN profile the port binds is not in the capture, or the switch's RoCE "
                 "mode sets it): capture the whole running configuration, or the switch's ECN status")


def _policy_ports(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """RT442 (port MTU below the hosts') and RT431 (no ECN on the lossless queue) on the PFC ports; a port
    whose ECN is unknown is listed as not checked (:func:`skip_unread_ecn`)."""
    assert sw.running is not None
    skip_unread_mtu(sw, _roce_ports(sw.running.value, sorted(exp.lossless_priorities)), out)
    skip_unread_ecn(sw, _roce_ports(sw.running.value, sorted(exp.lossless_priorities)), out)
    for p in _roce_ports(sw.running.value, sorted(exp.lossless_priorities)):
        if p.mtu is not None and p.mtu < exp.host_mtu:
            out.add("RT442", Severity.error, sw.name, p.name,
                    f"{sw.name} {p.name} MTU {p.mtu} is below the hosts' MTU {exp.host_mtu}: full-size RoCE "
                    "frames are dropped on this port", f"set MTU {exp.switch_mtu} on {p.name}",
                    locate(sw, p.name, "mtu"))
        ecn = p.ecn or {}
        absent = [x for x in exp.lossless_queues if x not in ecn]
        if absent and p.ecn is not None:
            out.add("RT431", Severity.error, sw.name, p.name,
                    f"WRED/ECN is not bound to lossless queue {_ids(absent)} on {sw.name} {p.name} "
                    f"(running config: ECN on queue {_ids(ecn)}): congestion is signalled by PFC alone",
                    f"bind the ECN (WRED with ecn) profile to queue {_ids(absent)} of {p.name}",
                    locate(sw, p.name, "ecn"))


#: what a running configuration that names no interface lacks (a ``| section qos`` capture)
_NO_INTERFACES = ("the per-port PFC, ECN/WRED, MTU and watchdog, which the captured configuration does not "
                  "state: it names no interface (a `| section` / `| include` capture, or one without the "
                  "interfaces): capture the whole running configuration")


def check_running_policy(sw: SwitchObs, exp: Expect, out: Out) -> None:
    """The checks that need no plan, on one switch's running configuration (RT420, RT414, RT442, RT431).
    A configuration without any interface has its per-port checks listed as not checked."""
    assert sw.running is not None
    if not sw.running.value.ports:
        out.skip("RT420", sw.name, _NO_INTERFACES)
    _policy_pfc(sw, exp, out)
    _policy_dscp(sw, exp, out)
    _policy_ports(sw, exp, out)


#: difference path -> (rule, severity name, setting, field words)
_PATHS: tuple[tuple[str, str, str, str, str], ...] = (
    (r"^ports\[(?P<port>[^\]]+)\]\.pfc_priorities", "RT420", "error", "pfc", "PFC priorities"),
    (r"^ports\[(?P<port>[^\]]+)\]\.ecn\[(?P<q>\d+)\]: missing", "RT431", "error", "ecn", "ECN/WRED"),
    (r"^ports\[(?P<port>[^\]]+)\]\.ecn", "RT434", "warning", "ecn", "ECN/WRED"),
    (r"^ports\[(?P<port>[^\]]+)\]\.headroom", "RT426", "error", "headroom", "headroom"),
    (r"^ports\[(?P<port>[^\]]+)\]\.mtu", "RT442", "error", "mtu", "MTU"),
    (r"^ports\[(?P<port>[^\]]+)\]\.watchdog", "RT427", "warning", "watchdog", "PFC watchdog"),
    (r"^watchdog", "RT427", "warning", "watchdog", "PFC watchdog"),
    (r"^(?:dscp_to_tc|dscp_to_queue)\[(?P<dscp>\d+)\]", "RT415", "warning", "dscp", "DSCP map"),
    (r"^(?:tc_to_queue|tc_to_pg)", "RT415", "warning", "dscp", "TC map"),
    (r"^schedulers", "RT416", "warning", "scheduler", "scheduler"),
    (r"^ports\[(?P<port>[^\]]+)\]: missing", "RT480", "warning", "port", "port"),
    (r"", "RT480", "warning", "", "setting"),
)
_FIELD_WORDS = {"pfc_priorities": "PFC priorities", "kmin_bytes": "ECN Kmin (B)",
                "kmax_bytes": "ECN Kmax (B)",
                "pmax_percent": "ECN Pmax (%)", "kmin_percent": "ECN Kmin (% of queue)",
                "kmax_percent": "ECN Kmax (% of queue)", "xoff_bytes": "headroom xoff (B)",
                "xon_bytes": "headroom xon (B)", "size_bytes": "headroom size (B)", "mtu": "MTU",
                "cable_m": "cable length (m)", "detection_ms": "watchdog detection (ms)",
                "restoration_ms": "watchdog restoration (ms)", "poll_ms": "watchdog poll (ms)",
                "action": "watchdog action", "watchdog": "PFC watchdog"}


def _words(path: str, sw: str, port: str | None) -> str:
    """``ports[Ethernet0].ecn[3].kmax_bytes: 1 != 2`` -> ``ECN Kmax (B) of queue 3 on leaf1 Ethernet0: plan 1,
    running config 2``."""
    where, _, change = path.partition(": ")
    m = re.match(r"^(?P<a>.*) != (?P<b>.*)$", change)
    last = re.sub(r"\[[^\]]*\]", "", where.rsplit(".", 1)[-1])
    name = _FIELD_WORDS.get(last, where if port is None else where.split("].", 1)[-1])
    qm = re.search(r"\.ecn\[(\d+)\]", where)
    loc = f"{sw} {port}" if port else sw
    what = f"{name}{' of queue ' + qm.group(1) if qm else ''} on {loc}"
    if m:
        return f"{what}: plan {m.group('a')}, running config {m.group('b')}"
    return f"{where} on {sw}: {change} in the running config" if change else f"{what} differs"


def _watchdog_words(d: str, sw: str, port: str | None, want: SwitchQos,
                    seen: SwitchQos) -> tuple[str, str] | None:
    """(message, fix) of a port's watchdog on/off difference ``d`` in words (it read "plan False, running
    config True"); None for any other difference."""
    if port is None or not d.startswith(f"ports[{port}].watchdog: "):
        return None
    w, s = want.ports[port].watchdog, seen.ports[port].watchdog
    if not isinstance(w, bool) or not isinstance(s, bool):
        return None
    on = {True: "on", False: "off"}
    return (f"PFC watchdog is {on[s]} on {sw} {port} (running config); the plan turns it {on[w]}",
            f"apply the plan (roce-tune apply turns the watchdog {on[w]} on {port}), or update the inventory "
            "(policy.pfc_watchdog) if the running watchdog is intended")


def _plan_finding(m: re.Match[str], rule: str, sev: str, label: str, d: str, sw: SwitchObs, want: SwitchQos,
                  seen: SwitchQos, exp: Expect) -> tuple[str, str, str, str]:
    """(rule, severity, message, fix) of one difference ``d`` (matched by ``m``) in the field's words."""
    port = m.groupdict().get("port")
    if rule == "RT420" and port:
        w, s = want.ports[port].pfc_priorities, seen.ports[port].pfc_priorities
        lost = sorted(set(w or []) - set(s or []))
        msg = (f"priority {_ids(lost)} is not lossless on {sw.name} {port} (plan: PFC on {_ids(w)}; running "
               f"config: PFC on {_ids(s)})" if lost else f"{sw.name} {port} has PFC on {_ids(s)}, the plan "
               f"on {_ids(w)} only")
        return rule, sev, msg, f"apply the plan (roce-tune apply): PFC on priority {_ids(w)} on {port}"
    if rule == "RT431":
        return (rule, sev,
                f"WRED/ECN is not bound to lossless queue {m.group('q')} on {sw.name} {port} (the plan "
                           "marks ECN there): congestion is signalled by PFC alone",
                f"apply the plan: bind its ECN profile to queue {m.group('q')} of {port}")
    if rule == "RT415" and m.groupdict().get("dscp") and int(m.group("dscp")) in exp.roce_dscp:
        dscp = int(m.group("dscp"))
        _, how = _queue_of_dscp(seen, dscp, unmapped_dscp_tc(sw))
        return ("RT414", "error",
                f"{sw.name} does not classify RoCE as the plan does: {how or d}; the plan puts "
                                  f"DSCP {dscp} in lossless queue {_ids(exp.lossless_queues)}",
                f"apply the plan (roce-tune apply): DSCP {dscp} → TC/queue {exp.lossless_queues[0]}")
    if rule == "RT427" and (words := _watchdog_words(d, sw.name, port, want, seen)):
        return (rule, sev, *words)
    if rule == "RT480" and port:
        return (rule, sev, f"port {port} of the plan is not in {sw.name}'s running configuration",
                "check the port name/breakout in the inventory, or apply the plan")
    return (rule, sev, _words(d, sw.name, port),
            f"apply the plan (roce-tune apply), or update the inventory if the running {label} is intended")


def _skip_unmapped(sw: SwitchObs, diffs: list[str], exp: Expect, out: Out) -> list[str]:
    """``diffs`` without the plan's DSCPs the running DSCP → TC map does not name (``dscp_to_tc[N]:
    missing``) on a platform whose unstated entries are its own default map: those are listed as not
    checked (RT414 for the RoCE DSCP, RT415 for the others), never as differences."""
    left = sorted(int(m.group(1)) for d in diffs if (m := re.match(r"^dscp_to_tc\[(\d+)\]: missing$", d)))
    for dscp in (x for x in left if x in exp.roce_dscp):
        out.skip("RT414", sw.name, _UNMAPPED_NEEDS.format(dscp=dscp, command=_maps_command(sw)))
    others = [x for x in left if x not in exp.roce_dscp]
    if others:
        out.skip("RT415", sw.name, _UNMAPPED_NEEDS.format(dscp=id_runs(others), command=_maps_command(sw)))
    return [d for d in diffs if not re.match(r"^dscp_to_tc\[\d+\]: missing$", d)]


def _sched_words(s: Scheduler) -> str:
    return "strict" if s.mode == "strict" else f"DWRR{f' {s.weight_percent} %' if s.weight_percent else ''}"


def check_schedulers(sw: SwitchObs, want: SwitchQos, seen: SwitchQos, out: Out) -> None:
    """RT416 per egress queue: the plan's and the running scheduler of the same queue differ, or the running
    configuration schedules a queue the plan does not; a planned queue the running configuration does not
    schedule has the platform's default (not stated): listed as not checked, not compared with another
    queue's entry."""
    if want.schedulers is None or seen.schedulers is None:
        return
    planned = {s.queue: s for s in want.schedulers}
    running = {s.queue: s for s in seen.schedulers}
    unstated = [q for q in sorted(planned) if q not in running]
    if unstated:
        out.skip("RT416", sw.name, f"the scheduling of queue {_ids(unstated)}, which the running "
                 "configuration does not state (the platform's default applies): the switch's queue "
                 "scheduling as it runs")
    fix = "apply the plan (roce-tune apply), or update the inventory if the running scheduler is intended"
    for q in sorted(running):
        a, b = planned.get(q), running[q]
        where = f"scheduler of queue {q} on {sw.name}"
        if a is None:
            msg = f"{where}: running config {_sched_words(b)}, the plan schedules no such queue"
        elif a != b:
            msg = f"{where}: plan {_sched_words(a)}, running config {_sched_words(b)}"
        else:
            continue
        out.add("RT416", Severity.warning, sw.name, None, msg, fix, locate(sw, None, "scheduler"))


def _running_as_planned(sw: SwitchObs, want: SwitchQos) -> SwitchQos:
    """``sw``'s running QoS as the plan is compared with: only the ports the plan names. A port without
    ECN reads ``ecn={}`` (none); ``None`` is unknown (listed by :func:`skip_unread_ecn`), never "none"."""
    assert sw.running is not None
    ports = {n: p for n, p in sw.running.value.ports.items() if n in want.ports}
    return sw.running.value.model_copy(update={"ports": ports})


def _plan_differences(sw: SwitchObs, want: SwitchQos, seen: SwitchQos, exp: Expect, out: Out) -> list[str]:
    """The differences (:func:`~roce_tune.qos.differences` paths) between the plan's QoS ``want`` (its
    schedulers aside: :func:`check_schedulers`) and the running ``seen`` that are findings: without any
    interface captured the ports are not compared (RT480 not checked); on a platform whose unstated DSCP map
    entries are its default, DSCPs the running map does not name are listed as not checked
    (:func:`_skip_unmapped`)."""
    assert sw.running is not None
    diffs = differences(want.model_copy(update={"schedulers": None}), seen)
    if not sw.running.value.ports:  # no interface captured: the plan's ports are not "missing"
        out.skip("RT480", sw.name, _NO_INTERFACES)
        diffs = [d for d in diffs if not d.startswith("ports[")]
    if unmapped_dscp_tc(sw) is None:  # a DSCP the running map does not name has the platform's default
        diffs = _skip_unmapped(sw, diffs, exp, out)
    return diffs


def _add_plan_findings(sw: SwitchObs, want: SwitchQos, seen: SwitchQos, exp: Expect, out: Out,
                       diffs: list[str]) -> None:
    """One finding per difference of ``diffs`` that a pattern of ``_PATHS`` matches (the first that does),
    in the field's words (:func:`_plan_finding`), with the capture lines that state the setting as evidence
    (:func:`locate`; the whole running configuration for a setting without words); returns nothing."""
    assert sw.running is not None
    for d in diffs:
        for pattern, rule, sev, what, label in _PATHS:
            m = re.match(pattern, d)
            if m is not None:
                rule, sev, msg, fix = _plan_finding(m, rule, sev, label, d, sw, want, seen, exp)
                port = m.groupdict().get("port")
                out.add(rule, Severity(sev), sw.name, port, msg, fix,
                        locate(sw, port, what, m.groupdict().get("dscp")) if what else [sw.running.ev])
                break


def check_running_plan(sw: SwitchObs, want: SwitchQos, exp: Expect, out: Out) -> None:
    """Every difference between the plan's QoS for ``sw`` and its running configuration (ports the plan
    does not name are not judged; on a platform that expresses ECN a planned port without any is "no ECN",
    unless the text leaves the port's PFC to the switch too)."""
    seen = _running_as_planned(sw, want)
    ports = seen.ports
    unknown = sorted(n for n, p in ports.items() if p.pfc_priorities is None and want.ports[n].pfc_priorities)
    if unknown:
        out.skip("RT420", sw.name, f"the PFC state of {', '.join(unknown)}, {_PFC_LEFT_TO_SWITCH}")
    skip_unread_mtu(sw, ports.values(), out, want)
    skip_unread_ramp(sw, ports, want, out)
    skip_unread_headroom(sw, ports, want, out)
    skip_unread_ecn(sw, [p for n, p in ports.items() if want.ports[n].ecn], out)
    check_schedulers(sw, want, seen, out)
    diffs = _plan_differences(sw, want, seen, exp, out)
    _add_plan_findings(sw, want, seen, exp, out, diffs)


def _watchdog_row_diff(row: str, wd: WatchdogQos | None) -> list[str]:
    """The differences of a watchdog table row (``"drop 200 200"``: action, detection ms, restoration ms)
    from the plan's watchdog, in words; a cell ``N/A`` (the port's entry does not state it: sonic-utilities
    prints its CONFIG_DESCRIPTION default) is not read, so not compared."""
    if wd is None:
        return []
    got = dict(zip(("action", "detection_ms", "restoration_ms"), row.split()))
    want = {"action": wd.action, "detection_ms": wd.detection_ms, "restoration_ms": wd.restoration_ms}
    return [f"{_FIELD_WORDS[k]}: plan {w}, running {got[k]}" for k, w in want.items()
            if w is not None and k in got and got[k] not in (str(w), "N/A")]


def check_watchdog_table(sw: SwitchObs, want: SwitchQos, out: Out) -> None:
    """RT427 from the switch's watchdog table (port, action, detection ms, restoration ms; SONiC ``show
    pfcwd config``) when no running configuration was captured: a planned lossless port the table covers
    but does not list has no watchdog; a listed one is compared with the plan's action and timers."""
    read = sw.families.get("pfcwd_config")
    if read is None or sw.running is not None:
        return
    wd = want.watchdog
    planned = f" ({wd.action}, detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms)" \
        if wd else ""
    fix = "apply the plan (roce-tune apply), or update the inventory if the running watchdog is intended"
    for name, p in sorted(want.ports.items()):
        if p.watchdog is None or (sw.pfcwd_scope is not None and name not in sw.pfcwd_scope):
            continue
        row = sw.pfcwd_config.get(name)
        if bool(row) != p.watchdog:
            state, listed = ("on", "listed") if row else ("off", "not listed")
            out.add("RT427", Severity.warning, sw.name, name,
                    f"PFC watchdog is {state} on {sw.name} {name} ({listed} in its watchdog table); the plan "
                    f"turns it {'on' + planned if p.watchdog else 'off'}", fix, [row or read])
        elif row is not None and (diff := _watchdog_row_diff(row.value, wd)):
            out.add("RT427", Severity.warning, sw.name, name,
                    f"PFC watchdog on {sw.name} {name}: " + "; ".join(diff), fix, [row])


#: trust word (:class:`~roce_tune.qos.PortQos`) -> how a finding says it, where the platform has no keyword
_TRUST_WORDS = {"pcp": "PCP", "port": "no marking (trust port: the port's default priority)",
                "none": "no marking (trust disabled: the port's default priority)"}


def check_trust(sw: SwitchObs, exp: Expect, out: Out, fields: frozenset[str]) -> None:
    """RT414 on the trust of the ports that carry RoCE (PFC on a RoCE priority; every port where none has):
    with DSCP trust planned (``exp.trust``), a port that classifies by PCP, or by no marking, never looks
    its RoCE DSCP up in the DSCP map the other checks judge, so RoCE lands wherever the PCP (or the port
    default) puts it: an error naming the trust; a port whose trust the running configuration does not
    state (neither the port, a profile it binds nor the switch) is listed as not checked, since the
    platform's default trust is not known. Only on platforms whose read-back reads the trust (``trust`` /
    ``ports.trust`` in ``READBACK_FIELDS``: EOS, Cumulus); PCP trust planned is not judged here."""
    from roce_tune.platforms import get_platform

    assert sw.running is not None
    if exp.trust != "dscp" or not fields & {"trust", "ports.trust"}:
        return
    keyword = getattr(get_platform(sw.platform), "TRUST_KEYWORD", {}) if sw.platform else {}
    groups = _trust_groups(sw.running.value, exp)
    for trust, names in sorted(groups.items(), key=lambda kv: str(kv[0])):
        _check_trust_group(sw, exp, out, keyword, trust, names)


def _trust_groups(q: SwitchQos, exp: Expect) -> dict[str | None, list[str]]:
    """The ports that carry RoCE in the running QoS ``q`` (PFC on a lossless priority of ``exp``; every
    port where none has) grouped by trust as it applies to them (the port's own, else the switch-wide
    ``q.trust``; None: unstated), in port order; without ports, the switch-wide trust (when stated) with
    no port names."""
    ports = _roce_ports(q, sorted(exp.lossless_priorities)) or list(q.ports.values())
    groups: dict[str | None, list[str]] = {}
    for p in ports:
        groups.setdefault(p.trust or q.trust, []).append(p.name)
    if not ports and q.trust is not None:  # a capture without interfaces: the switch-wide trust alone
        groups[q.trust] = []
    return groups


def _trust_how(trust: str, keyword: dict[str, str], prio: str) -> str:
    """How RoCE is classified on a port trusting ``trust`` (``pcp``, ``port`` or ``none``), in words:
    ``keyword`` is the platform's trust keyword per trust word (``TRUST_KEYWORD``), ``prio`` the lossless
    priorities as written (``3`` or ``3-4``)."""
    if trust == "pcp":
        return (f"classifies by PCP (trust {keyword.get('pcp', 'pcp')}): the DSCP map is not used; RoCE PCP "
                f"{prio} -> TC as the switch's PCP map says (not read back), untagged RoCE to the port "
                "default")
    return (f"classifies by {_TRUST_WORDS[trust]}: the DSCP map is not used; RoCE "
            "lands in the default priority's queue")


def _check_trust_group(sw: SwitchObs, exp: Expect, out: Out, keyword: dict[str, str], trust: str | None,
                       names: list[str]) -> None:
    """RT414 for the ports ``names`` of ``sw`` that share ``trust`` (:func:`_trust_groups`): not checked
    when the trust is unstated (None), nothing for DSCP trust (``dscp``, ``both``), else one error naming
    the ports (up to four, then a count), at the port when there is one; returns nothing."""
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    if trust is None:
        out.skip("RT414", sw.name, f"the trust mode of {shown}, which the running configuration does not "
                 "state (the platform's default trust applies, which roce-tune does not know): whether "
                 "the DSCP map classifies RoCE at all; state the trust in the configuration or check it "
                 "on the switch")
        return
    if trust in ("dscp", "both"):
        return
    how = _trust_how(trust, keyword, _ids(exp.lossless_priorities))
    port = names[0] if len(names) == 1 else None
    out.add("RT414", Severity.error, sw.name, port,
            f"{sw.name}{' ' + shown if shown else ''} {how} ({exp.source}: RoCE is classified by DSCP "
            f"{_ids(exp.roce_dscp)} into lossless queue {_ids(exp.lossless_queues)})",
            f"trust DSCP (trust {keyword.get('dscp', 'dscp')}) on {shown or 'the switch'}",
            locate(sw, port, "trust"))


def check_running(switches: Iterable[SwitchObs], exp: Expect, out: Out) -> None:
    """RT414/RT415/RT416/RT420/RT426/RT427/RT431/RT434/RT442/RT480 on every captured running configuration."""
    from roce_tune.platforms import get_platform

    for sw in switches:
        if sw.running is None:
            if sw.name in exp.switch_qos:
                check_watchdog_table(sw, exp.switch_qos[sw.name], out)
            continue
        fields: frozenset[str] = (getattr(get_platform(sw.platform), "READBACK_FIELDS",
                                          frozenset()) if sw.platform
                                  else frozenset())
        want = exp.switch_qos.get(sw.name)
        start = len(out.findings)
        if want is not None:
            check_running_plan(sw, want, exp, out)
        else:
            check_running_policy(sw, exp, out)
        skip_no_dscp_map(sw, out)
        check_trust(sw, exp, out, fields)
        _name_scopes(sw, out, start)


def _name_scopes(sw: SwitchObs, out: Out, start: int) -> None:
    """Findings ``out.findings[start:]`` of ports the running configuration states in one of several parts
    (``PortQos.scope``: a SONiC multi-ASIC namespace) say which: ``… (namespace asic1)``."""
    assert sw.running is not None
    ports = sw.running.value.ports
    for i in range(start, len(out.findings)):
        f = out.findings[i]
        scope = ports[f.port].scope if f.port in ports else None
        if scope is not None:
            out.findings[i] = dataclasses.replace(f, message=f"{f.message} (namespace {scope})")
