"""NVIDIA Cumulus Linux (NVUE) renderer: ``<name>.nvue.sh`` (``nv set`` commands, one per line) and
``<name>.nvue.yaml`` (the same settings as one ``- set:`` operation for ``nv config patch``).

**Target: Cumulus Linux 5.14 NVUE syntax** (:data:`CL_VERSION`). Value keywords drift between releases:
the CL 5.14 user guide writes ``ecn enable``, ``red disable``, ``tx enable``, ``pfc-watchdog state
disable``; the current NVUE reference writes ``ecn enabled`` / ``red enabled`` and ``qos roce state
enabled`` (CL <= 5.14: ``enable on``). The keywords are data here (:data:`ON`, :data:`OFF`); another
release needs another table, validated with ``nv set … ?`` or ``nv config show -o commands``.

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
* buffers — ``qos traffic-pool roce-lossless|default-lossy memory-percent``: the plan's
  ``ingress_lossless_pool`` / ``ingress_lossy_pool`` size as a whole percent (rounded down) of the
  ASIC buffer from the catalog — a unit conversion, the sizes are the tuner's [V syntax].
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

Sources: CumulusNetworks/docs ``content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
_index.md`` and ``RDMA-over-Converged-Ethernet-RoCE.md``; ``content/nvue-reference/Set-and-Unset-Commands/
QoS.md``; NVUE YAML shape (quoted numeric ids, ``'3': {}`` collections, integer values) from an NVUE
API configuration dump of CL 5.5.1 (NVIDIA Air Ansible workshop) [S]; ``nv config patch`` takes "a list
of operation objects" (NVIDIA nvue tests) [S].
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms.base import LINUX_IFNAME_MAX, PlatformSpec, SecretPattern, secret_re
from roce_tune.platforms.templating import render_device_template

#: Cumulus Linux release whose NVUE syntax the templates follow.
CL_VERSION = "5.14"
#: NVUE on/off value keywords for CL_VERSION (CL 5.14 user guide).
ON, OFF = "enable", "disable"

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
#: ``neighbor N password``, NTP ``key N value``. Source: Cumulus Linux 5 user guide (NVUE, User Accounts,
#: TACACS, RADIUS AAA, SNMP, BGP, NTP: https://docs.nvidia.com/networking-ethernet-software/cumulus-linux/).
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    secret_re(r"\b(?:password|hashed-password|secret|auth-md5|auth-sha|encrypt-aes|encrypt-des"
              r"|readonly-community(?:-v6)?|community-password)\s+(?P<secret>{value})"),
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
#: The only PFC-watchdog mitigation Cumulus has ("discards new incoming packets to this egress queue").
WATCHDOG_ACTIONS = frozenset({"drop"})


def id_list(ids: list[int] | set[int]) -> str:
    """Comma list of ids as NVUE takes them (``traffic-class 0,3``)."""
    return ",".join(str(i) for i in sorted(set(ids)))


def metres(cable_m: float) -> int:
    """NVUE ``cable-length`` is whole metres (1..100000); fractional lengths are rounded up."""
    return max(1, math.ceil(cable_m))


def _integer_percent(value: float, what: str, lo: int = 1) -> int:
    if value != int(value) or not lo <= value <= 100:
        raise ValueError(f"{what}={value} cannot be written to NVUE (integer {lo}..100)")
    return int(value)


def _asic_buffer_bytes(switch: SwitchPlan) -> int:
    from roce_tune.inventory.catalog import load_catalog

    return load_catalog().asic(switch.asic).buffer_bytes


def _groups(items: dict[str, Any]) -> dict[Any, list[str]]:
    out: dict[Any, list[str]] = defaultdict(list)
    for port, key in items.items():
        out[key].append(port)
    return dict(out)


def _pfc(switch: SwitchPlan) -> list[dict[str, Any]]:
    by_port = {p.name: (tuple(sorted(p.pfc_priorities)), metres(p.cable_m)) for p in switch.ports if p.lossless}
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
            raise ValueError(f"{switch.name}: ports {', '.join(ports)} use ECN profile {name} not in ecn_profiles")
        e = profiles[name]
        out.append({"name": DEFAULT_PROFILE if len(groups) == 1 else name, "plan_name": name,
                    "queues": queues, "queue_list": id_list(queues), "min": e.kmin_bytes, "max": e.kmax_bytes,
                    "probability": _integer_percent(e.pmax_percent, f"{name}.pmax_percent"),
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
    pools = [p for p in switch.buffers.pools if p.name in TRAFFIC_POOL_BY_PLAN_POOL]
    if not pools:
        return []
    total = _asic_buffer_bytes(switch)
    out: list[dict[str, Any]] = [{"name": TRAFFIC_POOL_BY_PLAN_POOL[p.name], "percent": p.size_bytes * 100 // total}
                                 for p in pools]
    if sum(p["percent"] for p in out) > 100 or any(p["percent"] < 1 for p in out):
        raise ValueError(f"{switch.name}: traffic pools {out} do not fit 1..100 % of the {total} B buffer")
    return sorted(out, key=lambda p: p["name"])


def _watchdog(switch: SwitchPlan) -> dict[str, Any]:
    wd = switch.watchdog
    if not wd.enabled:
        return {"enabled": False}
    if wd.action not in WATCHDOG_ACTIONS:
        raise ValueError(f"{switch.name}: Cumulus PFC watchdog can only drop, the plan asks for {wd.action!r}")
    if wd.detection_ms % wd.poll_ms:
        raise ValueError(f"{switch.name}: detection {wd.detection_ms} ms is not a whole number of "
                         f"{wd.poll_ms} ms polls (NVUE robustness)")
    return {"enabled": True, "polling_interval": wd.poll_ms, "robustness": wd.detection_ms // wd.poll_ms}


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, Any]:
    """Everything the NVUE templates print, already in NVUE vocabulary (no arithmetic left for Jinja).

    Returns:
        dict with ``sections``, ``c`` (comment marker), ``on``/``off``, ``header``, ``roce_mode``,
        ``trust``, ``dscp_groups`` (switch priority -> comma DSCP list), ``dscp_map`` (per DSCP),
        ``egress_queue`` ((sp, tc) pairs), ``pfc`` / ``ecn`` (profiles with their ports), ``pools``,
        ``schedulers``, ``watchdog``, ``interfaces`` (per-port bindings).

    Raises:
        ValueError: the plan cannot be written to NVUE (fractional Pmax, watchdog action other than drop,
            detection not a multiple of the poll interval, pools beyond 100 %, inconsistent plan).
        CatalogError: the switch's ASIC is not in the catalog (traffic-pool percentages need its buffer).
    """
    if switch.platform != SPEC.name:
        raise ValueError(f"{switch.name} is a {switch.platform} switch, not {SPEC.name}")
    c = plan.classification
    sp_to_dscps: dict[int, list[int]] = defaultdict(list)
    for dscp, tc in sorted(c.dscp_to_tc.items()):
        sp_to_dscps[tc].append(dscp)
    pfc, ecn = _pfc(switch), _ecn(plan, switch)
    wd = _watchdog(switch)
    pfc_of = {port: p["name"] for p in pfc if p["bound"] for port in p["ports"]}
    ecn_of = {port: e["name"] for e in ecn if e["bound"] for port in e["ports"]}
    interfaces = [{"name": p.name, "pfc": pfc_of.get(p.name), "ecn": ecn_of.get(p.name),
                   "watchdog": wd["enabled"] and p.lossless}
                  for p in sorted(switch.ports, key=lambda p: p.name)]
    return {
        "sections": SPEC.sections,
        "c": SPEC.comment_prefix,
        "on": ON,
        "off": OFF,
        "header": {"switch": switch.name, "model": switch.model, "asic": switch.asic, "site": plan.site,
                   "generator": plan.generator, "cl_version": CL_VERSION, "os_version": switch.os_version},
        "profile": DEFAULT_PROFILE,
        "roce_mode": ROCE_MODE,
        "trust": TRUST_KEYWORD[c.trust],
        "dscp_groups": [{"sp": sp, "dscp_list": id_list(ds)} for sp, ds in sorted(sp_to_dscps.items())]
        if c.trust == "dscp" else [],
        "dscp_map": sorted(c.dscp_to_tc.items()) if c.trust == "dscp" else [],
        "egress_queue": sorted(c.tc_to_queue.items()),
        "pfc": pfc,
        "ecn": ecn,
        "pools": _pools(switch),
        "schedulers": _schedulers(plan),
        "watchdog": wd,
        "interfaces": [i for i in interfaces if i["pfc"] or i["ecn"] or i["watchdog"]],
    }


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 for plan values the NVUE output does not carry: interface MTU, the per-port headroom (NVUE
    derives it from the PFC profile's cable-length), the watchdog restoration timer, cable lengths rounded up
    to whole metres, and ports the commands do not name (lossy ports; with ``default-global`` profiles they
    get the RoCE PFC/ECN settings too — a warning)."""
    where = Location(device=switch.name)
    out = [Finding(rule="RT241", severity=Severity.warning, location=where,
                   message=f"NVUE output does not set interface MTU: the plan's MTU "
                           f"{sorted({p.mtu for p in switch.ports})} is not applied by this file",
                   fix="set 'nv set interface <swp> link mtu <mtu>' by hand until roce-tune renders it")]
    if any(p.headroom is not None for p in switch.ports):
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message="NVUE derives PFC headroom from the PFC profile's cable-length: the plan's per-port "
                                   "headroom (xon/xoff/size) is a review number, not configured",
                           fix="compare with 'nv show qos pfc' / 'nv show interface <swp> qos buffer' after apply"))
    wd = switch.watchdog
    if wd.enabled:
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message=f"Cumulus PFC watchdog has no restoration timer: plan restoration {wd.restoration_ms} ms "
                                   "is not rendered (a queue is restored after a poll interval without pause frames)",
                           fix="none available in NVUE"))
    odd = sorted({p.cable_m for p in switch.ports if p.lossless and p.cable_m != metres(p.cable_m)})
    if odd:
        out.append(Finding(rule="RT241", severity=Severity.info, location=where,
                           message=f"NVUE cable-length is whole metres: plan cable lengths {odd} m rounded up",
                           fix="none needed (a longer cable only adds headroom)"))
    return out + _unnamed_ports_finding(plan, switch)


