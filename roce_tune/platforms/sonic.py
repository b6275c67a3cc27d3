"""Community SONiC renderer: one CONFIG_DB JSON fragment per switch (``<name>.json``).

The output is the *desired rows and fields* of the QoS, buffer and PFC-watchdog tables — what apply
must make true (roce-tune deploy computes the RFC 6902 patch against the running CONFIG_DB and writes it
with ``sonic-cfggen --write-to-db`` / ``sonic-db-cli``: :func:`_push`). It is a partial CONFIG_DB: rows and
fields not mentioned (e.g. ``PORT`` lanes, speed) are not owned by roce-tune and must never be removed by a
diff of this file. Deterministic: sorted keys, two-space indent, trailing newline; every value is a string,
as CONFIG_DB stores it.

No templates: :func:`build_context` puts the plan in SONiC's vocabulary (range keys ``3-4``, ``"5m"`` cable
strings, PFC lists ``"3,4"``) without any tuning math; :func:`config_db_tables` builds the CONFIG_DB tables
from it as data, one function per section of ``SPEC.sections`` (:data:`SECTION_TABLES`; a key written twice
in a table is refused), drops empty tables, and :func:`serialise` writes the JSON once (orjson). Each
distinct switch is built once (:func:`render_facts`, :func:`roce_tune.platforms.templating.render_keyed`;
issue 16).

Tables and why (syntax checked against):

* ``DSCP_TO_TC_MAP``, ``TC_TO_QUEUE_MAP``, ``TC_TO_PRIORITY_GROUP_MAP``, ``MAP_PFC_PRIORITY_TO_QUEUE``,
  ``PORT_QOS_MAP`` (``global`` binds ``dscp_to_tc_map``; every port binds all maps; ``pfc_enable`` and
  ``pfcwd_sw_enable`` only on lossless ports), ``QUEUE`` (``port|queue`` -> ``scheduler``, plus
  ``wred_profile`` on the lossless queues of lossless ports), ``SCHEDULER``, ``WRED_PROFILE``: [V]
  sonic-net/sonic-buildimage ``files/build_templates/qos_config.j2`` and the YANG models in
  ``sonic-yang-models`` (``sonic-port-qos-map.yang``, ``sonic-queue.yang``, ``sonic-scheduler.yang``,
  ``sonic-wred-profile.yang``; tests validate every rendering against them with libyang).
* ``PFC_PRIORITY_TO_PRIORITY_GROUP_MAP`` / ``pfc_to_pg_map``: only for ``asic_type`` mellanox and
  barefoot — ``qos_config.j2`` ``pfc_to_pg_map_supported_asics`` [V]. The ASIC type comes from the
  catalog family via :data:`SONIC_ASIC_TYPE_BY_FAMILY`.
* ``WRED_PROFILE``: one profile per plan ECN profile, ``ecn: ecn_all`` and WRED enabled for all three
  colours with the same ramp (qos_config.j2 ``AZURE_LOSSLESS`` shape). Thresholds in bytes,
  ``*_drop_probability`` an integer percent 0..100 [V yang]. The plan's Kmin/Kmax/Pmax go on the
  ``green/yellow/red_min/max_threshold`` / ``*_drop_probability`` fields: the separate ECN-marking fields of
  the SONiC "WRED and ECN marking thresholds" HLD (``green_ect_min_threshold`` …) are *not* in
  ``sonic-wred-profile.yang`` (checked), so the lossless queue marks ECT packets and drops non-ECT packets
  on the same Kmin..Kmax ramp. ``SPEC.ecn_drop_thresholds`` is False: the tuner gives SONiC switches no
  separate drop thresholds, and a plan that has them anyway is refused (RT240) rather than half-rendered,
  so plan.md and the WRED_PROFILE show the same numbers. A fractional ``pmax_percent`` cannot be written
  and raises.
* ``BUFFER_POOL``, ``BUFFER_PROFILE`` (``xon``/``xoff``/``size`` + ``dynamic_th`` or ``static_th``),
  ``BUFFER_PG`` (lossy PGs -> ``ingress_lossy_profile``; lossless PGs -> the port's static headroom
  profile, contiguous PGs as ``3-4``), ``BUFFER_QUEUE`` (lossless queues -> ``egress_lossless_profile``,
  other queues -> ``q_lossy_profile`` or ``egress_lossy_profile``): [V] ``buffers_config.j2`` and the
  buffer YANG models. Profiles are found by SONiC's standard names (:data:`PROFILE_ROLE_NAMES`), which the
  tuner emits.
* Static headroom. **Dynamic** buffer model (default on Mellanox since 202012): SONiC's *headroom
  override*, a ``BUFFER_PG`` pointing at a ``BUFFER_PROFILE`` with ``xoff`` (``headroom_type`` static, the
  default), which buffermgrdyn leaves alone — sonic-net/SONiC ``doc/qos/dynamically-headroom-calculation.md``
  [V]. **Traditional** model: ``buffermgrd`` rewrites the lossless ``BUFFER_PG`` rows to
  ``pg_lossless_<speed>_<cable>_profile`` whenever speed, MTU, admin state or ``pfc_enable`` change and at
  boot, reusing a ``BUFFER_PROFILE`` of that name when one exists (sonic-swss ``cfgmgr/buffermgr.cpp``
  ``doSpeedUpdateTask``) [V], so the plan's headroom is written under exactly that name
  (:func:`pg_profiles`). ``DEVICE_METADATA|localhost.buffer_model`` carries the model the plan was made for
  (releases from 202012); it takes effect only when swss starts, so deploy's :func:`preflight` refuses a
  switch that runs the other model rather than flipping it (docs/derivation.md#sonic-buffer-models).
* ``PFC_WD``: ``GLOBAL.POLL_INTERVAL`` and per lossless port ``action``/``detection_time``/
  ``restoration_time`` in ms [V] ``sonic-pfcwd.yang``, sonic-utilities ``pfcwd/main.py``. With the watchdog
  off, ``GLOBAL`` only: a port without a row has no watchdog, so apply deletes the managed ports' rows
  (``pfcwd stop``'s effect) rather than leave a running watchdog alone.
* ``CABLE_LENGTH`` (key ``AZURE`` as ``buffers_config.j2``) with ``"<m>m"`` strings, pattern
  ``[0-9]+m`` [V] ``sonic-cable-length.yang`` (not in shared/sonic-yang; the tests check the pattern);
  fractional metres are rounded **up**. ``PORT|<port>.mtu`` so the MTU the headroom assumed is the MTU
  the port has (no speed, lanes or admin state).

References between tables are plain names (``"ROCE"``) as the YANG leafrefs require; for a switch whose
``os_version`` names a release before 202111 they are written ``"[TABLE|name]"`` as those releases' CONFIG_DB
does (sonic-buildimage PR #7752 removed the format in 2021; docs/derivation.md#platform-syntax).

``config qos reload`` and ``config load_minigraph`` delete the QoS/buffer tables listed in
:data:`QOS_RELOAD_CLEARED_TABLES` (sonic-utilities ``config/main.py`` ``_clear_qos``) and re-render the
SKU defaults: :func:`reload_warning` names the tables of this file they wipe (plan.md runbook).

Not rendered (device defaults kept): ``BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST``, ``FLEX_COUNTER_TABLE``,
``DOT1P_TO_TC_MAP`` (``trust: pcp`` plans are refused: the plan has no PCP -> TC map).
"""

from __future__ import annotations

import copy
import json
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
from pydantic import BaseModel

from roce_tune.findings import Finding, Location, Severity
from roce_tune.plan import BufferProfile, EcnProfile, Plan, PortPlan, SwitchPlan
from roce_tune.platforms.base import (
    LINUX_IFNAME_MAX,
    CannotExpressValue,
    PlatformSpec,
    SecretPattern,
    mask_secrets,
    secret_re,
)
from roce_tune.platforms.contract import BufferModels
from roce_tune.platforms.templating import render_keyed

SPEC = PlatformSpec(
    name="sonic",
    extension="json",
    aggregator="",  # no templates: CONFIG_DB is built as data (SECTION_TABLES) and serialised once
    sections=("maps", "pfc", "buffers", "ecn", "scheduler", "watchdog", "interfaces"),
    netmiko_device_type="linux",
    commit="sonic-checkpoint-patch",
    negate_prefix=None,
    comment_prefix="//",  # JSON carries no comments; the marker never starts a rendered line
    indent=2,
    source="sonic-net/sonic-buildimage files/build_templates/qos_config.j2, buffers_config.j2, "
           "src/sonic-yang-models/yang-models (validated with libyang in tests)",
    show_commands={
        "running_config": "show runningconfiguration all",
        "buffer_model": "sonic-db-cli CONFIG_DB hget 'DEVICE_METADATA|localhost' buffer_model",
        "maps": "sonic-db-cli CONFIG_DB keys 'PORT_QOS_MAP|*'",
        "pfc": "show pfc priority",
        "pfc_counters": "show pfc counters",
        "watchdog": "show pfcwd config",
        "watchdog_counters": "show pfcwd stats",
        "ecn": "ecnconfig -l",
        "ecn_counters": "show queue wredcounters",
        "queue_drops": "show queue counters",
        "buffers": "show buffer configuration",
        "headroom_watermark": "show priority-group watermark headroom",
    },
    max_port_name_chars=LINUX_IFNAME_MAX,  # ports are Linux netdevs
)


def _mask_table_keys(table: str, inner: re.Pattern[str]) -> Callable[[str], str]:
    """A secret pattern for a CONFIG_DB table (as ``show runningconfiguration all`` prints it): ``inner``
    is applied to the table's body only (two levels of nesting)."""
    block = re.compile(rf'"{table}"\s*:\s*\{{(?P<body>(?:[^{{}}]|\{{[^{{}}]*\}})*)\}}')

    def mask(text: str) -> str:
        return block.sub(lambda m: m.group(0)[: m.start("body") - m.start()]
                         + mask_secrets(m.group("body"), (inner,))
                         + m.group(0)[m.end("body") - m.start():], text)
    return mask


#: Secrets in CONFIG_DB (``show runningconfiguration all``, ``sonic-db-cli`` output) that logs and restore
#: points mask (``mask_secrets``): TACPLUS/TACPLUS_SERVER and RADIUS/RADIUS_SERVER ``passkey``, SNMP_USER
#: ``SNMP_USER_AUTH_PASSWORD``/``SNMP_USER_ENCRYPTION_PASSWORD``, any ``password``/``secret`` field,
#: NTP_KEY ``value``, and SNMP_COMMUNITY, whose keys are the community strings (also in ``TABLE|key``
#: form). Sources: sonic-system-tacacs / sonic-system-radius / sonic-snmp / sonic-ntp YANG models and the
#: SNMP ConfigDB HLD (https://github.com/sonic-net/SONiC/blob/master/doc/snmp/snmp-configdb-migration-hld.md).
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    secret_re(r"""["'](?:passkey|password|secret|SNMP_USER_AUTH_PASSWORD|SNMP_USER_ENCRYPTION_PASSWORD)["']\s*:\s*"""
              r"""(?P<secret>"[^"\n]*"|'[^'\n]*')"""),
    _mask_table_keys("SNMP_COMMUNITY", re.compile(r'"(?P<secret>[^"]+)"\s*:\s*\{')),
    _mask_table_keys("NTP_KEY", re.compile(r'"value"\s*:\s*(?P<secret>"[^"]*")')),
    secret_re(r"""\b(?:SNMP_COMMUNITY)\|(?P<secret>[^\s'"|]+)"""),
)

#: catalog ASIC family -> SONiC ``asic_type`` (the ``sonic_asic_platform`` of the build).
SONIC_ASIC_TYPE_BY_FAMILY: dict[str, str] = {
    "spectrum": "mellanox", "tofino": "barefoot", "tomahawk": "broadcom", "trident": "broadcom",
    "jericho": "broadcom",
}
#: ``qos_config.j2``: ``pfc_to_pg_map_supported_asics = ['mellanox', 'barefoot']`` [V].
PFC_TO_PG_ASIC_TYPES = frozenset({"mellanox", "barefoot"})
#: Buffer-profile role -> SONiC standard profile names, first match wins (buffers_defaults_*.j2) [V].
PROFILE_ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "ingress_lossy": ("ingress_lossy_profile",),
    "egress_lossless": ("egress_lossless_profile",),
    "egress_lossy": ("q_lossy_profile", "egress_lossy_profile"),
}
#: SONiC buffer models per ASIC family, first = the default a fresh install gets: ``init_cfg.json.j2`` writes
#: ``DEVICE_METADATA|localhost.buffer_model`` from the build's ``SONIC_BUFFER_MODEL``, which only the Mellanox
#: platform sets (to ``dynamic``); the dynamic model needs the vendor's Lua plugins, which only Mellanox ships
#: [V] (docs/derivation.md#sonic-buffer-models).
BUFFER_MODELS = BufferModels(
    by_family=(("spectrum", ("dynamic", "traditional")), ("*", ("traditional",))),
    source="sonic-buildimage files/build_templates/init_cfg.json.j2 and platform/mellanox/rules.mk "
           "SONIC_BUFFER_MODEL=dynamic",
)
#: First release with ``DEVICE_METADATA|localhost.buffer_model`` (sonic-buildimage #6194, Dec 2020) [V].
BUFFER_MODEL_SINCE = 202012
#: ``CABLE_LENGTH`` row key used by ``buffers_config.j2`` [V].
CABLE_LENGTH_KEY = "AZURE"
#: First SONiC release whose CONFIG_DB QoS/buffer references are plain names (``"ROCE"``); older releases
#: write ``"[DSCP_TO_TC_MAP|ROCE]"``. sonic-buildimage #7752 / sonic-swss #1754 / sonic-utilities #1626
#: (db_migrator), merged mid-2021 [V]; the first release branch carrying them is inferred [S].
PLAIN_REFERENCES_SINCE = 202111
#: PORT_QOS_MAP field -> referenced table.
MAP_FIELDS: dict[str, str] = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP", "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP", "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
}
#: Tables ``config qos reload`` (and ``config load_minigraph``, which calls the same helper) deletes before
#: re-rendering the SKU's qos/buffer templates [V] sonic-net/sonic-utilities ``config/main.py``
#: ``_clear_qos``.
QOS_RELOAD_CLEARED_TABLES = (
    "PORT_QOS_MAP", "QUEUE", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "TC_TO_QUEUE_MAP",
    "DSCP_TO_TC_MAP", "MPLS_TC_TO_TC_MAP", "SCHEDULER", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "WRED_PROFILE",
    "CABLE_LENGTH", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PROFILE", "BUFFER_POOL", "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
    "LOSSLESS_TRAFFIC_PATTERN",
)


