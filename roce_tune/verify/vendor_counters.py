"""Switch counter parsers for NVIDIA Cumulus Linux (NVUE), Cisco NX-OS and Juniper Junos.

Pure text-in, numbers-out functions returning the same ``{port: {name: int}}`` maps (names in
:mod:`roce_tune.verify.counters`) as the SONiC/EOS parsers, plus the per-platform command lists and
assembly used by :mod:`roce_tune.verify.collect`. Shapes (docs/derivation.md#platform-syntax):

* Cumulus, CL 5.5 and later (CL ≤ 5.4 spelled it ``nv show interface swpN qos counters``):
  ``nv show interface swpN counters qos`` — NVUE tables ``PFC Statistics`` (per switch-priority
  ``rx-pause-frames``/``tx-pause-frames``), ``Egress Queue Statistics`` (per traffic-class
  ``tx-frames``, ``tx-bytes``, ``tx-uc-buffer-discards`` (bytes), ``wred-discards``) and ``Qos Port
  Statistics`` (``ecn-marked-packets`` Transmit, one figure per port); ``nv show interface swpN qos
  roce counters`` — indented ``name  value  description`` tree (``tx-ecn-stats ecn-marked-packets``,
  ``rx-pfc-stats``/``tx-pfc-stats pause-packets``; RoCE traffic only); ``nv show interface swpN qos
  pfc-watchdog`` — per traffic-class table with a ``deadlock-count`` column (shape [U]: column found
  by name). Shapes from the NVUE command reference (CumulusNetworks/docs) and the CL RoCE page.
* NX-OS (Nexus 9000): ``show interface priority-flow-control`` (``Port Mode Oper(VL bmap) RxPPP
  TxPPP`` rows, one figure per port); ``show queuing interface EthX/Y`` (boxed ``QOS GROUP n``
  blocks of ``| label | unicast | multicast |`` rows, and a ``PFC_COS … TxCount … RxCount`` table);
  ``show queuing pfc-queue interface EthX/Y detail`` (per-``QOS GROUP`` watchdog ``Shutdown``/
  ``Restored``/``Total pkts dropped``/``Total Ingress pkts dropped`` rows). Labels are matched by
  words, not by position, because they differ between NX-OS releases.
* Junos: ``show interfaces IF extensive`` (``MAC Priority Flow Control Statistics:`` then
  ``Priority :  N   <receive>   <transmit>``); ``show interfaces queue IF`` (``Queue: N`` blocks,
  ``Transmitted:`` ``Packets``/``Bytes``/``Tail-dropped packets``/``RED-dropped packets``/
  ``Total-dropped packets`` and, where the platform prints it, ``ECN-CE packets``).

Per-port PFC totals (``pfc_rx_all``/``pfc_tx_all``) are dropped for a port that also has
per-priority counters, so :func:`~roce_tune.verify.signals.fabric_signals` does not count them twice.
"""

from __future__ import annotations

import re

from roce_tune.plan import SwitchPlan
from roce_tune.verify.counters import SwitchCounters, merge_ports, to_int

__all__ = [
    "NEW_PLATFORMS",
    "drop_port_totals",
    "parse_cumulus_counters_qos",
    "parse_cumulus_pfc_watchdog",
    "parse_cumulus_roce_counters",
    "parse_junos_extensive_pfc",
    "parse_junos_interfaces_queue",
    "parse_nxos_pfc_interfaces",
    "parse_nxos_pfc_queue_detail",
    "parse_nxos_queuing_interface",
    "parse_vendor_switch_counters",
    "vendor_switch_commands",
]

NEW_PLATFORMS = ("cumulus", "nxos", "junos")
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


