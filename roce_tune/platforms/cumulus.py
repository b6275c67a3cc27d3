"""NVIDIA Cumulus Linux (NVUE) renderer: ``<name>.nvue.sh`` (``nv set`` commands, one per line) and
``<name>.nvue.yaml`` (the same settings as one ``- set:`` operation for ``nv config patch``).

**NVUE syntax per Cumulus Linux release** (:data:`NVUE_GRAMMAR`, frozen data keyed by ``major.minor``): the
switch's inventory ``os_version`` selects the release; without one the output follows
:data:`DEFAULT_RELEASE` and plan.md says so (RT241). A release not in the table gets the default's syntax, a
lint warning (RT136, from :attr:`CAPABILITIES.os_releases`) and an RT241 warning in plan.md. What drifts
between releases for the commands written here: the interface PFC-watchdog state keyword (``enable`` up to
CL 5.14, ``enabled`` in CL 5.16) and the PFC watchdog itself (CL 5.6 and later). ``qos roce enable on``
became ``qos roce state enabled`` in CL 5.15 (CL 5.15 "New and Changed NVUE Commands"); roce-tune writes
neither: ``nv set qos roce mode lossless`` is equivalent to ``nv set qos roce`` in every release (RoCE page).
``ecn``/``red``/``tx``/``rx`` keep ``enable``/``disable`` through CL 5.16 (QoS page of each release).

Sections (templates ``templates/cumulus/<section>.j2`` for commands, ``<section>.yaml.j2`` for YAML):

* roce — ``nv set qos roce mode lossless``: NVIDIA's RoCE base (lossless pool, LLDP app TLV); every
  later knob overrides it ("Change RoCE Configuration", CL 5.14 RoCE page) [V].
* maps — ``qos mapping default-global trust l3`` and ``dscp <list> switch-priority <sp>``, plus
  ``qos egress-queue-mapping default-global switch-priority <sp> traffic-class <q>`` [V]. NVUE's switch
  priority is the plan's TC, its traffic class the plan's queue. ``trust: pcp`` renders ``trust l2``
  and keeps the switch's PCP map (the plan has no PCP -> TC map).
* pfc — ``qos pfc <profile> switch-priority``, ``tx``/``rx enable``, ``cable-length <m>`` (1..100000,
  whole metres, rounded up) [V]. ``xoff-threshold`` / ``xon-threshold`` / ``port-buffer`` are **not**
  rendered: NVUE's xoff-threshold is "reserved buffer consumed before a pause is sent" and xon-threshold
  "bytes below xoff" (CL 5.14 QoS page, Port Groups > PFC), i.e. other quantities than the plan's
  SONiC-style xon/xoff/size, and NVIDIA recommends letting Cumulus derive them from the cable length.
  The plan's cable length is therefore what is pushed; its headroom stays a review number.
* buffers — ``qos traffic-pool roce-lossless|default-lossy memory-percent`` and, when the plan's lossless
  priorities are not RoCE mode's switch priority 3, ``switch-priority`` of both pools (RoCE lossless mode
  puts only switch priority 3 in the lossless pool: RoCE page default table). NVUE's traffic pools share
  the whole shared buffer ("Cumulus Linux allocates 100% of the buffer memory to the default-lossy traffic
  pool by default. The total memory allocation across pools must not exceed 100%", QoS page "Flow Control
  Buffers"; RoCE page example 40 + 60). The plan's ``ingress_lossless_pool`` / ``ingress_lossy_pool``
  sizes are written as their shares of the two pools' sum, whole percents that add up to 100 (largest
  remainder); the rest of the ASIC buffer (headroom, reserved) Cumulus carves itself [V syntax].
* ecn — ``qos congestion-control <profile> traffic-class <lossless queues> ecn enable``,
  ``min-threshold``/``max-threshold`` (bytes), ``probability`` (1..100, integer), ``red disable`` [V].
  NVUE has one threshold pair per traffic class, so the plan's separate drop thresholds (if any) are not
  rendered; a lossless queue does not drop on WRED.
* scheduler — ``qos egress-scheduler default-global traffic-class <q> mode strict|dwrr`` and
  ``bw-percent`` (1..100) [V].
* watchdog — ``qos pfc-watchdog polling-interval <ms>`` and ``robustness <n>`` = detection / poll
  (must divide) [V]. Cumulus mitigates by dropping; it has no forward/alert action (refused) and no
  restoration timer (it restores after a poll interval without pause frames) — ``restoration_ms`` unused.
* interfaces — per port ``qos pfc profile``, ``qos congestion-control profile`` (only when ports
  differ, see below) and ``qos pfc-watchdog state enable`` on lossless swp ports [V].

Profiles: when every lossless port shares one PFC setting (priorities, cable metres) it goes on
``default-global``; otherwise each group gets a named profile (``roce-pfc-<prios>-<m>m``) bound per
port. The same holds for ECN profiles (the plan's profile names). ``default-global`` also applies to
ports that are lossy in the plan (RoCE mode enables PFC globally): a limitation, said here.

ECN on traffic class 0: NVUE's ``default-global`` congestion-control profile (and RoCE mode) marks ECN on
traffic class 0 (QoS page "Congestion Control (ECN)": min 150000 B, max 1500000 B). Ports bound to a
per-port profile get only the plan's lossless traffic classes, so they lose that marking: RT241 says so.

Sources: CumulusNetworks/docs ``content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
_index.md`` and ``RDMA-over-Converged-Ethernet-RoCE.md`` (and the same pages of ``cumulus-linux-516``);
``content/nvue-reference/Set-and-Unset-Commands/ QoS.md``; NVUE YAML shape (quoted numeric ids, ``'3': {}``
collections, integer values) from an NVUE API configuration dump of CL 5.5.1 (NVIDIA Air Ansible workshop)
[S]; ``nv config patch`` takes "a list of operation objects" (NVIDIA nvue tests) [S].
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Plan, Rationale, SwitchPlan
from roce_tune.platforms.base import (
    LINUX_IFNAME_MAX,
    CannotExpressValue,
    PlatformSpec,
    SecretPattern,
    secret_re,
)
from roce_tune.platforms.templating import render_device_template

_DOCS = "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-{rel}/"
_QOS_PAGE = "Layer-1-and-Switch-Ports/Quality-of-Service/"


@dataclass(frozen=True)
class NvueGrammar:
    """The NVUE words of one Cumulus Linux release for the commands roce-tune writes.

    Attributes:
        release: ``major.minor`` (``5.14``).
        on / off: value keywords of ``ecn``, ``red``, PFC ``tx``/``rx``.
        watchdog_on: keyword of ``nv set interface <swp> qos pfc-watchdog state``.
        source: public URL of the release's QoS page the keywords were checked against.
    """

    release: str
    on: str
    off: str
    watchdog_on: str
    source: str


def _grammar(release: str, watchdog_on: str, source: str = "") -> NvueGrammar:
    return NvueGrammar(release, "enable", "disable", watchdog_on,
                       source or _DOCS.format(rel=release.replace(".", "")) + _QOS_PAGE)


#: NVUE grammar per Cumulus Linux release (frozen). PFC watchdog exists from CL 5.6 ("What's New" 5.6:
#: ``qos pfc-watchdog state (enable|disable)``, ``polling-interval 100-5000``, ``robustness 1-1000``), so
#: older releases are not listed. CL 5.7-5.13 are taken as 5.6/5.14 (same keywords on both ends).
#: CL 5.15 is not listed: its changed-commands table moved many ``on|off`` values to ``enabled|disabled``
#: but roce-tune found no public 5.15 text for the watchdog state keyword (RT136 until checked).
NVUE_GRAMMAR: Mapping[str, NvueGrammar] = MappingProxyType({
    **{f"5.{m}": _grammar(f"5.{m}", "enable") for m in range(6, 15)},
    "5.16": _grammar("5.16", "enabled"),
})
#: Release whose syntax the output follows when the inventory gives no ``os_version``.
DEFAULT_RELEASE = "5.14"
#: Cumulus Linux release of the default syntax (kept for the ``render_version`` emulator default).
CL_VERSION = DEFAULT_RELEASE


def nvue_grammar(os_version: str | None) -> tuple[NvueGrammar, bool]:
    """The grammar for a switch's ``os_version`` (``5.16.0`` -> the ``5.16`` row) and whether it is known.

    ``None`` or an unknown release give :data:`DEFAULT_RELEASE`'s grammar (``known`` False for unknown).

    >>> nvue_grammar("5.16.1")[0].watchdog_on, nvue_grammar(None)[1], nvue_grammar("4.4.0")[1]
    ('enabled', True, False)
    """
    if os_version is None:
        return NVUE_GRAMMAR[DEFAULT_RELEASE], True
    m = re.match(r"^(\d+\.\d+)(?:\.|$)", os_version)
    row = NVUE_GRAMMAR.get(m.group(1)) if m else None
    return (row, True) if row is not None else (NVUE_GRAMMAR[DEFAULT_RELEASE], False)


SPEC = PlatformSpec(
    name="cumulus",
    extension="nvue.sh",
    aggregator="config.j2",
    sections=("roce", "maps", "pfc", "buffers", "ecn", "scheduler", "watchdog", "interfaces"),
    netmiko_device_type="cumulus_linux",
    commit="nvue-confirm",
    negate_prefix="nv unset",
    comment_prefix="#",
    indent=0,
    source=f"CumulusNetworks/docs cumulus-linux-514 Quality-of-Service and RoCE pages, nvue-reference QoS "
           f"(NVUE syntax of Cumulus Linux {CL_VERSION})",
    extra_outputs=(("config.yaml.j2", "nvue.yaml"),),
    show_commands={  # "{port}" is filled in by the caller (per-interface views)
        "running_config": "nv config show -o commands",
        "pending_diff": "nv config diff",
        "roce": "nv show qos roce",
        "maps": "nv show qos mapping default-global dscp",
        "pfc": "nv show qos pfc",
        "pfc_counters": "nv show interface {port} counters qos pfc-stats",
        "watchdog": "nv show interface {port} qos pfc-watchdog",
        "ecn": "nv show qos congestion-control",
        "ecn_counters": "nv show interface {port} qos roce counters",
        "queue_drops": "nv show interface {port} counters qos egress-queue-stats",
    },
    max_port_name_chars=LINUX_IFNAME_MAX,  # ports are Linux netdevs
)

#: Secrets in ``nv config show -o commands`` (and the YAML form) that logs and restore points mask
#: (``mask_secrets``): ``system aaa user U password|hashed-password``, ``system aaa tacacs|radius server
#: S secret``, SNMP ``readonly-community[-v6] NAME`` and ``username U auth-sha K encrypt-aes K``, BGP
#: ``neighbor N password``, NTP ``key N value``, OSPF ``interface I router ospf authentication md5-key K``.
#: Source: Cumulus Linux 5 user guide (NVUE, User Accounts, TACACS, RADIUS AAA, SNMP, BGP, NTP, OSPF:
#: https://docs.nvidia.com/networking-ethernet-software/cumulus-linux/).
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    secret_re(r"\b(?:password|hashed-password|secret|auth-md5|auth-sha|encrypt-aes|encrypt-des"
              r"|readonly-community(?:-v6)?|community-password|md5-key)\s+(?P<secret>{value})"),
    secret_re(r"\bkey\s+\d+\s+value\s+(?P<secret>{value})"),
    secret_re(r"^\s*(?:password|hashed-password|secret|value|auth-md5|auth-sha|encrypt-aes|encrypt-des):\s+"
              r"(?P<secret>{value})"),
)

DEFAULT_PROFILE = "default-global"
ROCE_MODE = "lossless"
TRUST_KEYWORD: dict[str, str] = {"dscp": "l3", "pcp": "l2"}
#: plan pool (SONiC name, emitted by the tuner) -> NVUE traffic pool (CL 5.14 "Traffic Pools").
TRAFFIC_POOL_BY_PLAN_POOL: dict[str, str] = {"ingress_lossless_pool": "roce-lossless",
                                             "ingress_lossy_pool": "default-lossy"}
#: Switch priorities RoCE lossless mode puts into the ``roce-lossless`` traffic pool ("Switch priority 3
#: allocated to RoCE lossless traffic pool", CL 5.x RoCE page, "Default RoCE Configuration"; ``nv show qos
#: roce``: roce-reserved-ingress switch-priorities 3, lossy-default-ingress 0,1,2,4,5,6,7).
ROCE_LOSSLESS_SWITCH_PRIORITIES = frozenset({3})
#: Switch priorities NVUE has (0..7).
SWITCH_PRIORITIES = range(8)
#: The only PFC-watchdog mitigation Cumulus has ("discards new incoming packets to this egress queue").
WATCHDOG_ACTIONS = frozenset({"drop"})


def id_list(ids: list[int] | set[int]) -> str:
    """Comma list of ids as NVUE takes them (``traffic-class 0,3``)."""
    return ",".join(str(i) for i in sorted(set(ids)))


def metres(cable_m: float) -> int:
    """NVUE ``cable-length`` is whole metres (1..100000); fractional lengths are rounded up."""
    return max(1, math.ceil(cable_m))


def _integer_percent(value: float, what: str, lo: int = 1, rationale: Rationale | None = None) -> int:
    """``value`` (``what``: its name in messages) as NVUE's integer percent ``lo``..100.

    Raises:
        CannotExpressValue: fractional or out of range (RT240; at the override behind it when ``rationale``
            says the value was pinned).
    """
    if value != int(value) or not lo <= value <= 100:
        raise CannotExpressValue(f"{what}={value} cannot be written to NVUE (integer {lo}..100)",
                                 what.rpartition(".")[2], rationale)
    return int(value)


def _groups(items: dict[str, Any]) -> dict[Any, list[str]]:
    out: dict[Any, list[str]] = defaultdict(list)
    for port, key in items.items():
        out[key].append(port)
    return dict(out)


def _pfc(switch: SwitchPlan) -> list[dict[str, Any]]:
    by_port = {p.name: (tuple(sorted(p.pfc_priorities)), metres(p.cable_m)) for p in switch.ports
               if p.lossless}
    groups = _groups(by_port)
    out = []
    for (prios, cable), ports in sorted(groups.items()):
        name = DEFAULT_PROFILE if len(groups) == 1 else f"roce-pfc-{'-'.join(map(str, prios))}-{cable}m"
        out.append({"name": name, "priorities": list(prios), "priority_list": id_list(prios), "cable": cable,
                    "ports": sorted(ports), "bound": len(groups) > 1})
    return out


def _ecn(plan: Plan, switch: SwitchPlan) -> list[dict[str, Any]]:
    profiles = {e.name: e for e in switch.ecn_profiles}
    by_port = {p.name: p.ecn_profile for p in switch.ports if p.lossless}
    groups = _groups(by_port)
    queues = sorted(plan.classification.lossless_queues)
    out = []
    for name, ports in sorted(groups.items()):
        if name not in profiles:
            raise ValueError(f"{switch.name}: ports {', '.join(ports)} use ECN profile {name} not in "
                             "ecn_profiles")
        e = profiles[name]
        out.append({"name": DEFAULT_PROFILE if len(groups) == 1 else name, "plan_name": name,
                    "queues": queues, "queue_list": id_list(queues), "min": e.kmin_bytes, "max": e.kmax_bytes,
                    "probability": _integer_percent(e.pmax_percent, f"{name}.pmax_percent", 1,
                                                    e.rationale.get("pmax_percent")),
                    "ports": sorted(ports), "bound": len(groups) > 1})
    return out


def _schedulers(plan: Plan) -> dict[str, Any]:
    strict: list[int] = []
    dwrr: dict[int, list[int]] = defaultdict(list)
    for s in plan.classification.schedulers:
        if s.mode == "strict":
            strict.append(s.queue)
        else:
            if s.weight_percent is None:
                raise ValueError(f"scheduler {s.name} (queue {s.queue}) is dwrr without a weight")
            dwrr[_integer_percent(s.weight_percent, f"{s.name}.weight_percent")].append(s.queue)
    per_queue = sorted([(q, "strict", None) for q in strict]
                       + [(q, "dwrr", w) for w, qs in dwrr.items() for q in qs])
    return {"strict_list": id_list(strict) if strict else None,
            "dwrr": [{"queue_list": id_list(qs), "weight": w} for w, qs in sorted(dwrr.items())],
            "per_queue": [{"queue": q, "mode": m, "weight": w} for q, m, w in per_queue]}


def _pools(switch: SwitchPlan) -> list[dict[str, Any]]:
    """The plan's two ingress pools as NVUE traffic-pool shares: whole percents of their sum that add up to
    100 (largest remainder, ties to the lossless pool), each at least 1 %."""
    pools = sorted((p for p in switch.buffers.pools if p.name in TRAFFIC_POOL_BY_PLAN_POOL),
                   key=lambda p: TRAFFIC_POOL_BY_PLAN_POOL[p.name])
    if not pools:
        return []
    total = sum(p.size_bytes for p in pools)
    if total <= 0:
        raise ValueError(f"{switch.name}: ingress pools {[p.name for p in pools]} have no size")
    exact = [p.size_bytes * 100 / total for p in pools]
    percent = [math.floor(x) for x in exact]
    by_remainder = sorted(range(len(pools)), key=lambda i: (-(exact[i] - percent[i]),
                                                            pools[i].name != "ingress_lossless_pool"))
    for i in by_remainder[:100 - sum(percent)]:
        percent[i] += 1
    if any(x < 1 for x in percent):
        raise ValueError(f"{switch.name}: traffic pool shares {percent} % of {[p.name for p in pools]}: each "
                         "needs >= 1 %")
    return [{"name": TRAFFIC_POOL_BY_PLAN_POOL[p.name], "percent": x} for p, x in zip(pools, percent)]


def _pool_entries(plan: Plan, switch: SwitchPlan) -> list[dict[str, Any]]:
    """Traffic pools to write: the memory shares (:func:`_pools`) and, when the plan's lossless priorities
    are not RoCE mode's (:data:`ROCE_LOSSLESS_SWITCH_PRIORITIES`), which switch priorities each pool holds:
    the lossless ones in ``roce-lossless``, every other one in ``default-lossy``. Without that a lossless
    priority other than 3 stays in the lossy pool while PFC pauses it. Syntax: ``nv set qos traffic-pool
    <pool> switch-priority <sp>`` (NVUE command reference, CL 5.4+; the CL 5.x RoCE page remaps switch
    priority 4 with ``traffic-pool default-lossy switch-priority 0-3,5-7`` / ``roce-lossy switch-priority
    4``). Each entry: ``name``, ``percent`` (int or None), ``priorities`` (list or None),
    ``priority_list``."""
    entries = {p["name"]: {"name": p["name"], "percent": p["percent"], "priorities": None}
               for p in _pools(switch)}
    lossless = sorted(set(plan.classification.lossless_priorities))
    if lossless and set(lossless) != ROCE_LOSSLESS_SWITCH_PRIORITIES:
        for name, sps in (("default-lossy", [sp for sp in SWITCH_PRIORITIES if sp not in lossless]),
                          ("roce-lossless", lossless)):
            entries.setdefault(name, {"name": name, "percent": None})["priorities"] = sps
    return [dict(e, priority_list=id_list(e["priorities"]) if e["priorities"] else None)
            for _, e in sorted(entries.items())]


def _pool_findings(switch: SwitchPlan, where: Location) -> list[Finding]:
    """RT241 (info) with the numbers when the plan's ingress pools (bytes) go out as NVUE traffic-pool
    percentages (:func:`_pools`): the absolute sizes are not configured, only their rounded shares."""
    shares = _pools(switch)
    if not shares:
        return []
    pools = sorted((p for p in switch.buffers.pools if p.name in TRAFFIC_POOL_BY_PLAN_POOL),
                   key=lambda p: TRAFFIC_POOL_BY_PLAN_POOL[p.name])
    plan_text = " / ".join(f"{p.name} {p.size_bytes} B" for p in pools)
    nvue_text = " / ".join(f"{s['name']} {s['percent']} %" for s in shares)
    return [Finding(rule="RT241", severity=Severity.info, location=where,
                    message=f"NVUE traffic pools are whole percents of the shared buffer: plan {plan_text} "
                            f"written as {nvue_text} (their shares of the pools' sum, adding up to 100 %)",
                    fix="compare with 'nv show qos traffic-pool' after apply")]


def _watchdog(switch: SwitchPlan) -> dict[str, Any]:
    wd = switch.watchdog
    if not wd.enabled:
        return {"enabled": False}
    if wd.action not in WATCHDOG_ACTIONS:  # (CannotExpressValue: RT240 at the override that pinned it)
        raise CannotExpressValue(f"{switch.name}: Cumulus PFC watchdog can only drop, the plan asks for "
                                 f"{wd.action!r}", "action", wd.rationale.get("action"))
    if wd.detection_ms % wd.poll_ms:
        why = wd.rationale.get("detection_ms")
        key = "detection_ms" if why is not None and why.pinned_by_user else "poll_ms"
        raise CannotExpressValue(f"{switch.name}: detection {wd.detection_ms} ms is not a whole number of "
                                 f"{wd.poll_ms} ms polls (NVUE robustness)", key, wd.rationale.get(key))
    return {"enabled": True, "polling_interval": wd.poll_ms, "robustness": wd.detection_ms // wd.poll_ms}


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, Any]:
    """Everything the NVUE templates print, already in NVUE vocabulary (no arithmetic left for Jinja).

    Returns:
        dict with ``sections``, ``c`` (comment marker), ``on``/``off``/``watchdog_on`` (the release's
        keywords, :func:`nvue_grammar`), ``header``, ``roce_mode``,
        ``trust``, ``dscp_groups`` (switch priority -> comma DSCP list), ``dscp_map`` (per DSCP),
        ``egress_queue`` ((sp, tc) pairs), ``pfc`` / ``ecn`` (profiles with their ports), ``pools``,
        ``schedulers``, ``watchdog``, ``interfaces`` (every port: MTU and its bindings).

    Raises:
        ValueError: the plan cannot be written to NVUE (fractional Pmax, watchdog action other than drop,
            detection not a multiple of the poll interval, a pool share below 1 %, inconsistent plan).
        CatalogError: the switch's ASIC is not in the catalog (traffic-pool percentages need its buffer).
    """
    if switch.platform != SPEC.name:
        raise ValueError(f"{switch.name} is a {switch.platform} switch, not {SPEC.name}")
    grammar, _known = nvue_grammar(switch.os_version)
    c = plan.classification
    sp_to_dscps: dict[int, list[int]] = defaultdict(list)
    for dscp, tc in sorted(c.dscp_to_tc.items()):
        sp_to_dscps[tc].append(dscp)
    pfc, ecn = _pfc(switch), _ecn(plan, switch)
    wd = _watchdog(switch)
    pfc_of = {port: p["name"] for p in pfc if p["bound"] for port in p["ports"]}
    ecn_of = {port: e["name"] for e in ecn if e["bound"] for port in e["ports"]}
    interfaces = [{"name": p.name, "mtu": p.mtu, "pfc": pfc_of.get(p.name), "ecn": ecn_of.get(p.name),
                   "watchdog": wd["enabled"] and p.lossless}
                  for p in sorted(switch.ports, key=lambda p: p.name)]
    return {
        "sections": SPEC.sections,
        "c": SPEC.comment_prefix,
        "on": grammar.on,
        "off": grammar.off,
        "watchdog_on": grammar.watchdog_on,
        "header": {"switch": switch.name, "model": switch.model, "asic": switch.asic, "site": plan.site,
                   "generator": plan.generator, "cl_version": grammar.release,
                   "os_version": switch.os_version},
        "profile": DEFAULT_PROFILE,
        "roce_mode": ROCE_MODE,
        "trust": TRUST_KEYWORD[c.trust],
        "dscp_groups": [{"sp": sp, "dscp_list": id_list(ds)} for sp, ds in sorted(sp_to_dscps.items())]
        if c.trust == "dscp" else [],
        "dscp_map": sorted(c.dscp_to_tc.items()) if c.trust == "dscp" else [],
        "egress_queue": sorted(c.tc_to_queue.items()),
        "pfc": pfc,
        "ecn": ecn,
        "pools": _pool_entries(plan, switch),
        "schedulers": _schedulers(plan),
        "watchdog": wd,
        "interfaces": interfaces,
    }


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 for what the NVUE output changes or does not carry: the NVUE release it follows (default or
    unknown ``os_version``), ECN on traffic class 0
    dropped by per-port profiles, the per-port headroom (NVUE derives it from the PFC profile's
    cable-length), the watchdog restoration timer, cable lengths rounded up to whole metres, and lossy ports
    that ``default-global`` PFC/ECN profiles reach (a warning)."""
    where = Location(device=switch.name)
    out = _release_findings(switch) + _class_findings(plan, switch)
    if any(p.headroom is not None for p in switch.ports):
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message="NVUE derives PFC headroom from the PFC profile's cable-length: the "
                                   "plan's per-port headroom (xon/xoff/size) is a review number, not "
                                   "configured",
                           fix="compare with 'nv show qos pfc' / 'nv show interface <swp> qos buffer' after "
                           "apply"))
    wd = switch.watchdog
    if wd.enabled:
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message="Cumulus PFC watchdog has no restoration timer: plan restoration "
                                   f"{wd.restoration_ms} ms is not rendered (a queue is restored after a "
                                   "poll interval without pause frames)",
                           fix="none available in NVUE"))
    out += _pool_findings(switch, where)
    odd = sorted({p.cable_m for p in switch.ports if p.lossless and p.cable_m != metres(p.cable_m)})
    if odd:
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message=f"NVUE cable-length is whole metres: plan cable lengths {odd} m rounded "
                           "up",
                           fix="none needed (a longer cable only adds headroom)"))
    return out + _lossy_ports_finding(plan, switch)


