"""``roce-tune import netbox``: a full-form inventory from a NetBox source of truth (pynetbox, REST API).

What is read (NetBox 4.x REST API, read-only): ``dcim.devices`` (filtered by ``--site``/``--tag``),
``dcim.interfaces`` and ``dcim.cables`` of those devices. The mapping rules (role, platform, device type,
interface speed, cable length/unit/type, custom fields) are in docs/import-netbox.md; in short:

* device role slug -> ``leaf`` / ``spine`` / ``superspine`` / ``host`` (:data:`DEFAULT_ROLES`,
  ``--role-map``);
  devices whose role maps to nothing are left out and listed;
* platform slug -> roce-tune platform (:data:`DEFAULT_PLATFORMS`, ``--platform-map``), switches only;
* device type model (or slug) -> catalog switch model, case-insensitive (``--model-map``);
* interface speed (kb/s) -> ``speed`` in Gb/s; no speed: the rate in the interface type (``400gbase-x-osfp``);
* cable length + unit (km, m, cm, mi, ft, in) -> metres; cable type -> media (dac/aoc/optic); a cable to a
  patch panel: the interface at the end of NetBox's traced path (``connected_endpoints``), no length;
* host NICs: the host interfaces whose custom field ``rdma_device`` is set; ``nic_model`` names the catalog
  NIC; optional ``rail`` (interface) and ``rails`` / ``ssh_port`` (device) custom fields;
* device status: only ``active``, ``planned`` and ``staged`` devices are imported (``--status``), cable
  status: only ``connected`` and ``planned`` cables (``--cable-status``); a cable to a device left out by its
  status, or on an interface disabled in NetBox, is no fabric link. What is left out is listed.

The token is read from the environment variable named by ``--token-env`` and is never printed, logged or
put into an error message. Every problem found is reported (each naming its device, interface or cable),
and nothing is written unless the whole inventory builds and validates.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from roce_tune.inventory.catalog import CatalogError, load_catalog
from roce_tune.inventory.models import DEVICE_NAME_RE, INTERFACE_NAME_RE, NETDEV_RE, RDMA_DEVICE_RE, Platform
from roce_tune.platforms import SWITCH_PLATFORMS, get_platform

#: NetBox device role slug -> roce-tune role ("host" = GPU server); ``--role-map SLUG=ROLE`` adds/overrides.
DEFAULT_ROLES: dict[str, str] = {
    "leaf": "leaf", "leaf-switch": "leaf", "tor": "leaf",
    "spine": "spine", "spine-switch": "spine",
    "superspine": "superspine", "super-spine": "superspine",
    "host": "host", "server": "host", "gpu-server": "host", "gpu-node": "host", "compute": "host",
}
ROLE_CHOICES = ("leaf", "spine", "superspine", "host")

#: NetBox platform slug -> roce-tune platform: each platform's own id and the slugs its module lists
#: (``NETBOX_SLUGS``, platform knowledge lives in roce_tune/platforms/). ``--platform-map SLUG=PLATFORM``
#: adds or overrides.
DEFAULT_PLATFORMS: dict[str, str] = {p.value: p.value for p in Platform} | {
    slug: name for name in SWITCH_PLATFORMS for slug in getattr(get_platform(name), "NETBOX_SLUGS", ())}

#: NetBox cable ``length_unit`` -> metres per unit (NetBox CableLengthUnitChoices).
LENGTH_UNIT_M: dict[str, float] = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mi": 1609.344, "ft": 0.3048,
                                   "in": 0.0254}

#: NetBox cable ``type`` -> roce-tune media; other types (cat6, coaxial, …) give no media.
CABLE_MEDIA: dict[str, str] = {
    "dac-active": "dac", "dac-passive": "dac", "aoc": "aoc",
    "mmf": "optic", "mmf-om1": "optic", "mmf-om2": "optic", "mmf-om3": "optic", "mmf-om4": "optic",
    "mmf-om5": "optic", "smf": "optic", "smf-os1": "optic", "smf-os2": "optic",
}

#: NetBox 4.x device statuses (``DeviceStatusChoices`` in netbox/dcim/choices.py,
#: https://github.com/netbox-community/netbox/blob/v4.7.3/netbox/dcim/choices.py). An installation may add its
#: own through ``FIELD_CHOICES['dcim.Device.status+']``
#: (https://netboxlabs.com/docs/netbox/configuration/data-validation/#field_choices), so ``--status`` takes
#: other values too, as long as a device of the selection has them.
DEVICE_STATUSES = ("offline", "active", "planned", "staged", "failed", "inventory", "decommissioning")
#: imported by default: in service (active), installed and being provisioned (staged), and a new build
#: modelled ahead of installation (planned); offline, failed, inventory (a spare on the shelf) and
#: decommissioning devices carry no fabric traffic to tune for.
DEFAULT_DEVICE_STATUSES = ("active", "planned", "staged")
#: NetBox cable statuses (``LinkStatusChoices``, same file; no FIELD_CHOICES key, so no others exist).
CABLE_STATUSES = ("connected", "planned", "decommissioning")
#: imported by default: a cable being removed (decommissioning) is no fabric link to size headroom for.
DEFAULT_CABLE_STATUSES = ("connected", "planned")

#: interface types that are not front-panel ports (NetBox InterfaceTypeChoices virtual/LAG/wireless groups)
_NOT_PORTS = re.compile(r"^(virtual|bridge|lag|ieee802\.11.*|other-wireless|lte|gsm|cdma|5g|4g)$")
#: the rate in a NetBox interface type slug: ``400gbase-x-osfp``, ``1.6tbase-x-osfp1600`` (NetBox 4.7
#: InterfaceTypeChoices); ``1000base-t`` / ``100base-tx`` carry no unit letter and give no rate (copper
#: management ports are no fabric ports).
_TYPE_SPEED = re.compile(r"^(\d+(?:\.\d+)?)(t|g|m)base", re.IGNORECASE)
_TYPE_GBPS = {"t": 1000.0, "g": 1.0}
_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_NO_SPEED = "without a speed"


class NotNetboxError(Exception):
    """The URL answered with JSON that is not NetBox's REST API (raised by :func:`fetch`)."""


class NetboxImportError(Exception):
    """Every problem that stopped an import; each message names the device, interface or cable."""

    def __init__(self, messages: Iterable[str]):
        self.messages = list(messages)
        super().__init__("\n".join(self.messages))


@dataclass(frozen=True)
class Mapping:
    """How NetBox objects map to inventory fields. Keys of ``roles``/``platforms`` are NetBox slugs;
    keys of ``models`` are NetBox device type models or slugs, compared case-insensitively;
    ``device_statuses``/``cable_statuses`` are the NetBox status values that are imported (lower case)."""

    roles: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_ROLES))
    platforms: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PLATFORMS))
    models: dict[str, str] = field(default_factory=dict)
    rdma_field: str = "rdma_device"
    nic_model_field: str = "nic_model"
    rail_field: str = "rail"
    rails_field: str = "rails"
    ssh_port_field: str = "ssh_port"
    device_statuses: tuple[str, ...] = DEFAULT_DEVICE_STATUSES
    cable_statuses: tuple[str, ...] = DEFAULT_CABLE_STATUSES