def _unnamed_ports_finding(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 for ports the NVUE commands do not name (warning when default-global profiles reach lossy ports)."""
    ctx = build_context(plan, switch)
    named = {i["name"] for i in ctx["interfaces"]}
    unnamed = sorted(p.name for p in switch.ports if p.name not in named)
    if not unnamed:
        return []
    global_profiles = any(not g["bound"] for g in ctx["pfc"] + ctx["ecn"])
    lossy = any(not p.lossless for p in switch.ports if p.name in unnamed)
    warn = global_profiles and lossy
    return [Finding(
        rule="RT241", severity=Severity.warning if warn else Severity.info, location=Location(device=switch.name),
        message=f"ports not named in the NVUE output: {', '.join(unnamed[:6])}{' ...' if len(unnamed) > 6 else ''}"
                + (" — default-global PFC/ECN profiles apply to them too, although the plan has them lossy"
                   if warn else " — they keep the switch's settings"),
        fix="bind per-port profiles by hand where a lossy port must not get PFC")]


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as NVUE: ``{"<name>.nvue.sh": commands, "<name>.nvue.yaml": nv config patch YAML}``.

    Raises:
        ValueError / CatalogError: see :func:`build_context`; jinja2.UndefinedError on a template bug.
    """
    ctx = build_context(plan, switch)
    name = ("header", "switch")
    out = {f"{switch.name}.{SPEC.extension}": render_device_template(SPEC.name, SPEC.aggregator, switch.name, ctx, name)}
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
                                          _lldp.line_of(text, f'"{ifname}"')))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``nv show interface --view=lldp -o json`` for ``ends``."""
    doc: dict[str, Any] = {}
    for e in ends:
        if e.remote_is_host:
            port = {"type": "mac", "id": _lldp.mac_of(e.remote_system, e.remote_port), "description": e.remote_port}
        else:
            port = {"type": "ifname", "name": e.remote_port, "description": e.remote_port}
        doc[e.local_port] = {"type": "swp", "lldp": {"neighbor": {e.remote_system: {
            "age": 3600, "chassis": {"chassis-id": _lldp.mac_of(e.remote_system, "chassis"),
                                     "system-name": e.remote_system}, "port": {**port, "ttl": 120}}}}}
    return _json.dumps(doc, indent=2) + "\n"


def parse_nv_system_json(text: str) -> _lldp.DeviceFacts:
    """``nv show system -o json`` (``build: "Cumulus Linux 5.9.1"``, ``hostname``) and/or ``nv show platform
    -o json`` (``product-name``, ``part-number`` like ``MSN4700-WS2FO``). Our own parser.

    Raises:
        LldpParseError: the text is not a JSON object.
    """
    doc = _lldp.json_block(text)
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
                        "product-name": model, "part-number": f"M{model}-WS2FO" if model.startswith("SN") else model,
                        "manufacturer": "Nvidia"}, indent=2) + "\n"


LLDP_FORMATS = (
    _lldp.CaptureFormat("nv show interface --view=lldp -o json", r"^nv\s+show\s+interface\b.*lldp",
                        lambda t: '"lldp"' in t and '"neighbor"' in t and '"interface"' not in t,
                        parse_nv_lldp_json, "roce-tune (NVUE JSON)"),
    _lldp.LLDPCTL_JSON,
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("nv show system -o json / nv show platform -o json",
                        r"^nv\s+show\s+(?:system|platform)\b", lambda t: '"build"' in t and "Cumulus Linux" in t
                        or '"product-name"' in t, parse_nv_system_json, "roce-tune"),
)
LLDP_RENDER_COMMAND = "nv show interface --view=lldp -o json"
VERSION_RENDER_COMMAND = "nv show system -o json"
#: Prompt of a rendered capture (the audit capture splitter reads it: roce_tune.audit.capture).
CAPTURE_PROMPT = "cumulus@{device}:mgmt:~$ "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
from roce_tune.platforms import contract as _c  # noqa: E402
from roce_tune.platforms.cumulus_readback import (  # noqa: E402,F401
    READBACK_BY_DESIGN,
    READBACK_FIELDS,
    expressible_qos,
    read_back,
)


def nv_lines(text: str) -> str:
    """Only the ``nv …`` lines of an NVUE script or ``nv config show -o commands`` output."""
    return "\n".join(ln for ln in text.splitlines() if ln.strip().startswith("nv "))


#: diff data: ``nv set qos`` lines are authoritative; a line is removed with ``nv unset``
DIFF = _c.DiffRules(
    kind="set", owned_roots=("nv set qos ",), negate=("nv set ", "nv unset "),
    disruptive=((r"^[+-]nv set qos traffic-pool", "a traffic-pool resize restarts the buffer configuration (switchd)"),
                (r"^\+nv set qos pfc ", _c.PFC_ON),
                (r"^\+nv set interface \S+ qos pfc", _c.PFC_ON)),
    keep_lines=nv_lines,
)


def _push(s: _c.PushSession, commands: list[str], _patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``nv set``/``nv unset`` -> ``nv config apply -y --confirm Ns`` -> read back -> ``--confirm-yes``."""
    for line in commands:
        s.check(s.cmd(line, "send"), "send", [line])
    s.cmd("nv config diff", "diff")
    s.progress["applied"] = True  # set first: a drop during apply may still have applied
    apply = f"nv config apply -y --confirm {s.opts.confirm_s}s"
    s.check(s.cmd(apply, "commit"), "commit", [apply])
    s.verify(desired, ports)
    s.check(s.cmd("nv config apply --confirm-yes", "confirm"), "confirm", ["nv config apply --confirm-yes"])
    s.confirmed()


def _rollback(s: _c.PushSession, progress: dict[str, object]) -> None:
    """``nv config apply --confirm-no`` after an apply, then ``nv config detach`` (drops pending sets)."""
    if s.conn.check_config_mode():
        s.conn.exit_config_mode()
    if progress.get("applied"):
        s.cmd("nv config apply --confirm-no", "rollback")
    s.cmd("nv config detach", "rollback")


def _left_as_is(progress: dict[str, object], _tag: str, confirm_s: int) -> str:
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
    confirm_check=("nv config apply --confirm-status", r"(?i)(time left|remaining|pending confirm[^a-z]*\d)"),
    save=("nv config save; echo ROCE_TUNE_RC=$?", r"ROCE_TUNE_RC=0\b"),
    desired_file="{name}.nvue.sh",
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "scheduler", "dscp_map", "headroom", "mtu", "buffer_pool"),
    watchdog_note="Cumulus PFC-watchdog timers are not published [gap]: SONiC start_default values; NVUE "
                  "expresses detection as polling-interval x robustness",
)

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("cumulus-linux", "nvidia-cumulus", "nvidia-cumulus-linux")
