"""Platform-neutral pieces of the switch counter readers
(:class:`roce_tune.platforms.contract.CounterReader`).

Each platform's ``<platform>_counters`` module says which show commands give its counters and parses
their text into per-port maps ``{port: {name: int}}`` with the names below; verify
(:mod:`roce_tune.verify.collect`) runs the commands and wraps a :class:`CounterReading` into its snapshot.

Counter names (values are packets or frames): ``pfc_rx_prio{p}``/``pfc_tx_prio{p}`` (PFC frames per
priority; ``pfc_rx_all``/``pfc_tx_all`` when the platform gives one figure per port), ``q{n}_tx_pkts``/
``q{n}_tx_bytes``/``q{n}_drop_pkts``/``q{n}_drop_bytes``, ``q{n}_wred_drop_pkts``, ``q{n}_ecn_marked_pkts``,
``q{n}_wd_storm_detected``/``q{n}_wd_storm_restored``/``q{n}_wd_tx_drop``/``q{n}_wd_rx_drop`` (PFC watchdog).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from roce_tune.plan import PortPlan, SwitchPlan

#: per-port counter map: port -> counter name -> value
PortCounters = dict[str, dict[str, int]]

_INT_RE = re.compile(r"^-?[\d,]+$")
#: counter families a reading names as unsupported when no port carries them: (family, name suffix)
FAMILIES = (("ECN-marked counters", "_ecn_marked_pkts"), ("PFC watchdog counters", "_wd_storm_detected"))


@dataclass(frozen=True)
class CounterReading:
    """What a platform's counter parser read from one switch.

    Attributes:
        ports: ``{port: {counter name: value}}`` (names in the module docstring).
        unsupported: counter families the platform's output did not carry (e.g. "PFC watchdog counters").
        errors: what could not be read or parsed (names the command or platform).
    """

    ports: PortCounters
    unsupported: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()


def to_int(token: str) -> int | None:
    """``"15,437"`` → 15437; ``"N/A"``/``"-"``/anything else → None.

    >>> to_int("15,437"), to_int("N/A")
    (15437, None)
    """
    tok = token.strip()
    return int(tok.replace(",", "")) if _INT_RE.match(tok) else None


def merge_ports(*parts: PortCounters) -> PortCounters:
    """Merge per-port maps from several commands (later keys win)."""
    out: PortCounters = {}
    for part in parts:
        for port, vals in part.items():
            out.setdefault(port, {}).update(vals)
    return out


def drop_port_totals(ports: PortCounters) -> PortCounters:
    """Remove ``pfc_rx_all``/``pfc_tx_all`` from ports that also have per-priority PFC counters (so the
    fabric signals do not count PFC frames twice)."""
    out = {}
    for port, vals in ports.items():
        if any(k.startswith(("pfc_rx_prio", "pfc_tx_prio")) for k in vals):
            vals = {k: v for k, v in vals.items() if k not in ("pfc_rx_all", "pfc_tx_all")}
        out[port] = vals
    return out


def lossless_port_outputs(sw: SwitchPlan, outputs: dict[str, str],
                          alias: Callable[[str], str] = str) -> Iterator[tuple[PortPlan, dict[str, str]]]:
    """(port, {command: output} of the commands naming it) for every lossless port of ``sw`` with output.

    A command names a port when one of its words is the port's name or ``alias(name)`` (the spelling the
    platform's CLI wants, e.g. NX-OS ``ethernet1/1``).
    """
    for p in sw.ports:
        if not p.lossless:
            continue
        names = {p.name, alias(p.name)}
        got = {k: v for k, v in outputs.items() if names & set(k.split())}
        if got:
            yield p, got


def per_port_reading(sw: SwitchPlan, outputs: dict[str, str], parts: list[PortCounters]) -> CounterReading:
    """The reading of a platform that reads counters per lossless port: ``parts`` merged (per-port PFC totals
    dropped where per-priority counters exist), the families no port carries named as unsupported, and an
    error when outputs were read but nothing parsed from them."""
    ports = drop_port_totals(merge_ports(*parts))
    unsupported = tuple(family for family, suffix in FAMILIES
                        if ports and not any(k.endswith(suffix) for v in ports.values() for k in v))
    errors = (f"no counters parsed from {len(outputs)} {sw.platform} outputs",
              ) if not ports and outputs else ()
    return CounterReading(ports=ports, unsupported=unsupported, errors=errors)
