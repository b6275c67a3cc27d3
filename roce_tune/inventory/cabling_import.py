"""``roce-tune import cabling FILE.csv``: a data-centre cabling plan into an inventory.

A cabling plan is a spreadsheet a DC team keeps: one row per cable, device and port of each end,
length with its unit, media. :func:`read_cabling_csv` reads it with Python's :mod:`csv` (quoted fields,
multi-line cells), sniffs the delimiter (comma, semicolon, tab), drops a UTF-8 BOM (Excel's "CSV UTF-8"),
finds the columns by their header (:data:`COLUMN_ALIASES`, or ``--columns``) and checks every row; every
bad cell is a finding at ``file:line`` naming the column. :func:`skeleton_from_cables` writes a new
inventory (:mod:`roce_tune.inventory.skeleton`), :func:`merge_into` puts the cabling into an existing one
with ruamel.yaml's round trip, so its comments and layout stay.

Finding IDs: RT008 a bad cabling-plan cell, header or file; RT009 a merge conflict (the plan and the
inventory cable a port differently). Column mapping and rules: docs/import.md.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from roce_tune.findings import Finding, Location, RoceTuneError, Severity, short_repr
from roce_tune.inventory.models import DEVICE_NAME_RE, INTERFACE_NAME_RE, expand_interface_pattern
from roce_tune.inventory.skeleton import (
    Cable,
    SkeletonOptions,
    build_skeleton,
    classify_devices,
    guess_platform,
)
from roce_tune.platforms import full_port_name

CSV_RULE = "RT008"
CONFLICT_RULE = "RT009"
#: Largest cabling plan read (a 4,096-host fabric's plan is ~3 MB).
MAX_CSV_BYTES = 64 << 20

FIELDS = ("a_device", "a_port", "b_device", "b_port", "length", "unit", "media")
REQUIRED = ("a_device", "a_port", "b_device", "b_port")


def _norm(header: str) -> str:
    return re.sub(r"[^a-z0-9]", "", header.lower())


#: Header spellings (compared without case, spaces and punctuation) for each field.
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "a_device": (
        "device a",
        "a device",
        "device_a",
        "source device",
        "src device",
        "hostname a",
        "a hostname",
        "host a",
        "from device",
        "a side device",
        "side a device",
        "a end device",
        "a end",
        "aend device",
        "local device",
        "device 1",
        "device1",
        "source",
        "from",
    ),
    "a_port": (
        "port a",
        "a port",
        "port_a",
        "interface a",
        "a interface",
        "source port",
        "src port",
        "source interface",
        "from port",
        "from interface",
        "a side port",
        "side a port",
        "a end port",
        "a end interface",
        "local port",
        "local interface",
        "port 1",
        "port1",
        "interface 1",
    ),
    "b_device": (
        "device b",
        "b device",
        "device_b",
        "destination device",
        "dest device",
        "dst device",
        "target device",
        "hostname b",
        "b hostname",
        "host b",
        "to device",
        "b side device",
        "side b device",
        "b end device",
        "b end",
        "zend device",
        "z end device",
        "device z",
        "z device",
        "hostname z",
        "z hostname",
        "host z",
        "z side device",
        "side z device",
        "remote device",
        "neighbor",
        "neighbour",
        "device 2",
        "device2",
        "destination",
        "to",
    ),
    "b_port": (
        "port b",
        "b port",
        "port_b",
        "interface b",
        "b interface",
        "destination port",
        "dest port",
        "dst port",
        "destination interface",
        "target port",
        "to port",
        "to interface",
        "b side port",
        "side b port",
        "b end port",
        "z end port",
        "port z",
        "z port",
        "interface z",
        "z interface",
        "z side port",
        "side z port",
        "z end interface",
        "remote port",
        "remote interface",
        "neighbor port",
        "neighbour port",
        "port 2",
        "port2",
        "interface 2",
    ),
    "length": (
        "length",
        "cable length",
        "len",
        "cable len",
        "length m",
        "cable length m",
        "length meters",
        "length metres",
        "length ft",
        "cable length ft",
        "distance",
    ),
    "unit": ("unit", "length unit", "units", "uom", "length uom"),
    "media": ("media", "cable type", "type", "medium", "cable media", "cable", "media type", "cable kind"),
}
_ALIAS_INDEX = {_norm(alias): fld for fld, aliases in COLUMN_ALIASES.items() for alias in aliases}
#: Headers a sheet repeats for the two ends side by side (``Device, Port, Device, Port``): the first of
#: exactly two is the A end, the second the B end.
REPEATED_HEADERS: dict[tuple[str, str], tuple[str, ...]] = {
    ("a_device", "b_device"): ("device", "hostname", "host", "switch", "node", "name"),
    ("a_port", "b_port"): ("port", "interface", "ifname", "nic"),
}

#: Length units -> metres per unit.
UNITS_M: dict[str, float] = {
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "cm": 0.01,
    "mm": 0.001,
    "km": 1000.0,
    "ft": 0.3048,
    "feet": 0.3048,
    "foot": 0.3048,
    "'": 0.3048,
    "in": 0.0254,
    "inch": 0.0254,
    "inches": 0.0254,
    '"': 0.0254,
}
_LENGTH_RE = re.compile(r"^\s*([+-]?\d+(?:[.,]\d+)?)\s*([A-Za-z'\"]*)\s*$")
#: Media spellings -> inventory media (dac: passive/active copper, aoc: active optical cable,
#: optic: transceivers).
MEDIA: dict[str, str] = {
    "dac": "dac",
    "copper": "dac",
    "twinax": "dac",
    "passivecopper": "dac",
    "acc": "dac",
    "aec": "dac",
    "activecopper": "dac",
    "cu": "dac",
    "directattach": "dac",
    "directattachcopper": "dac",
    "aoc": "aoc",
    "activeoptical": "aoc",
    "activeopticalcable": "aoc",
    "optic": "optic",
    "optical": "optic",
    "optics": "optic",
    "fiber": "optic",
    "fibre": "optic",
    "smf": "optic",
    "mmf": "optic",
    "transceiver": "optic",
    "sr4": "optic",
    "dr4": "optic",
    "fr4": "optic",
    "sr8": "optic",
    "dr8": "optic",
    "2xdr4": "optic",
    "2xsr4": "optic",
    "lr4": "optic",
    "om3": "optic",
    "om4": "optic",
    "os2": "optic",
}


def media_of(cell: str) -> str | None:
    """The inventory media a cable-type cell names, or None: the whole cell (``AOC``, ``Active Copper``),
    else the words in it (``Passive DAC``, ``QSFP112 DAC``, ``400G-DR4``, ``Active Optical Cable (AOC)``)
    when they name one media (a word inside a longer match, ``optical`` in ``active optical``, does not
    count); None when nothing or two media (``DAC/AOC``) match."""
    whole = MEDIA.get(_norm(cell))
    if whole is not None:
        return whole
    words = re.findall(r"[a-z0-9]+", cell.lower())
    spans = [
        (i, j, MEDIA["".join(words[i:j])])
        for i in range(len(words))
        for j in range(i + 1, len(words) + 1)
        if "".join(words[i:j]) in MEDIA
    ]
    named = {
        m for i, j, m in spans if not any(a <= i and j <= b and b - a > j - i for a, b, _ in spans)
    }
    return named.pop() if len(named) == 1 else None


@dataclass
class CablingPlan:
    """What :func:`read_cabling_csv` found: the cables in file order and the column each field came from."""

    path: str
    cables: list[Cable] = field(default_factory=list)
    columns: dict[str, str] = field(default_factory=dict)
    delimiter: str = ","
    #: field -> 1-based column of the header it came from (positions of findings after reading)
    column_numbers: dict[str, int] = field(default_factory=dict)


def parse_columns_option(text: str | None) -> dict[str, str]:
    """``a_device=Device A,b_port=Port B`` -> {field: header}.

    Raises:
        ValueError: an unknown field name or an item without ``=``.
    """
    out: dict[str, str] = {}
    if not text:
        return out
    for item in next(csv.reader([text])):
        if not item.strip():
            continue
        key, sep, header = item.partition("=")
        key = key.strip()
        if not sep or key not in FIELDS or not header.strip():
            raise ValueError(
                f"--columns item {item!r}: write FIELD=Header with FIELD one of {', '.join(FIELDS)}"
            )
        out[key] = header.strip()
    return out


def _err(
    file: str,
    line: int,
    message: str,
    fix: str,
    column: str | None = None,
    col: int | None = None,
    rule: str = CSV_RULE,
) -> Finding:
    return Finding(
        rule=rule,
        severity=Severity.error,
        message=message,
        fix=fix,
        location=Location(file=file, line=line, col=col, path=column),
    )


#: file signatures of spreadsheet workbooks: a zip (Office Open XML, OpenDocument) and an OLE2 file (.xls)
_WORKBOOKS = ((b"PK\x03\x04", "(.xlsx, .ods: a zip archive)"), (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
                                                               "(.xls, an OLE2 file)"))


def _decode(raw: bytes, file: str) -> str:
    """The file's text: UTF-8 (a BOM dropped), or UTF-16 with its BOM (Excel's 'Unicode Text' export).
    A workbook (``.xlsx``/``.ods``: a zip; ``.xls``: an OLE file) is an error that says so."""
    kind = next((k for magic, k in _WORKBOOKS if raw.startswith(magic)), None)
    if kind is not None:
        raise RoceTuneError([_err(file, 1, f"the file is a spreadsheet workbook {kind}, not CSV",
                                  "save the sheet as 'CSV UTF-8' (File > Save As) and import that file")])
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            pass  # reported as not UTF-8 below
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RoceTuneError(
            [
                _err(
                    file,
                    line,
                    f"the file is not UTF-8 (byte 0x{raw[exc.start]:02x})",
                    "export the sheet as 'CSV UTF-8'",
                )
            ]
        ) from None


def _sniff(text: str) -> type[csv.Dialect] | csv.Dialect:
    """The file's dialect: Excel's ``sep=X`` first line names the delimiter; else :class:`csv.Sniffer`
    over the first 50 lines (comma, semicolon or tab), else Excel's."""
    sep = re.match(r"sep=([,;\t|])\r?$", text.split("\n", 1)[0])
    if sep:
        delimiter = sep.group(1)

        class _Sep(csv.excel):
            pass

        _Sep.delimiter = delimiter
        return _Sep
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _repeated_pairs(norm: list[str], given: dict[str, str]) -> dict[str, int]:
    """Field -> column index of the ends under a repeated header (:data:`REPEATED_HEADERS`): a spelling
    found in exactly two columns gives the A end the first and the B end the second."""
    out: dict[str, int] = {}
    for (a_fld, b_fld), spellings in REPEATED_HEADERS.items():
        if a_fld in given or b_fld in given:
            continue
        for spelling in spellings:
            cols = [i for i, n in enumerate(norm) if n == spelling]
            if len(cols) == 2:
                out[a_fld], out[b_fld] = cols
                break
    return out


