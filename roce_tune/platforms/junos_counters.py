"""Juniper Junos switch counters (the platform's :class:`~roce_tune.platforms.contract.CounterReader`).

Commands per lossless port (docs/derivation.md#platform-syntax): ``show interfaces IF extensive`` (``MAC
Priority Flow Control Statistics:`` then ``Priority :  N   <receive>   <transmit>``) and ``show interfaces
queue IF`` (``Queue: N`` blocks, ``Transmitted:`` ``Packets``/``Bytes``/``Tail-dropped packets``/
``RED-dropped packets``/``Total-dropped packets`` and, where the platform prints it, ``ECN-CE packets``).
Counter names: :mod:`roce_tune.platforms.counters`.
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


def _junos_port(line: str) -> str | None:
    m = re.match(r"^\s*Physical interface:\s*([^,\s]+)", line)
    return m.group(1) if m else None


def parse_junos_extensive_pfc(text: str) -> PortCounters:
    """``show interfaces IF extensive`` → ``{IF: {"pfc_rx_prio3": rx, "pfc_tx_prio3": tx, …}}``.

    Rows ``Priority :  3   <receive>   <transmit>`` under ``MAC Priority Flow Control Statistics:``
    (columns in the ``MAC statistics: Receive Transmit`` order of the same output).
    """
    out: PortCounters = {}
    port: str | None = None
    for line in text.splitlines():
        if p := _junos_port(line):
            port = p
            continue
        m = re.match(r"^\s*Priority\s*:\s*(\d+)\s+(\S+)\s+(\S+)\s*$", line)
        if m and port:
            rx, tx = to_int(m.group(2)), to_int(m.group(3))
            if rx is not None:
                out.setdefault(port, {})[f"pfc_rx_prio{m.group(1)}"] = rx
            if tx is not None:
                out.setdefault(port, {})[f"pfc_tx_prio{m.group(1)}"] = tx
    return out


def parse_junos_interfaces_queue(text: str) -> PortCounters:
    """``show interfaces queue IF`` → ``{IF: {"q3_tx_pkts", "q3_tx_bytes", "q3_drop_pkts",
    "q3_wred_drop_pkts", "q3_ecn_marked_pkts"}}``.

    Only the ``Transmitted:`` section is read (``Queued:`` has ``Packets``/``Bytes`` too). When
    ``Tail-dropped packets`` reads ``Not Available`` (QFX), ``drop_pkts`` is ``Total-dropped`` minus
    ``RED-dropped``, so drop + wred_drop stays the total. RED sub-lines (``Low``/``High``) are skipped.
    """
    out: PortCounters = {}
    port: str | None = None
    queue: int | None = None
    section = ""
    raw: dict[tuple[str, int], dict[str, int]] = {}
    for line in text.splitlines():
        if p := _junos_port(line):
            port, queue = p, None
            continue
        if m := re.match(r"^\s*Queue:\s*(\d+)", line):
            queue, section = int(m.group(1)), ""
            continue
        if m := re.match(r"^\s*(Queued|Transmitted)\s*:\s*$", line):
            section = m.group(1).lower()
            continue
        if port is None or queue is None or section != "transmitted" or ":" not in line:
            continue
        label, _, rest = line.partition(":")
        toks = rest.split()
        v = to_int(toks[0]) if toks else None
        if v is not None:
            raw.setdefault((port, queue), {})[label.strip().lower()] = v
    for (p, q), r in raw.items():
        out.setdefault(p, {}).update(_queue_counters(q, r))
    return out


def _queue_counters(q: int, r: dict[str, int]) -> dict[str, int]:
    """Counter names of queue ``q`` from its ``Transmitted:`` figures ``r`` (lower-case label -> value)."""
    vals: dict[str, int] = {}
    for label, key in (("packets", "tx_pkts"), ("bytes", "tx_bytes"),
                       ("red-dropped packets", "wred_drop_pkts"),
                       ("ecn-ce packets", "ecn_marked_pkts")):
        if label in r:
            vals[f"q{q}_{key}"] = r[label]
    if "tail-dropped packets" in r:
        vals[f"q{q}_drop_pkts"] = r["tail-dropped packets"]
    elif "total-dropped packets" in r:
        vals[f"q{q}_drop_pkts"] = max(0, r["total-dropped packets"] - r.get("red-dropped packets", 0))
    return vals


#: counter name suffix -> the ``Transmitted:`` labels of ``show interfaces queue`` it is read from (in order)
_QUEUE_LABELS = {"tx_pkts": ("packets",), "tx_bytes": ("bytes",), "wred_drop_pkts": ("red-dropped packets",),
                 "ecn_marked_pkts": ("ecn-ce packets",),
                 "drop_pkts": ("tail-dropped packets", "total-dropped packets")}


def evidence_line(text: str, port: str, counter: str) -> int | None:
    """0-based index of the line of ``text`` (``show interfaces IF extensive`` / ``show interfaces queue IF``)
    that ``counter`` of ``port`` was read from: the ``Priority :  N`` row of a ``pfc_*_prioN`` counter, the
    ``Transmitted:`` label line of a ``qN_*`` counter that holds a number; None when not found."""
    lines = text.splitlines()
    start = next((i for i, t in enumerate(lines) if _junos_port(t) == port), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if _junos_port(lines[i])), len(lines))
    if m := re.match(r"pfc_(?:rx|tx)_prio(\d+)$", counter):
        row = re.compile(rf"^\s*Priority\s*:\s*{m.group(1)}\s")
        return next((i for i in range(start, end) if row.match(lines[i])), None)
    if m := re.match(r"q(\d+)_(\w+)$", counter):
        return _queue_line(lines[:end], start, int(m.group(1)), _QUEUE_LABELS.get(m.group(2), ()))
    return None


def _queue_line(lines: list[str], start: int, queue: int, labels: tuple[str, ...]) -> int | None:
    """Index of the first of ``labels`` holding a number in the ``Transmitted:`` section of ``Queue: queue``
    (searched from line ``start`` to the end of ``lines``)."""
    head = next((i for i in range(start, len(lines)) if re.match(rf"^\s*Queue:\s*{queue}\b", lines[i])), None)
    if head is None:
        return None
    after = range(head + 1, len(lines))
    stop = next((i for i in after if re.match(r"^\s*Queue:\s*\d", lines[i])), len(lines))
    sent = next((i for i in range(head, stop) if re.match(r"^\s*Transmitted\s*:\s*$", lines[i])), stop)
    for label in labels:
        for i in range(sent, stop):
            name, _, rest = lines[i].partition(":")
            if name.strip().lower() == label and rest.split() and to_int(rest.split()[0]) is not None:
                return i
    return None


def port_commands(port: str) -> tuple[str, str]:
    """The PFC (extensive) and queue commands of ``port``."""
    return (f"show interfaces {port} extensive", f"show interfaces queue {port}")


def commands(sw: SwitchPlan) -> list[str]:
    """:func:`port_commands` of every lossless port."""
    return [cmd for p in sw.ports if p.lossless for cmd in port_commands(p.name)]


def parse(sw: SwitchPlan, outputs: dict[str, str]) -> CounterReading:
    """Outputs of :func:`commands` (by command) → per-port counters (ECN marks unsupported where the
    queue output prints no ``ECN-CE packets``)."""
    parts: list[PortCounters] = []
    for p, got in lossless_port_outputs(sw, outputs):
        extensive, queue = port_commands(p.name)
        parts.append(parse_junos_extensive_pfc(got.get(extensive, "")))
        parts.append(parse_junos_interfaces_queue(got.get(queue, "")))
    return per_port_reading(sw, outputs, parts)


COUNTERS = CounterReader(commands=commands, parse=parse)