def parse_cumulus_counters_qos(text: str, port: str, ecn_queue: int | None = None) -> dict[str, dict[str, int]]:
    """``nv show interface PORT counters qos`` (or its ``pfc-stats`` / ``egress-queue-stats`` views).

    Returns ``{port: {"pfc_rx_prio3", "pfc_tx_prio3", "q3_tx_pkts", "q3_tx_bytes", "q3_drop_bytes",
    "q3_wred_drop_pkts", …}}``; the port-wide ``ecn-marked-packets`` Transmit figure is stored as
    ``q{ecn_queue}_ecn_marked_pkts`` when ``ecn_queue`` is given (NVUE counts ECN marks per port, not
    per traffic class; in RoCE mode only the lossless class marks). ``n/a`` cells are skipped, and so
    are byte cells NVUE prints scaled (``367.18 GB``): a rounded figure is no counter to take deltas of.
    """
    vals: dict[str, int] = {}
    for _title, header, rows in _nvue_tables(text):
        if header[:1] == ["switch-priority"] and "rx-pause-frames" in header:
            cols = {"rx-pause-frames": "pfc_rx_prio{}", "tx-pause-frames": "pfc_tx_prio{}"}
        elif header[:1] == ["traffic-class"] and "tx-frames" in header:
            cols = {"tx-frames": "q{}_tx_pkts", "tx-bytes": "q{}_tx_bytes",
                    "tx-uc-buffer-discards": "q{}_drop_bytes", "wred-discards": "q{}_wred_drop_pkts"}
        elif header[:1] == ["counter"] and "transmit" in header:
            for row in rows:
                label = "-".join(t.lower() for t in row[:-2])
                if label == "ecn-marked-packets" and ecn_queue is not None:
                    v = to_int(row[-1])
                    if v is not None:
                        vals[f"q{ecn_queue}_ecn_marked_pkts"] = v
            continue
        else:
            continue
        # cells like "0 Bytes" span two tokens: map each header to the token index it starts at
        for row in rows:
            if not row or to_int(row[0]) is None:
                continue
            idx = to_int(row[0])
            cells = _split_unit_cells(row[1:], len(header) - 1)
            for name, cell in zip(header[1:], cells):
                if re.search(r"\d\s+[KMGT]i?B\b|\.", cell):
                    continue  # NVUE prints large byte counts scaled ("367.18 GB"): not an exact count
                if name in cols and (v := _first_int(cell)) is not None:
                    vals[cols[name].format(idx)] = v
    return {port: vals} if vals else {}


def _split_unit_cells(tokens: list[str], n: int) -> list[str]:
    """Re-join ``["0", "Bytes", "12"]`` into ``["0 Bytes", "12"]`` (unit words belong to the number before)."""
    cells: list[str] = []
    for tok in tokens:
        if cells and to_int(tok) is None and re.fullmatch(r"[A-Za-z]+", tok) and tok.lower() != "n/a":
            cells[-1] += " " + tok
        else:
            cells.append(tok)
    return cells[:n]