def _map_header(row: list[str], given: dict[str, str], file: str, line: int) -> dict[str, int]:
    """Field -> column index. Raises RoceTuneError for missing or doubled columns."""
    norm = [_norm(h) for h in row]
    out: dict[str, int] = _repeated_pairs(norm, given)
    problems: list[Finding] = []
    for fld, header in given.items():
        if _norm(header) not in norm:
            problems.append(
                _err(
                    file,
                    line,
                    f"--columns names {header!r} for {fld}, but the header has no such "
                    f"column (columns: {', '.join(h.strip() for h in row)})",
                    "use the header text as it is in the file",
                    header,
                )
            )
        else:
            out[fld] = norm.index(_norm(header))
    for i, n in enumerate(norm):
        fld = _ALIAS_INDEX.get(n)
        if fld is None or fld in given or i in out.values():
            continue
        if fld in out:
            problems.append(
                _err(
                    file,
                    line,
                    f"columns {row[out[fld]].strip()!r} and {row[i].strip()!r} both read as {fld}",
                    f"name the one to use with --columns {fld}=HEADER",
                    row[i].strip(),
                    i + 1,
                )
            )
            continue
        out[fld] = i
    missing = [f for f in REQUIRED if f not in out]
    if missing:
        problems.append(
            _err(
                file,
                line,
                f"no column for {', '.join(missing)} in the header ({', '.join(h.strip() for h in row)})",
                "name the columns like 'Device A, Port A, Device B, Port B, Length, Media', or map them with "
                "--columns a_device=...,a_port=...,b_device=...,b_port=...",
            )
        )
    if problems:
        raise RoceTuneError(problems)
    return out