def _release_findings(switch: SwitchPlan) -> list[Finding]:
    """RT241: which NVUE release the output follows, and a warning when ``os_version`` is not in the table."""
    grammar, known = nvue_grammar(switch.os_version)
    where = Location(device=switch.name)
    if switch.os_version is None:
        return [Finding(rule="RT241", severity=Severity.info, location=where,
                        message=f"NVUE syntax of Cumulus Linux {grammar.release} (default: the inventory "
                                f"gives no os_version; known releases {', '.join(NVUE_GRAMMAR)})",
                        fix="set the switch's os_version in the inventory")]
    if not known:
        return [Finding(rule="RT241", severity=Severity.warning, location=where,
                        message=f"Cumulus Linux {switch.os_version} is not a release roce-tune knows the "
                                f"NVUE syntax of: the file follows Cumulus Linux {grammar.release} (known: "
                                f"{', '.join(NVUE_GRAMMAR)})",
                        fix="check each line with 'nv set ... ?' on the switch before applying")]
    return []


def _class_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 for ECN on traffic class 0 that per-port congestion-control profiles drop. (Every switch
    priority already maps to a scheduled traffic class in the plan: the tuner sends unused ones to TC 0 as
    RoCE mode does, and RT239 refuses a plan that does not.)"""
    where = Location(device=switch.name)
    out = []
    bound = sorted(port for e in _ecn(plan, switch) if e["bound"] for port in e["ports"])
    q0 = plan.classification.tc_to_queue.get(0, 0)
    if bound and q0 not in plan.classification.lossless_queues:
        out.append(Finding(
            rule="RT241", severity=Severity.warning, location=where,
            message=f"ECN on traffic class {q0}: default-global (and RoCE mode) marks it (min 150000 B, max "
                    f"1500000 B), but ports {', '.join(bound[:6])}{' ...' if len(bound) > 6 else ''} use "
                    "per-port congestion-control profiles with only the plan's lossless traffic classes, so "
                    f"they do not mark ECN on traffic class {q0}",
            fix="accept it, or add the traffic class to the per-port profiles by hand"))
    return out


def _lossy_ports_finding(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 warning for ports the plan has lossy: default-global PFC/ECN reaches them. Either roce-tune
    writes default-global profiles (one PFC/ECN setting for all lossless ports), or it writes none (per-port
    profiles, or no lossless port at all) and RoCE lossless mode's own default-global applies: PFC on switch
    priority 3 and ECN on traffic class 3 (CL 5.x RoCE page, "Default RoCE Configuration")."""
    lossy = sorted(p.name for p in switch.ports if not p.lossless)
    if not lossy:
        return []
    ctx = build_context(plan, switch)
    message = (f"lossy ports {', '.join(lossy[:6])}{' ...' if len(lossy) > 6 else ''}: default-global "
               "PFC/ECN profiles apply to them too, although the plan has them lossy")
    if not any(not g["bound"] for g in ctx["pfc"] + ctx["ecn"]):
        roce_prios = ",".join(map(str, sorted(ROCE_LOSSLESS_SWITCH_PRIORITIES)))
        message += (f" (no default-global profile is written, so they are RoCE mode's: 'nv set qos roce mode "
                    f"{ROCE_MODE}' enables PFC on switch priority {roce_prios} and ECN on traffic class "
                    f"{roce_prios})")
    return [Finding(rule="RT241", severity=Severity.warning, location=Location(device=switch.name),
                    message=message,
                    fix="bind per-port profiles by hand where a lossy port must not get PFC")]


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as NVUE: ``{"<name>.nvue.sh": commands, "<name>.nvue.yaml": nv config patch YAML}``.

    Raises:
        ValueError / CatalogError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    ctx = build_context(plan, switch)
    name = ("header", "switch")
    out = {f"{switch.name}.{SPEC.extension}": render_device_template(SPEC.name, SPEC.aggregator, switch.name,
                                                                     ctx, name)}
    for template, suffix in SPEC.extra_outputs:
        out[f"{switch.name}.{suffix}"] = render_device_template(SPEC.name, template, switch.name, ctx, name)
    return out


