"""Cisco NX-OS (Nexus 9000) switch counters (the platform's
:class:`~roce_tune.platforms.contract.CounterReader`).

Commands (docs/derivation.md#platform-syntax): ``show interface priority-flow-control`` (``Port Mode
Oper(VL bmap) RxPPP TxPPP`` rows, one figure per port), and per lossless port ``show queuing interface
ethernetX/Y`` (boxed ``QOS GROUP n`` blocks of ``| label | unicast | multicast |`` rows, and a ``PFC_COS …
TxCount … RxCount`` table) and ``show queuing pfc-queue interface ethernetX/Y detail`` (per-``QOS GROUP``
watchdog ``Shutdown``/``Restored``/``Total pkts dropped``/``Total Ingress pkts dropped`` rows). Labels are
matched by words, not by position, because they differ between NX-OS releases. Counter names:
:mod:`roce_tune.platforms.counters`.
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

PFC_COMMAND = "show interface priority-flow-control"


def parse_nxos_pfc_interfaces(text: str) -> PortCounters:
    """``show interface priority-flow-control`` → ``{"Ethernet1/1": {"pfc_rx_all", "pfc_tx_all"}}`` (RxPPP,
    TxPPP)."""
    out: PortCounters = {}
    for line in text.splitlines():
        toks = line.split()
        if len(toks) >= 4 and re.match(r"^(Eth|Ethernet|Po|port-channel)\S*\d", toks[0]):
            rx, tx = to_int(toks[-2]), to_int(toks[-1])
            if rx is not None and tx is not None:
                out[toks[0]] = {"pfc_rx_all": rx, "pfc_tx_all": tx}
    return out


_NXOS_QUEUE_LABELS = (  # (words that must all appear, key); first match wins
    (("tx", "pkts"), "tx_pkts"),
    (("tx", "byts"), "tx_bytes"),
    (("wd", "drop", "pkts"), "wd_tx_drop"),
    (("ecn", "pkts"), "ecn_marked_pkts"),
    (("drop", "pkts"), "drop_pkts"),
    (("drop", "byts"), "drop_bytes"),
)


def parse_nxos_queuing_interface(text: str, port: str) -> PortCounters:
    """``show queuing interface PORT`` → ``{port: {"q3_tx_pkts", "q3_drop_pkts", "q3_ecn_marked_pkts",
    "pfc_tx_prio3", …}}``.

    Unicast column only. ``WRED/AFD & Tail Drop Pkts`` is ``drop_pkts`` (NX-OS reports WRED and tail
    drops together); ``WD & Tail Drop Pkts`` (dropped by the PFC watchdog) is ``wd_tx_drop``. The
    ``PFC_COS QOS_Group TxPause TxCount RxPause RxCount`` table gives per-priority PFC frames.
    """
    vals: dict[str, int] = {}
    group: int | None = None
    pfc_cols: list[str] | None = None
    for line in text.splitlines():
        toks = line.split()
        if m := re.search(r"QOS GROUP\s+(\d+)", line, re.IGNORECASE):
            group, pfc_cols = int(m.group(1)), None
        elif line.strip().startswith("|") and group is not None:
            _queue_row(line, group, vals)
        elif toks[:1] == ["PFC_COS"]:
            pfc_cols, group = [t.lower() for t in toks], None
        elif pfc_cols and toks:
            pfc_cols = _pfc_row(toks, pfc_cols, vals)
    return {port: vals} if vals else {}


def _row_key(line: str) -> tuple[str, int] | None:
    """(counter key, unicast figure) of a ``| label | unicast | multicast |`` row: the first
    :data:`_NXOS_QUEUE_LABELS` key whose words all appear in the label; None for any other row."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) >= 2 and (v := to_int(cells[1])) is not None:
        words = set(re.split(r"[^a-z]+", cells[0].lower()))
        key = next((key for need, key in _NXOS_QUEUE_LABELS if set(need) <= words), None)
        return (key, v) if key else None
    return None


def _queue_row(line: str, group: int, vals: dict[str, int]) -> None:
    """A ``| label | unicast | multicast |`` row of QOS GROUP ``group``: its unicast figure into ``vals``
    under its :func:`_row_key` (the first row of a key wins)."""
    if got := _row_key(line):
        vals.setdefault(f"q{group}_{got[0]}", got[1])


def queuing_evidence_line(text: str, _port: str, counter: str) -> int | None:
    """0-based index of the line of ``show queuing interface`` output ``text`` that ``counter`` was read from:
    the ``PFC_COS`` row of ``pfc_*_prioN``, the first matching row of the ``QOS GROUP n`` box of ``qN_*``."""
    lines = text.splitlines()
    if m := re.match(r"pfc_(?:rx|tx)_prio(\d+)$", counter):
        head = next((i for i, t in enumerate(lines) if t.split()[:1] == ["PFC_COS"]), len(lines))
        return next((i for i in range(head + 1, len(lines)) if lines[i].split()[:1] == [m.group(1)]), None)
    m = re.match(r"q(\d+)_(\w+)$", counter)
    group: int | None = None
    for i, t in enumerate(lines):
        if g := re.search(r"QOS GROUP\s+(\d+)", t, re.IGNORECASE):
            group = int(g.group(1))
        elif (m and group == int(m.group(1)) and t.strip().startswith("|")
              and (got := _row_key(t)) and got[0] == m.group(2)):
            return i
    return None