def parse_length(cell: str, unit: str | None) -> float:
    """A length cell (``3m``, ``3 m``, ``2,5``, ``300cm``, ``10ft``) in metres; ``unit`` is the unit column
    or the header's ``(m)``/``(ft)`` and applies when the cell has none; a bare number is metres.

    A comma before exactly three digits (``1,000``, ``2,500 m``) is an error: a thousands separator in an
    English-language sheet (1000 m) and a decimal comma in a European one (1.0 m) read alike, a factor of
    1000 apart in the headroom the cable needs.

    Raises:
        ValueError: not a number, a comma that may be a thousands separator, an unknown unit, a negative or
            zero length, or more than 100 km.
    """
    m = _LENGTH_RE.match(cell)
    if not m:
        raise ValueError(f"{short_repr(cell)} is not a length (write 3m, 2.5 m, 300cm or 10ft)")
    if re.fullmatch(r"[+-]?\d{1,3},\d{3}", m.group(1)):
        whole, frac = m.group(1).split(",")
        raise ValueError(
            f"{short_repr(cell)}: the comma may be a thousands separator ({whole}{frac}) or a decimal comma "
            f"({whole}.{frac}); write the length without it"
        )
    value = float(m.group(1).replace(",", "."))
    u = (m.group(2) or unit or "m").strip().lower()
    if u not in UNITS_M:
        raise ValueError(
            f"unknown unit {short_repr(m.group(2) or unit)} in {short_repr(cell)} "
            f"(known: m, cm, mm, km, ft, in)"
        )
    metres = round(value * UNITS_M[u], 3)
    if value < 0:
        raise ValueError(f"the length {short_repr(cell)} is negative")
    if metres == 0:
        raise ValueError(f"the length {short_repr(cell)} is zero")
    if metres > 100_000:
        raise ValueError(f"the length {short_repr(cell)} is more than 100 km")
    return metres


def _header_unit(header: str) -> str | None:
    m = re.search(r"[(\[]\s*([A-Za-z'\"]+)\s*[)\]]\s*$", header)
    return m.group(1).lower() if m else None


def read_cabling_csv(path: str | Path, columns: dict[str, str] | None = None) -> CablingPlan:
    """Read and check a cabling plan.

    Args:
        path: the CSV file (comma, semicolon or tab separated; UTF-8 with or without BOM).
        columns: field -> header text, overriding the auto-detection (:data:`COLUMN_ALIASES`).

    Returns:
        The plan: one :class:`~roce_tune.inventory.skeleton.Cable` per row, lengths in metres, media as
        the inventory names it (``dac``/``aoc``/``optic``).

    Raises:
        RoceTuneError: RT008 for every bad cell (``file:line``, the column's header as the path): an empty
            field, a device or port name roce-tune cannot use, an unknown unit, a negative or zero length,
            unknown media, a row whose two ends are the same port, a port used by two rows; for a header
            without the required columns; for an unreadable file.
    """
    file = str(path)
    text = _decode(_read_bytes(path, file), file)
    dialect = _sniff(text)
    plan = CablingPlan(path=file, delimiter=dialect.delimiter)
    reader = csv.reader(io.StringIO(text, newline=""), dialect)
    findings: list[Finding] = []
    has_header = False
    try:
        has_header = _read_rows(reader, plan, columns or {}, findings)
    except csv.Error as exc:
        findings.append(
            _err(
                file,
                reader.line_num,
                f"the CSV cannot be read: {exc}",
                "close the quoted field (a cell with a quote must be quoted and its quotes doubled)",
            )
        )
    if not has_header and not findings:
        findings.append(
            _err(
                file,
                1,
                "the file has no header row and no cables",
                "export the cabling sheet with its header row",
            )
        )
    elif not plan.cables and not findings:
        findings.append(_err(file, 1, "the plan has a header but no cable rows (every row empty or a '#' "
                             "comment)", "export the sheet with its rows (no filter hiding them)"))
    if findings:
        raise RoceTuneError(findings)
    return plan