# --- LLDP and system facts (roce-tune import lldp / lint --lldp) -----------------------------------
import json as _json  # noqa: E402
import re as _re  # noqa: E402

from roce_tune.platforms import lldp as _lldp  # noqa: E402


def _first(obj: Any) -> Any:
    return next(iter(obj.values())) if isinstance(obj, dict) and obj else obj


def parse_nv_lldp_json(text: str) -> list[_lldp.LldpNeighbor]:
    """``nv show interface --view=lldp -o json``: interface name -> its NVUE object, whose
    ``lldp.neighbor`` is keyed by neighbour id, each with ``chassis`` (``system-name``) and ``port``
    (``name`` or ``id`` with ``type``, ``description``) — NVUE's object model
    ``interface/<id>/lldp/neighbor/<id>`` (docs.nvidia.com, NVUE reference "LLDP"). Our own parser.

    Raises:
        LldpParseError: not JSON, or not keyed by interface.
    """
    doc = _lldp.json_block(text)
    if not isinstance(doc, dict):
        raise _lldp.LldpParseError("expected a JSON object keyed by interface name", 0)
    out = []
    for ifname, obj in doc.items():
        neigh = (obj.get("lldp") or {}).get("neighbor") if isinstance(obj, dict) else None
        if not neigh:
            continue
        items = neigh.items() if isinstance(neigh, dict) else ((n.get("name", ""), n) for n in neigh)
        for nid, n in items:
            chassis = n.get("chassis") or {}
            port = n.get("port") or {}
            name, is_mac = _lldp.remote_port_name(port.get("type"), port.get("name") or port.get("id"),
                                                  port.get("description"))
            out.append(_lldp.LldpNeighbor(ifname, chassis.get("system-name") or nid or None, name, is_mac,
                                          _lldp.key_line(text, ifname)))
    return out


