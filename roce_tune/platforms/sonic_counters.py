"""SONiC switch counters (the platform's :class:`~roce_tune.platforms.contract.CounterReader`).

Commands (sonic-utilities, docs/derivation.md#platform-syntax), run on one shell line:
``show pfc counters`` (two tables, ``Port Rx``/``Port Tx``, numbers with thousands separators), ``show queue
counters``, ``show queue wredcounters`` (columns vary by platform capability; ``N/A`` cells; SONiC
ECN_and_WRED_statistics_HLD) and ``show pfcwd stats --empty`` (``a/b`` cells; without ``--empty`` pfcwd leaves
out every queue whose counters are all ``0/0``, so a queue read before a run would have no value to take a
storm during it from; sonic-utilities pfcwd/main.py ``show_stats``). Counter names:
:mod:`roce_tune.platforms.counters`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from roce_tune.plan import SwitchPlan
from roce_tune.platforms.contract import CounterReader
from roce_tune.platforms.counters import CounterReading, PortCounters, merge_ports, to_int

COMMANDS = ("show pfc counters", "show queue counters", "show queue wredcounters", "show pfcwd stats --empty")
#: queuestat's queue names (sonic-utilities scripts/queuestat): SAI type then index. ``UC<n>`` unicast and
#: ``ALL<n>`` (SAI_QUEUE_TYPE_ALL, the platforms whose SAI does not split unicast from multicast) are the
#: port's egress queue ``n``; ``MC<n>`` multicast and ``VOQ<n>`` (ingress virtual output queues) are not
_EGRESS_QUEUE_RE = re.compile(r"(?:UC|ALL)(\d+)", re.IGNORECASE)


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


def parse_sonic_pfc_counters(text: str) -> PortCounters:
    """``show pfc counters`` → ``{port: {"pfc_rx_prio3": n, "pfc_tx_prio3": n, …}}``.

    The direction comes from the table header (``Port Rx`` / ``Port Tx``); ``N/A`` cells are skipped.
    """
    out: PortCounters = {}
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


def parse_sonic_queue_counters(text: str) -> PortCounters:
    """``show queue counters [PORT]`` → ``{port: {"q3_tx_pkts", "q3_tx_bytes", "q3_drop_pkts",
    "q3_drop_bytes"}}``.

    Egress queues ``UC<n>`` and ``ALL<n>`` (:data:`_EGRESS_QUEUE_RE`; multicast ``MC<n>`` rows are skipped);
    one table per port with its ``For namespace …:`` / ``Last cached time`` line (newer releases) or one for
    all ports; ``N/A`` cells are not read.
    """
    names = {"counter/pkts": "tx_pkts", "counter/bytes": "tx_bytes", "drop/pkts": "drop_pkts",
             "drop/bytes": "drop_bytes"}
    return _sonic_queue_table(text, names)


def parse_sonic_wred_counters(text: str) -> PortCounters:
    """``show queue wredcounters`` → ``{port: {"q3_ecn_marked_pkts", "q3_wred_drop_pkts", …}}``.

    Columns are found by name (``WredDrp/pkts``, ``EcnMarked/pkts`` …) because platforms without
    WRED or ECN statistics leave them out or print ``N/A`` (SONiC ECN_and_WRED_statistics_HLD).
    """
    names = {"wreddrp/pkts": "wred_drop_pkts", "wreddrp/bytes": "wred_drop_bytes",
             "ecnmarked/pkts": "ecn_marked_pkts", "ecnmarked/bytes": "ecn_marked_bytes"}
    return _sonic_queue_table(text, names)


#: the columns only ``show queue wredcounters`` has
_WRED_COLUMNS = re.compile(r"WredDrp|EcnMarked", re.IGNORECASE)


def parse_sonic_queue_table(text: str) -> tuple[str, PortCounters]:
    r"""``show queue counters`` or ``show queue wredcounters``, told apart by the WRED/ECN columns
    (``WredDrp``/``EcnMarked`` anywhere in the output) → (counter family ``"queue"`` or ``"wred"``, counters
    of :func:`parse_sonic_queue_counters` or :func:`parse_sonic_wred_counters`); their ``-j`` JSON too.

    Raises:
        ValueError: JSON output that does not parse (:func:`_sonic_queue_json`).

    >>> parse_sonic_queue_table("Port TxQ WredDrp/pkts\n---- --- ----\nEthernet0 UC3 5")
    ('wred', {'Ethernet0': {'q3_wred_drop_pkts': 5}})
    """
    if text.lstrip().startswith("{"):
        return _sonic_queue_json(text)
    if _WRED_COLUMNS.search(text):
        return "wred", parse_sonic_wred_counters(text)
    return "queue", parse_sonic_queue_counters(text)


#: ``show queue counters -j`` / ``show queue wredcounters -j`` keys (queuestat / wredstat ``build_json``)
_JSON_KEYS = {"totalpacket": "tx_pkts", "totalbytes": "tx_bytes", "droppacket": "drop_pkts",
              "dropbytes": "drop_bytes", "wreddroppacket": "wred_drop_pkts",
              "wreddropbytes": "wred_drop_bytes", "ecnmarkedpacket": "ecn_marked_pkts",
              "ecnmarkedbytes": "ecn_marked_bytes"}


def _sonic_queue_json(text: str) -> tuple[str, PortCounters]:
    """``-j`` output of queuestat or wredstat: ``{port: {"time": …, "UC3": {"totalpacket": "1,234", …}}}``
    (values are strings, ``N/A`` where the SAI has no such counter) → (family, counters of the egress queues,
    :data:`_EGRESS_QUEUE_RE`).

    Raises:
        ValueError: the text is not one JSON object (a cut capture).
    """
    data = json.loads(text[text.find("{"):text.rfind("}") + 1])
    out: PortCounters = {}
    wred = False
    for port, queues in data.items() if isinstance(data, dict) else ():
        for qname, vals in queues.items() if isinstance(queues, dict) else ():
            m = _EGRESS_QUEUE_RE.fullmatch(qname)
            if m is None or not isinstance(vals, dict):
                continue
            for key, val in vals.items():
                wred = wred or key.startswith(("wred", "ecn"))
                if key in _JSON_KEYS and (v := to_int(str(val))) is not None:
                    out.setdefault(port, {})[f"q{m.group(1)}_{_JSON_KEYS[key]}"] = v
    return ("wred" if wred else "queue"), out


def queue_evidence_line(text: str, port: str, name: str) -> int | None:
    """The 0-based index of the line of ``text`` (``show queue counters``/``wredcounters``, table or ``-j``)
    that the counter ``name`` (``q3_tx_pkts``) of ``port`` was read from: its egress queue's row, or the
    queue's key under the port's in the JSON (:data:`_EGRESS_QUEUE_RE`); None when there is none."""
    q = re.match(r"q(\d+)_", name)
    return _queue_rows(text).get((port, q.group(1))) if q else None


@lru_cache(maxsize=8)
def _queue_rows(text: str) -> dict[tuple[str, str], int]:
    """(port, queue number) -> the index of the first line that holds that egress queue's counters."""
    rows: dict[tuple[str, str], int] = {}
    port = ""
    for i, t in enumerate(text.splitlines()):
        tok = t.split()
        if key := re.match(r'^\s*"([^"]+)"\s*:\s*\{', t):  # -j: a queue's key inside its port's
            if m := _EGRESS_QUEUE_RE.fullmatch(key.group(1)):
                rows.setdefault((port, m.group(1)), i)
            else:
                port = key.group(1)
        elif len(tok) > 2 and (m := _EGRESS_QUEUE_RE.fullmatch(tok[1])):
            rows.setdefault((tok[0], m.group(1)), i)
    return rows