def _read_bytes(path: str | Path, file: str) -> bytes:
    """The file's bytes, at most :data:`MAX_CSV_BYTES` (RoceTuneError if unreadable or larger)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CSV_BYTES + 1)
    except OSError as exc:
        raise RoceTuneError(
            [
                _err(
                    file,
                    0,
                    f"cannot read the cabling plan: {exc.strerror or exc}",
                    "check the path and the file's permissions",
                )
            ]
        ) from None
    if len(raw) > MAX_CSV_BYTES:
        raise RoceTuneError(
            [_err(file, 1, f"the file is larger than {MAX_CSV_BYTES:,} bytes", "split the cabling plan")]
        )
    return raw


def _read_rows(reader: Any, plan: CablingPlan, columns: dict[str, str], findings: list[Finding]) -> bool:
    """The header, then one cable per data row into ``plan`` (bad cells into ``findings``); False when
    there is no header. Blank rows, rows starting with ``#`` and, before the header, rows with fewer
    than four cells filled (title rows) are skipped. Raises csv.Error."""
    index: dict[str, int] | None = None
    headers: list[str] = []
    seen = _Seen()
    line = 1
    for row in reader:
        start, line = line, reader.line_num + 1
        if not any(c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        if index is None and sum(1 for c in row if c.strip()) < len(REQUIRED):
            continue  # a title row above the header (or Excel's sep= line): no cable fits in it
        if index is None:
            index = _map_header(row, columns, plan.path, start)
            headers = [h.strip() for h in row]
            plan.columns = {f: headers[i] for f, i in index.items()}
            plan.column_numbers = {f: i + 1 for f, i in index.items()}
            continue
        cable = _row(row, index, headers, plan.path, start, seen, findings)
        if cable is not None:
            plan.cables.append(cable)
    return index is not None


_ROW_FIELDS = ("a_device", "a_port", "b_device", "b_port", "length", "media")


@dataclass
class _Seen:
    """What earlier rows cabled: port ``(device, port)`` -> (line, the port at the other end), and each
    device's first spelling ``lower(name)`` -> (name, line)."""

    ports: dict[tuple[str, str], tuple[int, tuple[str, str]]] = field(default_factory=dict)
    names: dict[str, tuple[str, int]] = field(default_factory=dict)
_DEVICE_FIELDS = frozenset(("a_device", "b_device"))
_PORT_FIELDS = frozenset(("a_port", "b_port"))
_EMPTY_FIX = {"length": "the cable length (e.g. 3m)", "media": "the media (dac, aoc or optic)"}


@dataclass
class _RowReader:
    """Reads one data row; every bad cell becomes an RT008 finding at the row's line and column."""

    row: list[str]
    index: dict[str, int]
    headers: list[str]
    file: str
    line: int
    findings: list[Finding]

    def cell(self, fld: str) -> str:
        i = self.index[fld]
        return self.row[i].strip() if i < len(self.row) else ""

    def err(self, fld: str, message: str, fix: str) -> None:
        i = self.index[fld]
        self.findings.append(
            _err(
                self.file,
                self.line,
                f"column {self.headers[i]!r} ({fld}): {message}",
                fix,
                self.headers[i],
                i + 1,
            )
        )

    def values(self) -> dict[str, str]:
        """The non-empty cells by field; empty ones and unusable device/port names are reported."""
        vals: dict[str, str] = {}
        for fld in _ROW_FIELDS:
            if fld not in self.index:
                continue
            v = self.cell(fld)
            if not v:
                what = _EMPTY_FIX.get(fld, "the device name" if fld.endswith("device") else "the port name")
                self.err(fld, "empty field", f"fill in {what}, or drop the row")
                continue
            vals[fld] = v
            self._check_name(fld, v)
        return vals

    def _check_name(self, fld: str, v: str) -> None:
        if fld in _DEVICE_FIELDS and not DEVICE_NAME_RE.fullmatch(v):
            self.err(
                fld,
                f"{short_repr(v)} is not a usable device name",
                "use letters, digits, '.', '_' and '-', starting with a letter (no spaces)",
            )
        elif fld in _PORT_FIELDS and not INTERFACE_NAME_RE.fullmatch(v):
            self.err(
                fld,
                f"{short_repr(v)} is not a usable port name",
                "write the interface name as the device shows it, e.g. Ethernet0, swp1 or ens1f0np0",
            )

    def check_ends(self, a: tuple[str, str], b: tuple[str, str], seen: _Seen) -> None:
        """Device names spelt as on earlier rows (hostnames are not case-sensitive); two different ports,
        each not cabled by an earlier row; a row that repeats an earlier cable is one finding. ``seen``
        is updated."""
        for fld, dev in (("a_device", a[0]), ("b_device", b[0])):
            first = seen.names.setdefault(dev.lower(), (dev, self.line))
            if first[0] != dev:
                self.err(
                    fld,
                    f"{short_repr(dev)} is spelt {first[0]!r} on line {first[1]} (device names are not "
                    "case-sensitive)",
                    "spell each device the same way on every row",
                )
        if a == b:
            self.err(
                "b_port", f"both ends are {a[0]}:{a[1]}", "a cable joins two different ports: correct one end"
            )
            return
        prior = seen.ports.get(a)
        if prior is not None and prior[1] == b:
            self.err(
                "a_device",
                f"the same cable as line {prior[0]} ({a[0]}:{a[1]} - {b[0]}:{b[1]})",
                "each cable takes one row: drop this one",
            )
            return
        for fld, end, peer in (("a_port", a, b), ("b_port", b, a)):
            if end in seen.ports:
                self.err(
                    fld,
                    f"port {end[0]}:{end[1]} is already cabled on line {seen.ports[end][0]}",
                    "each port takes one cable: correct one of the two rows",
                )
            else:
                seen.ports[end] = (self.line, peer)

    def length(self, text: str) -> float | None:
        unit = self.cell("unit") if "unit" in self.index else _header_unit(self.headers[self.index["length"]])
        try:
            return parse_length(text, unit or None)
        except ValueError as exc:
            self.err("length", str(exc),
                     "write the length as a number and a known unit, e.g. 3m, 2.5 m, 250cm or 10ft")
            return None

    def media(self, text: str) -> str | None:
        media = media_of(text)
        if media is None:
            self.err(
                "media",
                f"unknown media {short_repr(text)}",
                "write dac (copper), aoc (active optical) or optic (transceivers and fibre)",
            )
        return media