#: ``nv show interface lldp`` (NVUE) / ``net show lldp`` (NCLU): ``Interface|LocalPort  Speed  Type|Mode
#: Remote Host|RemoteHost  Remote Port|RemotePort``
_TABLE_HEAD_RE = re.compile(r"^(?:Interface|LocalPort)\s+Speed\s+(?:Type|Mode)\s+Remote\s?Host\s+"
                            r"Remote\s?Port\s*$")


def parse_lldp_table(text: str) -> list[_lldp.LldpNeighbor]:
    """``nv show interface lldp`` (NVUE, text) and ``net show lldp`` (NCLU): one row per interface with a
    neighbour, the remote host and the remote port ID last (docs.nvidia.com, NVUE reference "LLDP"). The
    table has no port description: a host NIC sending a MAC as port ID has no name here (``nv show interface
    lldp-detail`` or ``sudo lldpctl`` has it). A row without remote cells is an interface without one. The
    remote host and port are cut at the header's Remote Port column
    (:func:`~roce_tune.platforms.lldp.split_near`: either may hold a space).

    Raises:
        LldpParseError: no header; a row with a remote host and no remote port.
    """
    lines = text.splitlines()
    head = next((i for i, t in enumerate(lines) if _TABLE_HEAD_RE.match(t)), None)
    if head is None:
        raise _lldp.LldpParseError("no 'Interface  Speed  Type  Remote Host  Remote Port' header", 0)
    host_at = re.search(r"Remote\s?Host", lines[head]).start()  # type: ignore[union-attr]
    port_at = re.search(r"Remote\s?Port", lines[head]).start()  # type: ignore[union-attr]
    out = []
    for i in range(head + 1, len(lines)):
        t = lines[i].rstrip()
        if not t.strip() or set(t.strip()) <= {"-", " "} or len(t) <= host_at or not t[host_at:].strip():
            continue
        words = t.split()
        if len(t[host_at:].split()) < 2:
            raise _lldp.LldpParseError(f"row {t.strip()!r} has a remote host and no remote port", i)
        # cut at the Remote Port column: either cell may hold a space (PowerEdge R750, GigabitEthernet 0/2)
        host, port = _lldp.split_near(t, host_at - 1, port_at)
        name, is_mac = _lldp.remote_port_name(None, port, None)
        out.append(_lldp.LldpNeighbor(words[0], host, name, is_mac, i))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``nv show interface --view=lldp -o json`` for ``ends``."""
    doc: dict[str, Any] = {}
    for e in ends:
        if e.remote_is_host:
            port = {"type": "mac", "id": _lldp.mac_of(e.remote_system, e.remote_port),
                    "description": e.remote_port}
        else:
            port = {"type": "ifname", "name": e.remote_port, "description": e.remote_port}
        doc[e.local_port] = {"type": "swp", "lldp": {"neighbor": {e.remote_system: {
            "age": 3600, "chassis": {"chassis-id": _lldp.mac_of(e.remote_system, "chassis"),
                                     "system-name": e.remote_system}, "port": {**port, "ttl": 120}}}}}
    return _json.dumps(doc, indent=2) + "\n"


_NV_KEYS = ("hostname", "build", "product-name", "part-number")


def _nv_text_table(text: str) -> dict[str, str]:
    """The rows of ``nv show system`` / ``nv show platform`` text: ``key   operational-value   [applied]``
    (the value may hold spaces: ``Cumulus Linux 5.9.1``; cut at the ``applied`` column when there is one).

    Raises:
        LldpParseError: no row names a key the version parser reads.
    """
    lines = text.splitlines()
    head = next((t for t in lines if _re.match(r"^\s+operational\b", t)), "")
    applied_at = head.find("applied") if "applied" in head else None
    out = {}
    for line in lines:
        key = line.split(None, 1)[0] if line.strip() else ""
        if key in _NV_KEYS and len(line.split()) > 1:
            value = line[len(key):applied_at] if applied_at is not None else line[len(key):]
            out[key] = value.strip() or line.split()[-1]
    if not out:
        raise _lldp.LldpParseError("no 'build', 'hostname' or 'product-name' row: not nv show system / "
                                   "platform", 0)
    return out


def parse_nv_system_json(text: str) -> _lldp.DeviceFacts:
    """``nv show system -o json`` (``build: "Cumulus Linux 5.9.1"``, ``hostname``) and/or ``nv show platform
    -o json`` (``product-name``, ``part-number`` like ``MSN4700-WS2FO``). Our own parser.

    Their text forms (without ``-o json``: ``build   Cumulus Linux 5.9.1`` rows under an ``operational
    applied`` header) are read as the same keys, from the operational column.

    Raises:
        LldpParseError: the text is neither a JSON object nor NVUE's text table.
    """
    doc = _nv_text_table(text) if not _re.search(r"^\s*\{", text, _re.M) else _lldp.json_block(text)
    if not isinstance(doc, dict):
        raise _lldp.LldpParseError("expected a JSON object", 0)
    build = str(doc.get("build") or "")
    m = _re.search(r"Cumulus Linux\s+(\S+)", build)
    model = doc.get("product-name")
    if not model or "cumulus" in str(model).lower():
        pn = _re.match(r"^M?(SN\d+\w*?)(?:-|$)", str(doc.get("part-number") or ""))
        model = pn.group(1) if pn else None
    return _lldp.DeviceFacts(model=model, os_version=m.group(1) if m else None, hostname=doc.get("hostname"))


def render_version(device: str, model: str, os_version: str | None) -> str:
    """One JSON document with what ``nv show system`` (``build``, ``hostname``) and ``nv show platform``
    (``product-name``, ``part-number``) report; the parser reads either command's output or both."""
    return _json.dumps({"hostname": device, "build": f"Cumulus Linux {os_version or CL_VERSION}",
                        "product-name": model, "part-number": f"M{model}-WS2FO" if model.startswith("SN")
                        else model,
                        "manufacturer": "Nvidia"}, indent=2) + "\n"