def parse_cumulus_roce_counters(text: str, port: str, ecn_queue: int, pfc_prio: int) -> dict[str, dict[str, int]]:
    """``nv show interface PORT qos roce counters`` → ``{port: {"q3_ecn_marked_pkts", "pfc_rx_prio3", "pfc_tx_prio3"}}``.

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


def parse_cumulus_pfc_watchdog(text: str, port: str) -> dict[str, dict[str, int]]:
    """``nv show interface PORT qos pfc-watchdog`` → ``{port: {"q3_wd_storm_detected": n}}`` from ``deadlock-count``."""
    vals: dict[str, int] = {}
    for _title, header, rows in _nvue_tables(text):
        if "deadlock-count" not in header:
            continue
        col = header.index("deadlock-count")
        for row in rows:
            if len(row) == len(header) and to_int(row[0]) is not None and (v := to_int(row[col])) is not None:
                vals[f"q{to_int(row[0])}_wd_storm_detected"] = v
    return {port: vals} if vals else {}


# ---------------------------------------------------------------------------------------- NX-OS
def parse_nxos_pfc_interfaces(text: str) -> dict[str, dict[str, int]]:
    """``show interface priority-flow-control`` → ``{"Ethernet1/1": {"pfc_rx_all", "pfc_tx_all"}}`` (RxPPP, TxPPP)."""
    out: dict[str, dict[str, int]] = {}
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


def parse_nxos_queuing_interface(text: str, port: str) -> dict[str, dict[str, int]]:
    """``show queuing interface PORT`` → ``{port: {"q3_tx_pkts", "q3_drop_pkts", "q3_ecn_marked_pkts", "pfc_tx_prio3", …}}``.

    Unicast column only. ``WRED/AFD & Tail Drop Pkts`` is ``drop_pkts`` (NX-OS reports WRED and tail
    drops together); ``WD & Tail Drop Pkts`` (dropped by the PFC watchdog) is ``wd_tx_drop``. The
    ``PFC_COS QOS_Group TxPause TxCount RxPause RxCount`` table gives per-priority PFC frames.
    """
    vals: dict[str, int] = {}
    group: int | None = None
    pfc_cols: list[str] | None = None
    for line in text.splitlines():
        if m := re.search(r"QOS GROUP\s+(\d+)", line, re.IGNORECASE):
            group, pfc_cols = int(m.group(1)), None
            continue
        if line.strip().startswith("|") and group is not None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and (v := to_int(cells[1])) is not None:
                words = set(re.split(r"[^a-z]+", cells[0].lower()))
                for need, key in _NXOS_QUEUE_LABELS:
                    if set(need) <= words:
                        vals.setdefault(f"q{group}_{key}", v)
                        break
            continue
        toks = line.split()
        if toks[:1] == ["PFC_COS"]:
            pfc_cols, group = [t.lower() for t in toks], None
            continue
        if pfc_cols and toks and to_int(toks[0]) is not None and len(toks) == len(pfc_cols):
            cos = to_int(toks[0])
            for name, key in (("txcount", "pfc_tx_prio"), ("rxcount", "pfc_rx_prio")):
                if name in pfc_cols and (v := to_int(toks[pfc_cols.index(name)])) is not None:
                    vals[f"{key}{cos}"] = v
        elif pfc_cols and toks and to_int(toks[0]) is None:
            pfc_cols = None
    return {port: vals} if vals else {}


def parse_nxos_pfc_queue_detail(text: str) -> dict[str, dict[str, int]]:
    """``show queuing pfc-queue [interface X] detail`` → ``{port: {"q3_wd_storm_detected", "q3_wd_storm_restored", "q3_wd_tx_drop", "q3_wd_rx_drop"}}``.

    ``Shutdown`` (times the watchdog shut the queue) is a detected storm, ``Restored`` a restore,
    ``Total pkts dropped`` / ``Total Ingress pkts dropped`` the egress / ingress watchdog drops.
    """
    out: dict[str, dict[str, int]] = {}
    port: str | None = None
    group: int | None = None
    keys = {"shutdown": "wd_storm_detected", "restored": "wd_storm_restored",
            "total pkts dropped": "wd_tx_drop", "total ingress pkts dropped": "wd_rx_drop"}
    for line in text.splitlines():
        if m := re.match(r"^\s*\|?\s*((?:Ethernet|Eth|port-channel)\S+)\s+Interface PFC watchdog", line, re.IGNORECASE):
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


# ---------------------------------------------------------------------------------------- Junos
def _junos_port(line: str) -> str | None:
    m = re.match(r"^\s*Physical interface:\s*([^,\s]+)", line)
    return m.group(1) if m else None


def parse_junos_extensive_pfc(text: str) -> dict[str, dict[str, int]]:
    """``show interfaces IF extensive`` → ``{IF: {"pfc_rx_prio3": rx, "pfc_tx_prio3": tx, …}}``.

    Rows ``Priority :  3   <receive>   <transmit>`` under ``MAC Priority Flow Control Statistics:``
    (columns in the ``MAC statistics: Receive Transmit`` order of the same output).
    """
    out: dict[str, dict[str, int]] = {}
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


def parse_junos_interfaces_queue(text: str) -> dict[str, dict[str, int]]:
    """``show interfaces queue IF`` → ``{IF: {"q3_tx_pkts", "q3_tx_bytes", "q3_drop_pkts", "q3_wred_drop_pkts", "q3_ecn_marked_pkts"}}``.

    Only the ``Transmitted:`` section is read (``Queued:`` has ``Packets``/``Bytes`` too). When
    ``Tail-dropped packets`` reads ``Not Available`` (QFX), ``drop_pkts`` is ``Total-dropped`` minus
    ``RED-dropped``, so drop + wred_drop stays the total. RED sub-lines (``Low``/``High``) are skipped.
    """
    out: dict[str, dict[str, int]] = {}
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
        vals: dict[str, int] = {}
        for label, key in (("packets", "tx_pkts"), ("bytes", "tx_bytes"), ("red-dropped packets", "wred_drop_pkts"),
                           ("ecn-ce packets", "ecn_marked_pkts")):
            if label in r:
                vals[f"q{q}_{key}"] = r[label]
        if "tail-dropped packets" in r:
            vals[f"q{q}_drop_pkts"] = r["tail-dropped packets"]
        elif "total-dropped packets" in r:
            vals[f"q{q}_drop_pkts"] = max(0, r["total-dropped packets"] - r.get("red-dropped packets", 0))
        out.setdefault(p, {}).update(vals)
    return out


# ---------------------------------------------------------------------------------------- assembly
def drop_port_totals(ports: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Remove ``pfc_rx_all``/``pfc_tx_all`` from ports that also have per-priority PFC counters."""
    out = {}
    for port, vals in ports.items():
        if any(k.startswith(("pfc_rx_prio", "pfc_tx_prio")) for k in vals):
            vals = {k: v for k, v in vals.items() if k not in ("pfc_rx_all", "pfc_tx_all")}
        out[port] = vals
    return out