def _row(
    row: list[str],
    index: dict[str, int],
    headers: list[str],
    file: str,
    line: int,
    seen: _Seen,
    findings: list[Finding],
) -> Cable | None:
    bad = len(findings)
    reader = _RowReader(row, index, headers, file, line, findings)
    vals = reader.values()
    a = (vals.get("a_device", ""), vals.get("a_port", ""))
    b = (vals.get("b_device", ""), vals.get("b_port", ""))
    if len(findings) == bad and all(f in vals for f in REQUIRED):
        reader.check_ends(a, b, seen)
    length = reader.length(vals["length"]) if "length" in vals else None
    media = reader.media(vals["media"]) if "media" in vals else None
    if len(findings) > bad:
        return None
    return Cable(a[0], a[1], b[0], b[1], length, media, f"{file}:{line}")


def expand_port_names(cables: list[Cable], opts: SkeletonOptions,
                      platforms: dict[str, str] | None = None) -> list[Cable]:
    """``cables`` with each switch end's port as its platform names it (``Eth1/1`` / ``Et1/1`` -> EOS and
    NX-OS ``Ethernet1/1``: :func:`roce_tune.platforms.full_port_name`), so the inventory's ports are what
    the switch calls them. A switch's platform: ``platforms`` (the inventory's, on a merge), else the forced
    one, else its facts', else guessed from its ports as :func:`build_skeleton` does. Host ends are kept."""
    kinds = classify_devices(cables, opts)
    ports: dict[str, set[str]] = {}
    for c in cables:
        ports.setdefault(c.a_device, set()).add(c.a_port)
        ports.setdefault(c.b_device, set()).add(c.b_port)
    plat: dict[str, str] = {}
    for dev, names in ports.items():
        if kinds.get(dev) != "switch":
            continue
        facts = opts.facts.get(dev)
        plat[dev] = ((platforms or {}).get(dev) or (opts.platform if opts.force_platform else None)
                     or (facts.platform if facts is not None else None)
                     or guess_platform(names, opts.platform))

    def port(dev: str, name: str) -> str:
        return full_port_name(plat[dev], name) if dev in plat else name

    return [replace(c, a_port=port(c.a_device, c.a_port), b_port=port(c.b_device, c.b_port)) for c in cables]


def expanded_cables(plan: CablingPlan, opts: SkeletonOptions,
                    platforms: dict[str, str] | None = None) -> list[Cable]:
    """:func:`expand_port_names` of the plan's cables, checked again on the expanded names: two rows that
    write one switch port differently (``Eth1/1`` and ``Ethernet1/1`` on NX-OS) use the same port, which
    :func:`read_cabling_csv` (names as written) cannot see.

    Raises:
        RoceTuneError: RT008 per row that uses a port an earlier row cabled, or whose two ends are one port,
            at its ``file:line:col`` (the port's column), naming the earlier row's ``file:line:col``.
    """
    cables = expand_port_names(plan.cables, opts, platforms)
    seen: dict[tuple[str, str], tuple[int, str, str]] = {}  # (device, port) -> (line, column, as written)
    findings: list[Finding] = []
    for c, raw in zip(cables, plan.cables):
        line = int(c.where.rsplit(":", 1)[1])
        ends = [(fld, (dev, port), written) for fld, dev, port, written in
                (("a_port", c.a_device, c.a_port, raw.a_port), ("b_port", c.b_device, c.b_port, raw.b_port))]
        for fld, end, written in ends:
            col = plan.column_numbers.get(fld)
            here = f"{plan.path}:{line}" + (f":{col}" if col else "")
            prior = seen.get(end)
            if prior is not None:
                findings.append(_err(
                    plan.path, line,
                    f"column {plan.columns.get(fld, fld)!r} ({fld}): port {end[0]}:{end[1]} (written "
                    f"{written!r}) is already cabled at {prior[1]} (written {prior[2]!r}): both name port "
                    f"{end[1]} of {end[0]}",
                    "each port takes one cable: correct one of the two rows", plan.columns.get(fld), col))
                break  # one finding per row (a repeated cable is one mistake)
            seen[end] = (line, here, written)
    if findings:
        raise RoceTuneError(findings)
    return cables


def skeleton_from_cables(plan: CablingPlan, opts: SkeletonOptions) -> dict[str, Any]:
    """A new inventory (plain data) from a cabling plan.

    Raises:
        RoceTuneError: RT008 for a row whose two ends are both hosts (an inventory declares host cables on
            a switch port), at its line.
    """
    from roce_tune.inventory.skeleton import host_to_host

    direct = host_to_host(plan.cables, opts)
    if direct:
        raise RoceTuneError(
            [
                _err(
                    plan.path,
                    int(c.where.rsplit(":", 1)[1]),
                    f"{c.a_device}:{c.a_port} - {c.b_device}:{c.b_port}: both ends read as hosts",
                    "name the switches with --switches REGEX (or the hosts with --hosts REGEX); "
                    "a direct host-to-host cable cannot be declared in an inventory",
                )
                for c in direct
            ]
        )
    return build_skeleton(expanded_cables(plan, opts), opts)