@dataclass
class Snapshot:
    """What was read from NetBox, as plain dicts (the REST API's JSON): devices, interfaces, cables; and,
    per interface id whose cable path is complete but not active (a cable on it is not ``connected``), the
    statuses of the cables on that path (from ``/api/dcim/interfaces/{id}/trace/``)."""

    devices: list[dict[str, Any]]
    interfaces: list[dict[str, Any]]
    cables: list[dict[str, Any]]
    path_statuses: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class ImportResult:
    """The inventory (plain data, full form) and what was left out, one line each."""

    data: dict[str, Any]
    skipped: list[str]


def parse_map(pairs: Iterable[str], what: str, allowed: Iterable[str] | None = None) -> dict[str, str]:
    """``["gpu=host", "x=leaf"]`` -> ``{"gpu": "host", "x": "leaf"}``. Raises NetboxImportError on a pair
    without ``=`` or a value outside ``allowed``."""
    out: dict[str, str] = {}
    allowed_set = set(allowed) if allowed is not None else None
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise NetboxImportError([f"{what} {pair!r}: write NETBOX=ROCE_TUNE, e.g. gpu-node=host"])
        if allowed_set is not None and value.strip() not in allowed_set:
            choices = ", ".join(sorted(allowed_set))
            raise NetboxImportError([f"{what} {pair!r}: {value.strip()!r} is not one of {choices}"])
        out[key.strip()] = value.strip()
    return out


def parse_statuses(values: Iterable[str], what: str, default: tuple[str, ...],
                   known: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """``--status``/``--cable-status`` values -> NetBox status values, lower case, in the order given;
    ``default`` when none is given. A value may also be comma-separated (``active,staged``).

    Raises NetboxImportError on an empty value, and (``known`` given: cable statuses, which NetBox does not
    let an installation extend) on a value outside ``known``."""
    out: list[str] = []
    for raw in values:
        for value in raw.split(","):
            status = value.strip().lower()
            if not status:
                raise NetboxImportError([f"{what} {raw!r}: an empty status"])
            if known is not None and status not in known:
                raise NetboxImportError([f"{what} {value.strip()!r} is not a NetBox status "
                                         f"({', '.join(known)})"])
            if status not in out:
                out.append(status)
    return tuple(out) or default


# --- reading NetBox ---------------------------------------------------------------------------------------
def _chunks(ids: list[int], size: int = 100) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i:i + size]


def _inactive_path(iface: dict[str, Any]) -> bool:
    """True if NetBox traces the interface's cable path to an interface, but not as active (a cable on the
    path is planned or decommissioning)."""
    return bool(iface.get("connected_endpoints")) and not iface.get("connected_endpoints_reachable") \
        and iface.get("connected_endpoints_type") == "dcim.interface"


def _path_cable_statuses(record: Any) -> list[str]:
    """The statuses of the cables on an interface's cable path (pynetbox ``trace()``: near ends, cable, far
    ends, near ends, cable, …; NetBox's trace serializes each cable with its status)."""
    return [_status(dict(cable), "connected") for cable in record.trace()[1::3] if cable]


def fetch(api: Any, site: str | None = None, tag: str | None = None,
          trace_inactive: bool = True) -> Snapshot:
    """Read devices (by site and tag slug), their interfaces and cables through a ``pynetbox.api``; with
    ``trace_inactive``, the statuses of the cables on each complete but inactive path through patch panels
    (one trace request per such interface: in a planned build through patch panels, one per cabled port).

    Raises whatever pynetbox/requests raise, and NotNetboxError for JSON that holds no NetBox devices
    (:func:`import_netbox` turns them into messages)."""
    filters = {k: v for k, v in (("site", site), ("tag", tag)) if v}
    devices = [dict(d) for d in (api.dcim.devices.filter(**filters) if filters else api.dcim.devices.all())]
    ids: list[int] = [d["id"] for d in devices if isinstance(d.get("id"), int)]
    if len(ids) != len(devices):  # JSON, but not NetBox (another API; Nautobot: UUIDs)
        raise NotNetboxError(f"the devices list has objects without a NetBox id: {str(devices[0])[:80]}")
    interfaces: list[dict[str, Any]] = []
    cables: dict[int, dict[str, Any]] = {}
    paths: dict[int, list[str]] = {}
    for chunk in _chunks(ids):
        for record in api.dcim.interfaces.filter(device_id=chunk):
            interfaces.append(dict(record))
            if trace_inactive and _inactive_path(interfaces[-1]) \
                    and interfaces[-1].get("link_peers_type") in _PANEL_PORTS:  # a direct cable: its status
                paths[record.id] = _path_cable_statuses(record)
        for c in api.dcim.cables.filter(device_id=chunk):
            cables[c.id] = dict(c)
    return Snapshot(devices=devices, interfaces=interfaces, cables=list(cables.values()), path_statuses=paths)


# --- mapping ----------------------------------------------------------------------------------------------
def _slug(obj: Any) -> str | None:
    return obj.get("slug") if isinstance(obj, dict) else None


def _value(obj: Any) -> Any:
    """A NetBox choice field (``{"value": …, "label": …}``) or a plain value -> the value."""
    return obj.get("value") if isinstance(obj, dict) else obj


def _cf(obj: dict[str, Any], name: str) -> Any:
    value = (obj.get("custom_fields") or {}).get(name)
    return None if value in ("", None) else value


def _int_cf(obj: dict[str, Any], name: str, where: str, errors: list[str]) -> int | None:
    """A whole-number custom field (``rail``, ``ssh_port``); a text custom field holding something else
    is an error naming ``where`` (None then, as for an unset field)."""
    value = _cf(obj, name)
    if value is None:
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        errors.append(f"{where}: custom field {name} = {value!r} is not a whole number")
        return None


def _speed_gbps(iface: dict[str, Any]) -> int | None:
    """Interface speed in Gb/s: NetBox ``speed`` is kb/s; without it, the rate in the type slug."""
    kbps = iface.get("speed")
    if kbps:
        gbps = kbps / 1_000_000
        return int(gbps) if gbps == int(gbps) else None
    m = _TYPE_SPEED.match(str(_value(iface.get("type")) or ""))
    if m and m.group(2).lower() in _TYPE_GBPS:
        gbps = float(m.group(1)) * _TYPE_GBPS[m.group(2).lower()]
        return int(gbps) if gbps == int(gbps) else None
    return None