LLDP_FORMATS = (
    _lldp.CaptureFormat("nv show interface --view=lldp -o json", r"^nv\s+show\s+interface\b.*lldp",
                        lambda t: '"lldp"' in t and '"neighbor"' in t and '"interface"' not in t,
                        parse_nv_lldp_json, "roce-tune (NVUE JSON)"),
    _lldp.CaptureFormat("nv show interface lldp / net show lldp",
                        r"^(?:nv\s+show\s+interface|net\s+show)\s+lldp\s*$",
                        lambda t: bool(re.search(_TABLE_HEAD_RE.pattern, t, re.M)), parse_lldp_table,
                        "roce-tune (NVUE / NCLU text)"),
    _lldp.CaptureFormat("nv show interface lldp-detail", r"^nv\s+show\s+interface\s+lldp-detail\b",
                        _lldp.LLDPCTL_TEXT.detect, _lldp.parse_lldpctl_text, "roce-tune (lldpd text)"),
    _lldp.LLDPCTL_JSON,
    _lldp.LLDPCTL_KEYVALUE,
    _lldp.LLDPCTL_TEXT,
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("nv show system / nv show platform [-o json]",
                        r"^nv\s+show\s+(?:system|platform)\b",
                        lambda t: '"build"' in t and "Cumulus Linux" in t or '"product-name"' in t
                        or bool(_re.search(r"^(?:build\s+Cumulus Linux|product-name)\s", t, _re.M)),
                        parse_nv_system_json, "roce-tune"),
)
LLDP_RENDER_COMMAND = "nv show interface --view=lldp -o json"
VERSION_RENDER_COMMAND = "nv show system -o json"
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "cumulus@{device}:mgmt:~$ "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
from roce_tune.platforms import contract as _c  # noqa: E402