def render_cabling_csv(inventory: Any, delimiter: str = ",") -> str:
    """An inventory's cabling as the plan a DC team would hand over (header ``Device A, Port A, Device B,
    Port B, Length, Media``; lengths in metres with their unit): every link and every cabled NIC.
    ``inventory`` is an :class:`~roce_tune.inventory.models.Inventory` (tests, benchmarks, exports)."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    w.writerow(["Device A", "Port A", "Device B", "Port B", "Length", "Media"])
    default = inventory.defaults
    for link in inventory.links:
        (da, pa), (db, pb) = link.a.split(":", 1), link.b.split(":", 1)
        length = link.cable_length if link.cable_length is not None else default.cable_length
        w.writerow([da, pa, db, pb, f"{length:g} m", (link.media or default.media).value.upper()])
    for host in inventory.hosts:
        for nic in host.nics:
            if nic.switch_port is None:
                continue
            sw, port = nic.switch_port.split(":", 1)
            length = nic.cable_length if nic.cable_length is not None else default.cable_length
            w.writerow(
                [host.name, nic.netdev, sw, port, f"{length:g} m", (nic.media or default.media).value.upper()]
            )
    return buf.getvalue()


# --- merge into an existing inventory (ruamel.yaml round trip) ----------------------------------------
@dataclass
class MergeResult:
    """The merged text and what changed (one line each: ``file:line: added link …``)."""

    text: str
    changes: list[str]


def _line(node: Any) -> int:
    try:
        return int(node.lc.line) + 1
    except AttributeError:
        return 0


def _flow_map(items: dict[str, Any]) -> Any:
    from ruamel.yaml.comments import CommentedMap

    m = CommentedMap(items)
    m.fa.set_flow_style()
    return m


_BARE_KEY_RE = re.compile(r"^( *)[^\s#-][^#]*:\s*(?:#.*)?$")
_CONTENT_RE = re.compile(r"^( *)(- )?\S")


def _guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) indentation of a YAML file, for ruamel's ``YAML.indent``: how far a
    nested mapping's keys and a block list's dashes sit under their key (the first of each in the file).
    Defaults: the shipped inventories' layout (mappings by 2, list dashes 2 under their key)."""
    found: dict[bool, int] = {}  # is a list item -> columns under the key
    key_col: int | None = None
    for line in text.splitlines():
        m = _CONTENT_RE.match(line)
        if m is None or line.lstrip().startswith("#"):
            continue
        col, dash = len(m.group(1)), bool(m.group(2))
        if key_col is not None and (col > key_col or (dash and col == key_col)):
            found.setdefault(dash, col - key_col)
        if len(found) == 2:
            break
        bare = _BARE_KEY_RE.match(line)
        key_col = len(bare.group(1)) if bare else None
    offset = found.get(True, 2)
    return found.get(False, 2), offset + 2, offset


_LISTS = ("switches", "links", "hosts")


