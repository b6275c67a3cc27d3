"""Parse NIC and switch counter output into flat ``name -> int`` maps, and take deltas.

Pure functions: text in, numbers out. Shapes follow what the tools print (field captures in
``shared/field-cases/counters``):

* ``ethtool -S IF`` — ``     rx_prio3_pause: 12`` lines (mlx5 names, docs/derivation.md#counters); also the
  ``diff -y`` side-by-side capture people take of two ``ethtool -S`` runs (:func:`parse_side_by_side`).
* RDMA hw_counters — ``grep -H "" /sys/class/infiniband/DEV/ports/N/hw_counters/*`` lines
  (``…/hw_counters/np_cnp_sent:1333``), plain ``name value`` / ``name: value`` lines, or
  ``rdma statistic show link DEV/N`` (``link mlx5_0/1 np_cnp_sent 1333 …``).
* SONiC (sonic-utilities): ``show pfc counters`` (two tables, ``Port Rx``/``Port Tx``, numbers with
  thousands separators), ``show queue counters``, ``show queue wredcounters`` (columns vary by
  platform capability; ``N/A`` cells), ``show pfcwd stats`` (``a/b`` cells).
* Arista EOS: ``show priority-flow-control counters | json`` (``interfaceCounters`` → ``rxFrames``/
  ``txFrames``) and ``show qos interfaces ethernet N ecn counters queue`` (``Tx-Queue  ECN Marked
  Packets`` table).

Switch counters are keyed per port with these names (values are packets or frames):
``pfc_rx_prio{p}``/``pfc_tx_prio{p}`` (PFC frames per priority; ``pfc_rx_all``/``pfc_tx_all`` when the
platform gives one figure per port), ``q{n}_tx_pkts``/``q{n}_tx_bytes``/``q{n}_drop_pkts``/
``q{n}_drop_bytes``, ``q{n}_wred_drop_pkts``, ``q{n}_ecn_marked_pkts``, ``q{n}_wd_storm_detected``/
``q{n}_wd_storm_restored``/``q{n}_wd_tx_drop``/``q{n}_wd_rx_drop`` (PFC watchdog).
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CounterSnapshot",
    "HostNicCounters",
    "SwitchCounters",
    "delta_counts",
    "delta_snapshot",
    "merge_ports",
    "parse_eos_ecn_counters",
    "parse_eos_pfc_counters_json",
    "parse_ethtool_stats",
    "parse_hw_counters",
    "parse_side_by_side",
    "parse_sonic_pfc_counters",
    "parse_sonic_pfcwd_stats",
    "parse_sonic_queue_counters",
    "parse_sonic_wred_counters",
    "to_int",
]

_ETHTOOL_RE = re.compile(r"^\s*([A-Za-z0-9_.\-\[\]]+):\s+(-?\d+)\s*$")
_HW_PATH_RE = re.compile(r"hw_counters/([A-Za-z0-9_]+):\s*(-?\d+)\s*$")
_HW_PLAIN_RE = re.compile(r"^\s*([a-z][a-z0-9_]+)\s*:?\s+(-?\d+)\s*$")
_INT_RE = re.compile(r"^-?[\d,]+$")


def to_int(token: str) -> int | None:
    """``"15,437"`` → 15437; ``"N/A"``/``"-"``/anything else → None."""
    tok = token.strip()
    return int(tok.replace(",", "")) if _INT_RE.match(tok) else None


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HostNicCounters(_Frozen):
    """Counters of one NIC port of one host.

    Attributes:
        ethtool: ``ethtool -S`` name → value (packets, bytes, pause frames; ``*_pause_duration`` µs).
        hw: RDMA hw_counters name → value (events/packets).
        errors: what could not be read (command failed, tool missing).
    """

    host: str
    netdev: str
    rdma_device: str
    ethtool: dict[str, int] = Field(default_factory=dict)
    hw: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)


class SwitchCounters(_Frozen):
    """Counters of one switch: ``ports[port][name]`` (names in the module docstring).

    ``unsupported`` lists counter families the platform (or this tool) could not read.
    """

    switch: str
    platform: str
    ports: dict[str, dict[str, int]] = Field(default_factory=dict)
    unsupported: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class CounterSnapshot(_Frozen):
    """Counters of every device at one moment (``taken_at`` Unix s), or a delta between two.

    For a delta, ``is_delta`` is True, ``seconds`` the time between the snapshots and ``resets``
    lists counters that went backwards (cleared or wrapped: their ``after`` value is used).
    """

    taken_at: float
    hosts: list[HostNicCounters] = Field(default_factory=list)
    switches: list[SwitchCounters] = Field(default_factory=list)
    is_delta: bool = False
    seconds: float | None = None
    resets: list[str] = Field(default_factory=list)

    def host(self, name: str) -> list[HostNicCounters]:
        """The NIC counters of host ``name`` (empty when not collected)."""
        return [h for h in self.hosts if h.host == name]


# ---------------------------------------------------------------------------------------- hosts
def parse_ethtool_stats(text: str) -> dict[str, int]:
    """``ethtool -S`` output → ``{name: value}``. Lines that are not ``name: integer`` are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = _ETHTOOL_RE.match(line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def parse_side_by_side(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """A ``diff -y`` of two ``ethtool -S`` captures → (before, after).

    Shape (field capture ``mlx5-ethtool-prio-delta-dscp-one-direction.txt``)::

        rx_prio0_packets: 4939696624      |     rx_prio0_packets: 4943711983     DIFF: 4015359

    Anything after the right-hand value (``DIFF: …``, comments) is ignored.
    """
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    pat = re.compile(r"^\s*([A-Za-z0-9_.\-]+):\s+(\d+)\s+[|<>]\s+([A-Za-z0-9_.\-]+):\s+(\d+)")
    for line in text.splitlines():
        m = pat.match(line)
        if m and m.group(1) == m.group(3):
            before[m.group(1)] = int(m.group(2))
            after[m.group(3)] = int(m.group(4))
    return before, after


def _rdma_link_tokens(line: str, in_link: bool) -> tuple[list[str] | None, bool]:
    """Name/value tokens of one ``rdma statistic`` line — a ``link <dev>/<port> …`` record or, inside one
    (``in_link``), an indented continuation (``rdma statistic`` wraps long records) — None for any other
    line; and whether a record is still open after this line."""
    stripped = line.strip()
    cont = in_link and line[:1].isspace() and len(stripped.split()) % 2 == 0 and len(stripped.split()) >= 2
    if cont:
        return stripped.split(), True
    if stripped.startswith("link ") and "/" in stripped.split()[1]:
        return stripped.split()[2:], True
    return None, in_link and bool(stripped)


def parse_hw_counters(text: str) -> dict[str, int]:
    """RDMA hw_counters in any of the three shapes in the module docstring → ``{name: value}``.

    When any line has the sysfs path form, only such lines are read (the capture may also hold
    ``ethtool -S`` lines, which look like plain ``name: value`` lines).
    """
    out: dict[str, int] = {}
    paths_only = any(_HW_PATH_RE.search(line) for line in text.splitlines())
    in_link = False
    for line in text.splitlines():
        m = _HW_PATH_RE.search(line)
        if m:
            out[m.group(1)] = int(m.group(2))
            continue
        if paths_only:
            continue
        toks, in_link = _rdma_link_tokens(line, in_link)
        if toks is not None:
            for name, val in zip(toks[::2], toks[1::2]):
                value = to_int(val)
                if value is not None:
                    out[name] = value
            continue
        m = _HW_PLAIN_RE.match(line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


# ---------------------------------------------------------------------------------------- SONiC
def _table_rows(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Split column-aligned tables: (header tokens, data rows) per table; ``---`` rules separate."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^\s*-{3,}(\s+-{3,})+\s*$", line) and i > 0:
            header = lines[i - 1]
            rows: list[list[str]] = []
            for row in lines[i + 1:]:
                if not row.strip() or re.match(r"^\s*-{3,}", row):
                    break
                if re.search(r"[$#>]\s*(show|sudo)\b", row):
                    break
                rows.append(row.split())
            tables.append((header.split(), rows))
    return tables


def parse_sonic_pfc_counters(text: str) -> dict[str, dict[str, int]]:
    """``show pfc counters`` → ``{port: {"pfc_rx_prio3": n, "pfc_tx_prio3": n, …}}``.

    The direction comes from the table header (``Port Rx`` / ``Port Tx``); ``N/A`` cells are skipped.
    """
    out: dict[str, dict[str, int]] = {}
    for header, rows in _table_rows(text):
        joined = " ".join(header[:2]).lower()
        if not joined.startswith("port r") and not joined.startswith("port t"):
            continue
        direction = "rx" if header[1].lower() == "rx" else "tx"
        prios = [int(h[3:]) for h in header[2:] if h.upper().startswith("PFC")]
        for row in rows:
            port, vals = row[0], row[1:]
            for prio, val in zip(prios, vals):
                v = to_int(val)
                if v is not None:
                    out.setdefault(port, {})[f"pfc_{direction}_prio{prio}"] = v
    return out


def parse_sonic_queue_counters(text: str) -> dict[str, dict[str, int]]:
    """``show queue counters [PORT]`` → ``{port: {"q3_tx_pkts", "q3_tx_bytes", "q3_drop_pkts", "q3_drop_bytes"}}``.

    Unicast queues only (``UC<n>``; multicast ``MC<n>`` rows are skipped).
    """
    names = {"counter/pkts": "tx_pkts", "counter/bytes": "tx_bytes", "drop/pkts": "drop_pkts",
             "drop/bytes": "drop_bytes"}
    return _sonic_queue_table(text, names)


def parse_sonic_wred_counters(text: str) -> dict[str, dict[str, int]]:
    """``show queue wredcounters`` → ``{port: {"q3_ecn_marked_pkts", "q3_wred_drop_pkts", …}}``.

    Columns are found by name (``WredDrp/pkts``, ``EcnMarked/pkts`` …) because platforms without
    WRED or ECN statistics leave them out or print ``N/A`` (SONiC ECN_and_WRED_statistics_HLD).
    """
    names = {"wreddrp/pkts": "wred_drop_pkts", "wreddrp/bytes": "wred_drop_bytes",
             "ecnmarked/pkts": "ecn_marked_pkts", "ecnmarked/bytes": "ecn_marked_bytes"}
    return _sonic_queue_table(text, names)


def _sonic_queue_table(text: str, names: dict[str, str]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for header, rows in _table_rows(text):
        low = [h.lower() for h in header]
        if len(low) < 3 or low[0] != "port" or low[1] != "txq":
            continue
        cols = [(i, names[h]) for i, h in enumerate(low) if h in names]
        for row in rows:
            if len(row) < 2 or not row[1].upper().startswith("UC"):
                continue
            q = int(row[1][2:])
            for i, key in cols:
                if i < len(row):
                    v = to_int(row[i])
                    if v is not None:
                        out.setdefault(row[0], {})[f"q{q}_{key}"] = v
    return out


def parse_sonic_pfcwd_stats(text: str) -> dict[str, dict[str, int]]:
    """``show pfcwd stats`` → ``{port: {"q3_wd_storm_detected", "q3_wd_storm_restored", "q3_wd_tx_drop", …}}``.

    Rows are ``Ethernet4:3  operational  2/2  0/56035  14053/371184 …``: queue, status, then
    ``a/b`` cells in the header's order (STORM DETECTED/RESTORED, TX OK/DROP, RX OK/DROP, TX LAST
    OK/DROP, RX LAST OK/DROP). The ``LAST`` pairs (last storm only) are not kept.
    """
    out: dict[str, dict[str, int]] = {}
    keys = (("wd_storm_detected", "wd_storm_restored"), ("wd_tx_ok", "wd_tx_drop"), ("wd_rx_ok", "wd_rx_drop"))
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+):(\d+)\s+(\S+)\s+(.*)$", line)
        if not m or "/" not in m.group(4):
            continue
        port, q = m.group(1), int(m.group(2))
        pairs = [p for p in m.group(4).split() if "/" in p]
        for (ka, kb), pair in zip(keys, pairs):
            a, _, b = pair.partition("/")
            for key, tok in ((ka, a), (kb, b)):
                v = to_int(tok)
                if v is not None:
                    out.setdefault(port, {})[f"q{q}_{key}"] = v
    return out


# ---------------------------------------------------------------------------------------- EOS
def parse_eos_pfc_counters_json(text: str) -> dict[str, dict[str, int]]:
    """``show priority-flow-control counters | json`` → ``{port: {"pfc_rx_all", "pfc_tx_all"}}``.

    Raises:
        ValueError: the text holds no JSON object.
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the EOS output")
    data = json.loads(text[start:text.rfind("}") + 1])
    out: dict[str, dict[str, int]] = {}
    for port, c in (data.get("interfaceCounters") or {}).items():
        out[port] = {"pfc_rx_all": int(c.get("rxFrames", 0)), "pfc_tx_all": int(c.get("txFrames", 0))}
    return out


def parse_eos_ecn_counters(text: str, port: str) -> dict[str, int]:
    """``show qos interfaces ethernet N ecn counters queue`` → ``{"q3_ecn_marked_pkts": n, …}``."""
    out: dict[str, int] = {}
    in_table = False
    for line in text.splitlines():
        if re.search(r"Tx-Queue\s+ECN Marked", line, re.IGNORECASE):
            in_table = True
            continue
        if in_table:
            toks = line.split()
            if len(toks) >= 2 and toks[0].isdigit() and to_int(toks[-1]) is not None:
                out[f"q{int(toks[0])}_ecn_marked_pkts"] = to_int(toks[-1])  # type: ignore[assignment]
    return out


def merge_ports(*parts: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Merge per-port maps from several commands (later keys win)."""
    out: dict[str, dict[str, int]] = {}
    for part in parts:
        for port, vals in part.items():
            out.setdefault(port, {}).update(vals)
    return out


# ---------------------------------------------------------------------------------------- deltas
def delta_counts(before: dict[str, int], after: dict[str, int], where: str,
                 resets: list[str]) -> dict[str, int]:
    """``after − before`` for every name in ``after``.

    A counter missing before counts from 0; one that went backwards was cleared or wrapped, so its
    ``after`` value is the delta and ``where:name`` is appended to ``resets``.
    """
    out: dict[str, int] = {}
    for name, value in after.items():
        prev = before.get(name, 0)
        if value < prev:
            resets.append(f"{where}:{name}")
            out[name] = value
        else:
            out[name] = value - prev
    return out


def delta_snapshot(before: CounterSnapshot, after: CounterSnapshot) -> CounterSnapshot:
    """Per-counter deltas between two snapshots of the same devices (see :func:`delta_counts`).

    Devices present only in ``after`` are kept with their totals as deltas and noted in ``resets``.
    """
    resets: list[str] = []
    hosts = []
    prev_h = {(h.host, h.netdev): h for h in before.hosts}
    for h in after.hosts:
        b = prev_h.get((h.host, h.netdev))
        if b is None:
            resets.append(f"{h.host}/{h.netdev}: no earlier snapshot")
            hosts.append(h)
            continue
        hosts.append(h.model_copy(update={
            "ethtool": delta_counts(b.ethtool, h.ethtool, f"{h.host}/{h.netdev}", resets),
            "hw": delta_counts(b.hw, h.hw, f"{h.host}/{h.rdma_device}", resets),
            "errors": sorted(set(b.errors) | set(h.errors))}))
    switches = []
    prev_s = {s.switch: s for s in before.switches}
    for s in after.switches:
        bs = prev_s.get(s.switch)
        ports = {port: delta_counts(bs.ports.get(port, {}) if bs else {}, vals, f"{s.switch}:{port}", resets)
                 for port, vals in s.ports.items()}
        switches.append(s.model_copy(update={"ports": ports, "errors": sorted(set(bs.errors if bs else []) |
                                                                            set(s.errors))}))
    return CounterSnapshot(taken_at=after.taken_at, hosts=hosts, switches=switches, is_delta=True,
                           seconds=round(after.taken_at - before.taken_at, 3), resets=resets)
