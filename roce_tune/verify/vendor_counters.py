"""Compatibility for roce_tune/audit/readers.py (being moved by another change): the switch counter parsers
of Cumulus, NX-OS and Junos live with their platforms now (``roce_tune/platforms/<platform>_counters.py``,
reached through each platform's ``counters`` reader). Remove once audit reads them there.
"""

from __future__ import annotations

from roce_tune.platforms.counters import drop_port_totals
from roce_tune.platforms.cumulus_counters import (
    parse_cumulus_counters_qos,
    parse_cumulus_pfc_watchdog,
    parse_cumulus_roce_counters,
)
from roce_tune.platforms.junos_counters import parse_junos_extensive_pfc, parse_junos_interfaces_queue
from roce_tune.platforms.nxos_counters import (
    parse_nxos_pfc_interfaces,
    parse_nxos_pfc_queue_detail,
    parse_nxos_queuing_interface,
)

__all__ = [
    "drop_port_totals",
    "parse_cumulus_counters_qos",
    "parse_cumulus_pfc_watchdog",
    "parse_cumulus_roce_counters",
    "parse_junos_extensive_pfc",
    "parse_junos_interfaces_queue",
    "parse_nxos_pfc_interfaces",
    "parse_nxos_pfc_queue_detail",
    "parse_nxos_queuing_interface",
]
