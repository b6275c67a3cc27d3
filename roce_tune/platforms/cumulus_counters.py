"""NVIDIA Cumulus Linux (NVUE) switch counters (the platform's
:class:`~roce_tune.platforms.contract.CounterReader`).

Commands per lossless port, CL 5.5 and later (CL ≤ 5.4 spelled the first ``nv show interface swpN qos
counters``); shapes from the NVUE command reference (CumulusNetworks/docs) and the CL RoCE page:

* ``nv show interface swpN counters qos`` — NVUE tables ``PFC Statistics`` (per switch-priority
  ``rx-pause-frames``/``tx-pause-frames``), ``Egress Queue Statistics`` (per traffic-class ``tx-frames``,
  ``tx-bytes``, ``tx-uc-buffer-discards`` (bytes), ``wred-discards``) and ``Qos Port Statistics``
  (``ecn-marked-packets`` Transmit, one figure per port);
* ``nv show interface swpN qos roce counters`` — indented ``name  value  description`` tree
  (``tx-ecn-stats ecn-marked-packets``, ``rx-pfc-stats``/``tx-pfc-stats pause-packets``; RoCE traffic only);
* ``nv show interface swpN qos pfc-watchdog`` — per traffic-class table with a ``deadlock-count`` column
  (column found by name).

Per-port ECN marks are stored on the port's first PFC priority as queue number (NVUE RoCE mode maps
switch-priority N → traffic-class N). Counter names: :mod:`roce_tune.platforms.counters`.
"""

from __future__ import annotations

import re

from roce_tune.plan import SwitchPlan
from roce_tune.platforms.contract import CounterReader
from roce_tune.platforms.counters import (
    CounterReading,
    PortCounters,
    lossless_port_outputs,
    per_port_reading,
    to_int,
)

_RULE_RE = re.compile(r"^\s*-{2,}(\s+-{2,})+\s*$")


def _first_int(text: str) -> int | None:
    """First integer token of ``text`` (``"12 Bytes"`` → 12); None when there is none."""
    for tok in text.split():
        v = to_int(tok)
        if v is not None:
            return v
    return None