def _pfc_row(toks: list[str], pfc_cols: list[str], vals: dict[str, int]) -> list[str] | None:
    """A row of the ``PFC_COS … TxCount … RxCount`` table into ``vals``; returns the columns, or None
    when the row ends the table (its first token is no number)."""
    cos = to_int(toks[0])
    if cos is None:
        return None
    if len(toks) == len(pfc_cols):
        for name, key in (("txcount", "pfc_tx_prio"), ("rxcount", "pfc_rx_prio")):
            if name in pfc_cols and (v := to_int(toks[pfc_cols.index(name)])) is not None:
                vals[f"{key}{cos}"] = v
    return pfc_cols


def parse_nxos_pfc_queue_detail(text: str) -> PortCounters:
    """``show queuing pfc-queue [interface X] detail`` → ``{port: {"q3_wd_storm_detected",
    "q3_wd_storm_restored", "q3_wd_tx_drop", "q3_wd_rx_drop"}}``.

    ``Shutdown`` (times the watchdog shut the queue) is a detected storm, ``Restored`` a restore,
    ``Total pkts dropped`` / ``Total Ingress pkts dropped`` the egress / ingress watchdog drops.
    """
    out: PortCounters = {}
    port: str | None = None
    group: int | None = None
    keys = {"shutdown": "wd_storm_detected", "restored": "wd_storm_restored",
            "total pkts dropped": "wd_tx_drop", "total ingress pkts dropped": "wd_rx_drop"}
    for line in text.splitlines():
        if m := re.match(r"^\s*\|?\s*((?:Ethernet|Eth|port-channel)\S+)\s+Interface PFC watchdog", line,
                         re.IGNORECASE):
            port, group = m.group(1), None
            continue
        if m := re.search(r"QOS GROUP\s+(\d+)", line, re.IGNORECASE):
            group = int(m.group(1))
            continue
        if port is None or group is None or "|" not in line:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        key = keys.get(re.sub(r"\s+", " ", cells[0].lower())) if cells else None
        if key and len(cells) >= 2 and (v := to_int(cells[1])) is not None:
            out.setdefault(port, {})[f"q{group}_{key}"] = v
    return out


def cli_port(name: str) -> str:
    """``Ethernet1/1`` → ``ethernet1/1`` (the spelling the queuing commands take); other names unchanged."""
    return "ethernet" + name[len("Ethernet"):] if name.startswith("Ethernet") else name


def canonical_port(name: str) -> str:
    """``Eth1/1`` (the PFC table's short name), ``ethernet1/1`` (:func:`cli_port`) or the CLI abbreviations
    ``e1/1`` / ``Et1/1`` → ``Ethernet1/1``; other names unchanged.

    >>> [canonical_port(p) for p in ("Eth1/1", "e1/7", "Et1/2", "port-channel5")]
    ['Ethernet1/1', 'Ethernet1/7', 'Ethernet1/2', 'port-channel5']
    """
    m = re.match(r"^E(?:t(?:h(?:ernet)?)?)?(\d.*)$", name, re.IGNORECASE)
    return f"Ethernet{m.group(1)}" if m else name


def port_commands(port: str) -> tuple[str, str]:
    """The queuing and PFC-watchdog commands of front-panel ``port``."""
    return (f"show queuing interface {cli_port(port)}",
            f"show queuing pfc-queue interface {cli_port(port)} detail")


def commands(sw: SwitchPlan) -> list[str]:
    """The PFC table command, then :func:`port_commands` of every lossless port."""
    return [PFC_COMMAND] + [cmd for p in sw.ports if p.lossless for cmd in port_commands(p.name)]


def parse(sw: SwitchPlan, outputs: dict[str, str]) -> CounterReading:
    """Outputs of :func:`commands` (by command) → per-port counters (the PFC table's per-port totals give
    way to per-priority counters where the queuing output has them)."""
    pfc = {canonical_port(k): v for k, v in parse_nxos_pfc_interfaces(outputs.get(PFC_COMMAND, "")).items()}
    parts: list[PortCounters] = [{k: v for k, v in pfc.items() if any(p.name == k for p in sw.ports)}]
    for p, got in lossless_port_outputs(sw, outputs, cli_port):
        queuing, watchdog = port_commands(p.name)
        parts.append(parse_nxos_queuing_interface(got.get(queuing, ""), p.name))
        wd = parse_nxos_pfc_queue_detail(got.get(watchdog, ""))
        parts.append({p.name: {k: v for vals in wd.values() for k, v in vals.items()}} if wd else {})
    return per_port_reading(sw, outputs, parts)


COUNTERS = CounterReader(commands=commands, parse=parse)