def reload_warning(rendered: str) -> tuple[list[str], list[str]]:
    """``(wiped, kept)`` table names of a rendered SONiC file: what ``config qos reload`` / ``config
    load_minigraph`` delete (replaced by SKU defaults) and what they leave.

    Raises:
        ValueError: ``rendered`` is not a JSON object.
    """
    tables = _runbook_facts(rendered)[0]
    return ([t for t in tables if t in QOS_RELOAD_CLEARED_TABLES],
            [t for t in tables if t not in QOS_RELOAD_CLEARED_TABLES])


@lru_cache(maxsize=256)
def _runbook_facts(rendered: str) -> tuple[tuple[str, ...], str, frozenset[str]]:
    """(sorted table names, buffer model, BUFFER_PROFILE names buffermgrd gives) of a rendered SONiC file,
    parsed once per distinct text: the switches of a fabric share a handful of texts (plan.md's runbook asks
    for each).

    Raises:
        ValueError: ``rendered`` is not a JSON object.
    """
    db = orjson.loads(rendered)  # orjson.JSONDecodeError is a ValueError
    if not isinstance(db, dict):
        raise ValueError("a SONiC CONFIG_DB file is a JSON object")
    model = ((db.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("buffer_model", "traditional")
    names = frozenset(n for n in db.get("BUFFER_PROFILE") or {} if BUFFERMGRD_NAME_RE.match(n))
    return tuple(sorted(db)), model, names


#: ``sonic-wred-profile.yang`` / map-name pattern, max 32 characters [V].
WRED_NAME_RE = re.compile(r"^[a-zA-Z0-9][-a-zA-Z0-9_]{0,31}$")


def asic_family(switch: SwitchPlan) -> str:
    """Catalog family of the switch's ASIC (:func:`roce_tune.catalog.asic_family`)."""
    from roce_tune.catalog import asic_family as family_of

    return family_of(switch.asic)


def asic_type(switch: SwitchPlan) -> str:
    """SONiC ``asic_type`` of the switch (``mellanox``, ``broadcom`` …; ``unknown`` if not recorded)."""
    return SONIC_ASIC_TYPE_BY_FAMILY.get(asic_family(switch), "unknown")


def id_ranges(ids: list[int] | set[int]) -> list[str]:
    """Contiguous runs of ``ids`` as SONiC ``X`` / ``X-Y`` keys (BUFFER_PG, BUFFER_QUEUE).

    >>> id_ranges([0, 1, 2, 4, 5, 6]), id_ranges([3, 4]), id_ranges([0, 7])
    (['0-2', '4-6'], ['3-4'], ['0', '7'])
    """
    return list(_id_ranges(frozenset(ids)))


@lru_cache(maxsize=1024)
def _id_ranges(ids: frozenset[int]) -> tuple[str, ...]:
    """:func:`id_ranges` of one set, kept: every port of a fabric asks for the same few sets."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(ids):
        if run and i != run[-1] + 1:
            out.append(_run(run))
            run = []
        run.append(i)
    if run:
        out.append(_run(run))
    return tuple(out)


def _run(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"


def sonic_release(os_version: str | None) -> int | None:
    """The YYYYMM release in an OS version string (``SONiC.202305.01`` -> 202305), None if absent.

    >>> sonic_release("SONiC.202012.72"), sonic_release("202305"), sonic_release(None)
    (202012, 202305, None)
    """
    m = re.search(r"(?<!\d)(20\d{2}(?:0[1-9]|1[0-2]))(?!\d)", os_version or "")
    return int(m.group(1)) if m else None


def reference(table: str, name: str, legacy: bool) -> str:
    """A CONFIG_DB reference to ``table|name``: plain name, or ``[TABLE|name]`` before 202111.

    >>> reference("SCHEDULER", "CNP_STRICT", False), reference("SCHEDULER", "CNP_STRICT", True)
    ('CNP_STRICT', '[SCHEDULER|CNP_STRICT]')
    """
    return f"[{table}|{name}]" if legacy else name


def cable_string(cable_m: float) -> str:
    """Cable length as SONiC writes it (``[0-9]+m``), fractional metres rounded up.

    >>> cable_string(5.0), cable_string(2.5)
    ('5m', '3m')
    """
    return f"{math.ceil(cable_m)}m"


def _percent(e: EcnProfile, key: str) -> int:
    """Percent field ``key`` of ECN profile ``e`` as SONiC's WRED_PROFILE takes it (an integer 0..100).

    Raises:
        CannotExpressValue: the value is fractional or out of range (RT240, at the pin behind it if any).
    """
    value = getattr(e, key)
    if value != int(value) or not 0 <= value <= 100:
        raise CannotExpressValue(
            f"{e.name}.{key}={value} cannot be written to SONiC (integer percent 0..100)", key,
            e.rationale.get(key))
    return int(value)


def _profile_role(profiles: dict[str, BufferProfile], role: str, switch: str) -> str:
    for name in PROFILE_ROLE_NAMES[role]:
        if name in profiles:
            return name
    raise ValueError(f"{switch}: plan has no {role} buffer profile (looked for "
                     f"{', '.join(PROFILE_ROLE_NAMES[role])}; have {', '.join(sorted(profiles))})")


def buffermgrd_profile_name(speed_gbps: int, cable_m: float) -> str:
    """The ``BUFFER_PROFILE`` name buffermgrd (traditional buffer model) gives a port's lossless PGs:
    ``pg_lossless_<PORT speed in Mb/s>_<CABLE_LENGTH>_profile`` (sonic-swss ``cfgmgr/buffermgr.cpp``
    ``doSpeedUpdateTask``; docs/derivation.md#sonic-buffer-models).

    >>> buffermgrd_profile_name(400, 5.0), buffermgrd_profile_name(100, 2.5)
    ('pg_lossless_400000_5m_profile', 'pg_lossless_100000_3m_profile')
    """
    return f"pg_lossless_{speed_gbps * 1000}_{cable_string(cable_m)}_profile"


def buffer_model(switch: SwitchPlan) -> str:
    """The switch's SONiC buffer model: the plan's (inventory or default), else the default for its ASIC
    (``dynamic`` on Spectrum, ``traditional`` elsewhere; :data:`BUFFER_MODELS`)."""
    return switch.buffer_model or BUFFER_MODELS.resolve(asic_family(switch), None)[0] or "traditional"


def _covers(a: BufferProfile, b: BufferProfile) -> bool:
    """Profile ``a`` gives at least ``b``'s headroom (same pool/threshold/xon, xoff and size no smaller)."""
    return ((a.pool, a.xon_bytes, a.dynamic_th, a.static_th_bytes) == (b.pool, b.xon_bytes, b.dynamic_th,
                                                                         b.static_th_bytes)
            and (a.xoff_bytes or 0) >= (b.xoff_bytes or 0) and a.size_bytes >= b.size_bytes)


def pg_profiles(switch: SwitchPlan) -> tuple[dict[str, str], dict[str, BufferProfile]]:
    """``(lossless port -> BUFFER_PROFILE name its lossless BUFFER_PG rows reference, name -> values)``.

    Dynamic model: the plan's headroom profile (a headroom override, which buffermgrdyn leaves alone).
    Traditional model: the name buffermgrd itself writes into those rows (:func:`buffermgrd_profile_name`),
    carrying the plan's values: buffermgrd reuses an existing ``BUFFER_PROFILE`` of that name, so each of
    its rewrites (speed/MTU/admin/``pfc_enable`` change, boot) points the PGs back at the plan's headroom.
    Ports that share a name (same speed, cable rounded up to the same metre) get the profile that covers
    all of theirs (the longest cable's: :func:`render_findings` reports the ports that get more).

    Raises:
        ValueError: traditional model and ports sharing a name whose headroom no single one covers
            (different MTU or pins; buffermgrd has one profile per speed and cable length).
    """
    profiles = {p.name: p for p in switch.buffers.profiles}
    ports = [p for p in sorted(switch.ports, key=lambda p: p.name) if p.lossless and p.headroom is not None]
    if buffer_model(switch) != "traditional":
        names: dict[str, str] = {p.name: p.headroom.profile for p in ports if p.headroom is not None}
        return names, {n: profiles[n] for n in names.values() if n in profiles}
    names = {}
    groups: dict[str, list[tuple[str, BufferProfile]]] = {}
    for p in ports:
        assert p.headroom is not None
        if p.headroom.profile not in profiles:
            raise ValueError(f"{switch.name}:{p.name}: headroom profile {p.headroom.profile} is not in "
                             "buffers.profiles")
        names[p.name] = name = buffermgrd_profile_name(p.speed_gbps, p.cable_m)
        groups.setdefault(name, []).append((p.name, profiles[p.headroom.profile]))
    return names, {name: _covering(switch, name, members) for name, members in groups.items()}


def _covering(switch: SwitchPlan, name: str, members: list[tuple[str, BufferProfile]]) -> BufferProfile:
    """The one profile of ``members`` (port, plan profile) that covers all of them, else ValueError."""
    best = max((prof for _, prof in members), key=lambda b: ((b.xoff_bytes or 0), b.size_bytes))
    bad = [(port, prof) for port, prof in members if not _covers(best, prof)]
    if bad:
        port, prof = bad[0]
        raise ValueError(
            f"{switch.name}: ports {', '.join(n for n, _ in members)} all get buffermgrd's profile {name} "
            f"(traditional buffer model: one profile per speed and cable length), but no one headroom covers "
            f"them all ({best.name}: xon/xoff/size {best.xon_bytes}/{best.xoff_bytes}/{best.size_bytes} B; "
            f"{port} {prof.name}: {prof.xon_bytes}/{prof.xoff_bytes}/{prof.size_bytes} B): give them the "
            "same MTU, lanes and pins, or run the dynamic buffer model")
    return best


def _named_profiles(switch: SwitchPlan, pg_names: dict[str, str], pg_values: dict[str, BufferProfile]
                    ) -> list[tuple[str, BufferProfile]]:
    """(BUFFER_PROFILE name, values): the plan's profiles, headroom ones under buffermgrd's names on the
    traditional model (:func:`pg_profiles`)."""
    named = [(p.name, p) for p in switch.buffers.profiles]
    if buffer_model(switch) != "traditional":
        return named
    headroom = {p.headroom.profile for p in switch.ports if p.headroom is not None and p.name in pg_names}
    return [(n, p) for n, p in named if n not in headroom] + sorted(pg_values.items())


def _buffers(switch: SwitchPlan, legacy: bool,
             pg: tuple[dict[str, str], dict[str, BufferProfile]]) -> dict[str, Any]:
    pg_names, pg_values = pg
    b = switch.buffers
    pools = [{"name": p.name, "type": p.type, "mode": p.mode, "size": p.size_bytes, "xoff": p.xoff_bytes}
             for p in sorted(b.pools, key=lambda p: p.name)]
    profiles = {p.name: p for p in b.profiles}
    for port in switch.ports:
        hr = port.headroom
        if hr is None:
            continue
        prof = profiles.get(hr.profile)
        if prof is None:
            raise ValueError(f"{switch.name}:{port.name}: headroom profile {hr.profile} is not in "
                             "buffers.profiles")
        if (prof.xon_bytes, prof.xoff_bytes, prof.size_bytes) != (hr.xon_bytes, hr.xoff_bytes, hr.size_bytes):
            raise ValueError(f"{switch.name}:{port.name}: headroom {hr.profile} disagrees with its buffer "
                             "profile")
    named = _named_profiles(switch, pg_names, pg_values)
    rows = [{"name": n, "pool": reference("BUFFER_POOL", p.pool, legacy), "size": p.size_bytes,
             "dynamic_th": p.dynamic_th, "static_th": p.static_th_bytes, "xon": p.xon_bytes,
             "xoff": p.xoff_bytes}
            for n, p in sorted(named, key=lambda t: t[0])]
    return {
        "pg_profile": {port: reference("BUFFER_PROFILE", name, legacy) for port, name in pg_names.items()},
        "pools": pools,
        "profiles": rows,
        "ingress_lossy": reference("BUFFER_PROFILE", _profile_role(profiles, "ingress_lossy", switch.name),
                                   legacy),
        "egress_lossless": reference("BUFFER_PROFILE", _profile_role(profiles, "egress_lossless",
                                                                     switch.name),
                                     legacy),
        "egress_lossy": reference("BUFFER_PROFILE", _profile_role(profiles, "egress_lossy", switch.name),
                                  legacy),
    }


def _wred(switch: SwitchPlan) -> list[dict[str, Any]]:
    out = []
    for e in sorted(switch.ecn_profiles, key=lambda e: e.name):
        if not WRED_NAME_RE.fullmatch(e.name):
            raise ValueError(f"{switch.name}: ECN profile name {e.name!r} is not a valid SONiC WRED_PROFILE "
                             f"name ({WRED_NAME_RE.pattern})")
        if e.drop_min_bytes is not None or e.drop_max_bytes is not None:
            raise ValueError(f"{switch.name}: ECN profile {e.name} has separate non-ECT drop thresholds "
                             f"{e.drop_min_bytes}..{e.drop_max_bytes} B, which SONiC's WRED_PROFILE cannot "
                             "express (one ramp per queue for marking and dropping)")
        out.append({"name": e.name, "min": e.kmin_bytes, "max": e.kmax_bytes,
                    "probability": _percent(e, "pmax_percent")})
    return out


def _schedulers(plan: Plan) -> list[dict[str, Any]]:
    by_name: dict[str, dict[str, Any]] = {}
    for s in plan.classification.schedulers:
        row = {"name": s.name, "type": "STRICT" if s.mode == "strict" else "DWRR",
               "weight": s.weight_percent if s.mode == "dwrr" else None}
        if s.mode == "dwrr" and s.weight_percent is None:
            raise ValueError(f"scheduler {s.name} (queue {s.queue}) is dwrr without a weight")
        if by_name.setdefault(s.name, row) != row:
            raise ValueError(f"scheduler name {s.name} is used with different settings")
    return [by_name[k] for k in sorted(by_name)]


def _lossless_pgs(switch: SwitchPlan, port: PortPlan, pfc_to_pg: dict[int, int], model: str) -> set[int]:
    pgs = {pfc_to_pg[p] for p in port.pfc_priorities}
    if model == "traditional" and pgs != set(port.pfc_priorities):
        raise ValueError(f"{switch.name}:{port.name}: lossless priorities {sorted(port.pfc_priorities)} map "
                         f"to PGs {sorted(pgs)}, but buffermgrd (traditional buffer model) writes the "
                         "lossless BUFFER_PG rows at the pfc_enable priorities themselves: map each lossless "
                         "priority to the PG of the same number, or run the dynamic buffer model")
    return pgs


def _check_lossless_port(switch: SwitchPlan, port: PortPlan, ecn_names: set[str]) -> None:
    """ValueError when a lossless port lacks PFC priorities, headroom or an ECN profile of the switch."""
    if not port.pfc_priorities or port.headroom is None or port.ecn_profile is None:
        raise ValueError(f"{switch.name}:{port.name}: lossless port without PFC priorities, headroom or "
                         "ECN profile")
    if port.ecn_profile not in ecn_names:
        raise ValueError(f"{switch.name}:{port.name}: ECN profile {port.ecn_profile} is not in ecn_profiles")


#: Unicast egress queues per port that BUFFER_QUEUE covers (SONiC's default buffers template writes
#: ``0-2``, ``3-4``, ``5-6``; roce-tune covers 0-7, the queues the plan's maps can name).
UNICAST_QUEUES = 8


@dataclass(frozen=True)
class _SwitchRows:
    """What every port of one switch shares in its rows (computed once per switch, not per port).

    Attributes:
        lossy_pg_ranges: BUFFER_PG key suffixes of the lossy PGs (``0-2``).
        lossless_queue_ranges / lossy_queue_ranges: BUFFER_QUEUE key suffixes.
        sched: queue -> SCHEDULER reference (CONFIG_DB form).
        model: the switch's buffer model (:func:`buffer_model`).
    """

    lossy_pg_ranges: tuple[str, ...]
    lossless_queue_ranges: tuple[str, ...]
    lossy_queue_ranges: tuple[str, ...]
    sched: dict[int, str | None]
    model: str

    @classmethod
    def of(cls, plan: Plan, switch: SwitchPlan, legacy: bool) -> _SwitchRows:
        c = plan.classification
        lossless_queues = set(c.lossless_queues)
        # every unicast queue of the port gets a BUFFER_QUEUE profile (lossless or lossy), also the queues
        # no TC maps to: otherwise the SKU's default range key (e.g. ``0-2``) stays and overlaps the plan's
        queues = set(range(UNICAST_QUEUES))
        return cls(lossy_pg_ranges=tuple(id_ranges(set(c.tc_to_pg.values()) - set(c.lossless_pgs))),
                   lossless_queue_ranges=tuple(id_ranges(lossless_queues & queues)),
                   lossy_queue_ranges=tuple(id_ranges(queues - lossless_queues)),
                   sched={s.queue: reference("SCHEDULER", s.name, legacy) if s.name else None
                          for s in c.schedulers},
                   model=buffer_model(switch))


def _port_rows(plan: Plan, switch: SwitchPlan, port: PortPlan, fixed: _SwitchRows,
               buf: dict[str, Any], ecn_names: set[str], rows: dict[str, list[dict[str, Any]]],
               legacy: bool) -> None:
    """Append this port's rows to every per-port table in ``rows`` (key -> fields, CONFIG_DB keys)."""
    c = plan.classification
    sched = fixed.sched
    name = port.name
    qos: dict[str, Any] = {"name": name, "pfc_enable": None}
    port_lossless_queues: set[int] = set()
    wred = None
    for r in fixed.lossy_pg_ranges:
        rows["buffer_pg"].append({"key": f"{name}|{r}", "profile": buf["ingress_lossy"]})
    if port.lossless:
        _check_lossless_port(switch, port, ecn_names)
        qos["pfc_enable"] = ",".join(str(p) for p in sorted(port.pfc_priorities))
        for r in id_ranges(_lossless_pgs(switch, port, c.pfc_priority_to_pg, fixed.model)):
            rows["buffer_pg"].append({"key": f"{name}|{r}", "profile": buf["pg_profile"][name]})
        wred = port.ecn_profile
        port_lossless_queues = {c.pfc_priority_to_queue[p] for p in port.pfc_priorities}
        rows["pfc_wd"].append({"name": name})
    rows["port_qos"].append(qos)
    wred_ref = reference("WRED_PROFILE", wred, legacy) if wred else None
    for q in sorted(set(sched) | port_lossless_queues):
        rows["queue"].append({"key": f"{name}|{q}", "scheduler": sched.get(q),
                              "wred": wred_ref if q in port_lossless_queues else None})
    for r in fixed.lossless_queue_ranges:
        rows["buffer_queue"].append({"key": f"{name}|{r}", "profile": buf["egress_lossless"]})
    for r in fixed.lossy_queue_ranges:
        rows["buffer_queue"].append({"key": f"{name}|{r}", "profile": buf["egress_lossy"]})
    rows["port"].append({"name": name, "mtu": port.mtu, "cable": cable_string(port.cable_m)})


def build_context(plan: Plan, switch: SwitchPlan) -> dict[str, Any]:
    """Everything the SONiC tables hold, already in CONFIG_DB vocabulary (no arithmetic left); the input of
    :func:`config_db_tables` and the render key of :func:`render` (plain data).

    Returns:
        dict with ``sections``, ``switch`` (name), ``maps`` (sorted (key, value) pairs per map),
        ``map_name``, ``map_refs`` (PORT_QOS_MAP field -> reference), ``pfc_to_pg`` (bool), ``rows`` (per-port
        rows for PORT_QOS_MAP, QUEUE, BUFFER_PG, BUFFER_QUEUE, PFC_WD, PORT/CABLE_LENGTH, CONFIG_DB keys
        ready), ``buffers`` (pools, profiles, role profile names), ``wred``, ``schedulers``, ``watchdog``,
        ``cable_key``.

    Raises:
        ValueError: the plan cannot be written to SONiC (``trust: pcp``, fractional Pmax, dwrr without a
            weight, missing role buffer profiles, names outside the YANG patterns, inconsistent plan).
    """
    c = plan.classification
    if switch.platform != SPEC.name:
        raise ValueError(f"{switch.name} is a {switch.platform} switch, not {SPEC.name}")
    if c.trust != "dscp":
        raise ValueError("SONiC renderer supports trust dscp only (the plan has no PCP -> TC map for "
                         "DOT1P_TO_TC_MAP)")
    if not WRED_NAME_RE.fullmatch(c.map_name):
        raise ValueError(f"map name {c.map_name!r} does not match the SONiC YANG pattern "
                         f"{WRED_NAME_RE.pattern}")
    release = sonic_release(switch.os_version)
    legacy = release is not None and release < PLAIN_REFERENCES_SINCE
    buf = _buffers(switch, legacy, pg_profiles(switch))
    wred = _wred(switch)
    ecn_names = {w["name"] for w in wred}
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in ("port_qos", "queue", "buffer_pg", "buffer_queue",
                                                             "pfc_wd", "port")}
    fixed = _SwitchRows.of(plan, switch, legacy)
    for p in sorted(switch.ports, key=lambda p: p.name):
        _port_rows(plan, switch, p, fixed, buf, ecn_names, rows, legacy)
    wd = switch.watchdog
    pfc_to_pg = asic_type(switch) in PFC_TO_PG_ASIC_TYPES

    def pairs(m: dict[int, int]) -> list[tuple[int, int]]:
        return sorted(m.items())

    return {
        "sections": SPEC.sections,
        "switch": switch.name,
        "map_name": c.map_name,
        "map_refs": {field: reference(table, c.map_name, legacy) for field, table in MAP_FIELDS.items()},
        "maps": {
            "dscp_to_tc": pairs(c.dscp_to_tc), "tc_to_pg": pairs(c.tc_to_pg),
            "tc_to_queue": pairs(c.tc_to_queue),
            "pfc_to_queue": pairs(c.pfc_priority_to_queue), "pfc_to_pg": pairs(c.pfc_priority_to_pg),
        },
        "pfc_to_pg": pfc_to_pg,
        "rows": rows,
        "buffers": buf,
        "wred": wred,
        "schedulers": _schedulers(plan),
        "watchdog": {"enabled": wd.enabled, "poll": wd.poll_ms, "action": wd.action,
                     "detection": wd.detection_ms, "restoration": wd.restoration_ms},
        "cable_key": CABLE_LENGTH_KEY,
    }


def _unique(table: str, rows: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """``rows`` (CONFIG_DB key, row) as one table; a key written twice is a renderer bug, never overwritten.

    Raises:
        ValueError: a key repeats (e.g. two ECN profiles of one name).
    """
    out: dict[str, Any] = {}
    for key, row in rows:
        if key in out:
            raise ValueError(f"SONiC render bug: key {key!r} written twice in {table}")
        out[key] = row
    return out


def _some(**fields: object) -> dict[str, str]:
    """CONFIG_DB fields as strings (CONFIG_DB stores only strings), fields whose value is None left out."""
    return {k: str(v) for k, v in fields.items() if v is not None}


def _str(row: dict[str, Any], *fields: str) -> dict[str, str]:
    """``fields`` of ``row`` as CONFIG_DB strings."""
    return {f: str(row[f]) for f in fields}


def _maps_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE and, on the ASIC
    types qos_config.j2 emits it for, PFC_PRIORITY_TO_PRIORITY_GROUP_MAP: one row named ``map_name`` each
    (sonic-dscp-tc-map.yang, sonic-tc-queue-map.yang, sonic-tc-priority-group-map.yang,
    sonic-pfc-priority-queue-map.yang, sonic-pfc-priority-priority-group-map.yang)."""
    maps = ctx["maps"]
    tables = {"DSCP_TO_TC_MAP": "dscp_to_tc", "TC_TO_PRIORITY_GROUP_MAP": "tc_to_pg",
              "TC_TO_QUEUE_MAP": "tc_to_queue",
              "MAP_PFC_PRIORITY_TO_QUEUE": "pfc_to_queue"}
    if ctx["pfc_to_pg"]:
        tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = "pfc_to_pg"
    return {table: {ctx["map_name"]: {str(k): str(v) for k, v in maps[key]}} for table, key in tables.items()}


def _pfc_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """PORT_QOS_MAP (sonic-port-qos-map.yang): ``global`` binds the DSCP map; every port binds all maps;
    ``pfc_enable`` (and ``pfcwd_sw_enable`` when the watchdog is on) only on lossless ports."""
    refs = ctx["map_refs"]
    bound = [f for f in ("dscp_to_tc_map", "tc_to_pg_map", "tc_to_queue_map", "pfc_to_pg_map",
                         "pfc_to_queue_map")
             if f != "pfc_to_pg_map" or ctx["pfc_to_pg"]]
    watchdog = ctx["watchdog"]["enabled"]

    def row(p: dict[str, Any]) -> dict[str, str]:
        out = {f: refs[f] for f in bound}
        if p["pfc_enable"]:
            out["pfc_enable"] = p["pfc_enable"]
            if watchdog:
                out["pfcwd_sw_enable"] = p["pfc_enable"]
        return out

    rows = [("global", {"dscp_to_tc_map": refs["dscp_to_tc_map"]})]
    return {"PORT_QOS_MAP": _unique("PORT_QOS_MAP",
                                    rows + [(p["name"], row(p)) for p in ctx["rows"]["port_qos"]])}


def _buffer_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """BUFFER_POOL, BUFFER_PROFILE (lossless headroom profiles carry xon/xoff/size), BUFFER_PG (lossy PGs ->
    ingress lossy profile, lossless PGs -> the port's static headroom profile = SONiC headroom override),
    BUFFER_QUEUE (lossless queues -> egress lossless profile, others -> egress lossy); sizes in bytes
    (sonic-buffer-pool/-profile/-pg/-queue.yang, buffers_config.j2)."""
    buf, rows = ctx["buffers"], ctx["rows"]
    return {
        "BUFFER_POOL": _unique("BUFFER_POOL", ((p["name"], {**_some(xoff=p["xoff"]),
                                                            **_str(p, "mode", "size", "type")})
                                               for p in buf["pools"])),
        "BUFFER_PROFILE": _unique("BUFFER_PROFILE", (
            (p["name"], {**_some(dynamic_th=p["dynamic_th"], static_th=p["static_th"], xon=p["xon"],
                                 xoff=p["xoff"]),
                         "pool": p["pool"], "size": str(p["size"])}) for p in buf["profiles"])),
        "BUFFER_PG": _unique("BUFFER_PG", ((r["key"], {"profile": r["profile"]}) for r in rows["buffer_pg"])),
        "BUFFER_QUEUE": _unique("BUFFER_QUEUE", ((r["key"], {"profile": r["profile"]})
                                                 for r in rows["buffer_queue"])),
    }


def _ecn_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """WRED_PROFILE per plan ECN profile (sonic-wred-profile.yang): ECN marking for all colours on the plan's
    Kmin..Kmax ramp (bytes) up to Pmax (percent), WRED on for every colour as qos_config.j2 AZURE_LOSSLESS."""
    def row(w: dict[str, Any]) -> dict[str, str]:
        out = {"ecn": "ecn_all"}
        for colour in ("green", "yellow", "red"):
            out |= {f"{colour}_min_threshold": str(w["min"]), f"{colour}_max_threshold": str(w["max"]),
                    f"{colour}_drop_probability": str(w["probability"]), f"wred_{colour}_enable": "true"}
        return out

    return {"WRED_PROFILE": _unique("WRED_PROFILE", ((w["name"], row(w)) for w in ctx["wred"]))}


def _scheduler_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """SCHEDULER profiles (STRICT, or DWRR with a weight) and QUEUE ``port|queue`` rows binding a scheduler
    and, on the lossless queues of lossless ports, the WRED/ECN profile (sonic-scheduler.yang,
    sonic-queue.yang)."""
    def queue(q: dict[str, Any]) -> dict[str, str]:
        return {k: v for k, v in (("scheduler", q["scheduler"]), ("wred_profile", q["wred"])) if v}

    return {
        "SCHEDULER": _unique("SCHEDULER", ((s["name"], {**_some(weight=s["weight"]), "type": str(s["type"])})
                                           for s in ctx["schedulers"])),
        "QUEUE": _unique("QUEUE", ((q["key"], queue(q)) for q in ctx["rows"]["queue"])),
    }


def _watchdog_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """PFC_WD (sonic-pfcwd.yang): GLOBAL poll interval and, per lossless port, action and detection /
    restoration times in ms. A port without a row has no watchdog: with the plan's watchdog off the table
    holds GLOBAL only, and apply removes the managed ports' rows (``DIFF.port_rows``), as ``pfcwd stop
    <port>`` does (sonic-utilities ``pfcwd/main.py``: ``mod_entry(PFC_WD, port, None)``)."""
    wd = ctx["watchdog"]
    glob = ("GLOBAL", {"POLL_INTERVAL": str(wd["poll"])})
    if not wd["enabled"]:
        return {"PFC_WD": dict([glob])}
    row = {"action": str(wd["action"]), "detection_time": str(wd["detection"]),
           "restoration_time": str(wd["restoration"])}
    rows = [glob] + [(p["name"], dict(row)) for p in ctx["rows"]["pfc_wd"]]
    return {"PFC_WD": _unique("PFC_WD", rows)}


def _interface_tables(ctx: dict[str, Any]) -> dict[str, Any]:
    """CABLE_LENGTH (buffers_config.j2 key, ``"<m>m"`` per sonic-cable-length.yang) and PORT ``mtu`` only
    (speed, lanes and admin state stay as the switch has them)."""
    ports = ctx["rows"]["port"]
    return {
        "CABLE_LENGTH": {ctx["cable_key"]: _unique("CABLE_LENGTH", ((p["name"], p["cable"]) for p in ports))},
        "PORT": _unique("PORT", ((p["name"], {"mtu": str(p["mtu"])}) for p in ports)),
    }


#: SPEC.sections -> the function building that section's CONFIG_DB tables from :func:`build_context`'s dict
SECTION_TABLES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "maps": _maps_tables, "pfc": _pfc_tables, "buffers": _buffer_tables, "ecn": _ecn_tables,
    "scheduler": _scheduler_tables, "watchdog": _watchdog_tables, "interfaces": _interface_tables,
}


def config_db_tables(ctx: dict[str, Any], buffer_model: str | None = None) -> dict[str, Any]:
    """The CONFIG_DB fragment of one switch as data: every section's tables (:data:`SECTION_TABLES`, in
    ``SPEC.sections`` order) from :func:`build_context`'s dict, empty tables left out, and
    ``DEVICE_METADATA|localhost.buffer_model`` when ``buffer_model`` is given. Every value is a string.

    Raises:
        ValueError: a CONFIG_DB key written twice within a table (a renderer bug).
    """
    db: dict[str, Any] = {}
    for section in ctx["sections"]:
        db.update(SECTION_TABLES[section](ctx))
    if buffer_model is not None:
        db["DEVICE_METADATA"] = {"localhost": {"buffer_model": buffer_model}}
    return {table: rows for table, rows in db.items() if rows}


def serialise(db: dict[str, Any]) -> str:
    """CONFIG_DB JSON text: sorted keys, two-space indent, trailing newline (the bytes of ``json.dumps(db,
    indent=2, sort_keys=True, ensure_ascii=False) + "\\n"``, made once by orjson in C)."""
    return orjson.dumps(db, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def render_findings(plan: Plan, switch: SwitchPlan) -> list[Finding]:
    """RT241 (info) when CABLE_LENGTH rounds the plan's fractional cable lengths up to whole metres
    (``[0-9]+m`` in sonic-cable-length.yang), and, on the traditional buffer model, for each port whose
    lossless PGs get a larger headroom than the plan computed for it (buffermgrd's one profile per speed and
    cable length, :func:`pg_profiles`); RT242 (warning) for a Spectrum switch on the traditional model."""
    loc = Location(device=switch.name)
    out = []
    odd = sorted(c for c in set(map(_CABLE, switch.ports)) if c != math.ceil(c))  # (each length once)
    if odd:
        out.append(Finding(rule="RT241", severity=Severity.info, location=loc,
                           message=f"SONiC CABLE_LENGTH is whole metres: plan cable lengths {odd} m written "
                                   "rounded up",
                           fix="none needed (a longer cable only adds headroom)"))
    if buffer_model(switch) != "traditional":
        return out
    names, values = pg_profiles(switch)
    for p in sorted(switch.ports, key=lambda p: p.name):
        got = values.get(names.get(p.name, ""))
        if got is not None and p.headroom is not None and got.xoff_bytes != p.headroom.xoff_bytes:
            out.append(Finding(
                rule="RT241", severity=Severity.info, location=Location(device=switch.name, port=p.name),
                message=f"traditional buffer model: {p.name} ({p.cable_m} m) shares buffermgrd's "
                        f"{names[p.name]} with a longer cable, so its lossless PGs get xoff "
                        f"{got.xoff_bytes} B instead of {p.headroom.xoff_bytes} B",
                fix="none needed (more headroom than the cable needs)"))
    if asic_family(switch) == "spectrum":
        out.append(Finding(
            rule="RT242", severity=Severity.warning, location=loc,
            message=f"{switch.name} runs the traditional buffer model on {switch.asic}: buffermgrd removes "
                    "the lossless BUFFER_PG rows of an admin-down port (Mellanox buffer reclaim) and puts "
                    "them back, with the plan's profile, when the port comes up; SONiC's default on Spectrum "
                    "is the dynamic model",
            fix="none needed; or set buffer_model: dynamic once the switch runs it"))
    return out


#: the facts of a port that :func:`build_context` reads (:func:`render_facts`), but its headroom section
_PORT_FACTS = operator.attrgetter("name", "speed_gbps", "mtu", "cable_m", "lossless", "pfc_priorities",
                                  "ecn_profile")
_HEADROOM, _CABLE = operator.attrgetter("headroom"), operator.attrgetter("cable_m")


def render_facts(plan: Plan, switch: SwitchPlan) -> bytes:
    """Everything of ``plan`` that :func:`render` and :func:`build_context` read for ``switch``, but its name,
    as bytes (the key of :func:`~roce_tune.platforms.templating.render_keyed`: switches with equal facts
    get one CONFIG_DB text, their name filled in).

    The key is complete: it holds the whole classification (maps, lossless sets, schedulers), the switch's
    platform, ``os_version`` (release: reference form, buffer-model metadata), ``buffer_model`` and
    ``asic`` (family: ASIC type, default model), its ``buffers``, ``ecn_profiles`` and ``watchdog`` sections
    with every field, and per port every field the rows use: name, speed (buffermgrd profile name), MTU,
    cable, lossless, PFC priorities, ECN profile name and the whole headroom section (each distinct headroom
    object once, in order of first use, and per port the position of its own in that list: the ~64 ports
    of a switch share a few). Left out: the switch's name (filled in last), rationale maps and the port's
    peer, direction, fan-in, lanes and admin state, which no CONFIG_DB row of this renderer prints. orjson
    tells ``1``, ``1.0``, ``True`` and ``"1"`` apart.
    """
    ports = switch.ports
    heads = list(map(_HEADROOM, ports))
    ids = list(map(id, heads))
    distinct = dict(zip(ids, heads))  # id -> headroom (or None), in order of first use
    position = {key: n for n, key in enumerate(distinct)}
    return orjson.dumps((plan.classification, switch.platform, switch.os_version, switch.buffer_model,
                         switch.asic, switch.buffers, switch.ecn_profiles, switch.watchdog,
                         list(map(_PORT_FACTS, ports)), list(distinct.values()),
                         list(map(position.__getitem__, ids))), default=_section_facts,
                        option=orjson.OPT_NON_STR_KEYS)


#: :func:`_section_facts` per plan model, by ``id``; each entry holds its model, so the id names that model
#: as long as the entry is kept (the sections of one plan are shared by many switches and ports)
_SECTION_FACTS: dict[int, tuple[object, orjson.Fragment]] = {}
_SECTION_FACTS_MAX = 4096


def _section_facts(obj: object) -> orjson.Fragment:
    """A plan model's fields but its rationale map, for :func:`render_facts` (orjson's ``default``): as the
    JSON bytes orjson writes for them, made once per model (a fragment is written as it is).

    Raises:
        TypeError: ``obj`` is not a plan model (orjson reports it).
    """
    kept = _SECTION_FACTS.get(id(obj))
    if kept is not None and kept[0] is obj:
        return kept[1]
    if not isinstance(obj, BaseModel):
        raise TypeError(f"not plan data: {type(obj).__name__}")
    facts = orjson.Fragment(orjson.dumps({k: v for k, v in obj.__dict__.items() if k != "rationale"},
                                         default=_section_facts, option=orjson.OPT_NON_STR_KEYS))
    if len(_SECTION_FACTS) >= _SECTION_FACTS_MAX:
        _SECTION_FACTS.clear()
    _SECTION_FACTS[id(obj)] = (obj, facts)
    return facts


def render(plan: Plan, switch: SwitchPlan) -> dict[str, str]:
    """Render ``switch`` as a SONiC CONFIG_DB fragment: ``{"<name>.json": text}``.

    Raises:
        ValueError: see :func:`build_context` and :func:`config_db_tables`; a buffer model the switch's ASIC
            or release does not have.
    """
    release = sonic_release(switch.os_version)
    model = buffer_model(switch)
    if model not in BUFFER_MODELS.supported(asic_family(switch)):
        raise ValueError(f"{switch.name}: SONiC has no {model} buffer model on {switch.asic} (it runs "
                         f"{' or '.join(BUFFER_MODELS.supported(asic_family(switch)))}: the dynamic model "
                         "needs the vendor's buffer Lua plugins, which only Mellanox/Spectrum ships); set "
                         "buffer_model accordingly")
    if release is not None and release < BUFFER_MODEL_SINCE and model != "traditional":
        raise ValueError(f"{switch.name}: SONiC {release} predates the dynamic buffer model "
                         f"({BUFFER_MODEL_SINCE}); set buffer_model: traditional")
    # the model the plan was made for (on releases that have the choice), so a running switch on the other
    # one shows up in the diff; part of the render key, as it is not in the template context
    metadata_model = model if release is None or release >= BUFFER_MODEL_SINCE else None

    def _render(ctx: dict[str, Any]) -> str:
        return serialise(config_db_tables(ctx, metadata_model))

    text = render_keyed(f"{SPEC.name}/config_db/{metadata_model}", switch.name, render_facts(plan, switch),
                        lambda: build_context(plan, switch), ("switch",), _render)
    return {f"{switch.name}.{SPEC.extension}": text}


# --- LLDP and show version (roce-tune import lldp / lint --lldp) -----------------------------------
from roce_tune.platforms import lldp as _lldp  # noqa: E402  (kept with the LLDP section)

_TABLE_COLS = ("LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr")


def _table_cells(row: str, starts: list[int | None]) -> list[str]:
    """A fixed-width row cut at the header's column offsets (``None``: column absent, empty cell)."""
    cells = []
    for k, st in enumerate(starts):
        if st is None:
            cells.append("")
            continue
        nxt = next((x for x in starts[k + 1:] if x is not None), None)
        cells.append(row[st:nxt].strip() if nxt is not None else row[st:].strip())
    return cells


def parse_lldp_table(text: str) -> list[_lldp.LldpNeighbor]:
    """``show lldp table`` (sonic-utilities ``lldpshow``): a fixed-width table, columns found by the
    header's offsets (Capability may be empty). RemotePortID is a MAC for a host NIC, whose netdev is
    then in RemotePortDescr. Our own parser: ntc-templates has no SONiC template.

    Raises:
        LldpParseError: no header, a row that does not fit the columns, or a ``Total entries displayed``
            that differs from the rows read.
    """
    lines = text.splitlines()
    head = next((i for i, t in enumerate(lines) if t.split()[:3] == list(_TABLE_COLS[:3])), None)
    if head is None:
        raise _lldp.LldpParseError("no 'LocalPort RemoteDevice RemotePortID' header", 0)
    starts = [lines[head].index(c) if c in lines[head] else None for c in _TABLE_COLS]
    out: list[_lldp.LldpNeighbor] = []
    for i in range(head + 1, len(lines)):
        t = lines[i]
        if not t.strip() or set(t.strip()) <= {"-", " "} or t.startswith("Total entries"):
            continue
        cells = _table_cells(t, starts)
        if not cells[0] or not (cells[1] or cells[2]) or " " in cells[0]:
            raise _lldp.LldpParseError(f"row {t.strip()!r} does not fit the table's columns", i)
        name, is_mac = _lldp.remote_port_name(None, cells[2], cells[4])
        # RemoteDevice is blank for a neighbour that sends no system name (lldpshow prints '')
        out.append(_lldp.LldpNeighbor(cells[0], cells[1] or None, name, is_mac, i))
    _lldp.check_total(text, len(out))
    return out


def render_lldp(device: str, ends: list[_lldp.RemoteEnd]) -> str:
    """``show lldp table`` as SONiC prints it for ``ends``."""
    rows = []
    for e in ends:
        pid = _lldp.mac_of(e.remote_system, e.remote_port) if e.remote_is_host else e.remote_port
        rows.append((e.local_port, e.remote_system, pid, "O" if e.remote_is_host else "BR",
                     e.remote_port if e.remote_is_host else f"{device}:{e.local_port}"))
    w = [max([len(c)] + [len(r[k]) for r in rows]) + 2 for k, c in enumerate(_TABLE_COLS)]
    fmt = "".join(f"{{:<{n}}}" for n in w)
    out = ["Capability codes: (R) Router, (B) Bridge, (O) Other", fmt.format(*_TABLE_COLS).rstrip(),
           fmt.format(*("-" * (n - 2) for n in w)).rstrip()]
    out += [fmt.format(*r).rstrip() for r in rows]
    out += ["-" * 50, f"Total entries displayed:  {len(rows)}"]
    return "\n".join(out) + "\n"


def parse_show_version(text: str) -> _lldp.DeviceFacts:
    """``show version``: model from ``HwSKU`` or ``Model Number`` — the catalog model either names
    (``Mellanox-SN4700-O8C48``, ``ACS-MSN4700`` -> SN4700; ``Arista-7060X6-64PE-B-C512S2`` -> 7060X6-64PE),
    else NVIDIA's ``Mellanox-SN…``/``ACS-MSN…`` SKU, else ``Model Number``, else the HwSKU as printed —
    OS release from ``SONiC Software Version: SONiC.<release>``. Our own parser (no ntc template)."""
    kv = {m.group(1).strip(): m.group(2).strip()
          for m in re.finditer(r"^([A-Za-z][\w ]+?):\s*(.*)$", text, re.MULTILINE)}
    sku, number = kv.get("HwSKU", ""), kv.get("Model Number", "")
    number = "" if number.upper() in ("N/A", "NA", "NONE") else number
    m = re.match(r"^(?:Mellanox-|ACS-M?)(SN\d+\w*?)(?:-|$)", sku)
    model = (_lldp.catalog_model(sku) or _lldp.catalog_model(number) or (m.group(1) if m else None) or number
             or sku or None)
    ver = kv.get("SONiC Software Version")
    return _lldp.DeviceFacts(model=model, os_version=ver[6:] if ver and ver.startswith("SONiC.") else ver)


def render_version(device: str, model: str, os_version: str | None) -> str:
    """``show version`` as SONiC prints it (the lines the parser reads, and their neighbours)."""
    mlnx = model.startswith("SN")
    sku = f"Mellanox-{model}-C64" if mlnx else f"{model}-O32"
    platform, asic = (f"mlnx_m{model.lower()}", "mellanox") if mlnx else (model.lower(), "broadcom")
    return (f"\nSONiC Software Version: SONiC.{os_version or '202311.1'}\nSONiC OS Version: 12\n"
            "Distribution: Debian 12.5\nKernel: 6.1.0-11-2-amd64\nBuild commit: 0a1b2c3d\n"
            "Build date: Mon Jan 15 10:00:00 UTC 2024\nBuilt by: builder@build\n\n"
            f"Platform: x86_64-{platform}-r0\nHwSKU: {sku}\nASIC: {asic}\n"
            f"ASIC Count: 1\nSerial Number: SN0000000001\nModel Number: {model}\nHardware Revision: A1\n"
            "Uptime: 10:00:00 up 12 days\n")


LLDP_FORMATS = (
    _lldp.CaptureFormat("show lldp table", r"^show\s+lldp\s+table\b",
                        lambda t: bool(re.search(r"^LocalPort\s+RemoteDevice\s+RemotePortID", t, re.M)),
                        parse_lldp_table, "roce-tune (SONiC lldpshow table)"),
    # lldpshow -d: lldpctl's text output of each lldp container, as it prints it
    _lldp.CaptureFormat("show lldp neighbors", r"^show\s+lldp\s+neighbors?\b", _lldp.LLDPCTL_TEXT.detect,
                        _lldp.parse_lldpctl_text, "roce-tune (lldpd text)"),
    _lldp.LLDPCTL_JSON,
    _lldp.LLDPCTL_KEYVALUE,
    _lldp.LLDPCTL_TEXT,
)
VERSION_FORMATS = (
    _lldp.CaptureFormat("show version", _lldp.SHOW_VERSION + r"\s*$",
                        lambda t: "SONiC Software Version" in t, parse_show_version, "roce-tune"),
)
LLDP_RENDER_COMMAND = "show lldp table"
#: Prompt of a rendered capture (the capture splitter reads it: roce_tune.captures).
CAPTURE_PROMPT = "admin@{device}:~$ "

# --- platform contract (roce_tune/platforms/contract.py): read-back, diff, push, capabilities ----------
import secrets as _secrets  # noqa: E402
import shlex as _shlex  # noqa: E402

from roce_tune.platforms import contract as _c  # noqa: E402
from roce_tune.platforms.checkpoints import CheckpointCommands as _CheckpointCommands  # noqa: E402
from roce_tune.platforms.checkpoints import prune_after_push as _prune_after_push  # noqa: E402

#: the read-back names (_c.READBACK_NAMES) of sonic_readback, imported on first use
__getattr__ = _c.lazy_attributes(__name__, "roce_tune.platforms.sonic_readback", _c.READBACK_NAMES)


def config_db(text: str) -> dict[str, Any]:
    """The CONFIG_DB JSON object in ``show runningconfiguration all`` output.

    Raises:
        ValueError: no JSON object in the output (or it does not parse).
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("no CONFIG_DB JSON in the device output")
    return json.loads(text[start:text.rfind("}") + 1])  # type: ignore[no-any-return]


#: Per-port range tables: key ``<port>|<id>`` or ``<port>|<lo>-<hi>`` (sonic-buffer-pg.yang ``pg_num``
#: ``[0-7]((-)[0-7])?``, sonic-buffer-queue.yang ``qindex`` ``(1[0-5]|[0-9])((-)(1[0-5]|[0-9]))?``).
RANGE_KEY_TABLES = ("BUFFER_PG", "BUFFER_QUEUE")
_RANGE_KEY_RE = re.compile(r"^(?P<port>[^|]+)\|(?P<lo>1[0-5]|[0-9])(?:-(?P<hi>1[0-5]|[0-9]))?$")


def _range_key(key: str) -> tuple[str, set[int]] | None:
    """``Ethernet0|3-4`` -> ("Ethernet0", {3, 4}); None for any other key form."""
    m = _RANGE_KEY_RE.match(key)
    if m is None:
        return None
    lo = int(m["lo"])
    return m["port"], set(range(lo, int(m["hi"] or lo) + 1))


def overlapping_keys(running: dict[str, Any], desired: dict[str, Any],
                     ports: set[str]) -> list[tuple[str, str, str]]:
    """(table, running key, desired key) for every BUFFER_PG / BUFFER_QUEUE row of a managed port whose PG or
    queue range shares an id with a desired row of the same port but is not the same key (the SKU's
    ``Ethernet0|3-4`` beside the plan's ``Ethernet0|3``). Both rows would set PG/queue 3's profile and which
    one wins depends on the order orchagent sees them, so apply removes the running row (rollback restores
    it). Sorted by table and key; a running key overlapping several desired keys is listed once (first of
    them)."""
    out: list[tuple[str, str, str]] = []
    for table in RANGE_KEY_TABLES:
        want = [(k, r) for k in sorted(desired.get(table, {})) if (r := _range_key(k)) is not None]
        for key in sorted(running.get(table, {})):
            have = _range_key(key)
            if have is None or have[0] not in ports or key in desired.get(table, {}):
                continue
            hit = next((k for k, (port, ids) in want if port == have[0] and ids & have[1]), None)
            if hit is not None:
                out.append((table, key, hit))
    return out


#: ``PORT_QOS_MAP`` fields roce-tune owns on every port row it writes, present or not: the SKU's
#: ``qos_config.j2`` sets ``pfc_enable``/``pfcwd_sw_enable`` "3,4" on every active port, and a port the plan
#: makes lossy (or a switch whose watchdog it turns off) has a row without them, so the patch removes them.
PORT_QOS_OWNED_FIELDS = (("PORT_QOS_MAP", ("pfc_enable", "pfcwd_sw_enable")),)

#: Tables keyed by bare port name whose rows of managed ports roce-tune owns: a ``PFC_WD|<port>`` row is the
#: port's watchdog (sonic-utilities ``pfcwd/main.py``: ``start`` writes it, ``stop`` deletes it), so a managed
#: port the plan gives no watchdog (watchdog off, or a lossy port) loses the row the SKU or an operator left.
PORT_KEYED_TABLES = ("PFC_WD",)

#: diff data: a JSON Patch restricted to the tables/keys roce-tune renders; removing a PG row of a live port
#: (an overlapping range the plan replaces) swaps its headroom profile like a replace does
DIFF = _c.DiffRules(
    kind="json", stale=(("WRED_PROFILE", rf"^{_c.OWN_NAME_RE}$"),),
    disruptive=((r"^/BUFFER_POOL", "a buffer pool resize moves every port's shared buffer"),
                (r"^(replace|remove) /BUFFER_PG/", "a headroom profile swap on a live port"),
                (r"^add /PORT_QOS_MAP/[^/]+/pfc_enable", _c.PFC_ON)),
    parse_running=config_db,
    overlaps=overlapping_keys,
    owned_fields=PORT_QOS_OWNED_FIELDS,
    port_rows=PORT_KEYED_TABLES,
)


#: the command that prints the running CONFIG_DB (the diff's read, the rollback's reads)
READ_RUNNING = "show runningconfiguration all"

#: CONFIG_DB tables in the order apply writes them, one ``sonic-cfggen --write-to-db`` per group: pools and
#: profiles before the PG/queue rows that name them, WRED profiles, maps and schedulers before the QUEUE rows
#: and port bindings that name them, PORT last (buffermgrd recomputes a port's headroom when its speed, MTU
#: or cable length changes, and reads the PGs and profiles then). The empty group is any other table.
WRITE_GROUPS: tuple[tuple[str, ...], ...] = (
    ("CABLE_LENGTH", "BUFFER_POOL", "BUFFER_PROFILE"),
    ("BUFFER_PG", "BUFFER_QUEUE"),
    ("WRED_PROFILE", "DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
     "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "SCHEDULER"),
    ("QUEUE",),
    ("PORT_QOS_MAP",),
    ("PFC_WD",),
    (),
    ("PORT",),
)
#: groups of rows other rows name (pools, profiles, maps, schedulers): deleted only after every write, in
#: reverse order, so that no row names a deleted one in between; rows of the other groups are deleted
#: before their group's write (an overlapping PG range goes before the PG row that replaces it)
DEFINITION_GROUPS = frozenset({0, 2})

#: a CONFIG_DB row as ``show runningconfiguration all`` prints it (None: the key does not exist)
DbRow = dict[str, Any] | None
#: (table, key) -> row, for the keys a change touches
DbRows = dict[tuple[str, str], DbRow]
#: one CONFIG_DB write: ("write", {table: {key: fields}}), ("del", "TABLE|key") or ("hdel", "TABLE|key",
#: [field, …])
DbStep = tuple[Any, ...]


def _group(table: str) -> int:
    """Index of ``table``'s group in :data:`WRITE_GROUPS` (unlisted tables: the empty group)."""
    return next((i for i, g in enumerate(WRITE_GROUPS) if table in g), WRITE_GROUPS.index(()))


def touched_rows(running: dict[str, Any], patch: list[dict[str, Any]]) -> tuple[DbRows, DbRows]:
    """(before, after) of every CONFIG_DB key the JSON ``patch`` (the diff's, computed from ``running``)
    touches: its whole row in ``running`` (None: absent) and after the patch (None: removed). ``before`` is
    the snapshot a rollback restores.

    Raises:
        ValueError: the patch does not apply to ``running`` (it was computed from another configuration).
    """
    import jsonpatch  # only a push needs it (lint, explain and plan load this module too)

    keys: set[tuple[str, str]] = set()
    for op in patch:
        parts = jsonpatch.JsonPointer(str(op["path"])).parts
        if len(parts) == 1:  # a whole table: every key in it, before and after
            value = op.get("value")
            keys |= {(parts[0], k) for k in [*running.get(parts[0], {}), *(value if isinstance(value, dict)
                                                                           else {})]}
        elif parts:
            keys.add((parts[0], parts[1]))
    tables = {t for t, _ in keys}
    try:
        after_db = jsonpatch.apply_patch({t: running[t] for t in tables if t in running}, patch)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as exc:
        raise ValueError(f"the change does not apply to the CONFIG_DB read ({exc})") from None
    before = {(t, k): copy.deepcopy(running.get(t, {}).get(k)) for t, k in sorted(keys)}
    return before, {(t, k): after_db.get(t, {}).get(k) for t, k in sorted(keys)}


def db_steps(current: DbRows, target: DbRows) -> list[DbStep]:
    """The CONFIG_DB writes that take the ``current`` rows to ``target`` (a push: the running rows to the
    patched ones; a rollback: the rows now to the snapshot), in :data:`WRITE_GROUPS` order. Per group: the
    keys to delete (not of :data:`DEFINITION_GROUPS`), one ``sonic-cfggen`` write of the fields to set (a new
    key whole, an existing one only its changed fields: ``--write-to-db`` merges), then the fields to remove;
    last, the keys to delete of the definition groups, in reverse group order. A key a step creates with no
    field is written as ``NULL: NULL`` (an empty row would make ``mod_config`` delete it)."""
    dels: list[list[str]] = [[] for _ in WRITE_GROUPS]
    hdels: list[list[DbStep]] = [[] for _ in WRITE_GROUPS]
    writes: list[dict[str, dict[str, Any]]] = [{} for _ in WRITE_GROUPS]
    for (table, key), want in sorted(target.items()):
        have, g, name = current.get((table, key)), _group(table), f"{table}|{key}"
        if want is None:
            dels[g] += [name] if have is not None else []
            continue
        fields, gone = _row_change(have, want)
        if fields:
            writes[g].setdefault(table, {})[key] = fields
        hdels[g] += [("hdel", name, gone)] if gone else []
    steps: list[DbStep] = []
    for g in range(len(WRITE_GROUPS)):
        steps += [("del", k) for k in ([] if g in DEFINITION_GROUPS else dels[g])]
        steps += [("write", writes[g])] if writes[g] else []
        steps += hdels[g]
    for g in sorted(DEFINITION_GROUPS, reverse=True):
        steps += [("del", k) for k in dels[g]]
    return steps


def _row_change(have: DbRow, want: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(fields to set, fields to remove) that take row ``have`` (None: absent) to ``want``."""
    fields = {f: v for f, v in want.items() if have is None or have.get(f) != v}
    if have is None and not fields:
        fields = {"NULL": "NULL"}
    return fields, sorted(set(have or {}) - set(want))


def _exit_status(out: str) -> str | None:
    """The exit status a ``…; echo ROCE_TUNE_RC=$?`` printed (the last match: the output's, not the echoed
    command's), None when none was printed."""
    status = re.findall(r"ROCE_TUNE_RC=(\d+)", out)
    return status[-1] if status else None


def _run_checked(s: _c.PushSession, command: str, stage: str) -> str:
    """Run ``command`` with its exit status echoed; PushError(``stage``) with the device's last line when it
    is not 0 (a Python traceback ends with the exception, sonic-db-cli prints redis's error)."""
    out = s.cmd(f"{command}; echo ROCE_TUNE_RC=$?", stage)
    status = _exit_status(out)
    if status != "0":
        said = [ln.strip() for ln in out.splitlines()
                if ln.strip() and "ROCE_TUNE_RC" not in ln and not ln.rstrip().endswith(command)]
        s.fail(stage, f"`{command}` failed (exit status {status or 'not printed'}): "
                      f"{said[-1] if said else 'no output'}")
    return out


def shell_steps(steps: list[DbStep], base: str, what: str) -> list[tuple[str, str | None, str | None]]:
    """(shell command, file to upload first or None, its JSON text or None) of each CONFIG_DB step, in order:
    a write step's file is ``<base>.<what><i>.json`` (``base`` should end in an unpredictable part, e.g.
    ``/tmp/<tag>-<random hex>``), run with ``sonic-cfggen -j FILE --write-to-db``; ``del``/``hdel`` steps are
    ``sonic-db-cli CONFIG_DB DEL/HDEL``. Shared by apply and the Ansible filter plugin."""
    out: list[tuple[str, str | None, str | None]] = []
    for i, step in enumerate(steps):
        if step[0] == "write":
            path = f"{base}.{what}{i}.json"
            out.append((f"sudo sonic-cfggen -j {_shlex.quote(path)} --write-to-db", path,
                        json.dumps(step[1], indent=1, sort_keys=True)))
        elif step[0] == "del":
            out.append((f"sudo sonic-db-cli CONFIG_DB DEL {_shlex.quote(step[1])}", None, None))
        else:
            out.append((f"sudo sonic-db-cli CONFIG_DB HDEL {_shlex.quote(step[1])} "
                        + " ".join(_shlex.quote(f) for f in step[2]), None, None))
    return out


def snapshot_rows(snapshot: list[list[Any]] | None) -> DbRows:
    """``progress["snapshot"]`` (``[[table, key, row], …]``, JSON-safe) as :data:`DbRows`."""
    return {(t, k): row for t, k, row in snapshot or []}


def snapshot_differences(db: dict[str, Any], snapshot: DbRows) -> list[str]:
    """``TABLE|key`` of every snapshot row the CONFIG_DB ``db`` does not hold exactly (None: absent)."""
    return [f"{t}|{k}" for (t, k), row in snapshot.items() if db.get(t, {}).get(k) != row]


def _shell_commands(s: _c.PushSession, steps: list[DbStep], progress: dict[str, Any], what: str) -> list[str]:
    """Upload each write step's JSON file (an unpredictable name in /tmp, recorded in ``progress
    ["push_files"]`` for cleanup) and return the shell commands of ``steps`` in order."""
    out = []
    for command, path, text in shell_steps(steps, f"/tmp/{progress.get('tag', s.opts.tag)}-"
                                                  f"{_secrets.token_hex(6)}", what):
        if path is not None and text is not None:
            progress.setdefault("push_files", []).append(path)
            s.upload(path, text)
        out.append(command)
    return out


def _push(s: _c.PushSession, _commands: list[str], patch: list[dict[str, object]], desired: str,
          ports: set[str]) -> None:
    """``config checkpoint`` (the operator's manual rollback point) and roce-tune's own snapshot of every key
    the change touches (``progress["snapshot"]``, from the running CONFIG_DB the diff read), then the change
    as CONFIG_DB writes (:func:`db_steps`: ``sonic-cfggen -j FILE --write-to-db``, ``sonic-db-cli CONFIG_DB
    DEL/HDEL``), each exit status checked, then read back (SONiC has no commit-confirm).

    Not ``config apply-patch``: GCU runs ``rdma_config_update_validator`` on every op of BUFFER_POOL,
    BUFFER_PROFILE, WRED_PROFILE, PFC_WD … (sonic-utilities ``generic_config_updater/gu_common.py``
    ``validate_field_operation``, ``gcu_field_operation_validators.conf.json``) and refuses roce-tune's new
    profiles and pool sizes; ``sonic-cfggen --write-to-db`` writes CONFIG_DB directly (sonic-buildimage
    ``src/sonic-config-engine/sonic-cfggen``: ``ConfigDBPipeConnector.mod_config``)."""
    try:
        before, after = touched_rows(config_db(s.running or s.cmd(READ_RUNNING)), patch)
    except ValueError as exc:
        s.fail("commit", f"{exc}; nothing was changed")
    steps = db_steps(before, after)
    checkpoint = f"sudo config checkpoint {s.opts.tag}"
    s.check(s.cmd(checkpoint, "checkpoint"), "checkpoint", [checkpoint])
    s.progress["checkpoint"] = True
    s.progress["rollback_point"] = (f"checkpoint {s.opts.tag} (to return to it: "
                                    f"`sudo config rollback {s.opts.tag}`)")
    s.progress["snapshot"] = [[t, k, row] for (t, k), row in before.items()]
    commands = _shell_commands(s, steps, s.progress, "write")
    s.progress[_c.CHANGE_SENT] = True  # the checkpoint, the snapshot and the uploaded files change nothing
    for command in commands:
        _run_checked(s, command, "commit")
    s.verify(desired, ports)


def _manual_rollback(tag: str) -> str:
    """The operator's ways back when roce-tune's restore did not complete."""
    return (f"the checkpoint {tag} holds CONFIG_DB as it was before the push: `sudo config rollback {tag}` "
            "(GCU's field-operation validators may refuse it on this switch, as they refuse apply-patch), or "
            "`sudo config load -y` (re-writes the saved /etc/sonic/config_db.json, which this push did not "
            "save over; keys roce-tune added stay) or `sudo config reload -y` (restarts the switch's "
            "services)")


def _restore(s: _c.PushSession, progress: dict[str, Any]) -> None:
    """Write back roce-tune's snapshot (``progress["snapshot"]``) with the push's mechanism, computed from
    the CONFIG_DB read now (so a partial push or an earlier partial restore is finished), then read back:
    PushError("rollback") unless every snapshot key is as it was."""
    snapshot = snapshot_rows(progress.get("snapshot"))
    now = config_db(s.cmd(READ_RUNNING, "rollback"))
    current = {(t, k): now.get(t, {}).get(k) for t, k in snapshot}
    for command in _shell_commands(s, db_steps(current, snapshot), progress, "restore"):
        _run_checked(s, command, "rollback")
    back = config_db(s.cmd(READ_RUNNING, "rollback"))
    differ = snapshot_differences(back, snapshot)
    if differ:
        s.fail("rollback", f"{len(differ)} key(s) differ from roce-tune's snapshot after the restore: "
                           + ", ".join(differ[:5]))
    progress["rollback_outcome"] = (f"rolled back: the {len(snapshot)} CONFIG_DB key(s) the push touched "
                                    "were restored from roce-tune's snapshot and read back")


def _rollback(s: _c.PushSession, progress: dict[str, Any]) -> None:
    """Once a change was sent: restore roce-tune's snapshot (:func:`_restore`; no GCU, which may refuse
    ``config rollback`` as it refuses apply-patch); before it nothing changed and there is nothing to roll
    back. A restore that fails says so and names the manual ways back (the uploaded files stay listed in
    ``progress`` for the next attempt). Then the uploaded files are removed (a failed removal is a
    warning)."""
    if progress.get("checkpoint") and progress.get(_c.CHANGE_SENT) and progress.get("snapshot"):
        try:
            _restore(s, progress)
        except Exception as exc:  # noqa: BLE001 — reported with the manual ways back, then retried
            s.fail("rollback", f"restoring roce-tune's snapshot did not complete ({exc}); "
                               f"{_manual_rollback(str(progress.get('tag', s.opts.tag)))}")
    _remove_patch_file(s, progress)


def _remove_patch_file(s: _c.PushSession, progress: dict[str, Any]) -> None:
    """``rm -f`` the files the push and its rollback uploaded (``progress["push_files"]``); a failure is a
    warning naming the device and the command (the files hold no secret: only roce-tune's QoS tables)."""
    paths = progress.pop("push_files", None)
    if not paths:
        return
    command = "rm -f " + " ".join(_shlex.quote(p) for p in paths)
    try:
        out = s.cmd(f"{command}; echo ROCE_TUNE_RC=$?", "cleanup", boundary=False)
        failed = None if _exit_status(out) == "0" else (out.strip().splitlines() or ["no exit status"])[0]
    except Exception as exc:  # noqa: BLE001 — housekeeping: reported as a warning, never a push failure
        failed = f"{type(exc).__name__}: {exc}"
    if failed is not None:
        s.warn(f"{s.device or 'the switch'}: `{command}` failed ({failed}); remove it by hand")


#: ``sudo config list-checkpoints`` prints the names as a JSON list (sonic-utilities ``config/main.py``
#: ``list_checkpoints``: ``json.dumps(checkpoints, indent=4)``)
_LIST_CHECKPOINTS = "sudo config list-checkpoints"


def checkpoint_names(output: str) -> list[str]:
    """The checkpoint names in ``sudo config list-checkpoints`` output (a JSON list of names).

    Raises:
        ValueError: no JSON list of strings in the output.
    """
    start, end = output.find("["), output.rfind("]")
    try:
        names = json.loads(output[start:end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"`{_LIST_CHECKPOINTS}` printed no JSON list of names: {output.strip()[:120]!r}")
    return names


#: how retention lists and deletes SONiC checkpoints (roce_tune.platforms.checkpoints); GCU sets no limit
CHECKPOINTS = _CheckpointCommands(list_command=_LIST_CHECKPOINTS, parse=checkpoint_names,
                                  delete_command="sudo config delete-checkpoint {name}")


def _cleanup(s: _c.PushSession, progress: dict[str, object]) -> None:
    """After a push that succeeded: remove the uploaded patch file, then delete roce-tune's own checkpoints
    older than the newest ``keep_checkpoints`` (the one just taken always stays); a refused
    ``config delete-checkpoint`` is a warning."""
    _remove_patch_file(s, progress)
    _prune_after_push(s, CHECKPOINTS, progress)


def _left_as_is(progress: dict[str, object], tag: str, _confirm_s: int) -> str | None:
    if progress.get("checkpoint") and progress.get(_c.CHANGE_SENT):
        return ("some of the CONFIG_DB writes may be applied (SONiC has no commit-confirm); "
                + _manual_rollback(tag))
    return None


#: the read-only probe for the Generic Config Updater commands apply needs (``config checkpoint`` first)
GCU_PROBE = "sudo config checkpoint --help"


def probe_gcu(run: Callable[[str], str]) -> str | None:
    """Why apply cannot push to this switch (or None): its image has no ``config checkpoint`` (nor
    ``rollback``, ``list-checkpoints``, ``delete-checkpoint``), the Generic Config Updater commands every push
    needs for its rollback point and retention. They came after the 202012 branch (GCU design:
    sonic-net/SONiC PR #736, March 2021; sonic-net/sonic-utilities ``config/main.py``); on an image without
    them click answers ``Error: No such command "checkpoint".`` with exit status 2. ``run`` runs one
    read-only command and returns its output (:data:`GCU_PROBE` with its exit status echoed: ``--help``
    only prints the usage)."""
    out = run(f"{GCU_PROBE}; echo ROCE_TUNE_RC=$?")
    status = _exit_status(out)
    if status == "0":
        return None
    said = [ln.strip() for ln in out.splitlines()
            if ln.strip() and "ROCE_TUNE_RC" not in ln and GCU_PROBE not in ln]
    return (f"`{GCU_PROBE}` failed (exit status {status or 'not printed'}: "
            f"{said[-1] if said else 'no output'}): this SONiC image has no `config checkpoint`/`config "
            "rollback` (Generic Config Updater, added after the 202012 release), which every push needs for "
            "its rollback point, so nothing was changed; upgrade to an image that has `config checkpoint`, "
            "or apply the rendered CONFIG_DB by hand")


#: the read-only probe for how many ASICs the switch has: sonic-utilities show/platform.py prints ``ASIC
#: Count: N`` from sonic_py_common.multi_asic.get_num_asics() (asic.conf NUM_ASIC of the platform's device
#: directory, 1 without one), the count every sonic-utilities command asks (``is_multi_asic``: above 1)
ASIC_COUNT_PROBE = "show platform summary"
_ASIC_COUNT_RE = re.compile(r"^\s*ASIC Count:[ \t]*(\S*)\s*$", re.MULTILINE)
#: what a multi-ASIC refusal tells the operator to do instead
_MULTI_ASIC_TODO = (
    "its front-panel ports' CONFIG_DB rows live in the ASIC namespaces, and roce-tune's push reads and "
    "writes only the host's CONFIG_DB (`sonic-cfggen -d`, `sonic-db-cli CONFIG_DB`, `config checkpoint` "
    "without `-n`), where no ASIC's daemons read them, so nothing was changed; roce-tune does not push to "
    "multi-ASIC SONiC: write the rendered file's rows of each port into its ASIC's namespace by hand (`sudo "
    "sonic-cfggen -n asicN -j FILE --write-to-db`, then `sudo config save -y`) and check the result with "
    "`roce-tune audit` on a `show runningconfiguration all` capture")


def asic_namespaces(db: dict[str, Any]) -> list[str]:
    """The ASIC namespaces (``["asic0", "asic1", ...]``, in ASIC order) of a multi-ASIC CONFIG_DB dump, whose
    top-level keys are the namespaces (``localhost`` the host's, ``asicN`` one per ASIC: ``show
    runningconfiguration all`` on a multi-ASIC image, sonic-utilities show/main.py); ``[]`` for one
    CONFIG_DB (whose top-level keys are tables)."""
    names = [k for k in db if re.fullmatch(r"asic\d+", k) and isinstance(db[k], dict)]
    if not names or not all(k == "localhost" or k in names for k in db):
        return []
    return sorted(names, key=lambda n: int(n[4:]))


def multi_asic_refusal(asic_count: int, seen: str) -> str:
    """Why apply refuses a multi-ASIC switch of ``asic_count`` ASICs (``seen``: how it was found), with what
    to do instead."""
    return f"a multi-ASIC SONiC switch with {asic_count} ASICs ({seen}): {_MULTI_ASIC_TODO}"


def probe_asic_count(run: Callable[[str], str]) -> str | None:
    """Why apply cannot push to this switch because of its ASICs (or None for a single-ASIC switch): ``show
    platform summary`` (:data:`ASIC_COUNT_PROBE`, run by ``run``) says ``ASIC Count:`` above 1, or prints
    no readable count (never taken for 1: a multi-ASIC switch whose ``show runningconfiguration all``
    prints only the host's CONFIG_DB looks like a single-ASIC one)."""
    out = run(ASIC_COUNT_PROBE)
    found = _ASIC_COUNT_RE.search(out)
    if found is not None and found.group(1).isdigit() and int(found.group(1)) <= 1:
        return None
    if found is not None and found.group(1).isdigit():
        count = int(found.group(1))
        return multi_asic_refusal(count, f"`{ASIC_COUNT_PROBE}`: ASIC Count: {count}")
    said = [ln.strip() for ln in out.splitlines() if ln.strip() and ASIC_COUNT_PROBE not in ln]
    what = (f"`ASIC Count: {found.group(1)}`" if found is not None
            else f"no `ASIC Count:` line ({said[-1] if said else 'no output'})")
    return (f"could not read how many ASICs this switch has (`{ASIC_COUNT_PROBE}` printed {what}), so "
            "nothing was changed: on a multi-ASIC switch roce-tune's push would write only the host's "
            "CONFIG_DB, not the ASIC namespaces that hold the ports; check `show platform summary` on the "
            "switch (ASIC Count comes from NUM_ASIC in the platform's asic.conf) and apply the rendered "
            "CONFIG_DB by hand if it has more than one ASIC")


def probe(run: Callable[[str], str]) -> str | None:
    """Why apply cannot push to this switch (or None): :func:`probe_asic_count`, then :func:`probe_gcu`.
    Both commands always run (the Ansible playbooks list them before running them); a multi-ASIC refusal
    comes first."""
    asics = probe_asic_count(run)
    gcu = probe_gcu(run)
    return asics or gcu


PUSH = _c.PushMethod(
    netmiko_device_type="linux", read_running="show runningconfiguration all",
    error_pattern=r"(?i)(^|\n)\s*(error|failed)",
    push=_push, rollback=_rollback, left_as_is=_left_as_is, cleanup=_cleanup, checkpoints=CHECKPOINTS,
    save=("sudo config save -y; echo ROCE_TUNE_RC=$?", r"ROCE_TUNE_RC=0\b"),
    desired_file="{name}.json", enable_secret=True, linux_shell=True,
    preflight=lambda r, d, speeds: preflight(r, d, speeds),
    probe=lambda run: probe(run),
)

#: Broadcom ASICs with the LTSW SAI the PFC-watchdog restore-loop report names (TH5/TH6 in its title)
_TH_LTSW = ("tomahawk-5", "tomahawk-6")

KNOWN_DEFECTS = (
    _c.KnownDefect(
        rule="RT251", asics=_TH_LTSW, needs_watchdog=True,
        title="the software PFC watchdog flaps between stormed and restored while a storm continues when "
              "every PFC-enabled priority of a port storms at once (PFC counting stops while PFC is off, and "
              "the restore check reads that counter)",
        fix="expect repeated storm/restore events in `show pfcwd stats` during an all-priority storm; a "
            "single-priority storm behaves correctly; check the issue for a fixed release before relying on "
            "the watchdog to hold a stormed port",
        source="https://github.com/sonic-net/sonic-buildimage/issues/29203"),
    _c.KnownDefect(
        rule="RT252", asics=("spectrum-1", "spectrum-2", "spectrum-3", "spectrum-4", "spectrum-5"),
        severity=Severity.info,
        title="pfcstat / `show pfc counters` can read 0 received PFC frames while the ASIC SDK counters show "
              "the pauses (reported as a regression after 201911)",
        fix="do not read a zero PFC Rx counter as 'no pauses' on this switch; cross-check with the SDK "
            "counters or the peer's PFC Tx counters",
        source="https://github.com/sonic-net/sonic-buildimage/issues/5540"),
)

CAPABILITIES = _c.Capabilities(
    knobs=("pfc", "watchdog", "ecn", "scheduler", "dscp_map", "headroom", "mtu", "buffer_pool"),
    known_defects=KNOWN_DEFECTS,
    watchdog_note="PFC_WD|<port> detection_time/restoration_time/action, PFC_WD|GLOBAL POLL_INTERVAL",
    buffer_models=BUFFER_MODELS,
)

def runbook(rendered: list[tuple[str, str]]) -> list[str]:
    """plan.md lines for SONiC switches, from (switch name, rendered CONFIG_DB JSON): what a QoS reload or
    ``config load_minigraph`` deletes of what roce-tune wrote (empty when no SONiC switch was rendered)."""
    groups: dict[tuple[tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for name, text in rendered:
        wiped, kept = reload_warning(text)
        groups.setdefault((tuple(wiped), tuple(kept)), []).append(name)
    if not groups:
        return []
    lines = ["", "## Runbook: SONiC", ""]
    for (wiped_t, kept_t), names in sorted(groups.items()):
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        lines.append(f"- **{shown}**: `config qos reload` and `config load_minigraph` delete {len(wiped_t)} "
                     f"of the {len(wiped_t) + len(kept_t)} tables roce-tune writes ({', '.join(wiped_t)}) "
                     "and re-render the SKU defaults (sonic-utilities `config/main.py` `_clear_qos`); only "
                     f"{', '.join(kept_t) or 'none'} survive. Do not run either after `roce-tune apply`; if "
                     "one was run, apply again and verify.")
    return lines + _buffer_model_runbook(rendered)


def _shown(names: list[str]) -> str:
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _buffer_model_runbook(rendered: list[tuple[str, str]]) -> list[str]:
    """plan.md lines on the buffer model of each rendered switch: what the switch computes, what the plan
    sets, and what only a reload changes (docs/derivation.md#sonic-buffer-models)."""
    by_model: dict[str, list[str]] = {}
    profiles: dict[str, set[str]] = {}
    for name, text in rendered:
        _, model, buffermgrd_names = _runbook_facts(text)
        by_model.setdefault(model, []).append(name)
        profiles.setdefault(model, set()).update(buffermgrd_names)
    lines = []
    if "traditional" in by_model:
        lines.append(
            f"- **{_shown(by_model['traditional'])}**: traditional buffer model (`DEVICE_METADATA|localhost."
            "buffer_model`). The switch computes nothing: buffermgrd rewrites each lossless `BUFFER_PG` to "
            "`pg_lossless_<speed>_<cable>_profile` whenever a port's speed, MTU, admin state or `pfc_enable` "
            "changes and at boot, and reuses a `BUFFER_PROFILE` of that name when one exists. The plan "
            "writes its headroom under exactly those names "
            f"({', '.join(sorted(profiles['traditional'])) or 'none'}), so a rewrite keeps the plan's "
            "xon/xoff/size; every port at that speed and cable length, managed or not, uses them. A speed "
            "and cable length missing from the SKU's `pg_profile_lookup.ini` only makes buffermgrd log `No "
            "PG profile configured` at each trigger. A speed or `CABLE_LENGTH` changed outside roce-tune "
            "re-points the port's PGs to another profile: plan and apply again.")
    if "dynamic" in by_model:
        lines.append(
            f"- **{_shown(by_model['dynamic'])}**: dynamic buffer model. buffermgrdyn computes a lossless "
            "PG's headroom from speed, cable length and MTU only when its `BUFFER_PG` profile is `NULL`, a "
            "pool's size only when the pool has no `size`, and the shared headroom pool only when "
            "`ingress_lossless_pool` has no `xoff`. The plan sets all three for the ports it manages "
            "(headroom-override profiles with the plan's xon/xoff/size, pool sizes, the pool's xoff); the "
            "switch still computes the headroom of lossless PGs on ports roce-tune does not manage and "
            "checks each port's headroom against its maximum.")
    lines.append(
        "- The buffer model and each pool's `mode` and `type` are read only when the buffer daemons start "
        "(buffermgrd.sh picks the daemon from `buffer_model`; bufferorch creates a pool with its mode and "
        "type and ignores later changes to them): `roce-tune apply` refuses a switch whose running values "
        "differ from the plan's. To change them, edit `/etc/sonic/config_db.json` (after `config save`) and "
        "run `config reload` or reboot, or set `buffer_model` in the inventory to what the switch runs and "
        "plan again.")
    return lines


#: A name buffermgrd gives a lossless PG profile; group 1 = PORT speed (Mb/s), group 2 = CABLE_LENGTH.
BUFFERMGRD_NAME_RE = re.compile(r"^pg_lossless_(\d+)_(\d+m)_profile$")


def _meta_model(db: dict[str, Any]) -> str | None:
    return ((db.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("buffer_model")


def _pool_problems(run: dict[str, Any], want: dict[str, Any]) -> list[str]:
    out = []
    for pool, row in sorted((want.get("BUFFER_POOL") or {}).items()):
        have = (run.get("BUFFER_POOL") or {}).get(pool) or {}
        out += [f"BUFFER_POOL|{pool} {f} is {have[f]} on the switch, {row[f]} in the plan; bufferorch sets a "
                "pool's mode and type only when it creates the pool: config save, edit config_db.json, "
                "config reload (or reboot), then apply"
                for f in ("mode", "type") if have.get(f) and row.get(f) and have[f] != row[f]]
    return out


#: A lossless headroom profile name that carries the PORT speed it was computed for (Mb/s, group 1):
#: buffermgrd's (:data:`BUFFERMGRD_NAME_RE`) and the tuner's, which adds suffixes for the inputs SONiC's
#: name leaves out (``pg_lossless_400000_3m_shp_profile``, ``…_2p5m_mtu4200_8lane_profile``).
HEADROOM_SPEED_NAME_RE = re.compile(r"^pg_lossless_(\d+)_(\d+(?:p\d+)?m)(?:_[a-z0-9]+)*_profile$")
#: why a port speed other than the planned one is refused, per buffer model
_SPEED_CONSEQUENCE = {
    "traditional": "buffermgrd would point its lossless PGs at another profile",
    "dynamic": "the plan's headroom override is for that speed and buffermgrdyn does not recompute an "
               "override's xoff, so a faster port overruns it",
}


def _planned_speeds(want: dict[str, Any], port_speeds_mbps: Mapping[str, int] | None) -> dict[str, str]:
    """Port -> the speed (Mb/s) its lossless PGs' headroom was planned for, for each port whose desired
    ``BUFFER_PG`` names a headroom profile (one with ``xoff`` in the desired ``BUFFER_PROFILE``, or a name
    :data:`HEADROOM_SPEED_NAME_RE` matches): the plan's port speed when the caller knows it (apply), else
    the speed the profile's name carries (the playbooks, which have only the files; a name the inventory
    chose, e.g. ``ROCE_HDRM_400G_2M``, carries none). A port neither gives is not judged."""
    profiles = want.get("BUFFER_PROFILE") or {}
    out: dict[str, str] = {}
    for key, row in sorted((want.get("BUFFER_PG") or {}).items()):
        port, name = key.split("|")[0], str(row.get("profile", "")).strip("[]").split("|")[-1]
        m = HEADROOM_SPEED_NAME_RE.match(name)
        planned = (port_speeds_mbps or {}).get(port)
        if planned is not None and (m or "xoff" in (profiles.get(name) or {})):
            out.setdefault(port, str(planned))
        elif m:
            out.setdefault(port, m.group(1))
    return out


def _speed_problems(run: dict[str, Any], want: dict[str, Any], model: str,
                    port_speeds_mbps: Mapping[str, int] | None = None) -> list[str]:
    """A lossless PG's planned speed (:func:`_planned_speeds`) against the switch's ``PORT|<port>.speed``;
    one line per port. Ports without a speed on the switch are not judged."""
    out = []
    for port, planned in _planned_speeds(want, port_speeds_mbps).items():
        speed = ((run.get("PORT") or {}).get(port) or {}).get("speed")
        if speed is not None and str(speed) != planned:
            out.append(f"{port} runs at {speed} Mb/s but the plan's headroom is for {planned} Mb/s "
                       f"({_SPEED_CONSEQUENCE.get(model, _SPEED_CONSEQUENCE['dynamic'])}): fix the port "
                       "speed in the inventory (or on the switch) and plan again")
    return out


def preflight(running: str, desired: str, port_speeds_mbps: Mapping[str, int] | None = None) -> str | None:
    """Why apply must not touch this switch (or None): a multi-ASIC switch (``running`` is one CONFIG_DB per
    namespace, :func:`asic_namespaces`; nothing else is judged then), the running buffer model (missing =
    traditional, as buffermgrd.sh reads it) or a running pool's ``mode``/``type`` differs from the desired
    file's (both take effect only at daemon start / pool creation), or a port runs another speed than the
    one its lossless PGs' headroom profile was computed for (traditional model: buffermgrd would swap the
    profile; dynamic model: buffermgrdyn leaves a headroom override as it is, so the xoff stays the planned
    speed's). The planned speed is ``port_speeds_mbps`` (the plan's, port -> Mb/s) where given, else the one
    the profile's name carries.

    Raises:
        ValueError: running or desired text holds no CONFIG_DB JSON.
    """
    run, want = config_db(running), json.loads(desired)
    namespaces = asic_namespaces(run)
    if namespaces:  # the other checks would read the host's namespace as the switch's CONFIG_DB
        seen = f"`{PUSH.read_running}` prints the namespaces {', '.join(namespaces)}"
        return multi_asic_refusal(len(namespaces), seen)
    problems = []
    want_model, have_model = _meta_model(want), _meta_model(run) or "traditional"
    if want_model is not None and want_model != have_model:
        problems.append(f"the switch runs the {have_model} buffer model "
                        f"(DEVICE_METADATA|localhost.buffer_model) but the plan is for the {want_model} "
                        f"model; set buffer_model: {have_model} in the inventory and plan again, or change "
                        "the switch's model (config save, edit config_db.json, config reload)")
    problems += _pool_problems(run, want)
    problems += _speed_problems(run, want, want_model or have_model, port_speeds_mbps)
    return "; ".join(dict.fromkeys(problems)) or None


# ---------------------------------------------------------------------------------------- INVENTORY
# port names that tell the platform (import) and the vendors whose hardware it runs on (lint RT125)
#: SONiC runs on any catalogued vendor's hardware
#: mgmt_port: ``show lldp table`` lists the management port eth0 (sonic-utilities scripts/lldpshow)
INVENTORY = _c.InventoryFacts(
    port_name_hint=r"^Ethernet\d+$",
    vendors=None,
    mgmt_port=r"eth\d+",
    # multi-ASIC boxes and chassis linecards: backplane ports between the ASICs, the inband port, the
    # recirculation ports (sonic-utilities scripts/lldpshow BACKEND_ASIC_INTERFACE_NAME_PREFIX; lldpctl in
    # an ASIC's lldp container lists them)
    internal_port=r"Ethernet-(?:BP|IB|Rec)\d+",
    # front-panel ports are the CONFIG_DB PORT keys EthernetN (breakouts too: each lane group gets its own
    # N, sonic-buildimage device/*/hwsku.json, platform.json); subports are Ethernet0.10 or Eth0.10
    # (sonic-buildimage sub-port interface HLD, issue sonic-net/sonic-buildimage#10802)
    physical_port=r"Ethernet\d+",
    physical_port_examples=("Ethernet0", "Ethernet248"),
)

# ---------------------------------------------------------------------------------------- ANSIBLE
# how the Ansible playbooks reach the platform's devices (roce_tune.ansible_inventory)
#: ``config apply-patch`` is driven as a command with ``raw`` (no SONiC collection in the ``ansible`` package)
ANSIBLE = _c.AnsibleConnection(group_vars={"ansible_connection": _c.PLAIN_SSH})

# ---------------------------------------------------------------------------------------- COUNTERS
# which show commands give the switch counters verify reads, and their parsers: sonic_counters.py
from roce_tune.platforms.sonic_counters import COUNTERS  # noqa: E402

PLATFORM = _c.PlatformImpl(
    name=SPEC.name, spec=SPEC, render=render, check=build_context, runbook=runbook,
    render_findings=render_findings,
    read_back=_c.module_read_back(__name__, SPEC.name), diff=DIFF, push=PUSH, capabilities=CAPABILITIES,
    counters=COUNTERS,
    ansible=ANSIBLE,
    inventory=INVENTORY,
)

#: NetBox platform slugs that mean this platform (roce_tune.importers.netbox), besides its own id.
NETBOX_SLUGS: tuple[str, ...] = ("sonic-os", "nvidia-sonic", "community-sonic")


# ------------------------------------------------------------------------------------- audit captures
# What `roce-tune audit` recognises in a capture and runs with --live (roce_tune.platforms.captures).
from roce_tune.platforms.captures import CaptureFormat as _CaptureFormat  # noqa: E402
from roce_tune.platforms.sonic_counters import (  # noqa: E402
    parse_sonic_pfc_counters,
    parse_sonic_pfcwd_stats,
    parse_sonic_queue_table,
    queue_evidence_line,
)

#: a port name in a SONiC table row (front panel, or a port channel)
_PORT_ROW = re.compile(r"^(Ethernet|Eth|swp|PortChannel)\S*$")
_COUNT = re.compile(r"^-?\d[\d,]*$")


def parse_pfcwd_config(lines: list[tuple[int, str]]) -> dict[str, tuple[int, str]]:
    """``show pfcwd config`` rows (``PORT  ACTION  DETECTION TIME  RESTORATION TIME``, times in ms) ->
    port -> (line number, ``"drop 200 200"``). ``lines`` are (line number, text)."""
    out = {}
    for no, t in lines:
        toks = t.split()
        if len(toks) >= 4 and _PORT_ROW.match(toks[0]):
            out[toks[0]] = (no, " ".join(toks[1:4]))
    return out


#: ``show interfaces counters`` columns read (header words, lower case)
IF_COUNTER_COLUMNS = ("rx_ok", "rx_err", "rx_drp", "rx_ovr", "tx_ok", "tx_err", "tx_drp", "tx_ovr")


def _cells(line: str) -> list[str]:
    """A table row's cells; a rate and its unit (``3.11 MB/s``) are one cell."""
    toks: list[str] = []
    for tok in line.split():
        if toks and re.fullmatch(r"[KMGT]?B/s", tok):
            toks[-1] += " " + tok
        else:
            toks.append(tok)
    return toks


def parse_interface_counters(lines: list[tuple[int, str]]) -> dict[str, tuple[int, dict[str, int]]]:
    """``show interfaces counters``: columns found by name (``IFACE STATE RX_OK … TX_DRP TX_OVR``; ``N/A``
    is not a number, so it is absent) -> port -> (line number, counters)."""
    header: list[str] | None = None
    out: dict[str, tuple[int, dict[str, int]]] = {}
    for no, t in lines:
        toks = _cells(t)
        if toks and toks[0].upper() == "IFACE":
            header = [h.lower() for h in toks]
        elif header is not None and len(toks) == len(header) and not set(t.strip()) <= {"-", " "}:
            out[toks[0]] = (no, {h: int(toks[i].replace(",", "")) for i, h in enumerate(header)
                                 if h in IF_COUNTER_COLUMNS and _COUNT.match(toks[i])})
    return out


#: What audit reads of SONiC's output. ``show runningconfiguration all`` / ``sonic-cfggen -d --print-data``
#: / ``cat /etc/sonic/config_db.json``: CONFIG_DB as JSON, recognised by a top-level table name only
#: CONFIG_DB has (sonic-yang-models); the others are sonic-utilities show tables (``kind`` names the
#: audit reader, roce_tune.audit.readers).
CAPTURE_FORMATS: tuple[_CaptureFormat, ...] = (
    _CaptureFormat(name="show runningconfiguration all (CONFIG_DB JSON)", kind="running_config",
                   # a table name opening a line (indented JSON) or following ``{``/``,`` (JSON on one line)
                   pattern=r'(?:^|[{,])\s*"(?:PORT_QOS_MAP|DEVICE_METADATA|DSCP_TO_TC_MAP|BUFFER_PG|PFC_WD|'
                           r'WRED_PROFILE)"\s*:\s*\{'),
    _CaptureFormat(name="show pfc counters", kind="pfc_rx_tx_tables", pattern=r"^\s*Port\s+(Rx|Tx)\s+PFC0",
                   parse=parse_sonic_pfc_counters),
    _CaptureFormat(name="show queue counters", kind="queue_table", pattern=r"^\s*Port\s+TxQ\s+",
                   parse=parse_sonic_queue_table, evidence=queue_evidence_line),
    # the -j form (queuestat / wredstat build_json): keys no other platform's JSON has
    _CaptureFormat(name="show queue counters -j", kind="queue_table",
                   pattern=r'^\s*"(?:totalpacket|ecnmarkedpacket|wreddroppacket)"\s*:',
                   parse=parse_sonic_queue_table, evidence=queue_evidence_line),
    _CaptureFormat(name="show pfcwd stats", kind="pfcwd_stats_table", pattern=r"STORM\s+DETECTED/RESTORED",
                   parse=parse_sonic_pfcwd_stats),
    _CaptureFormat(name="show pfcwd config", kind="pfcwd_config",
                   pattern=r"^\s*PORT\s+ACTION\s+DETECTION\s+TIME",
                   parse=parse_pfcwd_config),
    _CaptureFormat(name="show interfaces counters", kind="interface_counters",
                   pattern=r"^\s*IFACE\s+STATE\s+RX_OK",
                   parse=parse_interface_counters),
)
#: read-only commands ``audit --live`` runs (``{port}``: each lossless port of the plan)
CAPTURE_COMMANDS: tuple[str, ...] = (
    "show runningconfiguration all", "show pfc counters", "show queue counters", "show queue wredcounters",
    "show pfcwd stats --empty", "show pfcwd config", "show interfaces counters")