# ---------------------------------------------------------------------------------------- Cumulus
def _nvue_tables(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """NVUE column tables: (title above, header tokens, rows). A row ends at a blank line or rule."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not _RULE_RE.match(line) or i == 0:
            continue
        title = ""
        for j in range(i - 2, -1, -1):
            prev = lines[j].strip()
            if prev and not set(prev) <= {"="}:
                title = prev
                break
            if not prev:
                break
        rows = []
        for row in lines[i + 1:]:
            if not row.strip() or _RULE_RE.match(row) or set(row.strip()) <= {"="}:
                break
            rows.append(row.split())
        out.append((title.lower(), [h.lower() for h in lines[i - 1].split()], rows))
    return out


def parse_cumulus_counters_qos(text: str, port: str, ecn_queue: int | None = None) -> PortCounters:
    """``nv show interface PORT counters qos`` (or its ``pfc-stats`` / ``egress-queue-stats`` views).

    Returns ``{port: {"pfc_rx_prio3", "pfc_tx_prio3", "q3_tx_pkts", "q3_tx_bytes", "q3_drop_bytes",
    "q3_wred_drop_pkts", …}}``; the port-wide ``ecn-marked-packets`` Transmit figure is stored as
    ``q{ecn_queue}_ecn_marked_pkts`` when ``ecn_queue`` is given (NVUE counts ECN marks per port, not
    per traffic class; in RoCE mode only the lossless class marks). ``n/a`` cells are skipped, and so
    are byte cells NVUE prints scaled (``367.18 GB``): a rounded figure is no counter to take deltas of.
    """
    vals: dict[str, int] = {}
    for _title, header, rows in _nvue_tables(text):
        if header[:1] == ["counter"] and "transmit" in header:
            if ecn_queue is not None:
                vals.update(_port_ecn_marks(rows, ecn_queue))
        elif cols := _indexed_columns(header):
            vals.update(_indexed_counts(header, rows, cols))
    return {port: vals} if vals else {}


def _indexed_columns(header: list[str]) -> dict[str, str]:
    """Column -> counter name pattern of an NVUE table indexed by switch-priority or traffic-class ({} for
    any other table)."""
    if header[:1] == ["switch-priority"] and "rx-pause-frames" in header:
        return {"rx-pause-frames": "pfc_rx_prio{}", "tx-pause-frames": "pfc_tx_prio{}"}
    if header[:1] == ["traffic-class"] and "tx-frames" in header:
        return {"tx-frames": "q{}_tx_pkts", "tx-bytes": "q{}_tx_bytes",
                "tx-uc-buffer-discards": "q{}_drop_bytes", "wred-discards": "q{}_wred_drop_pkts"}
    return {}


def _port_ecn_marks(rows: list[list[str]], ecn_queue: int) -> dict[str, int]:
    """The ``ecn-marked-packets`` Transmit figure of a ``Qos Port Statistics`` table, on ``ecn_queue``."""
    vals: dict[str, int] = {}
    for row in rows:
        label = "-".join(t.lower() for t in row[:-2])
        if label == "ecn-marked-packets" and (v := to_int(row[-1])) is not None:
            vals[f"q{ecn_queue}_ecn_marked_pkts"] = v
    return vals


def _indexed_counts(header: list[str], rows: list[list[str]], cols: dict[str, str]) -> dict[str, int]:
    """Counters of a priority/traffic-class table; cells like ``0 Bytes`` span two tokens."""
    vals: dict[str, int] = {}
    for row in rows:
        idx = to_int(row[0]) if row else None
        if idx is None:
            continue
        cells = _split_unit_cells(row[1:], len(header) - 1)
        for name, cell in zip(header[1:], cells):
            if re.search(r"\d\s+[KMGT]i?B\b|\.", cell):
                continue  # NVUE prints large byte counts scaled ("367.18 GB"): not an exact count
            if name in cols and (v := _first_int(cell)) is not None:
                vals[cols[name].format(idx)] = v
    return vals


def _split_unit_cells(tokens: list[str], n: int) -> list[str]:
    """Re-join ``["0", "Bytes", "12"]`` into ``["0 Bytes", "12"]`` (unit words belong to the number
    before)."""
    cells: list[str] = []
    for tok in tokens:
        if cells and to_int(tok) is None and re.fullmatch(r"[A-Za-z]+", tok) and tok.lower() != "n/a":
            cells[-1] += " " + tok
        else:
            cells.append(tok)
    return cells[:n]


def counters_qos_evidence_line(text: str, _port: str, counter: str) -> int | None:
    """0-based index of the line of ``nv show interface PORT counters qos`` output ``text`` that ``counter``
    was read from: its row of the ``switch-priority`` (PFC) or ``traffic-class`` (egress queue) table, or the
    ``ecn-marked-packets`` row of the port table for the ECN marks; None when not found."""
    lines = text.splitlines()
    if counter.endswith("_ecn_marked_pkts"):
        return next((i for i, t in enumerate(lines) if t.split()[:1] == ["ecn-marked-packets"]), None)
    m = re.match(r"pfc_(?:rx|tx)_prio(\d+)$|q(\d+)_", counter)
    if m is None:
        return None
    column, idx = ("switch-priority", m.group(1)) if m.group(1) else ("traffic-class", m.group(2))
    head = next((i for i, t in enumerate(lines) if t.split()[:1] == [column]), len(lines))
    for i in range(head + 2, len(lines)):  # after the header and its rule, to the table's end
        if not lines[i].strip() or _RULE_RE.match(lines[i]):
            return None
        if lines[i].split()[:1] == [idx]:
            return i
    return None


def parse_cumulus_roce_counters(text: str, port: str, ecn_queue: int, pfc_prio: int) -> PortCounters:
    """``nv show interface PORT qos roce counters`` → ``{port: {"q3_ecn_marked_pkts", "pfc_rx_prio3",
    "pfc_tx_prio3"}}``.

    The tree is ``rx-stats / rx-pfc-stats / pause-packets  184  …`` by indentation; only RoCE
    traffic is counted, so the figures are stored on the lossless queue ``ecn_queue`` / priority
    ``pfc_prio`` (NVUE RoCE mode maps switch-priority 3 → traffic-class 3).
    """
    vals: dict[str, int] = {}
    stack: list[tuple[int, str]] = []
    want = {("tx-ecn-stats", "ecn-marked-packets"): f"q{ecn_queue}_ecn_marked_pkts",
            ("rx-pfc-stats", "pause-packets"): f"pfc_rx_prio{pfc_prio}",
            ("tx-pfc-stats", "pause-packets"): f"pfc_tx_prio{pfc_prio}",
            # RoCE packets dropped for want of buffer: egress (unicast) on the lossless queue, and ingress
            ("tx-roce-stats", "unicast-no-buffer-discard"): f"q{ecn_queue}_drop_pkts",
            ("rx-roce-stats", "no-buffer-discard"): "roce_rx_no_buffer_discard"}
    for line in text.splitlines():
        if not line.strip() or _RULE_RE.match(line):
            continue
        indent = len(line) - len(line.lstrip())
        toks = line.split()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        key = want.get((parent, toks[0]))
        if key and len(toks) > 1 and (v := to_int(toks[1])) is not None:
            vals[key] = v
        stack.append((indent, toks[0]))
    return {port: vals} if vals else {}


def parse_cumulus_pfc_watchdog(text: str, port: str) -> PortCounters:
    """``nv show interface PORT qos pfc-watchdog`` → ``{port: {"q3_wd_storm_detected": n}}`` from
    ``deadlock-count``."""
    vals: dict[str, int] = {}
    for _title, header, rows in _nvue_tables(text):
        if "deadlock-count" not in header:
            continue
        col = header.index("deadlock-count")
        for row in rows:
            if len(row) == len(header) and to_int(row[0]) is not None and (v := to_int(row[col])) is not None:
                vals[f"q{to_int(row[0])}_wd_storm_detected"] = v
    return {port: vals} if vals else {}



def port_commands(port: str) -> tuple[str, str, str]:
    """The three counter commands of ``port`` (QoS counters, RoCE counters, PFC watchdog)."""
    return (f"nv show interface {port} counters qos", f"nv show interface {port} qos roce counters",
            f"nv show interface {port} qos pfc-watchdog")


def commands(sw: SwitchPlan) -> list[str]:
    """:func:`port_commands` of every lossless port."""
    return [cmd for p in sw.ports if p.lossless for cmd in port_commands(p.name)]


def parse(sw: SwitchPlan, outputs: dict[str, str]) -> CounterReading:
    """Outputs of :func:`commands` (by command) → per-port counters (ECN marks on the port's first PFC
    priority, 3 when it has none)."""
    parts: list[PortCounters] = []
    for p, got in lossless_port_outputs(sw, outputs):
        prio = p.pfc_priorities[0] if p.pfc_priorities else 3
        qos, roce, watchdog = port_commands(p.name)
        parts.append(parse_cumulus_counters_qos(got.get(qos, ""), p.name, prio))
        parts.append(parse_cumulus_roce_counters(got.get(roce, ""), p.name, prio, prio))
        parts.append(parse_cumulus_pfc_watchdog(got.get(watchdog, ""), p.name))
    return per_port_reading(sw, outputs, parts)


COUNTERS = CounterReader(commands=commands, parse=parse)
