"""LLDP neighbour data as every platform module reads and writes it, and lldpd's ``lldpctl -f json``.

A platform module lists what it can read in ``LLDP_FORMATS`` and ``VERSION_FORMATS`` (one
:class:`CaptureFormat` each: the command as typed, a content test for blocks captured without a prompt,
and a parser) and writes what it would report with ``render_lldp(neighbors)`` / ``render_version(...)``.
:mod:`roce_tune.inventory.lldp` keeps the registry platform -> formats.

lldpd (https://lldpd.github.io, ``lldpcli(8)``) runs on SONiC (in its ``lldp`` container), on Cumulus
Linux and on Linux hosts, so ``lldpctl -f json`` is read here once for all three. Its JSON nests
``lldp.interface``: an object keyed by interface name when there is one neighbour, a list of such
one-key objects when there are several (lldpd's JSON writer turns repeated keys into a list); each holds
``chassis`` (keyed by the system name, or a bare ``id`` when the neighbour sends none) and ``port``
(``id: {type, value}``, ``descr``).

Which name is the neighbour's port (:func:`remote_port_name`): the port ID when its subtype is an
interface name (``ifname``, ``Interface name``, ``interfaceName``) or a locally assigned text; the port
description when the ID is a MAC address — what lldpd on a host sends by default (``lldpcli(8)``:
"the MAC address as port identifier and the interface name as port description") — or a locally assigned
number (Junos's default ``port-id-subtype locally-assigned``: the interface's SNMP index, its name in the
description).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "CaptureFormat",
    "catalog_model",
    "check_total",
    "DeviceFacts",
    "LldpNeighbor",
    "LldpParseError",
    "OUTPUT_ERROR_RE",
    "RemoteEnd",
    "json_block",
    "key_line",
    "line_of",
    "marker_lines",
    "is_mac",
    "mac_of",
    "parse_lldpctl_json",
    "parse_lldpctl_keyvalue",
    "parse_lldpctl_text",
    "parse_ntc",
    "remote_port_name",
    "render_lldpctl_json",
    "split_near",
]


class LldpParseError(ValueError):
    """A block that claims a format but cannot be read: ``index`` is the 0-based output line."""

    def __init__(self, message: str, index: int = 0):
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class LldpNeighbor:
    """One neighbour on one local port, as the device reports it.

    Attributes:
        local_port: the reporting device's port (its own full name, e.g. ``Ethernet1/1``).
        remote_system: the neighbour's system name (None when it sends none).
        remote_port: the neighbour's port name (:func:`remote_port_name`), None when only a MAC is known.
        remote_is_nic: the port ID was a MAC address (what lldpd on a Linux host sends).
        index: 0-based output line of the entry inside its block (for file:line).
    """

    local_port: str
    remote_system: str | None
    remote_port: str | None
    remote_is_nic: bool = False
    index: int = 0


@dataclass
class DeviceFacts:
    """What ``show version`` (or the platform's equivalent) says: hardware model and OS release."""

    model: str | None = None
    os_version: str | None = None
    hostname: str | None = None


@dataclass(frozen=True)
class RemoteEnd:
    """What a rendered capture reports on one local port (input of ``render_lldp``)."""

    local_port: str
    remote_system: str
    remote_port: str
    remote_is_host: bool = False


@dataclass(frozen=True)
class CaptureFormat:
    """A command output a platform can read.

    Attributes:
        name: how docs and errors name it (``show lldp table``).
        command: regex (search) over the prompt's command that selects this format.
        detect: test of the output text, for blocks without a prompt (and to confirm a prompt's).
        parse: text -> list of :class:`LldpNeighbor` (LLDP formats) or :class:`DeviceFacts` (version).
        parser: provenance for docs/import.md (``ntc-templates <template>`` or ``roce-tune``).
    """

    name: str
    command: str
    detect: Callable[[str], bool]
    parse: Callable[[str], Any]
    parser: str = "roce-tune"
    platforms: tuple[str, ...] = field(default=())


_NAME_SUBTYPES = {
    "ifname",
    "interface name",
    "interfacename",
    "local",
    "locally assigned",
    "interfacealias",
    "interface alias",
    "ifalias",
    "port component",
}
#: subtypes (and none given: SONiC's table) under which a port ID of digits only is an index, not a name:
#: Junos's default ``port-id-subtype locally-assigned`` sends the interface's SNMP index (``513``) and its
#: name as the port description
_LOCAL_SUBTYPES = {"", "local", "locally assigned", "locallyassigned"}
_MAC_RE = re.compile(r"^(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^(?:[0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$")


#: ``show lldp neighbors`` as typed, abbreviations too (``sh lldp nei``, ``sh ll n``): a prompt's command
SHOW_LLDP_NEIGHBORS = r"^sh(?:ow?)?\s+ll(?:dp?)?\s+n(?:e(?:i(?:g(?:h(?:b(?:o(?:rs?)?)?)?)?)?)?)?\b"
#: ``show version`` as typed, abbreviations too (``sh ver``)
SHOW_VERSION = r"^sh(?:ow?)?\s+ver(?:s(?:i(?:on?)?)?)?\b"


#: lines an LLDP command prints when part of it failed, and whose neighbours are then missing from the
#: output: docker's (SONiC runs lldpctl in one ``lldp<n>`` container per ASIC: ``Error response from daemon:
#: Container … is not running``, sonic-utilities PR 1656), lldpctl's own warnings (``[WARN/lldpctl] unknown
#: command from argument …``, sonic-buildimage issue 19209) and lldpshow's ``Error: …``
OUTPUT_ERROR_RE = re.compile(r"^(?:Error response from daemon:|Error:\s)|\[(?:WARN|ERR)/lldpctl\]")


def is_mac(value: str | None) -> bool:
    """``value`` is a MAC address (``0c:42:a1:…``, ``0c-42-…``, Cisco/Arista ``0c42.a1…``)."""
    return value is not None and bool(_MAC_RE.match(value.strip()))


def remote_port_name(subtype: str | None, port_id: str | None, descr: str | None) -> tuple[str | None, bool]:
    """(the neighbour's port name, whether the port ID was a MAC) from the port TLV (module docstring)."""
    st = (subtype or "").strip().lower()
    pid = (port_id or "").strip().strip('"') or None
    desc = (descr or "").strip().strip('"') or None
    is_mac = st in ("mac", "mac address", "macaddress") or (pid is not None and bool(_MAC_RE.match(pid)))
    if is_mac:
        return desc, True
    if pid is not None and (st in _NAME_SUBTYPES or not st) and not _is_index(st, pid, desc):
        return pid, False
    return desc or pid, False


def _is_index(subtype: str, port_id: str, descr: str | None) -> bool:
    """A locally assigned port ID of digits only, with a description to use instead: an index (Junos sends
    the interface's SNMP index by default), not a port name."""
    return port_id.isdigit() and bool(descr) and subtype in _LOCAL_SUBTYPES


@lru_cache(maxsize=1)
def _catalog_models() -> tuple[str, ...]:
    """The catalog's switch model ids, longest first (``SN4600C`` before ``SN4600``)."""
    from roce_tune.catalog import load_catalog

    return tuple(sorted((m.id for m in load_catalog().switch_models), key=len, reverse=True))


def catalog_model(name: str | None) -> str | None:
    """The catalog switch model a version output's model string names as one of its dash-separated parts,
    with NVIDIA's ``M`` prefix or not: SONiC HwSKUs ``ACS-MSN2700`` -> SN2700,
    ``Arista-7060X6-64PE-B-C512S2`` -> 7060X6-64PE, ``DellEMC-Z9332f-O32`` -> DellEMC-Z9332f; EOS
    ``7060DX5-64S-F`` (the airflow suffix) -> 7060DX5-64S. None when it names none."""
    for model in _catalog_models() if name else ():
        if re.search(rf"(?:^|[-_])M?{re.escape(model)}(?:[-_]|$)", name or "", re.IGNORECASE):
            return model
    return None


def check_total(text: str, got: int) -> None:
    """A table's ``Total entries displayed: N`` (SONiC lldpshow, NX-OS) against the ``got`` entries read.

    Raises:
        LldpParseError: they differ (a capture cut in the middle, or edited), at the total's line.
    """
    for i, line in enumerate(text.splitlines()):
        m = re.match(r"^Total entries displayed:\s*(\d+)\s*$", line)
        if m is not None and int(m.group(1)) != got:
            raise LldpParseError(f"'Total entries displayed: {m.group(1)}' but {got} neighbour(s) read (the "
                                 "capture is cut or edited)", i)


def split_near(row: str, start: int, column: int) -> tuple[str, str]:
    """``row[start:]`` cut in two at the run of spaces nearest to ``column`` (a header's column offset; a
    cell one character off its column, or a value with one space, ``Te 1/0/4``, still cuts between cells).
    The widest run wins among equally near ones."""
    gaps = [(m.start(), m.end()) for m in re.finditer(r" +", row) if m.start() > start and m.end() < len(row)]
    if not gaps:
        return row[start:].strip(), ""
    a, b = min(gaps, key=lambda g: (max(g[0] - column, column - g[1], 0), g[0] - g[1]))
    return row[start:a].strip(), row[b:].strip()


def mac_of(device: str, port: str) -> str:
    """A stable, locally administered MAC for a rendered NIC (``render_lldp_view`` fixtures)."""
    h = hashlib.sha256(f"{device}:{port}".encode()).digest()
    return ":".join(f"{b:02x}" for b in (0x02, *h[:5]))


def line_of(text: str, needle: str, start: int = 0) -> int:
    """0-based index of the first line at or after ``start`` that contains ``needle`` (else ``start``)."""
    for i, line in enumerate(text.splitlines()):
        if i >= start and needle in line:
            return i
    return start


def key_line(text: str, key: str) -> int:
    """0-based index of the line where ``key`` is a JSON object key (``"Ethernet1/1":``); else of the first
    line quoting it (a list form that names it as a value); else 0. A key names the entry itself, a quoted
    value may be an earlier entry's remote port."""
    lines = text.splitlines()
    for needle in (f'"{key}":', f'"{key}"'):
        for i, line in enumerate(lines):
            if needle in line:
                return i
    return 0


def marker_lines(text: str, *markers: str) -> list[int]:
    """0-based indexes of the lines holding any of ``markers`` (``"l_port_id"``): where each entry of a
    JSON list begins its local port, in document order (entry k's line is the k-th)."""
    return [i for i, line in enumerate(text.splitlines()) if any(m in line for m in markers)]


def json_block(text: str) -> Any:
    """The JSON document of a block (text before the first ``{``/``[`` line, e.g. a banner, is skipped).

    Raises:
        LldpParseError: not JSON, at the line the decoder stopped.
    """
    lines = text.splitlines()
    first = next((i for i, t in enumerate(lines) if t.lstrip().startswith(("{", "["))), None)
    if first is None:
        raise LldpParseError("no JSON document in the output", 0)
    try:
        return json.loads("\n".join(lines[first:]))
    except json.JSONDecodeError as exc:
        raise LldpParseError(f"the JSON cannot be read: {exc.msg}", first + exc.lineno - 1) from None


def parse_ntc(template: str, text: str) -> list[dict[str, str]]:
    """Rows of ntc-templates' TextFSM ``template`` (file name without ``.textfsm``) over ``text``.

    Raises:
        LldpParseError: the template rejects the text.
    """
    import textfsm
    from ntc_templates.parse import _get_template_dir

    try:
        with open(f"{_get_template_dir()}/{template}.textfsm", encoding="utf-8") as fh:
            return [
                {k.lower(): v for k, v in row.items()} for row in textfsm.TextFSM(fh).ParseTextToDicts(text)
            ]
    except textfsm.TextFSMError as exc:
        raise LldpParseError(f"ntc-templates {template} cannot read the output: {exc}") from None


# --- lldpd: lldpctl -f json --------------------------------------------------------------------------
def _entries(obj: Any) -> list[tuple[str, Any]]:
    """lldpd's keyed-object-or-list-of-one-key-objects as (key, value) pairs."""
    if isinstance(obj, dict):
        return list(obj.items())
    if isinstance(obj, list):
        return [kv for item in obj if isinstance(item, dict) for kv in item.items()]
    return []


def _value(x: Any) -> str | None:
    if isinstance(x, dict):
        return _value(x.get("value"))
    if isinstance(x, list):
        return _value(x[0]) if x else None
    return None if x is None else str(x)


def _first(value: Any) -> Any:
    """``value``, or its first item when it is a list (json0 wraps objects in lists; ``{}`` when empty)."""
    if isinstance(value, list):
        return value[0] if value else {}
    return value


def _lldpctl_interfaces(raw: Any) -> list[tuple[str, Any]]:
    """(local interface, its object) pairs of ``lldp.interface``: a name-keyed object, or (json0) a list of
    objects with a name."""
    if isinstance(raw, list) and all(isinstance(i, dict) and "name" in i and "port" in i for i in raw):
        return [(str(_value(i["name"])), i) for i in raw]
    return _entries(raw)


def _chassis_name(chassis: Any) -> str | None:
    """The remote system name: the chassis object's key (lldpd 1.0), or its ``name`` (json0); None when
    the first entry is neither."""
    for key, val in _entries(chassis):
        if key == "id":
            continue
        if key == "name":  # json0: chassis[0].name[0].value
            return _value(val)
        if isinstance(val, dict):
            return key
        return None
    return None


def parse_lldpctl_json(text: str) -> list[LldpNeighbor]:
    """Neighbours from ``lldpctl -f json`` (module docstring for the shape; ``json0`` lists are read too).

    Raises:
        LldpParseError: not JSON, or no ``lldp`` object.
    """
    doc = json_block(text)
    lldp = _first(doc.get("lldp") if isinstance(doc, dict) else None)  # a list: json0
    if not isinstance(lldp, dict):
        raise LldpParseError("no 'lldp' object: not lldpctl -f json output", 0)
    out = []
    for ifname, info in _lldpctl_interfaces(lldp.get("interface")):
        if not isinstance(info, dict):
            continue
        system = _chassis_name(info.get("chassis"))
        port = _first(info.get("port") or {})
        pid = _first(port.get("id") or {})
        name, is_mac = remote_port_name(
            pid.get("type") if isinstance(pid, dict) else None, _value(pid), _value(port.get("descr"))
        )
        out.append(LldpNeighbor(ifname, system, name, is_mac, key_line(text, ifname)))
    return out


def render_lldpctl_json(device: str, ends: list[RemoteEnd]) -> str:
    """What ``lldpctl -f json`` prints on ``device`` for ``ends`` (lldpd 1.0 layout)."""
    items = []
    for i, e in enumerate(ends, start=1):
        if e.remote_is_host:
            port = {
                "id": {"type": "mac", "value": mac_of(e.remote_system, e.remote_port)},
                "descr": e.remote_port,
                "ttl": "120",
            }
        else:
            port = {"id": {"type": "ifname", "value": e.remote_port}, "descr": e.remote_port, "ttl": "120"}
        chassis = {
            e.remote_system: {
                "id": {"type": "mac", "value": mac_of(e.remote_system, "chassis")},
                "descr": "Linux" if e.remote_is_host else "network switch",
                "capability": [
                    {"type": "Bridge", "enabled": not e.remote_is_host},
                    {"type": "Router", "enabled": not e.remote_is_host},
                ],
            }
        }
        items.append(
            {
                e.local_port: {
                    "via": "LLDP",
                    "rid": str(i),
                    "age": "0 day, 01:00:00",
                    "chassis": chassis,
                    "port": port,
                }
            }
        )
    iface: Any = items[0] if len(items) == 1 else items
    return json.dumps({"lldp": {"interface": iface} if items else {}}, indent=2) + "\n"


#: ``lldpctl -f keyvalue``: ``lldp.<interface>.<path>=<value>``; the interface name may hold dots (a VLAN
#: netdev ``eth0.100``), so the path is found by its first word (lldpd's kv writer: src/client/kv_writer.c)
_KV_RE = re.compile(
    r"^lldp\.(?P<ifname>\S+?)\.(?P<path>via|rid|age|chassis(?:\.\S+)?|port(?:\.\S+)?|vlan\S*|ppvid\S*"
    r"|pi\S*|lldp-med\S*|unknown-tlvs\S*|dot3\S*)=(?P<value>.*)$"
)
#: port-ID subtypes as the keyvalue form names them (``port.<subtype>=<id>``)
_KV_PORT_IDS = ("ifname", "local", "mac", "ifalias", "ip")


def _kv_neighbor(ifname: str, fields: dict[str, str], index: int) -> LldpNeighbor:
    subtype = next((st for st in _KV_PORT_IDS if f"port.{st}" in fields), None)
    name, is_mac = remote_port_name(
        subtype, fields.get(f"port.{subtype}") if subtype else None, fields.get("port.descr")
    )
    return LldpNeighbor(ifname, fields.get("chassis.name") or None, name, is_mac, index)


def parse_lldpctl_keyvalue(text: str) -> list[LldpNeighbor]:
    """Neighbours from ``lldpctl -f keyvalue`` (lldpd's line format: ``lldp.<interface>.<path>=<value>``,
    each neighbour starting with its ``via`` line; the port ID is ``port.<subtype>``: ``ifname``,
    ``local``, ``mac`` …; the system name ``chassis.name``). lldpd writes a value as it is, so a value with
    line breaks (an NX-OS system description: release, ``TAC support: …``, copyright) goes on over the
    lines that follow it.

    Raises:
        LldpParseError: a line before the first ``lldp.<interface>.<path>=<value>`` entry that is none.
    """
    out: list[LldpNeighbor] = []
    cur: tuple[str, int] | None = None
    fields: dict[str, str] = {}
    last = ""
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        m = _KV_RE.match(line.strip())
        if m is None and cur is not None:
            fields[last] += "\n" + line.strip()  # the value above goes on (kv_writer.c prints it verbatim)
            continue
        if m is None:
            raise LldpParseError(f"{line.strip()[:80]!r} is not an lldpctl -f keyvalue line", i)
        if m["path"] == "via" or cur is None or cur[0] != m["ifname"]:
            if cur is not None:
                out.append(_kv_neighbor(cur[0], fields, cur[1]))
            cur, fields = (m["ifname"], i), {}
        last = m["path"]
        fields[last] = m["value"].strip()
    if cur is not None:
        out.append(_kv_neighbor(cur[0], fields, cur[1]))
    return out


#: lldpd's text form (``lldpctl``, ``lldpcli show neighbors [details|summary]``, SONiC's ``show lldp
#: neighbors``, which runs ``lldpctl`` in the ``lldp`` container): one ``Interface:`` line per neighbour, then
#: indented ``Key: value`` lines (lldpd src/client/text_writer.c); ``PortID``/``ChassisID`` values are
#: ``<subtype> <id>`` (``ifname Ethernet1``, ``mac 0c:42:a1:…``, ``local etp1``)
_TEXT_IFACE_RE = re.compile(r"^Interface:\s+(?P<ifname>[^\s,]+)\s*(?:,\s*via:|$)")
_TEXT_KEY_RE = re.compile(r"^\s+(?P<key>SysName|PortID|PortDescr):\s*(?P<value>.*?)\s*$")
#: the title lldpd's text writer prints above a listing (src/client/display.c ``tag_start(w, "lldp", …)``):
#: ``LLDP neighbors``; ``LLDP interfaces`` (``show interfaces``) and ``LLDP statistics`` list the device's
#: own ports under the same ``Interface:`` lines
_TEXT_TITLE_RE = re.compile(r"^(?P<title>LLDP [a-z]+|Local chassis):\s*$")


def _text_neighbor(ifname: str, fields: dict[str, str], index: int) -> LldpNeighbor:
    subtype, _, pid = fields.get("PortID", "").partition(" ")
    name, is_mac = remote_port_name(subtype, pid.strip() or None, fields.get("PortDescr"))
    return LldpNeighbor(ifname, fields.get("SysName") or None, name, is_mac, index)


def parse_lldpctl_text(text: str) -> list[LldpNeighbor]:
    """Neighbours from lldpd's text form (``lldpctl``, ``lldpcli show neighbors [details]``, SONiC ``show lldp
    neighbors``, Cumulus ``nv show interface lldp-detail``, which prints ``Interface: <local>`` alone): each
    ``Interface: <local>, via: LLDP, …`` line starts a neighbour (a port with two
    neighbours has two), whose ``SysName``, ``PortID: <subtype> <id>`` and ``PortDescr`` are read; other
    lines (capabilities, a system description over several lines, lldpctl's ``[WARN/…]`` log lines) are not.

    Raises:
        LldpParseError: neither an ``Interface:`` line nor lldpd's ``LLDP neighbors:`` title; a neighbour
            without a ``PortID`` line (a capture cut inside it); an ``Interface:`` line under another title
            (``LLDP interfaces``: ``lldpcli show interfaces`` lists the device's own ports, not neighbours).
    """
    out: list[LldpNeighbor] = []
    cur: tuple[str, int] | None = None
    fields: dict[str, str] = {}
    lines = text.splitlines()
    title = "LLDP neighbors"  # lldpctl without a command prints neighbours
    for i, line in enumerate(lines):
        if (t := _TEXT_TITLE_RE.match(line)) is not None:
            title = t["title"]
        m = _TEXT_IFACE_RE.match(line)
        if m is not None and title != "LLDP neighbors":
            raise LldpParseError(f"'Interface: {m['ifname']}' is under lldpd's '{title}:' title: this "
                                 "device's own port, not a neighbour (capture 'lldpcli show neighbors' or "
                                 "'lldpctl')", i)
        if m is not None:
            if cur is not None:
                out.append(_text_checked(cur, fields))
            cur, fields = (m["ifname"], i), {}
            continue
        k = _TEXT_KEY_RE.match(line)
        if k is not None and cur is not None:
            fields.setdefault(k["key"], k["value"])
    if cur is not None:
        out.append(_text_checked(cur, fields))
    elif not any(t.strip() == "LLDP neighbors:" for t in lines):
        raise LldpParseError("no 'Interface: <port>, via: …' line: not lldpctl's text output", 0)
    return out


def _text_checked(cur: tuple[str, int], fields: dict[str, str]) -> LldpNeighbor:
    if "PortID" not in fields:
        raise LldpParseError(f"the neighbour on {cur[0]} has no 'PortID:' line (the capture is cut off)",
                             cur[1])
    return _text_neighbor(cur[0], fields, cur[1])


#: how lldpd's client is typed: ``lldpctl``, ``lldpcli``, through ``sudo`` and SONiC's ``docker exec [-i]
#: lldp`` (sonic-utilities scripts/lldpshow: ``docker exec -i lldp<n> lldpctl``)
_LLDPD_CLIENT = r"^(?:sudo\s+)?(?:docker\s+exec\s+(?:-\S+\s+)*\S+\s+)?(?:lldpctl|lldpcli)\b"

LLDPCTL_TEXT = CaptureFormat(
    name="lldpctl / lldpcli show neighbors (text)",
    command=_LLDPD_CLIENT + r"(?!.*-f\s*(?:json|keyvalue|xml))",
    detect=lambda t: bool(re.search(r"^Interface:\s+[^\s,]+\s*(?:,\s*via:|$)|^LLDP neighbors:\s*$", t, re.M)),
    parse=parse_lldpctl_text,
    parser="roce-tune (lldpd text)",
)

LLDPCTL_KEYVALUE = CaptureFormat(
    name="lldpctl -f keyvalue",
    command=_LLDPD_CLIENT + r".*-f\s*keyvalue",
    detect=lambda t: bool(re.search(r"^lldp\.\S+\.via=", t, re.M)),
    parse=parse_lldpctl_keyvalue,
    parser="roce-tune (lldpd keyvalue)",
)

LLDPCTL_JSON = CaptureFormat(
    name="lldpctl -f json",
    command=_LLDPD_CLIENT + r".*-f\s*json",
    detect=lambda t: bool(re.search(r"^\s*\{\s*$", t, re.M)) and '"lldp"' in t,
    parse=parse_lldpctl_json,
    parser="roce-tune (lldpd JSON)",
)
