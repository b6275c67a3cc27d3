"""SONiC CONFIG_DB -> :class:`~roce_tune.qos.SwitchQos` (``read_back``), and what of a plan SONiC can say.

Input: CONFIG_DB as JSON — roce-tune's rendered fragment, ``show runningconfiguration all``, or
``/etc/sonic/config_db.json``. Tolerant of a full running config: unrelated tables are ignored, rows may
come in any order, references may be plain (``"ROCE"``) or the pre-202111 ``"[TABLE|ROCE]"`` form, map
and queue keys may be ranges (``"3-4"``). Tables read (sonic-yang-models field names):

* ``DSCP_TO_TC_MAP`` / ``TC_TO_QUEUE_MAP`` / ``TC_TO_PRIORITY_GROUP_MAP``: the map bound by most ports in
  ``PORT_QOS_MAP`` (else by its ``global`` row, else — in a fragment, not a whole CONFIG_DB — the table's
  only map; in a whole CONFIG_DB maps none binds are not in effect: an empty map, every key to the default).
* ``PORT_QOS_MAP|<port>.pfc_enable`` ("3,4") -> PFC priorities; a port row without it: PFC off.
* ``QUEUE|<port>|<q>`` ``scheduler`` -> ``SCHEDULER`` (type STRICT/DWRR, weight) and ``wred_profile`` ->
  ``WRED_PROFILE`` (``green_min/max_threshold`` bytes, ``green_drop_probability`` percent): SONiC marks
  and drops on the same ramp, so there are no separate drop thresholds to read. A queue marks only when
  the profile's ``ecn`` marks green (RoCE traffic is unpoliced, so green); no ``ecn`` is ``ecn_none``.
* ``BUFFER_PG|<port>|<pgs>`` -> ``BUFFER_PROFILE`` with ``xoff``: the port's lossless headroom
  (xon/xoff/size). A profile without ``xoff`` (lossy, or ``NULL`` in the dynamic model) is no headroom.
* ``PFC_WD``: ``GLOBAL.POLL_INTERVAL`` and per-port ``action``/``detection_time``/``restoration_time``.
* ``PORT|<port>.mtu``, ``CABLE_LENGTH|<key>|<port>`` ("5m"), ``DEVICE_METADATA|localhost.buffer_model``.

Sources: sonic-net/sonic-buildimage ``src/sonic-yang-models/yang-models`` (sonic-port-qos-map, sonic-queue,
sonic-scheduler, sonic-wred-profile, sonic-buffer-pg, sonic-buffer-profile, sonic-pfcwd,
sonic-device_metadata).
"""

from __future__ import annotations

import json
import re
from typing import Any

from roce_tune.plan import Plan, SwitchPlan
from roce_tune.platforms.sonic import asic_namespaces
from roce_tune.qos import (
    BYTES_ECN_BY_DESIGN,
    TC_MAPS_BY_DESIGN,
    PortHeadroom,
    PortQos,
    QueueEcn,
    Scheduler,
    SwitchQos,
    WatchdogQos,
    expected_qos,
    majority,
)

#: SwitchQos fields a SONiC configuration expresses (dotted paths; ``ports.*`` per port). ``buffer_model``
#: is read when present; roce-tune writes it, and apply's preflight (not the read-back) compares it.
#: The TC of a DSCP no ``DSCP_TO_TC_MAP`` entry names: 0 (the audit's "not in the map: default", RT414).
UNMAPPED_DSCP_TC: int | None = 0
READBACK_FIELDS = frozenset(
    {
        "dscp_to_tc",
        "tc_to_queue",
        "tc_to_pg",
        "schedulers",
        "watchdog.detection_ms",
        "watchdog.restoration_ms",
        "watchdog.poll_ms",
        "watchdog.action",
        "ports.mtu",
        "ports.cable_m",
        "ports.pfc_priorities",
        "ports.headroom.xon_bytes",
        "ports.headroom.xoff_bytes",
        "ports.headroom.size_bytes",
        "ports.ecn.kmin_bytes",
        "ports.ecn.kmax_bytes",
        "ports.ecn.pmax_percent",
        "ports.watchdog",
    }
)
#: Plan fields SONiC has no statement for by design: field -> why.
READBACK_BY_DESIGN: dict[str, str] = {
    **BYTES_ECN_BY_DESIGN,
    **TC_MAPS_BY_DESIGN,
}
_REF_RE = re.compile(r"^\[(?P<table>[A-Z_]+)\|(?P<name>[^]]+)\]$")