def _sonic_queue_table(text: str, names: dict[str, str]) -> PortCounters:
    out: PortCounters = {}
    for header, rows in _table_rows(text):
        low = [h.lower() for h in header]
        if len(low) < 3 or low[0] != "port" or low[1] != "txq":
            continue
        cols = [(i, names[h]) for i, h in enumerate(low) if h in names]
        for row in rows:
            m = _EGRESS_QUEUE_RE.fullmatch(row[1]) if len(row) >= 2 else None
            if m is None:  # a multicast queue or a cut row: skipped
                continue
            q = int(m.group(1))
            for i, key in cols:
                if i < len(row):
                    v = to_int(row[i])
                    if v is not None:
                        out.setdefault(row[0], {})[f"q{q}_{key}"] = v
    return out


def parse_sonic_pfcwd_stats(text: str) -> PortCounters:
    """``show pfcwd stats`` → ``{port: {"q3_wd_storm_detected", "q3_wd_storm_restored", "q3_wd_tx_drop",
    …}}``.

    Rows are ``Ethernet4:3  operational  2/2  0/56035  14053/371184 …``: queue, status, then
    ``a/b`` cells in the header's order (STORM DETECTED/RESTORED, TX OK/DROP, RX OK/DROP, TX LAST
    OK/DROP, RX LAST OK/DROP). The ``LAST`` pairs (last storm only) are not kept. A row whose STATUS is
    ``N/A`` is a queue the watchdog does not run on (``--empty`` prints it as ``0/0``): not read.
    """
    out: PortCounters = {}
    keys = (("wd_storm_detected", "wd_storm_restored"), ("wd_tx_ok", "wd_tx_drop"),
            ("wd_rx_ok", "wd_rx_drop"))
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+):(\d+)\s+(\S+)\s+(.*)$", line)
        if not m or "/" not in m.group(4) or m.group(3).upper() == "N/A":
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


def commands(_sw: SwitchPlan) -> list[str]:
    """The counter commands of a SONiC switch (the same four for every switch: each covers all ports)."""
    return list(COMMANDS)


def parse(_sw: SwitchPlan, outputs: dict[str, str]) -> CounterReading:
    """Outputs of :func:`commands` (by command) → per-port counters; ECN marks are unsupported where the
    WRED counter poll is off (``counterpoll wredqueue enable``)."""
    wred = parse_sonic_wred_counters(outputs.get("show queue wredcounters", ""))
    unsupported: tuple[str, ...] = ()
    if not any(k.endswith("ecn_marked_pkts") for v in wred.values() for k in v):
        unsupported = ("ECN-marked counters (enable: counterpoll wredqueue enable)",)
    ports = merge_ports(parse_sonic_pfc_counters(outputs.get("show pfc counters", "")),
                        parse_sonic_queue_counters(outputs.get("show queue counters", "")), wred,
                        parse_sonic_pfcwd_stats(outputs.get(COMMANDS[3], "")))
    return CounterReading(ports=ports, unsupported=unsupported)


#: the SONiC CLI is a Linux shell: the commands share one line, split again by marker lines
COUNTERS = CounterReader(commands=commands, parse=parse, one_shell_line=True)