def _nxos_if(name: str) -> str:
    return "ethernet" + name[len("Ethernet"):] if name.startswith("Ethernet") else name


def vendor_switch_commands(sw: SwitchPlan) -> list[str]:
    """Counter commands for a cumulus/nxos/junos switch (one set per lossless port); [] otherwise."""
    lossless = [p.name for p in sw.ports if p.lossless]
    if sw.platform == "cumulus":
        return [cmd for p in lossless for cmd in (f"nv show interface {p} counters qos",
                                                  f"nv show interface {p} qos roce counters",
                                                  f"nv show interface {p} qos pfc-watchdog")]
    if sw.platform == "nxos":
        return ["show interface priority-flow-control"] + [
            cmd for p in lossless for cmd in (f"show queuing interface {_nxos_if(p)}",
                                              f"show queuing pfc-queue interface {_nxos_if(p)} detail")]
    if sw.platform == "junos":
        return [cmd for p in lossless for cmd in (f"show interfaces {p} extensive", f"show interfaces queue {p}")]
    return []


def parse_vendor_switch_counters(sw: SwitchPlan, outputs: dict[str, str]) -> SwitchCounters:
    """Outputs of :func:`vendor_switch_commands` → :class:`~roce_tune.verify.counters.SwitchCounters`.

    Per-port ECN marks on Cumulus are stored on the port's first PFC priority as queue number
    (NVUE RoCE mode maps switch-priority N → traffic-class N). ``unsupported`` names what the
    platform's output did not carry (e.g. no ECN-marked counter in a Junos queue output).
    """
    parts: list[dict[str, dict[str, int]]] = []
    unsupported: list[str] = []
    errors: list[str] = []
    for p in (p for p in sw.ports if p.lossless):
        got = {k: v for k, v in outputs.items() if p.name in k.split() or _nxos_if(p.name) in k.split()}
        if not got:
            continue
        prio = p.pfc_priorities[0] if p.pfc_priorities else 3
        if sw.platform == "cumulus":
            parts.append(parse_cumulus_counters_qos(got.get(f"nv show interface {p.name} counters qos", ""),
                                                    p.name, prio))
            parts.append(parse_cumulus_roce_counters(got.get(f"nv show interface {p.name} qos roce counters", ""),
                                                     p.name, prio, prio))
            parts.append(parse_cumulus_pfc_watchdog(got.get(f"nv show interface {p.name} qos pfc-watchdog", ""),
                                                    p.name))
        elif sw.platform == "nxos":
            q = parse_nxos_queuing_interface(got.get(f"show queuing interface {_nxos_if(p.name)}", ""), p.name)
            parts.append(q)
            wd = parse_nxos_pfc_queue_detail(got.get(f"show queuing pfc-queue interface {_nxos_if(p.name)} detail", ""))
            parts.append({p.name: {k: v for vals in wd.values() for k, v in vals.items()}} if wd else {})
        elif sw.platform == "junos":
            parts.append(parse_junos_extensive_pfc(got.get(f"show interfaces {p.name} extensive", "")))
            parts.append(parse_junos_interfaces_queue(got.get(f"show interfaces queue {p.name}", "")))
    if sw.platform == "nxos":
        pfc = parse_nxos_pfc_interfaces(outputs.get("show interface priority-flow-control", ""))
        pfc = {_canon_nxos(k): v for k, v in pfc.items()}
        parts.insert(0, {k: v for k, v in pfc.items() if any(p.name == k for p in sw.ports)})
    ports = drop_port_totals(merge_ports(*parts))
    for family, suffix in (("ECN-marked counters", "_ecn_marked_pkts"), ("PFC watchdog counters", "_wd_storm_detected")):
        if ports and not any(k.endswith(suffix) for v in ports.values() for k in v):
            unsupported.append(family)
    if not ports and outputs:
        errors.append(f"no counters parsed from {len(outputs)} {sw.platform} outputs")
    return SwitchCounters(switch=sw.name, platform=sw.platform, ports=ports, unsupported=unsupported, errors=errors)


def _canon_nxos(name: str) -> str:
    """``Eth1/1`` → ``Ethernet1/1`` (NX-OS short names in the PFC table)."""
    m = re.match(r"^Eth(?:ernet)?(\d.*)$", name, re.IGNORECASE)
    return f"Ethernet{m.group(1)}" if m else name