def _load_for_merge(inventory: str | Path, yaml: Any) -> tuple[Any, list[str], list[str]]:
    """The inventory as a ruamel round-trip mapping with ``switches``/``links``/``hosts`` lists (the
    YAML's indentation set from the file's, :func:`_guess_indent`), and which of those keys were absent
    and which null (filled in with empty lists; :func:`_restore_unused` puts back the ones left empty).

    Raises:
        RoceTuneError: RT008 when it cannot be read, is not a mapping or is a ``fabric:`` intent.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError

    inv_file = str(inventory)
    try:
        text = Path(inventory).read_text(encoding="utf-8")
        yaml.indent(*_guess_indent(text))
        data = yaml.load(text)
    except (OSError, UnicodeDecodeError, YAMLError) as exc:
        raise RoceTuneError(
            [
                _err(
                    inv_file,
                    1,
                    f"cannot read the inventory to merge into: {exc}",
                    "run roce-tune lint on it first",
                )
            ]
        ) from None
    if not isinstance(data, CommentedMap):
        raise RoceTuneError(
            [_err(inv_file, 1, "the inventory is not a mapping", "run roce-tune lint on it first")]
        )
    if data.get("fabric") is not None:
        raise RoceTuneError(
            [
                _err(
                    inv_file,
                    _line(data["fabric"]) or 1,
                    "the inventory is written as a fabric: intent; its links are expanded, not written",
                    "merge into the full form instead: roce-tune expand INVENTORY > full.yaml",
                )
            ]
        )
    absent = [k for k in _LISTS if k not in data]
    null = [k for k in _LISTS if k in data and data[k] is None]
    for key in absent + null:
        data[key] = CommentedSeq()
    return data, absent, null


def _restore_unused(data: Any, absent: list[str], null: list[str]) -> None:
    """Put back the ``switches``/``links``/``hosts`` keys :func:`_load_for_merge` filled in and the merge
    left empty: drop the ``absent`` ones, set the ``null`` ones back to null (the file keeps its keys)."""
    for key in absent:
        if not data[key]:
            del data[key]
    for key in null:
        if not data[key]:
            data[key] = None


def _declared_ports(switches: dict[str, Any]) -> dict[str, set[str]]:
    """Switch -> the port names its ``ports`` patterns expand to (unreadable patterns skipped)."""
    declared: dict[str, set[str]] = {}
    for name, sw in switches.items():
        names: set[str] = set()
        for p in sw.get("ports") or []:
            try:
                names.update(expand_interface_pattern(str(p["name"])))
            except ValueError:
                continue
        declared[name] = names
    return declared


def _agreed_speed(sw: Any) -> tuple[int, Any] | None:
    """(Gb/s, the value as the first entry writes it: ``"100G"``, ``100000``) of the speed every ``ports``
    entry of switch ``sw`` (round-trip YAML) gives; None when they give several speeds, none, or one the
    inventory cannot read (then the merge adds a port at ``--speed``)."""
    from roce_tune.units import parse_speed_gbps

    spelt: dict[int, Any] = {}
    for p in sw.get("ports") or []:
        try:
            spelt.setdefault(parse_speed_gbps(p["speed"]), p["speed"])
        except (KeyError, TypeError, ValueError):
            return None
    return next(iter(spelt.items())) if len(spelt) == 1 else None


def _used_ports(data: Any) -> dict[str, tuple[str, str, Any]]:
    """Endpoint ``device:port`` -> (``link`` or ``nic``, the peer endpoint, the node that cables it)."""
    used: dict[str, tuple[str, str, Any]] = {}
    for link in data["links"]:
        a, b = str(link["a"]), str(link["b"])
        used[a] = ("link", b, link)
        used[b] = ("link", a, link)
    for h in data["hosts"]:
        for nic in h.get("nics") or []:
            if nic.get("switch_port"):
                used[str(nic["switch_port"])] = ("nic", f"{h['name']}:{nic['netdev']}", nic)
    return used


def _same_value(key: str, old: Any, new: str) -> bool:
    """Whether the inventory's ``old`` value says what the plan's ``new`` one does (lengths in any
    spelling the inventory reads: ``2``, ``2.0m``, ``200cm`` = ``2m``)."""
    if key != "cable_length":
        return str(old) == new
    from roce_tune.units import parse_length_m

    try:
        return parse_length_m(old) == parse_length_m(new)
    except ValueError:
        return False


class _Merge:
    """The state of one merge: the round-trip inventory, its indexes, the changes and the conflicts."""

    def __init__(self, data: Any, inv_file: str, plan: CablingPlan, opts: SkeletonOptions) -> None:
        self.data = data
        self.inv_file = inv_file
        self.where = plan.path
        self.opts = opts
        self.switches: dict[str, Any] = {str(s["name"]): s for s in data["switches"]}
        self.hosts: dict[str, Any] = {str(h["name"]): h for h in data["hosts"]}
        self.declared = _declared_ports(self.switches)
        self.used = _used_ports(data)
        self.kinds = classify_devices(plan.cables, opts)
        self.kinds.update({n: "switch" for n in self.switches})
        self.kinds.update({n: "host" for n in self.hosts})
        self.changes: list[str] = []
        self.conflicts: list[Finding] = []
        self.spelling = {n.lower(): node for n, node in (*self.switches.items(), *self.hosts.items())}

    def conflict(
        self, line: int, message: str, fix: str = "correct the plan or the inventory so they agree"
    ) -> None:
        self.conflicts.append(_err(self.where, line, message, fix, rule=CONFLICT_RULE))

    def misspelt(self, c: Cable, line: int) -> bool:
        """A conflict for each end whose device the inventory spells in another case (names are not
        case-sensitive: one device, not a new one)."""
        bad = False
        for dev in (c.a_device, c.b_device):
            node = self.spelling.get(dev.lower())
            if node is not None and str(node["name"]) != dev:
                bad = True
                self.conflict(
                    line,
                    f"the plan's {dev!r} is {node['name']!r} at {self.inv_file}:{_line(node)} "
                    "(device names are not case-sensitive)",
                    "spell the device as the inventory does",
                )
        return bad

    def cable(self, c: Cable) -> None:
        """Merge one cable of the plan."""
        line = int(c.where.rsplit(":", 1)[1])
        if self.misspelt(c, line):
            return
        ka, kb = self.kinds[c.a_device], self.kinds[c.b_device]
        a, b = f"{c.a_device}:{c.a_port}", f"{c.b_device}:{c.b_port}"
        if ka == kb == "host":
            self.conflict(
                line,
                f"{a} - {b}: both ends are hosts",
                "a direct host-to-host cable cannot be declared in an inventory; drop the row",
            )
        elif ka == "switch" and kb == "switch":
            self.link(c, a, b, line)
        elif ka == "host":
            self.host_cable(c, c.a_device, c.a_port, b, line)
        else:
            self.host_cable(c, c.b_device, c.b_port, a, line)

    def set_cable(self, node: Any, c: Cable, what: str) -> None:
        for key, val in (
            ("cable_length", None if c.length_m is None else f"{c.length_m:g}m"),
            ("media", c.media),
        ):
            if val is None:
                continue
            old = node.get(key)
            if old is None or not _same_value(key, old, val):
                node[key] = val
                self.changes.append(
                    f"{c.where}: {what}: {key} {old if old is not None else '(none)'} -> {val}"
                )

    def ensure_switch(self, name: str, port: str) -> None:
        """Declare switch ``name`` (a leaf of ``--platform``/``--model`` to check) and its ``port`` if the
        inventory lacks them; a new port takes the speed all the switch's ports agree on, else ``--speed``."""
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        from roce_tune.units import parse_speed_gbps

        opts = self.opts
        if name not in self.switches:
            sw = CommentedMap(
                [
                    ("name", name),
                    ("platform", guess_platform([port], opts.platform)),
                    ("model", opts.model),
                    ("role", "leaf"),
                    ("ports", CommentedSeq()),
                ]
            )
            self.data["switches"].append(sw)
            self.switches[name] = sw
            self.declared[name] = set()
            self.changes.append(f"added switch {name} (platform, model and role to check)")
        if port not in self.declared[name]:
            sw = self.switches[name]
            if sw.get("ports") is None:
                sw["ports"] = CommentedSeq()
            agreed = _agreed_speed(sw)
            speed = opts.speed if agreed is None else agreed[1]
            why = "" if agreed is None or agreed[0] == parse_speed_gbps(opts.speed) else (
                f": the speed of {name}'s other ports; not --speed {opts.speed}")
            sw["ports"].append(_flow_map({"name": port, "speed": speed}))
            self.declared[name].add(port)
            self.changes.append(f"added port {name}:{port} ({speed}{why})")

    def link(self, c: Cable, a: str, b: str, line: int) -> None:
        """A switch-switch cable: update the declared link, report a clash, or add the link."""
        ua, ub = self.used.get(a), self.used.get(b)
        if ua and ua[1] == b and ua[0] == "link":
            self.set_cable(ua[2], c, f"link {a} - {b}")
            return
        clash = [(e, u) for e, u in ((a, ua), (b, ub)) if u]
        for e, u in clash:
            self.conflict(
                line, f"the plan cables {a} to {b}, but {self.inv_file}:{_line(u[2])} cables {e} to {u[1]}"
            )
        if clash:
            return
        self.ensure_switch(c.a_device, c.a_port)
        self.ensure_switch(c.b_device, c.b_port)
        entry = {"a": a, "b": b}
        if c.length_m is not None:
            entry["cable_length"] = f"{c.length_m:g}m"
        if c.media:
            entry["media"] = c.media
        node = _flow_map(entry)
        self.data["links"].append(node)
        self.used[a] = ("link", b, node)
        self.used[b] = ("link", a, node)
        self.changes.append(f"{c.where}: added link {a} - {b}")

    def host_cable(self, c: Cable, host: str, netdev: str, sp: str, line: int) -> None:
        """A host-switch cable: the NIC's switch_port and cable, adding the host and the NIC if missing."""
        h = self.hosts.get(host)
        nic = next((n for n in (h.get("nics") or []) if str(n.get("netdev")) == netdev), None) if h else None
        cur = self.used.get(sp)
        if cur and not (cur[0] == "nic" and cur[1] == f"{host}:{netdev}"):
            self.conflict(
                line,
                f"the plan cables {host}:{netdev} to {sp}, but {self.inv_file}:"
                f"{_line(cur[2])} cables {sp} to {cur[1]}",
            )
            return
        if nic is not None and nic.get("switch_port") and str(nic["switch_port"]) != sp:
            self.conflict(
                line,
                f"the plan cables {host}:{netdev} to {sp}, but {self.inv_file}:"
                f"{_line(nic)} cables it to {nic['switch_port']}",
            )
            return
        self.ensure_switch(*sp.split(":", 1))
        if h is None:
            h = self.add_host(c, host)
        if nic is None:
            nic = self.add_nic(c, h, host, netdev)
        if not nic.get("switch_port"):
            nic["switch_port"] = sp
            self.changes.append(f"{c.where}: {host}:{netdev} switch_port -> {sp}")
        self.used[sp] = ("nic", f"{host}:{netdev}", nic)
        self.set_cable(nic, c, f"{host}:{netdev}")

    def add_host(self, c: Cable, host: str) -> Any:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        h = CommentedMap([("name", host), ("nics", CommentedSeq())])
        self.data["hosts"].append(h)
        self.hosts[host] = h
        self.changes.append(f"{c.where}: added host {host}")
        return h

    def add_nic(self, c: Cable, h: Any, host: str, netdev: str) -> Any:
        from ruamel.yaml.comments import CommentedSeq

        if h.get("nics") is None:
            h["nics"] = CommentedSeq()
        nic = _flow_map(
            {
                "model": self.opts.nic_model,
                "netdev": netdev,
                "rdma_device": f"mlx5_{len(h['nics'])}",
                "speed": self.opts.speed,
            }
        )
        h["nics"].append(nic)
        self.changes.append(f"{c.where}: added NIC {host}:{netdev} (check rdma_device with ibdev2netdev)")
        return nic