def _name(ref: object) -> str | None:
    """A CONFIG_DB reference's name: ``"ROCE"`` or ``"[TABLE|ROCE]"`` -> ``ROCE``."""
    if not isinstance(ref, str) or not ref:
        return None
    m = _REF_RE.match(ref)
    return m.group("name") if m else ref


def ids(key: str) -> list[int]:
    """``"3"`` / ``"3-4"`` / ``"0,3"`` -> the ids it names.

    >>> ids("3"), ids("3-5"), ids("0,3")
    ([3], [3, 4, 5], [0, 3])
    """
    out: list[int] = []
    for part in key.split(","):
        lo, _, hi = part.strip().partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _load(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        raise ValueError("SONiC read-back: no JSON object in the text (expected CONFIG_DB JSON)")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as e:
        raise ValueError(
            f"SONiC read-back: CONFIG_DB JSON invalid at line {e.lineno} column {e.colno}: {e.msg}"
        ) from e
    if not isinstance(data, dict):
        raise ValueError("SONiC read-back: CONFIG_DB JSON is not an object")
    _check_rows(data)
    return data


#: The CONFIG_DB tables :func:`read_back` reads (module docstring); each is ``{key: {field: value}}``.
_TABLES_READ = ("DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "QUEUE",
                "SCHEDULER", "WRED_PROFILE", "BUFFER_PG", "BUFFER_PROFILE", "PFC_WD", "PORT", "CABLE_LENGTH",
                "DEVICE_METADATA")


def _pointer(*keys: str) -> str:
    """The RFC 6901 JSON Pointer of ``keys``: ``/PORT/Ethernet0`` (escaping by the jsonpointer library)."""
    from jsonpointer import JsonPointer

    return str(JsonPointer.from_parts(list(keys)).path)


def _check_rows(db: dict[str, Any], namespace: str | None = None) -> None:
    """Every table read is a JSON object (or null: not stated) whose rows are JSON objects, as CONFIG_DB
    stores them (``TABLE -> key -> field -> value``); other tables are not looked at. ``namespace``: the
    multi-ASIC namespace ``db`` is (the first part of each JSON Pointer named).

    Raises:
        ValueError: naming the JSON Pointer of the first table or row that is not an object, and what it is.
    """
    at = [namespace] if namespace else []
    for table in _TABLES_READ:
        rows = db.get(table)
        if rows is None:
            continue
        if not isinstance(rows, dict):
            raise ValueError(f"SONiC read-back: CONFIG_DB {_pointer(*at, table)} is a JSON "
                             f"{_json_type(rows)}, not an object of rows")
        for key, row in rows.items():
            if not isinstance(row, dict):
                raise ValueError(f"SONiC read-back: CONFIG_DB {_pointer(*at, table, key)} is a JSON "
                                 f"{_json_type(row)} ({json.dumps(row)[:40]}), not an object of fields")


def _json_type(value: object) -> str:
    """The JSON type name of a decoded value."""
    return ("string" if isinstance(value, str) else "boolean" if isinstance(value, bool)
            else "number" if isinstance(value, (int, float)) else "array" if isinstance(value, list)
            else "null" if value is None else "object")


def _port_rows(db: dict[str, Any], table: str) -> dict[str, dict[int, Any]]:
    """``TABLE|<port>|<ids>`` rows -> port -> id -> row."""
    out: dict[str, dict[int, Any]] = {}
    for key, row in (db.get(table) or {}).items():
        port, _, rng = key.rpartition("|")
        if port and rng:
            for i in ids(rng):
                out.setdefault(port, {})[i] = row
    return out


def _map(db: dict[str, Any], table: str, field: str) -> dict[int, int] | None:
    """The map of ``table`` the ports bind through ``field`` (see the module docstring); in a whole
    CONFIG_DB (``DEVICE_METADATA`` present) maps that no row binds are not in effect: ``{}`` (every key takes
    the default, e.g. every DSCP to TC 0); no map at all: None (not stated)."""
    maps = db.get(table) or {}
    name = _bound_map(db, field)
    if name is None and maps and "DEVICE_METADATA" in db:
        return {}
    if name is None and len(maps) == 1:
        name = next(iter(maps))
    if name is None or name not in maps:
        return None
    out: dict[int, int] = {}
    for k, v in maps[name].items():
        key, val = _int(k), _int(v)
        if key is None or val is None:
            raise ValueError(f"SONiC read-back: CONFIG_DB {_pointer(table, name, k)} maps "
                             f"{json.dumps(k)} to {json.dumps(v)}: both must be whole numbers")
        out[key] = val
    return out


def _bound_map(db: dict[str, Any], field: str) -> str | None:
    """The map name most ``PORT_QOS_MAP`` port rows bind through ``field``, else its ``global`` row's."""
    qos = db.get("PORT_QOS_MAP") or {}
    bound = [_name(r.get(field)) for k, r in qos.items() if k != "global" and r.get(field)]
    return majority(bound) or _name((qos.get("global") or {}).get(field))


def _scheduler(db: dict[str, Any], queue: int, row: dict[str, Any]) -> Scheduler | None:
    s = (db.get("SCHEDULER") or {}).get(_name(row.get("scheduler")) or "")
    if s is None:
        return None
    strict = str(s.get("type", "")).upper() == "STRICT"
    return Scheduler(
        queue=queue,
        mode="strict" if strict else "dwrr",
        weight_percent=None if strict else _int(s.get("weight")),
    )


def _schedulers(db: dict[str, Any], queues: dict[str, dict[int, Any]]) -> list[Scheduler] | None:
    per_port = []
    for rows in queues.values():
        found = [_scheduler(db, q, rows[q]) for q in sorted(rows)]
        if any(found):
            per_port.append([s for s in found if s is not None])
    return majority(per_port)


#: ``WRED_PROFILE.ecn`` modes that ECN-mark green packets, as unpoliced RoCE traffic is: sonic-wred-profile
#: .yang leaf ``ecn`` (default ``ecn_none``; ``ecn_yellow``/``ecn_red``/``ecn_yellow_red`` leave green
#: unmarked) [V]
ECN_MARKS_GREEN = frozenset({"ecn_green", "ecn_green_yellow", "ecn_green_red", "ecn_all"})
#: sonic-wred-profile.yang ``green_drop_probability`` default (percent) [V]
GREEN_DROP_PROBABILITY_DEFAULT = 100


def _ecn(db: dict[str, Any], rows: dict[int, Any]) -> dict[int, QueueEcn] | None:
    """queue -> its ECN ramp, for the queues whose ``wred_profile`` marks green packets
    (:data:`ECN_MARKS_GREEN`; a profile without ``ecn`` marks nothing, the YANG default ``ecn_none``).
    None (unknown) when a queue names a ``wred_profile`` the text does not hold (a part of CONFIG_DB)."""
    out = {}
    for q, row in sorted(rows.items()):
        name = _name(row.get("wred_profile"))
        w = (db.get("WRED_PROFILE") or {}).get(name or "")
        if w is None and name:
            return None
        if w is None or str(w.get("ecn", "ecn_none")) not in ECN_MARKS_GREEN:
            continue
        prob = _int(w.get("green_drop_probability", GREEN_DROP_PROBABILITY_DEFAULT))
        out[q] = QueueEcn(
            kmin_bytes=_int(w.get("green_min_threshold")),
            kmax_bytes=_int(w.get("green_max_threshold")),
            pmax_percent=float(prob) if prob is not None else None,
        )
    return out


def _headroom(db: dict[str, Any], pgs: dict[int, Any]) -> PortHeadroom | None:
    profiles = db.get("BUFFER_PROFILE") or {}
    for _pg, row in sorted(pgs.items()):
        prof = profiles.get(_name(row.get("profile")) or "")
        if prof and prof.get("xoff") is not None:
            return PortHeadroom(
                xon_bytes=_int(prof.get("xon")),
                xoff_bytes=_int(prof.get("xoff")),
                size_bytes=_int(prof.get("size")),
            )
    return None


def _watchdog(db: dict[str, Any]) -> WatchdogQos | None:
    wd = db.get("PFC_WD") or {}
    rows = [
        (r.get("action"), _int(r.get("detection_time")), _int(r.get("restoration_time")))
        for k, r in wd.items()
        if k != "GLOBAL"
    ]
    common = majority(rows)
    if common is None:
        return None
    return WatchdogQos(
        action=common[0],
        detection_ms=common[1],
        restoration_ms=common[2],
        poll_ms=_int((wd.get("GLOBAL") or {}).get("POLL_INTERVAL")),
    )


def _cable_m(db: dict[str, Any], port: str) -> float | None:
    for row in (db.get("CABLE_LENGTH") or {}).values():
        m = re.fullmatch(r"(\d+(?:\.\d+)?)m", str(row.get(port, "")))
        if m:
            return float(m.group(1))
    return None


def _port(
    db: dict[str, Any], name: str, queues: dict[str, dict[int, Any]], pgs: dict[str, dict[int, Any]]
) -> PortQos:
    full = "DEVICE_METADATA" in db  # a whole CONFIG_DB: a port without a PORT_QOS_MAP row has PFC off
    row = (db.get("PORT_QOS_MAP") or {}).get(name) or ({} if full else None)
    pfc = None if row is None else (ids(row["pfc_enable"]) if row.get("pfc_enable") else [])
    wd_rows = db.get("PFC_WD")
    return PortQos(
        name=name,
        mtu=_int((db.get("PORT") or {}).get(name, {}).get("mtu")),
        cable_m=_cable_m(db, name),
        pfc_priorities=pfc,
        headroom=_headroom(db, pgs.get(name, {})),
        ecn=_ecn(db, queues[name]) if name in queues else {} if full else None,
        # no PFC_WD table: no watchdog in a whole CONFIG_DB, not stated in a part of one
        watchdog=(name in (wd_rows or {})) if wd_rows is not None or (full and row is not None) else None,
    )


#: tables keyed by port (``PORT_QOS_MAP|<port>``, ``PFC_WD|<port>``) or by port and ids (``QUEUE|<port>|<q>``)
_PORT_KEYED = ("PORT_QOS_MAP", "PFC_WD", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE")


def _one_port_keys(db: dict[str, Any]) -> dict[str, Any]:
    """``db`` with each key of :data:`_PORT_KEYED` tables that names a comma list of ports
    (``Ethernet0,Ethernet4|3-4``: sonic-yang key-pattern ``QUEUE|({ifname},)*|{qindex}``, written so by older
    SONiC qos/buffer templates) split into one key per port, each with the row."""
    out = dict(db)
    for table in _PORT_KEYED:
        rows = db.get(table)
        if not isinstance(rows, dict) or not any("," in k.split("|", 1)[0] for k in rows):
            continue
        out[table] = {}
        for key, row in rows.items():
            ports, sep, rest = key.partition("|")
            for port in ports.split(","):
                out[table][port.strip() + sep + rest] = row
    return out


#: PORT ``role`` of an ASIC's internal ports (sonic-port.yang: ``Ext`` is a front-panel port)
_INTERNAL_ROLES = frozenset({"Int", "Inb", "Rec", "Dpc"})


def _namespaced(data: dict[str, Any]) -> bool:
    """``data`` is a multi-ASIC dump (:func:`roce_tune.platforms.sonic.asic_namespaces`) whose host part, if
    any, is a JSON object too."""
    return bool(asic_namespaces(data)) and isinstance(data.get("localhost", {}), dict)


def _front_panel(ns: dict[str, Any]) -> dict[str, Any]:
    """Namespace ``ns`` (port keys one per port) without the rows of its internal ports (PORT ``role``
    Int/Inb/Rec/Dpc: backplane and inband links between the ASICs, not ports of the fabric)."""
    internal = {p for p, r in (ns.get("PORT") or {}).items() if (r or {}).get("role") in _INTERNAL_ROLES}
    out = dict(ns)
    for table in ("PORT", *_PORT_KEYED):
        if isinstance(ns.get(table), dict):
            out[table] = {k: v for k, v in ns[table].items() if k.split("|")[0] not in internal}
    if isinstance(ns.get("CABLE_LENGTH"), dict):
        out["CABLE_LENGTH"] = {k: {p: m for p, m in v.items() if p not in internal}
                               for k, v in ns["CABLE_LENGTH"].items()}
    return out


def _merge_row(merged: dict[str, Any], first: dict[tuple[str, str, str], str], ns: str, table: str,
               key: str, row: dict[str, Any]) -> None:
    """Add namespace ``ns``'s ``table|key`` row to ``merged``; a field another ASIC namespace gave another
    value in a table :func:`read_back` reads raises (the host's namespace only fills gaps)."""
    dest = merged.setdefault(table, {}).setdefault(key, {})
    for name, value in row.items():
        had = first.get((table, key, name))
        if (had is not None and dest[name] != value and ns != "localhost" and table in _TABLES_READ
                and table != "DEVICE_METADATA"):
            raise ValueError(
                f"SONiC read-back: CONFIG_DB {_pointer(ns, table, key, name)} is {json.dumps(value)} but "
                f"{_pointer(had, table, key, name)} is {json.dumps(dest[name])}: the ASIC namespaces "
                "disagree on a shared row; capture each namespace on its own "
                "(`sonic-cfggen -d -n asicN --print-data`)")
        if had is None:
            dest[name] = value
            first[(table, key, name)] = ns


def _merge_namespaces(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """One CONFIG_DB of a multi-ASIC dump: every table's rows of the ASIC namespaces (in ASIC order), the
    host's (``localhost``) filling what they leave; internal ports left out. Returns it and each front-panel
    port's namespace.

    Raises:
        ValueError: a table or row is not an object (JSON Pointer with the namespace), or two ASIC
            namespaces give a read table's shared row (a map, profile, scheduler) different values.
    """
    order = asic_namespaces(data) + (["localhost"] if "localhost" in data else [])
    merged: dict[str, Any] = {}
    first: dict[tuple[str, str, str], str] = {}
    scope: dict[str, str] = {}
    for ns in order:
        _check_rows(data[ns], ns)
        db = _front_panel(_one_port_keys(data[ns]))
        for table, rows in db.items():
            for key, row in (rows.items() if isinstance(rows, dict) else ()):
                if isinstance(row, dict):
                    _merge_row(merged, first, ns, table, key, row)
                if ns != "localhost" and table in ("PORT", *_PORT_KEYED) and key != "GLOBAL":
                    scope.setdefault(key.split("|")[0], ns)
    return merged, scope


def read_back(text: str) -> SwitchQos:
    """Parse SONiC CONFIG_DB JSON (rendered or running) into :class:`SwitchQos`.

    Ports are those named in ``PORT``, ``PORT_QOS_MAP``, ``QUEUE`` or ``BUFFER_PG``. Fields the text does
    not state are None; a port with a ``PORT_QOS_MAP`` row but no ``pfc_enable`` has PFC off (``[]``), and so
    has a port without a row in a whole CONFIG_DB (one with ``DEVICE_METADATA``; a fragment: None).

    Raises:
        ValueError: the text holds no JSON object (message with line/column of a syntax error); a table
            read or one of its rows is not a JSON object, or a QoS map entry is not a number (message
            with the JSON Pointer, e.g. ``/PORT/Ethernet0``).
    """
    data = _load(text)
    data, scope = _merge_namespaces(data) if _namespaced(data) else (data, {})
    db = _one_port_keys(data)
    qos = db.get("PORT_QOS_MAP") or {}
    queues, pgs = _port_rows(db, "QUEUE"), _port_rows(db, "BUFFER_PG")
    names = (set(db.get("PORT") or {}) | set(qos) | set(queues) | set(pgs)) - {"global"}
    ports = {name: _port(db, name, queues, pgs).model_copy(update={"scope": scope.get(name)})
             for name in sorted(names)}
    meta = (db.get("DEVICE_METADATA") or {}).get("localhost") or {}
    return SwitchQos(
        dscp_to_tc=_map(db, "DSCP_TO_TC_MAP", "dscp_to_tc_map"),
        tc_to_queue=_map(db, "TC_TO_QUEUE_MAP", "tc_to_queue_map"),
        tc_to_pg=_map(db, "TC_TO_PRIORITY_GROUP_MAP", "tc_to_pg_map"),
        schedulers=_schedulers(db, queues),
        watchdog=_watchdog(db),
        buffer_model=meta.get("buffer_model"),
        ports=ports,
    )


def expressible_qos(plan: Plan, switch: SwitchPlan) -> SwitchQos:
    """The plan's QoS for ``switch`` as SONiC CONFIG_DB can carry it: cable lengths in whole metres
    (rounded up, ``sonic.cable_string``); separate drop thresholds are refused at render (RT240), so
    they never reach a file. Everything else as :func:`~roce_tune.qos.expected_qos`."""
    import math

    exp = expected_qos(plan.classification, switch)
    ports = {
        n: p.model_copy(update={"cable_m": float(math.ceil(p.cable_m)) if p.cable_m is not None else None})
        for n, p in exp.ports.items()
    }
    return exp.model_copy(update={"ports": ports})
