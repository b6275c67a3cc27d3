"""Bounds of the values an inventory may pin and the tuner derives, below both of them.

The inventory's override schema (:func:`roce_tune.inventory.models.parse_pin`) and its lint rules check
pinned values against the same ranges the tuner (:mod:`roce_tune.tuner.watchdog`,
:mod:`roce_tune.tuner.dcqcn`) derives within, so the ranges live here and neither imports the other:

* PFC watchdog: the actions and the timer ranges of ``sonic-pfcwd.yang`` (detection 100..5000,
  restoration 100..60000, poll 100..1000 ms; sonic-net/sonic-buildimage
  ``src/sonic-yang-models/yang-models/sonic-pfcwd.yang``, docs/derivation.md#pfc-watchdog);
* DCQCN (mlx5) parameters: NVIDIA DOCA "DCQCN CC Parameters" ranges, rates bounded by the line rate
  (docs/derivation.md#dcqcn-parameters); ``[R]`` marks a range of our own reasoning, said in its source;
* the traffic class that carries lossy traffic;
* a port's MTU: 1500..9216 bytes (:data:`PORT_MTU_RANGE_BYTES`: the top of ``sonic-port.yang``'s ``mtu``
  range 68..9216, the bottom the standard Ethernet MTU a RoCE fabric does not go below);
* the written form of a list of ids (DSCPs, priorities, queues) as runs, ``0-2,5`` (:func:`id_runs`).

    >>> dcqcn_param_range("rpg_ai_rate_mbps", 400)[:2]
    (1, 400000)
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "DOCA_DCQCN_SOURCE",
    "LOSSY_TC",
    "PORT_MTU_RANGE_BYTES",
    "WATCHDOG_ACTIONS",
    "WATCHDOG_RANGES_MS",
    "dcqcn_param_range",
    "dcqcn_ranges",
    "id_runs",
]

#: Traffic class (and PFC priority) of lossy traffic: every DSCP the policy does not name maps here.
LOSSY_TC = 0

#: A port's (and a host netdev's) MTU in bytes, (lowest, highest): ``policy.mtu``, ``policy.host_mtu`` and
#: every port's ``mtu`` in an inventory, and ``roce-tune calc headroom --mtu``.
PORT_MTU_RANGE_BYTES = (1500, 9216)

#: What a PFC watchdog does with a stormed queue (sonic-pfcwd.yang ``action``).
WATCHDOG_ACTIONS = ("drop", "forward", "alert")
#: (lo, hi) ms of each PFC watchdog timer (sonic-pfcwd.yang).
WATCHDOG_RANGES_MS = {"detection_ms": (100, 5000), "restoration_ms": (100, 60000), "poll_ms": (100, 1000)}

DOCA_DCQCN_SOURCE = ("NVIDIA DOCA 'DCQCN CC Parameters' "
                     "(networking-docs.nvidia.com/doca/archive/3-4-0/dcqcn-cc-parameters)")
_FIELD = "32-bit field in torvalds/linux include/linux/mlx5/mlx5_ifc.h cong_control_r_roce_ecn_rp/np"
_MAX_US = 131071  # DOCA range of dce_tcp_rtt (µs); used for the other µs timers too [R]


def dcqcn_ranges(speed_gbps: int) -> dict[str, tuple[int, int, str]]:
    """Allowed values of every mlx5 DCQCN parameter at ``speed_gbps``: ``{key: (lo, hi, source)}``; rates
    (``*_mbps``) are bounded by the line rate (``speed_gbps * 1000`` Mb/s)."""
    line = speed_gbps * 1000
    doca = DOCA_DCQCN_SOURCE
    return {
        "rpg_time_reset_us": (1, _MAX_US, "[R] same µs range as dce_tcp_rtt"),
        "rpg_byte_reset_bytes": (0, 32767,
                                 "0 = disabled (NVIDIA mstflint mlxconfig RPG_BYTE_RESET: \"Disabled=0\"); "
                                 "[R] firmware default 32767 = 2^15-1 is the field maximum"),
        "rpg_threshold": (1, 31, "docs/derivation.md#dcqcn-parameters (1..31)"),
        "rpg_max_rate_mbps": (0, line, "0 = line rate; cannot exceed the line rate"),
        "rpg_ai_rate_mbps": (1, line, "a rate step between 1 Mb/s and the line rate"),
        "rpg_hai_rate_mbps": (1, line, "a rate step between 1 Mb/s and the line rate"),
        "rpg_gd": (0, 15, "[R] log2 shift of alpha"),
        "rpg_min_dec_fac_percent": (0, 100, doca),
        "rpg_min_rate_mbps": (1, line, doca + " (1..line rate)"),
        "rate_to_set_on_first_cnp_mbps": (0, line, doca + " (0, 1..line rate)"),
        "dce_tcp_g": (0, 1023, doca + " (10-bit fixed point)"),
        "dce_tcp_rtt_us": (1, _MAX_US, doca + " (1..131071 µs)"),
        "rate_reduce_monitor_period_us": (0, _MAX_US, "[R] µs"),
        "initial_alpha_value": (1, 1023, doca + " (1..1023)"),
        "min_time_between_cnps_us": (0, _MAX_US, "[R] µs"),
        "clamp_tgt_rate": (0, 1, "flag"),
        "clamp_tgt_rate_after_time_inc": (0, 1, "flag"),
        "cnp_dscp": (0, 63, "6-bit DSCP (" + _FIELD + ")"),
        "cnp_802p_prio": (0, 7, "3-bit PCP (" + _FIELD + ")"),
    }


def dcqcn_param_range(key: str, speed_gbps: int) -> tuple[int, int, str]:
    """``(lo, hi, source)`` of DCQCN parameter ``key`` at ``speed_gbps`` (rates are bounded by the line rate).

    Raises:
        KeyError: unknown key.
    """
    return dcqcn_ranges(speed_gbps)[key]


def id_runs(ids: Iterable[int]) -> str:
    """DSCPs, priorities or queue ids (no unit) as sorted runs ``a-b`` joined by ``,``, the list form NX-OS
    ``match dscp``, the host script's notes and audit's messages write. No duplicates expected; empty -> "".

    >>> id_runs([0, 1, 2, 5, 7, 8]), id_runs([26]), id_runs([])
    ('0-2,5,7-8', '26', '')
    """
    runs: list[list[int]] = []
    for i in sorted(ids):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)