def _natural(name: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _numbered(name: str) -> tuple[str, int] | None:
    m = _NUMBERED.match(name)
    if not m or (m.group(2).startswith("0") and m.group(2) != "0"):  # Ethernet01 has no range form
        return None
    return m.group(1), int(m.group(2))


def _run(ports: list[dict[str, Any]], i: int, prefix: str, start: int, rest: dict[str, Any]) -> list[int]:
    """The numbers of the run starting at ``ports[i]`` (``prefix`` + ``start``): the following ports with
    the same prefix, the same other fields and one constant positive step."""
    run = [start]
    for port in ports[i + 1:]:
        nxt = _numbered(port["name"])
        same = {k: v for k, v in port.items() if k != "name"} == rest
        if nxt is None or nxt[0] != prefix or not same:
            break
        step = nxt[1] - run[-1]
        if step <= 0 or (len(run) > 1 and step != run[1] - run[0]):
            break
        run.append(nxt[1])
    return run


def compress_ports(ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive ports ``Ethernet0, Ethernet4, …, Ethernet60`` with one speed/MTU and a constant step
    -> one entry ``Ethernet[0-60/4]`` (three or more ports; the inventory's range syntax). Other ports
    stay one entry each, in their order."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(ports):
        first = _numbered(ports[i]["name"])
        rest = {k: v for k, v in ports[i].items() if k != "name"}
        run = _run(ports, i, first[0], first[1], rest) if first else []
        if first and len(run) >= 3:
            step = run[1] - run[0]
            rng = f"{run[0]}-{run[-1]}" + (f"/{step}" if step != 1 else "")
            out.append({"name": f"{first[0]}[{rng}]", **rest})
            i += len(run)
        else:
            out.append(ports[i])
            i += 1
    return out


def cable_length_m(length: float | str | None, unit: str | None) -> float | None:
    """A NetBox cable length (``length`` in ``unit``: km, m, cm, mi, ft, in) in metres, rounded to the
    centimetre; None when NetBox has no length. NetBox keeps two decimals in the entered unit, so a length
    entered in ft is off by up to 1.5 mm (0.005 ft): rounding to cm gives back the length that was meant
    (49.21 ft -> 15.0 m, not 14.999 m), and 1 cm of cable is 5 ns, nothing in a headroom.

    Raises:
        ValueError: a length without a known unit; a length of 0 or less (NetBox's length field has no
            minimum, and a 0 entered for "unknown" would size headroom for no cable at all).
    """
    if length is None:
        return None
    if unit not in LENGTH_UNIT_M:
        raise ValueError(f"length {length} has unit {unit!r}; NetBox units are {', '.join(LENGTH_UNIT_M)} "
                         f"(set the cable's length unit)")
    metres = round(float(length) * LENGTH_UNIT_M[unit], 2)
    if metres <= 0:
        raise ValueError(f"length {length} {unit} is no cable length (headroom is sized by it): set the real "
                         f"length, or clear it for the inventory default")
    return metres


def _length_m(cable: dict[str, Any], label: str, errors: list[str]) -> float | None:
    try:
        return cable_length_m(cable.get("length"), _value(cable.get("length_unit")))
    except ValueError as exc:
        errors.append(f"{label}: {exc}")
        return None


@dataclass
class _Devices:
    """The imported devices by NetBox id: role, name, switch or host entry; and the devices left out."""

    roles: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    switches: dict[int, dict[str, Any]] = field(default_factory=dict)
    hosts: dict[int, dict[str, Any]] = field(default_factory=dict)
    unmapped_roles: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    by_status: dict[int, tuple[str, str]] = field(default_factory=dict)  # left out: id -> (name, status)

    def skipped(self, statuses: tuple[str, ...]) -> list[str]:
        """One line per NetBox role that maps to no roce-tune role; one for the devices whose NetBox status
        is not in ``statuses``."""
        lines = [f"{len(devs)} device(s) with role {slug} (no roce-tune role; --role-map {slug}=ROLE "
                 f"to import them): {_first(sorted(devs))}"
                 for slug, devs in sorted(self.unmapped_roles.items())]
        if self.by_status:
            left = sorted(self.by_status.values(), key=lambda d: _natural(d[0]))
            lines.append(f"{len(left)} device(s) by their NetBox status (imported: {', '.join(statuses)}; "
                         f"choose with --status): {_first([f'{n} ({st})' for n, st in left])}")
        return lines


def _first(names: list[str], n: int = 10) -> str:
    """The first ``n`` of ``names``, comma-separated, `` …`` when there are more."""
    return ", ".join(names[:n]) + (" …" if len(names) > n else "")


def _status(obj: dict[str, Any], default: str) -> str:
    """A device's or cable's NetBox status value, lower case (NetBox's model default when the field is
    absent: ``active`` for devices, ``connected`` for cables, netbox/dcim/models/devices.py, cables.py)."""
    return str(_value(obj.get("status")) or default).lower()


def _where(dev: dict[str, Any]) -> str:
    """``NetBox id 7, site dc1`` (and tenant): what tells apart two NetBox devices with one name."""
    parts = [f"NetBox id {dev['id']}"]
    for key in ("site", "tenant"):
        obj = dev.get(key)
        if isinstance(obj, dict) and (obj.get("slug") or obj.get("name")):
            parts.append(f"{key} {obj.get('slug') or obj.get('name')}")
    return ", ".join(parts)


def _unique_name(dev: dict[str, Any], name: str, seen: dict[str, dict[str, Any]], errors: list[str]) -> bool:
    """False (and an error naming both devices) if an imported device already has ``name``: NetBox names
    are unique only per site and tenant (https://netboxlabs.com/docs/netbox/models/dcim/device), an
    inventory's names are unique in the whole fabric."""
    first = seen.setdefault(name, dev)
    if first is dev:
        return True
    errors.append(f"device {name} ({_where(dev)}): the name is also used by device {name} ({_where(first)}); "
                  f"roce-tune device names must be unique: select one site with --site or --tag, or rename "
                  f"one of them in NetBox")
    return False


def _read_devices(devices: list[dict[str, Any]], mapping: Mapping, catalog: Any,
                  errors: list[str]) -> _Devices:
    out = _Devices()
    seen: dict[str, dict[str, Any]] = {}
    for dev in devices:
        name = dev.get("name") or f"(unnamed device id {dev['id']})"
        role_slug = _slug(dev.get("role") or dev.get("device_role"))
        role = mapping.roles.get(role_slug or "")
        if role is None:
            out.unmapped_roles[role_slug or "(none)"].append(name)
            continue
        status = _status(dev, "active")
        if status not in mapping.device_statuses:
            out.by_status[dev["id"]] = (name, status)
            continue
        if not DEVICE_NAME_RE.fullmatch(name):
            errors.append(f"device {name!r}: the name is not usable as a roce-tune device name "
                          f"(allowed: {DEVICE_NAME_RE.pattern}); rename it in NetBox")
            continue
        if not _unique_name(dev, name, seen, errors):
            continue
        out.roles[dev["id"]], out.names[dev["id"]] = role, name
        mgmt = _mgmt(dev, mapping, name, errors)
        if role == "host":
            out.hosts[dev["id"]] = {"name": name, **({"mgmt": mgmt} if mgmt else {}), "nics": []}
        else:
            out.switches[dev["id"]] = _switch(dev, name, role, role_slug, mgmt, mapping, catalog, errors)
    return out


def _switch(dev: dict[str, Any], name: str, role: str, role_slug: str | None, mgmt: dict[str, Any] | None,
            mapping: Mapping, catalog: Any, errors: list[str]) -> dict[str, Any]:
    """A switch entry (ports filled in later); what does not map goes to ``errors``."""
    sw: dict[str, Any] = {"name": name}
    platform = _switch_platform(dev, name, role, role_slug, mapping, errors)
    if platform is not None:
        sw["platform"] = platform
    dtype = dev.get("device_type") or {}
    model = _catalog_model(dtype, mapping, catalog)
    if model is None:
        known = ", ".join(sorted(s.id for s in catalog.switch_models))
        errors.append(f"device {name}: NetBox device type {dtype.get('model')!r} "
                      f"(slug {dtype.get('slug')}) is no switch model in the roce-tune catalog "
                      f"({known}); "
                      f"map it with --model-map "
                      f"'{dtype.get('model')}=<model>' or add it to roce_tune/catalog/switch_models.yaml")
    else:
        sw["model"] = model
    sw["role"] = role
    if mgmt:
        sw["mgmt"] = mgmt
    rails = _rails(dev, mapping, name, errors)
    if rails is not None:
        sw["rails"] = rails
    sw["ports"] = []
    return sw


def _switch_platform(dev: dict[str, Any], name: str, role: str, role_slug: str | None, mapping: Mapping,
                     errors: list[str]) -> str | None:
    platform = dev.get("platform")
    if not platform:
        errors.append(f"device {name}: no platform set in NetBox (role {role_slug} maps to the switch "
                      f"role {role}); set it to one of {', '.join(sorted(set(mapping.platforms)))}")
        return None
    if _slug(platform) not in mapping.platforms:
        errors.append(f"device {name}: NetBox platform {platform.get('name')!r} (slug {_slug(platform)}) "
                      f"maps to no roce-tune platform; map it with --platform-map "
                      f"{_slug(platform)}=<{'|'.join(p.value for p in Platform)}>")
        return None
    return mapping.platforms[_slug(platform) or ""]


@dataclass
class _Interfaces:
    """The imported devices' interfaces by NetBox id, the host NICs they became, switch ports per device."""

    by_id: dict[int, dict[str, Any]] = field(default_factory=dict)
    nics: dict[int, dict[str, Any]] = field(default_factory=dict)
    ports_by_dev: dict[int, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    not_ports: dict[int, str] = field(default_factory=dict)  # switch interfaces that are no port: why


def _read_interfaces(interfaces: list[dict[str, Any]], devs: _Devices, mapping: Mapping, catalog: Any,
                     errors: list[str]) -> _Interfaces:
    out = _Interfaces()
    for iface in sorted(interfaces, key=lambda i: _natural(i.get("name") or "")):
        dev_id = (iface.get("device") or {}).get("id")
        if dev_id not in devs.roles:
            continue
        out.by_id[iface["id"]] = iface
        where = f"{devs.names[dev_id]}:{iface.get('name')}"
        if dev_id not in devs.hosts:
            port = _switch_port(iface, where, out.not_ports, errors)
            if port is not None:
                out.ports_by_dev[dev_id].append(port)
            continue
        rdma = _cf(iface, mapping.rdma_field)
        if rdma is None:
            continue
        nic = _nic(iface, rdma, mapping, where, catalog, errors)
        if nic is not None:
            out.nics[iface["id"]] = nic
            devs.hosts[dev_id]["nics"].append(nic)
    return out


def _switch_port(iface: dict[str, Any], where: str, not_ports: dict[int, str],
                 errors: list[str]) -> dict[str, Any] | None:
    """A front-panel port entry, or None: management-only, virtual/LAG/wireless, no speed (why goes to
    ``not_ports``: a cable on such an interface is an error only if it leads to an imported device), or an
    unusable name (an error)."""
    kind = str(_value(iface.get("type")) or "")
    if iface.get("mgmt_only") or _NOT_PORTS.match(kind):
        not_ports[iface["id"]] = "management-only" if iface.get("mgmt_only") else f"of type {kind}"
        return None
    speed = _speed_gbps(iface)
    if speed is None:
        not_ports[iface["id"]] = _NO_SPEED
        return None
    if not INTERFACE_NAME_RE.fullmatch(iface["name"]):
        errors.append(f"{where}: the interface name is not usable in switch CLIs (allowed: "
                      f"{INTERFACE_NAME_RE.pattern}); rename it in NetBox")
        return None
    port: dict[str, Any] = {"name": iface["name"], "speed": f"{speed}G"}
    if iface.get("mtu"):
        port["mtu"] = iface["mtu"]
    return port


def build(snapshot: Snapshot, mapping: Mapping | None = None, site_name: str = "netbox") -> ImportResult:
    """Map a NetBox :class:`Snapshot` to full-form inventory data (rules: module docstring).

    Raises:
        NetboxImportError: every unknown platform, device type, role-less or badly named device, NIC
            without a catalog model, host-to-host or multi-termination cable … (one message each).
    """
    mapping = mapping or Mapping()
    catalog = load_catalog()
    errors: list[str] = []
    devs = _read_devices(snapshot.devices, mapping, catalog, errors)
    skipped = devs.skipped(mapping.device_statuses)
    errors += _unknown_statuses(snapshot.devices, mapping.device_statuses)
    if not devs.roles and not errors:
        raise NetboxImportError([_nothing_to_import(snapshot, devs, mapping)]
                                + [f"left out {line}" for line in skipped])
    ifaces = _read_interfaces(snapshot.interfaces, devs, mapping, catalog, errors)
    skipped += _marked_connected(ifaces, devs)
    if devs.hosts and not any(_cf(i, mapping.rdma_field) is not None for i in snapshot.interfaces
                              if (i.get("device") or {}).get("id") in devs.hosts):
        errors.append(f"none of the interfaces of the {len(devs.hosts)} host(s) has the custom field "
                      f"{mapping.rdma_field}: no RDMA NIC to import (the hosts' fan-in and cabling drive the "
                      f"tuning); set {mapping.rdma_field} and {mapping.nic_model_field} on the RDMA NICs "
                      f"(docs/import-netbox.md), or name your fields with --rdma-field / --nic-model-field")
    for dev_id, sw in devs.switches.items():
        sw["ports"] = compress_ports(ifaces.ports_by_dev.get(dev_id, []))
    fab = _Fabric(devs, ifaces, mapping.rdma_field, errors, mapping.cable_statuses, snapshot.path_statuses)
    links = _cables(snapshot.cables, fab)
    skipped += links.ignored
    errors += _no_cable_left(fab, links, ifaces)
    if errors:
        raise NetboxImportError(errors)
    data: dict[str, Any] = {
        "site": {"name": site_name},
        "switches": sorted(devs.switches.values(),
                           key=lambda s: (ROLE_CHOICES.index(s["role"]), _natural(s["name"]))),
        "links": links.links,
        "hosts": sorted(devs.hosts.values(), key=lambda h: _natural(h["name"])),
    }
    return ImportResult(data=data, skipped=skipped)


def _no_cable_left(fab: _Fabric, links: _Links, ifaces: _Interfaces) -> list[str]:
    """An error when ``--cable-status`` left out cables and no link and no NIC cabling remain."""
    if not fab.by_status or links.links or any("switch_port" in nic for nic in ifaces.nics.values()):
        return []
    return [f"no cable of the imported devices is left to import: {len(fab.by_status)} cable(s) have a "
            f"NetBox status outside --cable-status {' --cable-status '.join(fab.cable_statuses)} "
            f"({_first(fab.by_status, 3)}); add their status with --cable-status to import them"]


def _status_counts(devices: Iterable[dict[str, Any]]) -> str:
    """``planned 12, staged 2``: how many of ``devices`` have each NetBox status, most first."""
    counts: dict[str, int] = defaultdict(int)
    for dev in devices:
        counts[_status(dev, "active")] += 1
    return ", ".join(f"{st} {n}" for st, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _nothing_to_import(snapshot: Snapshot, devs: _Devices, mapping: Mapping) -> str:
    """Why no device is imported: no role maps, or the ``--status`` filter leaves none of those that do."""
    if not devs.by_status:
        return (f"none of the {len(snapshot.devices)} NetBox device(s) has a role that maps to a roce-tune "
                f"role (leaf, spine, superspine, host): nothing to import")
    mapped = [d for d in snapshot.devices if d["id"] in devs.by_status]
    selected = " --status ".join(mapping.device_statuses)
    return (f"none of the {len(mapped)} NetBox device(s) with a roce-tune role has a status selected by "
            f"--status {selected} (their statuses: {_status_counts(mapped)}): nothing to import; add their "
            f"status, e.g. --status {_status(mapped[0], 'active')}")


def _unknown_statuses(devices: list[dict[str, Any]], statuses: tuple[str, ...]) -> list[str]:
    """An error per ``--status`` value that is no NetBox device status and that no device of the selection
    has (a typo; a status an installation added through FIELD_CHOICES is found on its devices)."""
    present = {_status(d, "active") for d in devices}
    return [f"--status {st!r} is not a NetBox device status ({', '.join(DEVICE_STATUSES)}) and no selected "
            f"device has it (their statuses: {_status_counts(devices)})"
            for st in statuses if st not in DEVICE_STATUSES and st not in present]


def _marked_connected(ifaces: _Interfaces, devs: _Devices) -> list[str]:
    """A line for the fabric ports and RDMA NICs that NetBox marks connected without a cable
    (``mark_connected``: "treat as if a cable is connected"): their far end is unknown, so no link."""
    marked = [f"{devs.names[i['device']['id']]}:{i['name']}" for i in ifaces.by_id.values()
              if i.get("mark_connected") and not i.get("cable") and i["id"] not in ifaces.not_ports
              and (i["device"]["id"] in devs.switches or i["id"] in ifaces.nics)]
    if not marked:
        return []
    return [f"{len(marked)} interface(s) marked connected in NetBox without a cable (the far end is unknown, "
            f"so no link; cable them in NetBox): {_first(sorted(marked, key=_natural))}"]


def _mgmt(dev: dict[str, Any], mapping: Mapping, name: str, errors: list[str]) -> dict[str, Any] | None:
    ip = next((d["address"] for d in (dev.get("primary_ip4"), dev.get("primary_ip6"), dev.get("primary_ip"))
               if isinstance(d, dict) and d.get("address")), None)
    if not ip:
        return None
    mgmt: dict[str, Any] = {"host": ip.split("/")[0]}
    port = _int_cf(dev, mapping.ssh_port_field, f"device {name}", errors)
    if port is not None and not 0 < port < 65536:
        errors.append(f"device {name}: custom field {mapping.ssh_port_field} = {port} is not a TCP port "
                      f"(1-65535)")
    elif port is not None:
        mgmt["port"] = port
    return mgmt


def _rails(dev: dict[str, Any], mapping: Mapping, name: str, errors: list[str]) -> list[int] | None:
    raw = _cf(dev, mapping.rails_field)
    if raw is None:
        return None
    text = str(raw).replace(" ", "").removeprefix("[").removesuffix("]")  # a JSON list in a text field too
    items = raw if isinstance(raw, list) else text.split(",")
    try:
        return [int(r) for r in items]
    except (TypeError, ValueError):
        errors.append(f"device {name}: custom field {mapping.rails_field} = {raw!r} is not a list of rail "
                      f"numbers (write 0 or 0,1)")
        return None


def _catalog_model(dtype: dict[str, Any], mapping: Mapping, catalog: Any) -> str | None:
    overrides = {k.lower(): v for k, v in mapping.models.items()}
    for key in (dtype.get("model"), dtype.get("slug"), dtype.get("part_number")):
        if not key:
            continue
        candidate = overrides.get(str(key).lower(), str(key))
        try:
            return str(catalog.switch_model(candidate).id)
        except CatalogError:
            continue
    return None


def _nic(iface: dict[str, Any], rdma: Any, mapping: Mapping, where: str, catalog: Any,
         errors: list[str]) -> dict[str, Any] | None:
    model = _cf(iface, mapping.nic_model_field)
    problems = len(errors)
    if not NETDEV_RE.fullmatch(iface["name"]):
        errors.append(f"{where}: the interface name is not a Linux netdev name "
                      f"(allowed: {NETDEV_RE.pattern})")
    if not RDMA_DEVICE_RE.fullmatch(str(rdma)):
        errors.append(f"{where}: {mapping.rdma_field} = {str(rdma)!r} is not an RDMA device name (allowed: "
                      f"{RDMA_DEVICE_RE.pattern}, e.g. mlx5_0)")
    if model is None:
        errors.append(f"{where}: has {mapping.rdma_field} = {rdma} but no {mapping.nic_model_field} custom "
                      f"field (the catalog NIC, e.g. connectx-7)")
    else:
        try:
            catalog.nic(str(model))
        except CatalogError as exc:
            errors.append(f"{where}: {mapping.nic_model_field} = {model!r}: {exc}")
    speed = _speed_gbps(iface)
    if speed is None:
        errors.append(f"{where}: RDMA NIC without a speed (set the interface speed or a type with its rate)")
    rail = _int_cf(iface, mapping.rail_field, where, errors)
    if len(errors) > problems:
        return None
    nic: dict[str, Any] = {"model": str(model), "netdev": iface["name"], "rdma_device": str(rdma),
                           "speed": f"{speed}G"}
    if rail is not None:
        nic["rail"] = rail
    if iface.get("mtu"):
        nic["mtu"] = iface["mtu"]
    return nic


@dataclass
class _Fabric:
    """What the cables are read against: the imported devices and interfaces; problems go to ``errors``."""

    devs: _Devices
    ifaces: _Interfaces
    rdma_field: str
    errors: list[str]
    cable_statuses: tuple[str, ...] = DEFAULT_CABLE_STATUSES
    path_statuses: dict[int, list[str]] = field(default_factory=dict)  # Snapshot.path_statuses
    panel_paths: set[frozenset[int]] = field(default_factory=set)  # interface pairs joined via patch panels
    by_status: list[str] = field(default_factory=list)  # cables left out by their status, one text each
    to_left_out: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))  # dev id -> ends

    def status_skipped(self) -> list[str]:
        """One line for the cables left out by their own status; one per device left out by its status
        that imported devices are cabled to (those cables are no fabric links)."""
        lines = []
        if self.by_status:
            lines.append(f"{len(self.by_status)} cable(s) by their NetBox status (imported: "
                         f"{', '.join(self.cable_statuses)}; choose with --cable-status): "
                         f"{_first(self.by_status)}")
        for name, status, ends in sorted(((*self.devs.by_status[d], e) for d, e in self.to_left_out.items()),
                                         key=lambda t: _natural(t[0])):
            lines.append(f"{len(ends)} cable(s) to {name} (left out by its NetBox status {status}, so no "
                         f"fabric link): {_first(sorted(ends, key=_natural))}")
        return lines


@dataclass
class _Links:
    """The switch-switch links, sorted; the cables left out, one line each."""

    links: list[dict[str, Any]]
    ignored: list[str]


def _cable_ends(cable: dict[str, Any], fab: _Fabric) -> tuple[list[list[tuple[Any, Any]]],
                                                               list[list[dict[str, Any]]]]:
    """Per side: its terminations as (object type, id), and the imported interfaces among them."""
    ends = [[(t.get("object_type"), t.get("object_id")) for t in cable.get(side) or []]
            for side in ("a_terminations", "b_terminations")]
    sides = [[fab.ifaces.by_id.get(oid) for typ, oid in side if typ == "dcim.interface"] for side in ends]
    return ends, [[i for i in side if i is not None] for side in sides]


def _termination_name(term: dict[str, Any]) -> str:
    """``oob1:ge-0/0/1`` / ``pp1:F3`` / a circuit termination's display: the far end of a cable as NetBox
    names it (the cable's terminations carry the terminated object)."""
    obj = term.get("object") or {}
    device = (obj.get("device") or {}).get("name")
    name = obj.get("name") or obj.get("display") or f"{term.get('object_type')} {term.get('object_id')}"
    return f"{device}:{name}" if device else str(name)


def _cable_ends_named(cable: dict[str, Any], ours: list[list[dict[str, Any]]], fab: _Fabric) -> str:
    """``leaf1:eth0 - oob1:ge-0/0/1``: each side's imported interfaces, else what NetBox terminates it on."""
    return " - ".join(
        ",".join(f"{fab.devs.names[i['device']['id']]}:{i['name']}" for i in side)
        or ",".join(_termination_name(t) for t in cable.get(key) or []) or "?"
        for side, key in zip(ours, ("a_terminations", "b_terminations")))


def _odd_shape(label: str, cable: dict[str, Any], ends: list[list[tuple[Any, Any]]],
               ours: list[list[dict[str, Any]]], fab: _Fabric, ignored: list[str]) -> bool:
    """True (and reported) unless the cable joins exactly two interfaces of imported devices."""
    where = _cable_ends_named(cable, ours, fab)
    kinds = sorted({t for side in ends for t, _ in side})
    if any(len(side) > 1 for side in ends):
        fab.errors.append(f"{label} ({where}): {len(ends[0])} x {len(ends[1])} terminations (a breakout "
                          f"cable?); give each breakout leg its own cable between two interfaces")
    elif any(len(side) != 1 for side in ends) or kinds != ["dcim.interface"]:
        ignored.append(f"{label} ({where}) ends on a {'/'.join(kinds)} (only interfaces and patch panels "
                       f"are followed)")
    elif not ours[0] or not ours[1]:
        ignored.append(f"{label} ({where}) goes to a device that is not imported")
    else:
        return False
    return True


_PANEL_PORTS = ("dcim.frontport", "dcim.rearport")


def _traced(iface: dict[str, Any], fab: _Fabric) -> dict[str, Any] | None:
    """The imported interface at the end of ``iface``'s complete cable path, if there is one and every cable
    on it has an imported status. NetBox calls a path active only when all its cables are ``connected``
    (``connected_endpoints_reachable``; CablePath.is_active, netbox/dcim/models/cables.py); for a complete
    but inactive path the statuses come from its trace (:attr:`Snapshot.path_statuses`)."""
    peers = iface.get("connected_endpoints") or []
    if len(peers) != 1 or iface.get("connected_endpoints_type") != "dcim.interface":
        return None
    if not iface.get("connected_endpoints_reachable"):
        statuses = fab.path_statuses.get(iface["id"])
        if not statuses or not set(statuses) <= set(fab.cable_statuses):
            return None
    return fab.ifaces.by_id.get(peers[0].get("id"))


def _path_refused(near: dict[str, Any], label: str, name: str, fab: _Fabric) -> bool:
    """True (and listed with the cables left out by status) if ``near``'s path through patch panels is
    complete but has a cable whose status is not imported."""
    refused = sorted(set(fab.path_statuses.get(near["id"]) or []) - set(fab.cable_statuses))
    if not near.get("connected_endpoints") or not refused:
        return False
    fab.by_status.append(f"{label} {name} - patch panel (the path through the patch panels has a cable "
                         f"{' and one '.join(refused)})")
    return True


def _through_panels(label: str, ends: list[list[tuple[Any, Any]]], ours: list[list[dict[str, Any]]],
                    fab: _Fabric, ignored: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | bool:
    """A cable from an imported interface to a patch panel's front or rear port: the two imported interfaces
    NetBox traces the path to (the interface's ``connected_endpoints``, computed by NetBox through front and
    rear ports: https://netboxlabs.com/docs/netbox/models/dcim/cable/), once per path; True when the path
    is not used (reported in ``ignored``, or its other end already gave it); False for any other cable."""
    kinds = {t for side in ends for t, _ in side}
    if any(len(side) != 1 for side in ends) or len(kinds) != 2 or not kinds - {"dcim.interface"} <= set(
            _PANEL_PORTS) or "dcim.interface" not in kinds:
        return False
    near = (ours[0] or ours[1])[0]
    far = _traced(near, fab)
    name = f"{fab.devs.names[near['device']['id']]}:{near['name']}"
    if far is None and (_path_to_left_out(near, name, fab) or _path_refused(near, label, name, fab)):
        return True
    if far is None:
        inactive = " active" if _inactive_path(near) else ""  # a cable on it not connected: --cable-status
        ignored.append(f"{label} ({name} - patch panel): NetBox traces no complete{inactive} path from "
                       f"{name} through the patch panels to an interface of an imported device")
        return True
    path = frozenset((near["id"], far["id"]))
    if path in fab.panel_paths:
        return True
    fab.panel_paths.add(path)
    return near, far


def _path_to_left_out(near: dict[str, Any], name: str, fab: _Fabric) -> bool:
    """True (and noted under that device) if NetBox traces ``near`` through patch panels to an interface of a
    device left out by its status."""
    peers = near.get("connected_endpoints") or [{}]
    dev_id = _device_id(peers[0])
    if dev_id not in fab.devs.by_status:
        return False
    fab.to_left_out[dev_id].append(f"{name} (through patch panels)")
    return True


def _device_id(obj: Any) -> Any:
    """The NetBox id of the device a (nested) interface or port belongs to, or None."""
    device = obj.get("device") if isinstance(obj, dict) else None
    return device.get("id") if isinstance(device, dict) else None


def _pair(cable: dict[str, Any], label: str, fab: _Fabric,
          ignored: list[str]) -> tuple[dict[str, Any], dict[str, Any], bool] | None:
    """The two imported interfaces a cable joins and whether directly (False: through patch panels), or
    None (the cable is left out or an error; reported)."""
    ends, ours = _cable_ends(cable, fab)
    if not ours[0] and not ours[1]:
        return None
    status = _status(cable, "connected")
    if status not in fab.cable_statuses:
        fab.by_status.append(f"{label} {_cable_ends_named(cable, ours, fab)} ({status})")
        return None
    if _to_left_out(cable, ours, fab):
        return None
    panel = _through_panels(label, ends, ours, fab, ignored)
    if isinstance(panel, tuple):
        return panel[0], panel[1], False
    if panel or _odd_shape(label, cable, ends, ours, fab, ignored):
        return None
    return ours[0][0], ours[1][0], True


def _to_left_out(cable: dict[str, Any], ours: list[list[dict[str, Any]]], fab: _Fabric) -> bool:
    """True (and noted under that device) if one side of the cable has no imported interface and ends on a
    device left out by its status (the cable's terminations carry their device)."""
    for side, key in zip(ours, ("a_terminations", "b_terminations")):
        if side:
            continue
        far = [_device_id(t.get("object")) for t in cable.get(key) or []]
        dev_id = next((d for d in far if d in fab.devs.by_status), None)
        if dev_id is not None:
            near = [i for other in ours for i in other]
            fab.to_left_out[dev_id].append(",".join(f"{fab.devs.names[i['device']['id']]}:{i['name']}"
                                                    for i in near))
            return True
    return False


def _cable_fields(cable: dict[str, Any], what: str, errors: list[str]) -> dict[str, Any]:
    """``cable_length`` and ``media`` of a cable, where NetBox has them."""
    length = _length_m(cable, what, errors)
    media = CABLE_MEDIA.get(str(_value(cable.get("type")) or ""))
    return {k: v for k, v in (("cable_length", f"{length:g}m" if length is not None else None),
                              ("media", media)) if v is not None}


def _cable(cable: dict[str, Any], fab: _Fabric, links: list[dict[str, Any]], ignored: list[str]) -> None:
    """One NetBox cable: a link, a NIC's switch_port, an error or a line in ``ignored``."""
    names, roles = fab.devs.names, fab.devs.roles
    label = f"cable {cable.get('label') or cable['id']}"
    pair = _pair(cable, label, fab, ignored)
    if pair is None:
        return
    a, b, direct = pair
    a_dev, b_dev = a["device"]["id"], b["device"]["id"]
    what = (f"{label}{'' if direct else ' and patch panels'} "
            f"({names[a_dev]}:{a['name']} - {names[b_dev]}:{b['name']})")
    if _disabled(what, (a, b), fab, ignored):
        return
    # through patch panels: NetBox has no length of the whole path (the trunks between panels are cables
    # of no imported device), so the inventory default applies and lint says so (RT107)
    extra = _cable_fields(cable, what, fab.errors) if direct else {}
    a_host, b_host = roles[a_dev] == "host", roles[b_dev] == "host"
    if a_host and b_host:
        fab.errors.append(f"{what}: a cable between two hosts; "
                          "roce-tune models hosts cabled to switches only")
    elif a_host or b_host:
        host_if, sw_if = (a, b) if a_host else (b, a)
        nic = fab.ifaces.nics.get(host_if["id"])
        if nic is None:
            ignored.append(f"{what}: the host interface has no {fab.rdma_field} custom field")
            return
        if _not_a_port(what, [sw_if], fab, ignored):
            return
        nic["switch_port"] = f"{names[sw_if['device']['id']]}:{sw_if['name']}"
        nic.update(extra)
    elif not _not_a_port(what, [a, b], fab, ignored):
        links.append({"a": f"{names[a_dev]}:{a['name']}", "b": f"{names[b_dev]}:{b['name']}", **extra})


def _disabled(what: str, ends: tuple[dict[str, Any], ...], fab: _Fabric, ignored: list[str]) -> bool:
    """True (and a line in ``ignored``) if an end of the cable is an interface disabled in NetBox
    (``enabled`` off: shut down, so the cable carries no traffic)."""
    off = [f"{fab.devs.names[i['device']['id']]}:{i['name']}" for i in ends if i.get("enabled") is False]
    if off:
        ignored.append(f"{what}: {' and '.join(off)} disabled in NetBox (enabled off), so no fabric link; "
                       f"enable the interface in NetBox to import it")
    return bool(off)


def _not_a_port(what: str, switch_ends: list[dict[str, Any]], fab: _Fabric, ignored: list[str]) -> bool:
    """True (and reported) if a switch end of a fabric cable is no port of the inventory: an error (a host
    NIC or a fabric port cabled to it), or, for a cable between two management/virtual interfaces, a line
    in ``ignored``."""
    why = {i["id"]: fab.ifaces.not_ports[i["id"]] for i in switch_ends if i["id"] in fab.ifaces.not_ports}
    if not why:
        return False
    if len(why) == len(switch_ends) == 2 and _NO_SPEED not in why.values():
        ignored.append(f"{what}: between two interfaces that are no fabric ports ({', '.join(why.values())})")
        return True
    for iface in switch_ends:
        if iface["id"] not in why:
            continue
        name = f"{fab.devs.names[iface['device']['id']]}:{iface['name']}"
        hint = ("set the interface speed, or a type with its rate, e.g. 400gbase-x-osfp"
                if why[iface["id"]] == _NO_SPEED else "cable the port that carries RoCE traffic")
        fab.errors.append(f"{what}: the switch end {name} is {why[iface['id']]}, no fabric port ({hint})")
    return True


def _cables(cables: list[dict[str, Any]], fab: _Fabric) -> _Links:
    links: list[dict[str, Any]] = []
    ignored: list[str] = []
    for cable in sorted(cables, key=lambda c: c["id"]):
        _cable(cable, fab, links, ignored)
    ignored += fab.status_skipped()
    return _Links(sorted(links, key=lambda link: (_natural(link["a"]), _natural(link["b"]))), ignored)


def _session(timeout_s: float) -> Any:
    """A requests.Session whose calls time out after ``timeout_s`` (an unreachable URL must not hang)."""
    import requests

    class Session(requests.Session):
        def request(self, *args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("timeout", timeout_s)
            return super().request(*args, **kwargs)

    return Session()


def _reason(exc: BaseException) -> str:
    """A short cause for a connection error (``[Errno 111] Connection refused``), without the request."""
    text = str(exc)
    m = re.search(r"\[Errno -?\d+\] [^'\")\]]+", text)
    if m:
        return m.group(0).strip()
    if "certificate verify failed" in text:
        return ("certificate verify failed (a NetBox certificate from a private CA: give its CA bundle in "
                "REQUESTS_CA_BUNDLE=/path/to/ca.pem)")
    for cause in ("timed out", "Name or service not known", "Connection refused"):
        if cause in text:
            return cause
    if type(exc).__name__ == "InvalidHeader":  # requests' own message quotes the header: the token
        return "the API token holds a character an HTTP header cannot carry (a line break inside?)"
    if type(exc).__name__ in ("MissingSchema", "InvalidSchema", "InvalidURL"):
        what = "not a valid URL" if type(exc).__name__ == "InvalidURL" else "not an http(s) URL"
        return f"{what}; give the NetBox base URL, e.g. https://netbox.example.net"
    return type(exc).__name__


def _shown(url: str) -> str:
    """``url`` for messages and the inventory header: a ``user:password@`` in it becomes ``***@``."""
    return re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@]*@", r"\1***@", url)


def _request_error(exc: Any, base: str, site: str | None, tag: str | None,
                   token_env: str) -> NetboxImportError:
    """What a pynetbox RequestError (an HTTP error status) means for the user."""
    status = getattr(exc.req, "status_code", None)
    detail = ""
    try:
        detail = str((exc.req.json() or {}).get("detail", ""))
    except ValueError:
        pass
    if status in (401, 403):
        return NetboxImportError([(f"NetBox at {base} refused the API token in ${token_env} (HTTP {status}"
                                   f"{': ' + detail if detail else ''}); check the token and that it may "
                                   f"read dcim devices, interfaces and cables")])
    if status == 400 and (site or tag):
        return NetboxImportError([(f"NetBox at {base} rejected the filter (HTTP 400: {exc.error}); does "
                                   f"the site slug {site!r} / tag slug {tag!r} exist?")])
    return NetboxImportError([(f"NetBox at {base} answered HTTP {status} to {exc.req.url.split('?')[0]}"
                               f"{': ' + detail if detail else ''}")])


def _fetch(api: Any, base: str, site: str | None, tag: str | None, token_env: str,
           trace_inactive: bool = True) -> Snapshot:
    """:func:`fetch`, with every failure as a NetboxImportError that says what to check."""
    import pynetbox
    import requests

    try:
        snapshot = fetch(api, site=site, tag=tag, trace_inactive=trace_inactive)
    except pynetbox.RequestError as exc:
        raise _request_error(exc, base, site, tag, token_env) from None
    except pynetbox.ContentError:
        raise NetboxImportError([(f"{base} did not answer as the NetBox REST API (no JSON at {base}/api/); "
                                  f"give the NetBox base URL, e.g. https://netbox.example.net")]) from None
    except NotNetboxError as exc:
        raise NetboxImportError([(f"{base} did not answer as the NetBox REST API ({exc}); give the NetBox "
                                  f"base URL, e.g. https://netbox.example.net")]) from None
    except requests.exceptions.RequestException as exc:
        raise NetboxImportError([f"cannot reach NetBox at {base}: {_reason(exc)}"]) from None
    if not snapshot.devices:
        where = " and ".join(f"{k} {v!r}" for k, v in (("site", site), ("tag", tag)) if v) or "NetBox"
        raise NetboxImportError([f"no device in {where} at {base}; check the --site/--tag slugs"])
    return snapshot


_ENTRY = re.compile(r"^(switches|hosts|links)\[(\d+)\](?:\.(ports|nics)\[(\d+)\])?\.?(.*)$")


def _invalid(finding: Any, data: dict[str, Any]) -> str:
    """A finding of the loader on the imported text, named by NetBox object (the text is never written, so
    its line and column mean nothing to the user): ``device leaf1 interface Ethernet0: mtu: …``."""
    path = finding.location.path or ""
    m = _ENTRY.match(path)
    where = f"the imported inventory does not validate at {path or 'the top level'}"
    if m:
        entry = data[m.group(1)][int(m.group(2))]
        if m.group(1) == "links":
            where = f"cable {entry['a']} - {entry['b']}"
        else:
            where = f"device {entry['name']}"
        if m.group(3):
            sub = entry[m.group(3)][int(m.group(4))]
            where += f" interface {sub.get('name') or sub.get('netdev')}"
        where += f": {m.group(5)}" if m.group(5) else ""
    return f"{where}: {finding.message}" + (f" (fix: {finding.fix})" if finding.fix else "")


def import_netbox(url: str, token: str, token_env: str, *, site: str | None = None, tag: str | None = None,
                  mapping: Mapping | None = None, site_name: str | None = None,
                  timeout_s: float = 30.0) -> tuple[str, ImportResult]:
    """Read NetBox at ``url`` and return (full-form inventory YAML, result). ``token_env`` only names the
    variable in messages; ``token`` itself never appears in one.

    The YAML is checked by the inventory loader (schema, names, catalog look-ups) before it is returned.

    Raises:
        NetboxImportError: NetBox unreachable or not answering as NetBox, token refused (401/403), a site
            or tag that selects no device, every mapping problem of :func:`build`, or an inventory that
            does not validate.
    """
    try:
        import pynetbox
        import requests  # noqa: F401  (the optional extra installs both)
    except ImportError:
        raise NetboxImportError(["pynetbox is not installed: pip install 'roce-tune[netbox]'"]) from None
    from roce_tune.findings import RoceTuneError
    from roce_tune.inventory.intent import full_form_yaml
    from roce_tune.inventory.loader import load_inventory_text

    mapping = mapping or Mapping()
    base = _shown(url.rstrip("/"))
    api = pynetbox.api(url.rstrip("/"), token=token)
    api.http_session = _session(timeout_s)
    # an inactive path has a cable that is not connected: worth tracing only if such cables are imported
    snapshot = _fetch(api, base, site, tag, token_env, set(mapping.cable_statuses) != {"connected"})
    result = build(snapshot, mapping, site_name or site or "netbox")
    header = (f"# Imported from NetBox at {base} by roce-tune import netbox"
              f"{' --site ' + site if site else ''}{' --tag ' + tag if tag else ''}.\n"
              f"# devices with NetBox status {', '.join(mapping.device_statuses)}; cables with status "
              f"{', '.join(mapping.cable_statuses)}.\n"
              "# policy and defaults are roce-tune's defaults: review them (docs/import-netbox.md).\n")
    text = header + full_form_yaml(result.data)
    try:
        load_inventory_text(text, "<netbox import>")
    except RoceTuneError as exc:
        raise NetboxImportError([_invalid(f, result.data) for f in exc.findings]) from None
    return text, result


__all__ = ["CABLE_MEDIA", "CABLE_STATUSES", "DEFAULT_CABLE_STATUSES", "DEFAULT_DEVICE_STATUSES",
           "DEFAULT_PLATFORMS", "DEVICE_STATUSES", "DEFAULT_ROLES", "LENGTH_UNIT_M", "ImportResult",
           "Mapping",
           "NetboxImportError", "Snapshot", "build", "cable_length_m", "compress_ports", "fetch",
           "import_netbox", "parse_map", "parse_statuses"]