#: the read-back names (_c.READBACK_NAMES) of cumulus_readback, imported on first use
__getattr__ = _c.lazy_attributes(__name__, "roce_tune.platforms.cumulus_readback", _c.READBACK_NAMES)


def nv_lines(text: str) -> str:
    """Only the ``nv …`` lines of an NVUE script or ``nv config show -o commands`` output."""
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("nv "))


#: diff data: ``nv set qos`` lines and the ports' QoS statements (``nv set interface <swp> qos`` profile
#: bindings and PFC watchdog) are authoritative; a line is removed with ``nv unset``. Without the port
#: lines a binding to a per-port profile the plan no longer writes would outlive its profile.
DIFF = _c.DiffRules(
    kind="set", owned_roots=("nv set qos ",), owned_lines=(r"nv set interface \S+ qos ",),
    negate=("nv set ", "nv unset "),
    disruptive=((r"^[+-]nv set qos traffic-pool",
                 "a traffic-pool resize restarts the buffer configuration (switchd)"),
                (r"^\+nv set qos pfc ", _c.PFC_ON),
                (r"^\+nv set interface \S+ qos pfc", _c.PFC_ON)),
    keep_lines=nv_lines,
)


#: the read-only commands :func:`probe_pending` runs: an apply still waiting for its confirm, then the pending
#: revision against the applied one, as commands
CONFIRM_PROBE = "nv config apply --confirm-status"
PENDING_PROBE = "nv config diff -o commands"
#: what ``nv config apply --confirm-status`` prints while an apply waits for its confirm (``Confirm time left:
#: 597s``); "No pending confirm" otherwise
CONFIRM_PENDING = r"(?i)(time left|remaining|pending confirm[^a-z]*\d)"


def probe_pending(run: Callable[[str], str]) -> str | None:
    """Why apply must not push to this switch now (or None), from two read-only commands ``run`` runs and
    returns the output of:

    * :data:`CONFIRM_PROBE`: someone's ``nv config apply --confirm`` still waits for its confirm. roce-tune's
      own apply and ``--confirm-yes`` would leave that trial permanent instead of letting NVUE revert it.
    * :data:`PENDING_PROBE`: NVUE's pending revision already holds changes nobody applied (a colleague's
      staged ``nv set``, or the ``nv set`` lines of an interrupted run). ``nv set`` adds to that revision and
      ``nv config apply`` applies all of it (NVUE command reference, Config Commands:
      https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Config-Commands), so roce-tune
      would apply them with its own change, and its rollback's ``nv config detach`` would discard them. The
      pending lines are counted, never quoted (they may hold secrets); an ``Error:``/``Invalid`` answer
      refuses too (the revision cannot be judged); other lines (a note) are no verdict."""
    status = run(CONFIRM_PROBE)
    if re.search(CONFIRM_PENDING, status):
        left = next((ln.strip() for ln in status.splitlines() if re.search(CONFIRM_PENDING, ln)), "")
        return (f"an `nv config apply --confirm` is waiting for its confirm (`{CONFIRM_PROBE}`: {left}): "
                "roce-tune's own apply and `--confirm-yes` would make that trial permanent, so nothing was "
                "sent; let NVUE revert it or have its author confirm it, then run roce-tune again")
    return _pending_lines(run(PENDING_PROBE))


