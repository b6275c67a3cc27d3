"""Arista EOS switch counters (the platform's :class:`~roce_tune.platforms.contract.CounterReader`).

Commands (docs/derivation.md#platform-syntax): ``show priority-flow-control counters | json``
(``interfaceCounters`` → ``rxFrames``/``txFrames``, one figure per port) and, per lossless port, ``show qos
interfaces ethernet N ecn counters queue`` (``Tx-Queue  ECN Marked Packets`` table). EOS prints no PFC
watchdog counters here. Counter names: :mod:`roce_tune.platforms.counters`.
"""

from __future__ import annotations

import json
import re

from roce_tune.plan import SwitchPlan
from roce_tune.platforms.contract import CounterReader
from roce_tune.platforms.counters import CounterReading, PortCounters, to_int

PFC_COMMAND = "show priority-flow-control counters | json"


def parse_eos_pfc_counters_json(text: str) -> PortCounters:
    """``show priority-flow-control counters | json`` → ``{port: {"pfc_rx_all", "pfc_tx_all"}}``.

    Raises:
        ValueError: the text holds no JSON object.
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the EOS output")
    data = json.loads(text[start:text.rfind("}") + 1])
    out: PortCounters = {}
    for port, c in (data.get("interfaceCounters") or {}).items():
        # a key the release does not print is absent, never 0
        vals = {name: int(c[key]) for key, name in (("rxFrames", "pfc_rx_all"), ("txFrames", "pfc_tx_all"))
                if isinstance(c, dict) and isinstance(c.get(key), int | float)}
        if vals:
            out[port] = vals
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



def ecn_command(port: str) -> str:
    """The ECN-marked counter command of front-panel ``port`` (``Ethernet1/1`` → ``ethernet 1/1``)."""
    return f"show qos interfaces ethernet {port.removeprefix('Ethernet')} ecn counters queue"


def commands(sw: SwitchPlan) -> list[str]:
    """The PFC counter command, then the ECN counter command of every lossless port."""
    return [PFC_COMMAND] + [ecn_command(p.name) for p in sw.ports if p.lossless]


def parse(sw: SwitchPlan, outputs: dict[str, str]) -> CounterReading:
    """Outputs of :func:`commands` (by command) → per-port counters (a PFC output without JSON is an
    error)."""
    ports: PortCounters = {}
    errors: tuple[str, ...] = ()
    try:
        ports = parse_eos_pfc_counters_json(outputs.get(PFC_COMMAND, ""))
    except ValueError as exc:
        errors = (str(exc),)
    for p in sw.ports:
        cmd = ecn_command(p.name)
        if cmd in outputs:
            ports.setdefault(p.name, {}).update(parse_eos_ecn_counters(outputs[cmd], p.name))
    return CounterReading(ports=ports, unsupported=("PFC watchdog counters",), errors=errors)


COUNTERS = CounterReader(commands=commands, parse=parse)