def merge_into(inventory: str | Path, plan: CablingPlan, opts: SkeletonOptions) -> MergeResult:
    """Merge the plan's cabling into the inventory at ``inventory`` (comments and layout kept).

    For each cable: a switch-switch link already declared gets the plan's ``cable_length``/``media``; a
    missing one is added (with the ports it needs on declared switches, and new switches for unknown
    devices); a host cable sets the NIC's ``switch_port``/``cable_length``/``media`` (adding the NIC or the
    host when missing). A port that the inventory cables to another peer is a conflict.

    Raises:
        RoceTuneError: RT009 for every conflict (the plan's line and the inventory's line), RT008 when the
            inventory cannot be read as YAML or is written as a ``fabric:`` intent (merge into its
            ``roce-tune expand`` output instead).
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    data, absent, null = _load_for_merge(inventory, yaml)
    merge = _Merge(data, str(inventory), plan, opts)
    known = {name: str(sw.get("platform") or "") for name, sw in merge.switches.items()}
    for c in expanded_cables(plan, opts, known):
        merge.cable(c)
    if merge.conflicts:
        raise RoceTuneError(merge.conflicts)
    _restore_unused(data, absent, null)
    buf = io.StringIO()
    yaml.dump(merge.data, buf)
    text = buf.getvalue()
    if b"\r\n" in Path(inventory).read_bytes():  # a file saved with Windows line ends keeps them
        text = text.replace("\n", "\r\n")
    return MergeResult(text, merge.changes)


__all__ = [
    "COLUMN_ALIASES",
    "CONFLICT_RULE",
    "CSV_RULE",
    "MEDIA",
    "UNITS_M",
    "CablingPlan",
    "MergeResult",
    "media_of",
    "merge_into",
    "parse_columns_option",
    "render_cabling_csv",
    "parse_length",
    "read_cabling_csv",
    "expanded_cables",
    "skeleton_from_cables",
]