def _pending_lines(out: str) -> str | None:
    """:func:`probe_pending`'s verdict on the output of :data:`PENDING_PROBE`."""
    echo = re.compile(rf"^(?:.*[$#]\s*)?{re.escape(PENDING_PROBE)}$")  # the command echoed, with a prompt
    said = [ln.strip() for ln in out.splitlines() if ln.strip() and not echo.match(ln.strip())]
    pending = [ln for ln in said if ln.startswith(("nv set ", "nv unset "))]
    errors = [ln for ln in said if re.match(r"(?i)(error|invalid)\b", ln)]  # other notes are no verdict
    keep = ("apply or detach them first (`nv config apply` / `nv config detach`, after checking with their "
            "author), then run roce-tune again")
    if pending:
        lines = f"{len(pending)} pending line{'s' if len(pending) != 1 else ''}"
        return (f"NVUE's pending revision holds {lines} nobody applied (`{PENDING_PROBE}` lists them): "
                "`nv config apply` would apply them with roce-tune's change and a rollback's `nv config "
                f"detach` would discard them, so nothing was sent; {keep}")
    if errors:
        return (f"`{PENDING_PROBE}` answered `{errors[0][:120]}`: roce-tune cannot tell whether NVUE's "
                "pending revision holds someone's staged changes (`nv config apply` would apply them with "
                "its own), so nothing was sent")
    return None


def _push(s: _c.PushSession, commands: list[str], _patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``nv set``/``nv unset`` -> ``nv config apply -y --confirm Ns`` -> read back -> ``--confirm-yes`` ->
    read back again: a confirm that comes after the window ran out finds no apply to confirm (NVUE reverted
    it) and is reported as that (``Driver.confirm``)."""
    for line in commands:
        s.check(s.cmd(line, "send"), "send", [line])
    s.cmd("nv config diff", "diff")
    s.progress["applied"] = True  # set first: a drop during apply may still have applied
    s.progress[_c.CHANGE_SENT] = True  # `nv set` only edits the pending revision
    apply = f"nv config apply -y --confirm {s.opts.confirm_s}s"
    s.check(s.cmd(apply, "commit"), "commit", [apply])
    s.progress["committed"] = True  # NVUE took the apply: from here only its timer or roce-tune reverts it
    s.verify(desired, ports)
    s.confirm("nv config apply --confirm-yes", desired, ports)


#: ``progress["rollback_outcome"]`` after :func:`_rollback` of an apply (the apply report carries it)
ROLLED_BACK = "rolled back by roce-tune (`nv config apply --confirm-no`)"
REVERTED_BY_DEVICE = ("no rollback needed: NVUE had already reverted to the revision before the apply by "
                      "itself (its `--confirm` window ran out before the confirm), none of the change is "
                      "active")
NOT_APPLIED = "no rollback needed: none of the change is active (the apply did not take)"


def _rollback(s: _c.PushSession, progress: dict[str, object]) -> None:
    """After an apply, ``nv config apply --confirm-no`` only while some of the change is active (when the
    window already ran out NVUE has reverted by itself and has no apply left to revert), then ``nv config
    detach`` (drops pending sets). ``progress["rollback_outcome"]`` says which (:data:`ROLLED_BACK`,
    :data:`REVERTED_BY_DEVICE`, :data:`NOT_APPLIED` when the apply itself may not have taken).

    Raises:
        PushError("rollback"): the change is still active after ``--confirm-no``.
    """
    if s.conn.check_config_mode():
        s.conn.exit_config_mode()
    if progress.get("applied"):
        s.undo_active(progress, lambda: s.cmd("nv config apply --confirm-no", "rollback"), ROLLED_BACK,
                      REVERTED_BY_DEVICE if progress.get("committed") else NOT_APPLIED)
    s.cmd("nv config detach", "rollback")


def _expired(_tag: str, confirm_s: int) -> str:
    return (f"NVUE reverted to the revision before `nv config apply --confirm {confirm_s}s` by itself when "
            "the window ran out (`nv config history` lists both revisions)")


def _left_as_is(progress: dict[str, object], _tag: str, confirm_s: int) -> str:
    if progress.get("confirmed"):
        return ("confirmed (`nv config apply --confirm-yes`): no timer reverts it; to revert: `nv config "
                "apply <revision>` with the revision before it (`nv config history`)")
    if progress.get("confirm_sent"):
        return ("the confirm `nv config apply --confirm-yes` was sent but its reply never came: if `nv "
                f"config apply --confirm-status` still shows a pending apply, NVUE reverts it by itself "
                f"within {confirm_s} s (now: `nv config apply --confirm-no`); else the change is final: "
                "revert with `nv config apply <revision>` (the revision before it in `nv config history`)")
    if progress.get("applied"):
        return (f"applied with `--confirm {confirm_s}s`: NVUE reverts it by itself unless confirmed; "
                "to revert now: `nv config apply --confirm-no`")
    return ("partial `nv set`s may sit in the pending revision (the next `nv config apply` by anyone applies "
            "them): `nv config detach`")


#: NVUE >= 5.9 saves on apply by default, older releases need ``nv config save`` (harmless on newer ones);
#: a Linux shell, so the save is judged by its exit status
PUSH = _c.PushMethod(
    netmiko_device_type="cumulus_linux", read_running="nv config show -o commands",
    error_pattern=r"(?i)^\s*(error|invalid)",
    push=_push, rollback=_rollback, left_as_is=_left_as_is,
    confirm_check=(CONFIRM_PROBE, CONFIRM_PENDING),
    expired=_expired,
    save=("nv config save; echo ROCE_TUNE_RC=$?", r"ROCE_TUNE_RC=0\b"),
    desired_file="{name}.nvue.sh", probe=lambda run: probe_pending(run),
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "scheduler", "dscp_map", "headroom", "mtu", "buffer_pool"),
    os_releases=tuple(g for r in NVUE_GRAMMAR for g in (r, f"{r}.*")),
    watchdog_note="Cumulus PFC-watchdog timers are not published [gap]: SONiC start_default values; NVUE "
                  "expresses detection as polling-interval x robustness",
)

# ---------------------------------------------------------------------------------------- INVENTORY
# port names that tell the platform (import) and the vendors whose hardware it runs on (lint RT125)
INVENTORY = _c.InventoryFacts(
    port_name_hint=r"^swp\d",
    vendors=frozenset({"nvidia"}),
    mgmt_port=r"eth\d+",
    # swpN is a front-panel port, swpNsM a breakout port; swpN.V a VLAN subinterface, bondN/brN logical
    # (NVIDIA Cumulus Linux user guide, Switch Port Attributes: "swp is a switch front panel port")
    physical_port=r"swp\d+(?:s\d+)?",
    physical_port_examples=("swp1", "swp1s0"),
)

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
#: no nvidia.nvue collection ships in the ``ansible`` package: NVUE is driven as commands with ``raw``
ANSIBLE = _c.AnsibleConnection(
    group_vars={"ansible_connection": _c.PLAIN_SSH},
    extra_files=(("roce_tune_config_yaml", "{name}.nvue.yaml"),))

# ---------------------------------------------------------------------------------------- COUNTERS
# which show commands give the switch counters verify reads, and their parsers: cumulus_counters.py
from roce_tune.platforms.cumulus_counters import COUNTERS  # noqa: E402

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render, check=build_context, render_findings=render_findings,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
    counters=COUNTERS,
    ansible=ANSIBLE,
    inventory=INVENTORY,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("cumulus-linux", "nvidia-cumulus", "nvidia-cumulus-linux")


# ------------------------------------------------------------------------------------- audit captures
# What `roce-tune audit` recognises in a capture and runs with --live (roce_tune.platforms.captures).
from roce_tune.platforms.captures import CaptureFormat as _CaptureFormat  # noqa: E402
from roce_tune.platforms.cumulus_counters import (  # noqa: E402
    counters_qos_evidence_line,
    parse_cumulus_counters_qos,
    parse_cumulus_pfc_watchdog,
    parse_cumulus_roce_counters,
)


def nvue_yaml_to_commands(text: str) -> str:
    """``nv config show`` (YAML: a list of ``- header:`` / ``- set:`` / ``- unset:`` items) -> the same
    configuration as ``nv config show -o commands`` prints it (``nv set a b c value`` per leaf; an empty
    mapping is a key set without a value), so one read-back reads both.

    Raises:
        ValueError: the text is not NVUE YAML (names the line and column of a YAML error).
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        doc = YAML(typ="safe").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise ValueError(f"nv config show: not YAML{where}: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, list):
        raise ValueError("nv config show: expected a list of '- set:' items")
    out: list[str] = []

    def walk(op: str, node: object, path: list[str]) -> None:
        if isinstance(node, dict) and node:
            for key, sub in node.items():
                walk(op, sub, [*path, str(key)])
        elif isinstance(node, dict) or node is None:
            out.append(f"nv {op} {' '.join(path)}")
        else:
            out.append(f"nv {op} {' '.join(path)} {node}")

    for item in doc:
        for op in ("set", "unset"):
            if isinstance(item, dict) and op in item:
                walk(op, item[op], [])
    return "\n".join(out) + "\n"


def _roce_value(t: str, applied_at: tuple[int, int] | None) -> str:
    """The value of a ``key  [operational]  [applied]  [pending]`` row: operational (the switch's actual
    state, NVUE ``--operational``) when that column holds one, else applied. ``applied_at`` is where the
    header's ``applied`` column starts and ends (None: no header; the value is what follows the key)."""
    key_end = len(t) - len(t.lstrip()) + len(t.split()[0])
    if applied_at is not None:
        operational = t[key_end:applied_at[0]].strip()
        return operational or t[applied_at[0]:applied_at[1]].strip()
    cols = _re.split(r"\s{2,}", t.strip())
    return cols[1] if len(cols) > 1 else " ".join(t.split()[1:])


def _applied_column(header: str) -> tuple[int, int] | None:
    """(start, end) of the ``applied`` column of an NVUE ``operational  applied  [pending|description]``
    header: the column ends where the next one (``pending`` or ``description``) starts."""
    words = header.split()
    if "applied" not in words:
        return None
    nxt = words[words.index("applied") + 1:]
    return header.find("applied"), header.find(nxt[0], header.find("applied")) if nxt else 10**6


def parse_roce_status(lines: list[tuple[int, str]]) -> dict[str, dict[Any, tuple[int, Any]]]:
    """``nv show qos roce`` / ``nv show interface swpN qos roce status``: ``key  [operational]  applied``
    lines (operational wins, the actual state; applied where operational is empty) and the SP->TC table ->
    ``{"roce": {key: (line, value)}, "sp_to_tc": {switch priority: (line, traffic class)}}``."""
    roce: dict[Any, tuple[int, Any]] = {}
    sp_to_tc: dict[Any, tuple[int, Any]] = {}
    table = ""
    applied_at: tuple[int, int] | None = None
    for no, t in lines:
        s = t.strip()
        if not s or set(s) <= {"-", " ", "="}:
            continue
        if "SP->TC" in s or s.startswith(("RoCE ", "Exception List")):
            table = "sp_tc" if "SP->TC" in s else "other"
            continue
        toks = s.split()
        if toks[0] == "operational":
            applied_at = _applied_column(t)
        elif table == "sp_tc" and len(toks) >= 3 and all(x.isdigit() for x in toks[:3]):
            sp_to_tc[int(toks[1])] = (no, int(toks[2]))
        elif not table and len(toks) >= 2:
            roce[toks[0]] = (no, _roce_value(t, applied_at))
    return {"roce": roce, "sp_to_tc": sp_to_tc}


#: What audit reads of Cumulus's output: ``nv config show -o commands`` (``nv set`` lines) and ``nv config
#: show`` (NVUE YAML with ``- set:``), and the NVUE show commands of RoCE QoS and its counters (``kind``
#: names the audit reader, roce_tune.audit.readers).
CAPTURE_FORMATS: tuple[_CaptureFormat, ...] = (
    _CaptureFormat(name="nv config show -o commands", kind="running_config",
                   pattern=r"^nv set (?:qos|interface) "),
    _CaptureFormat(name="nv config show", kind="running_config", pattern=r"^-\s+set:\s*$",
                   to_read_back=nvue_yaml_to_commands),
    _CaptureFormat(name="nv show qos roce counters", kind="roce_counters",
                   pattern=r"^\s*(rx|tx)-pfc-stats\b|^\s*tx-ecn-stats\b", parse=parse_cumulus_roce_counters),
    _CaptureFormat(name="nv show qos roce", kind="roce_status",
                   pattern=r"^\s*pfc-priority\s|^\s*congestion-mode\s",
                   parse=parse_roce_status),
    # these two words appear in other vendors' queue output too: a prompt naming another command is not this
    _CaptureFormat(name="nv show interface counters qos", kind="counters_qos",
                   pattern=r"PFC Statistics|Egress Queue Statistics", command=r"^(?:sudo\s+)?nv\s",
                   fallback=True, parse=parse_cumulus_counters_qos, evidence=counters_qos_evidence_line),
    _CaptureFormat(name="nv show interface qos pfc-watchdog", kind="pfc_watchdog_port",
                   pattern=r"deadlock-count",
                   command=r"^(?:sudo\s+)?nv\s", fallback=True, parse=parse_cumulus_pfc_watchdog),
)
#: read-only commands ``audit --live`` runs (``{port}``: each lossless port of the plan)
CAPTURE_COMMANDS: tuple[str, ...] = (
    "nv config show -o commands", "nv show qos roce", "nv show interface {port} qos roce counters")
