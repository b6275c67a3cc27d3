"""DCQCN reaction-point / notification-point parameters for mlx5 (ConnectX-4 and later).

Starts from the NIC firmware defaults (NVIDIA DOCA "DCQCN CC Parameters",
docs/derivation.md#dcqcn-parameters). Only ``rpg_time_reset`` is derived: the rate-increase timer keeps the
firmware period measured in bytes at line rate (300 µs at 100G = 3.75 MB), so it shortens above 100G and never
lengthens below (``T = 300 µs x min(1, 100 / speed_gbps)``; docs/derivation.md#dcqcn-timer, sweep in
docs/tuning-sweeps.md#dcqcn-knobs). ``rpg_byte_reset`` keeps the firmware value (the field maximum, 32767 B)
below 100G and is 0 (byte counter disabled) from 100G: the counter cannot grow with C, so from 100G it fires
faster than CNPs arrive and drives the fast-recovery limit cycle (docs/derivation.md#dcqcn-byte-counter, sweep
docs/tuning-sweeps.md#dcqcn-byte-counter). ``rpg_ai_rate``/``rpg_hai_rate`` stay at the firmware defaults:
with the byte counter (events every B bytes) and the derived timer both scaling with C, the time to regain a
share is already speed-independent, and the sweep shows the speed-scaled steps dropping 400G long-lived
utilisation below 99 % (docs/derivation.md#dcqcn-increase-steps). Everything else keeps the firmware value,
with the reason in its Rationale.

Example::

    >>> calc_dcqcn("400G").params["rpg_time_reset_us"], calc_dcqcn("400G").params["rpg_byte_reset_bytes"]
    (75, 0)
"""

from __future__ import annotations

from roce_tune.inventory.catalog import NicSpec
from roce_tune.plan import Dcqcn, Rationale
from roce_tune.ranges import DOCA_DCQCN_SOURCE as _DOCA
from roce_tune.ranges import dcqcn_ranges as _ranges

#: Firmware defaults (docs/derivation.md#dcqcn-parameters table; NVIDIA DOCA "DCQCN CC Parameters" and an
#: ``mlxconfig -q`` dump). Used for any key the catalog's ``NicSpec.dcqcn_defaults`` does not give.
MLX5_FIRMWARE_DEFAULTS: dict[str, int] = {
    "rpg_time_reset_us": 300, "rpg_byte_reset_bytes": 32767, "rpg_threshold": 1, "rpg_max_rate_mbps": 0,
    "rpg_ai_rate_mbps": 5, "rpg_hai_rate_mbps": 50, "rpg_gd": 11, "rpg_min_dec_fac_percent": 50,
    "rpg_min_rate_mbps": 1, "rate_to_set_on_first_cnp_mbps": 0, "dce_tcp_g": 1019, "dce_tcp_rtt_us": 1,
    "rate_reduce_monitor_period_us": 4, "initial_alpha_value": 1023, "min_time_between_cnps_us": 2,
    "clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "cnp_dscp": 48, "cnp_802p_prio": 6,
}
PARAM_KEYS: tuple[str, ...] = tuple(MLX5_FIRMWARE_DEFAULTS)

#: HPCC rule anchors: AI/HAI at 25 Gb/s (the ``bdp``-era rule, kept for comparison in docs/tuning-sweeps.md).
HPCC_AI_MBPS_AT_25G = 5
HPCC_HAI_MBPS_AT_25G = 50
#: The firmware increase timer and the speed at which the sweeps show it right
#: (docs/tuning-sweeps.md#dcqcn-knobs).
TIMER_REFERENCE_US = 300
TIMER_REFERENCE_GBPS = 100
#: The fastest link on which the byte counter stays at its firmware value; above it rpg_byte_reset is 0
#: (disabled; docs/derivation.md#dcqcn-byte-counter, sweep docs/tuning-sweeps.md#dcqcn-byte-counter).
BYTE_COUNTER_MAX_GBPS = 50


def check_dcqcn_value(key: str, value: int, speed_gbps: int) -> None:
    """Range-check one DCQCN parameter.

    Raises:
        ValueError: unknown key or value outside its range (message names key, value, range, source).
    """
    ranges = _ranges(speed_gbps)
    if key not in ranges:
        raise ValueError(f"unknown DCQCN parameter {key!r}; known: {', '.join(PARAM_KEYS)}")
    lo, hi, src = ranges[key]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"DCQCN {key}={value!r} is outside {lo}..{hi} at {speed_gbps}G ({src})")


def _scaled(base_mbps: int, speed_gbps: int) -> int:
    return max(1, round(base_mbps * speed_gbps / 25))


def _derive_one(key: str, fw: dict[str, int], speed_gbps: int, cnp_dscp: int,
                cnp_priority: int) -> tuple[int, Rationale]:
    """The value we would choose for ``key`` and why."""
    d = fw[key]
    if key == "rpg_time_reset_us":
        v = max(1, round(TIMER_REFERENCE_US * min(1.0, TIMER_REFERENCE_GBPS / speed_gbps)))
        return v, Rationale(
            formula="round(300 us * min(1, 100 / speed_gbps)): the firmware period in bytes at line rate "
                    "(3.75 MB), never longer than the firmware value",
            inputs={"speed_gbps": speed_gbps, "firmware_us": d, "reference_us": TIMER_REFERENCE_US,
                    "reference_gbps": TIMER_REFERENCE_GBPS},
            source="docs/derivation.md#dcqcn-timer; sweep docs/tuning-sweeps.md#dcqcn-knobs",
            note="after a train of cuts the link idles until the timer fires; at 400G a 300 us stall is "
                 "longer than a whole 1 MB x 8 incast, so the timer follows the line rate. At 100G shorter "
                 "timers raise PFC pause on 8 MB incasts (sweep), so 300 us stays there")
    if key == "rpg_byte_reset_bytes":
        on = speed_gbps <= BYTE_COUNTER_MAX_GBPS
        v = d if on else 0
        return v, Rationale(
            formula=f"firmware value up to {BYTE_COUNTER_MAX_GBPS}G, 0 (byte counter disabled) above: the "
                    "field maximum B = 2^15-1 cannot grow with C, so the counter's increase events (C/B a "
                    "second at line rate) and the fast-recovery limit-cycle load grow with the line rate",
            inputs={"speed_gbps": speed_gbps, "firmware_bytes": d, "max_speed_gbps": BYTE_COUNTER_MAX_GBPS,
                    "counter_period_at_line_rate_ns": round(d * 8 / speed_gbps)},
            source="docs/derivation.md#dcqcn-byte-counter; sweep docs/tuning-sweeps.md#dcqcn-byte-counter; "
                   "0 = disabled: NVIDIA mstflint mlxconfig, RPG_BYTE_RESET_P1 \"Disabled=0\", and its PRM "
                   "layout rpg_byte_reset \"0 == disabled\" (https://github.com/Mellanox/mstflint)",
            note=("kept: below 100G disabling it misses more incasts (docs/derivation.md#dcqcn-byte-counter)"
                  if on else
                  "from 100G the counter fires every 2.6 us or less at line rate, faster than a CNP can "
                  "come back, and model-M incasts and long-lived flows cycle into PFC or below 99 % "
                  "utilisation; the derived timer (scaled with 1/C above 100G) carries the increase clock "
                  "instead (sweep)"))
    if key in ("rpg_ai_rate_mbps", "rpg_hai_rate_mbps"):
        hpcc_mbps_at_25g = HPCC_AI_MBPS_AT_25G if key == "rpg_ai_rate_mbps" else HPCC_HAI_MBPS_AT_25G
        return d, Rationale(
            formula="firmware default", inputs={key: d, "speed_gbps": speed_gbps},
            source=_DOCA + "; docs/derivation.md#dcqcn-increase-steps; sweep "
                           "docs/tuning-sweeps.md#dcqcn-knobs",
            note="not scaled with speed: the derived timer shortens as 1/C (and below 100G the byte "
                 "counter fires every B bytes, R/B per second), so the time to regain a share is already "
                 "speed-independent; in the sweep the scaled steps (HPCC rule, "
                 f"{_scaled(hpcc_mbps_at_25g, speed_gbps)}"
                 " Mb/s here, from a timer-only simulator) speed up 8 MB x 16-32 incasts but drop 400G "
                 "long-lived utilisation below 99 %")
    if key == "cnp_dscp":
        return cnp_dscp, Rationale(formula="policy.cnp_dscp", inputs={"cnp_dscp": cnp_dscp},
                                   source="inventory policy",
                                   note=f"must equal the switch CNP class (firmware default {d})")
    if key == "cnp_802p_prio":
        return cnp_priority, Rationale(formula="policy.cnp_priority", inputs={"cnp_priority": cnp_priority},
                                       source="inventory policy",
                                       note=f"must equal the switch CNP priority (firmware default {d})")
    notes = {
        "rpg_min_rate_mbps": "kept at the firmware floor: DCQCN is per QP and N QPs must be able to fall "
                             "below C together (N*min_rate < C); with NCCL QP scaling N can reach thousands, "
                             "so the HPCC simulator's 1000 Mb/s floor would defeat congestion control at "
                             "400G for N >= 400",
        "rpg_threshold": "F = 1 fast-recovery stage, as the HPCC firmware-like profile (FAST_RECOVERY_TIMES "
                         "1)",
        "rpg_max_rate_mbps": "0 = line rate",
        "rate_to_set_on_first_cnp_mbps": "0 = keep line rate on the first CNP "
                                         "(docs/derivation.md#ecn-before-pfc)",
        "dce_tcp_g": "g = 1 - 1019/1024 ~ 1/205 (HPCC uses 1/256 = 1020; difference immaterial)",
        "dce_tcp_rtt_us": "alpha-update period tau' (HPCC t_alpha = 1 µs)",
        "rate_reduce_monitor_period_us": "min time between cuts (HPCC t_dec = 4 µs)",
        "min_time_between_cnps_us": "firmware-dependent (dump 2 µs; docs 0 or 4): read from the NIC "
                                    "(docs/derivation.md#dcqcn-parameters)",
    }
    return d, Rationale(formula="firmware default", inputs={key: d},
                        source=_DOCA + "; docs/derivation.md#dcqcn-parameters",
                        note=notes.get(key, ""))


#: ``relies_on`` of a NIC with DCQCN disabled
_PFC_ONLY_NOTE = (
    "DCQCN disabled: the fabric relies on PFC alone for losslessness plus receiver-driven admission in the "
    "collective library (NCCL message pacing, QP scaling), as Meta ran 400G RoCE for >1 year "
    "(SIGCOMM'24, docs/derivation.md#large-scale-practice). Watch PFC pause duration per port/priority, "
    "PFC watchdog events, "
    "and RoCE out_of_sequence / packet_seq_err counters; parameters are kept for re-enabling.")


def _apply_overrides(overrides: dict[str, int], params: dict[str, int], rationale: dict[str, Rationale],
                     speed_gbps: int, cnp: tuple[int, int], sources: dict[str, str]) -> None:
    """Pinned values replace the derived ones in place (range-checked; the CNP class, ``cnp`` = (DSCP,
    priority), must be the site's); each one's rationale names its ``sources`` entry."""
    cnp_dscp, cnp_priority = cnp
    for key, value in overrides.items():
        check_dcqcn_value(key, value, speed_gbps)
        if (key == "cnp_dscp" and value != cnp_dscp) or (key == "cnp_802p_prio" and value != cnp_priority):
            raise ValueError(f"DCQCN {key}={value} differs from the site's CNP class "
                             f"(dscp {cnp_dscp}, priority {cnp_priority}); change policy.cnp_* instead")
        derived = params[key]
        params[key] = value
        old = rationale[key]
        rationale[key] = Rationale(
            formula="pinned by user", inputs={key: value}, source=sources.get(key, "inventory override"),
            note=f"derived {derived} ({old.formula})", pinned_by_user=True, derived_value=derived)


def derive_dcqcn(
    nic: NicSpec,
    speed_gbps: int,
    enabled: bool,
    priorities: list[int],
    cnp_dscp: int,
    cnp_priority: int,
    overrides: dict[str, int] | None = None,
    pin_sources: dict[str, str] | None = None,
) -> Dcqcn:
    """DCQCN parameters for one NIC port.

    Args:
        nic: catalog NIC; ``dcqcn_defaults`` gives the firmware defaults (missing keys fall back to
            :data:`MLX5_FIRMWARE_DEFAULTS`).
        speed_gbps: port speed (Gb/s).
        enabled: policy.dcqcn. False = PFC-only fabric (``enabled_priorities`` empty, ``relies_on`` set).
        priorities: lossless priorities on which RP/NP are enabled.
        cnp_dscp, cnp_priority: the site's CNP DSCP / 802.1p priority (must match the switch CNP class).
        overrides: user-pinned values keyed like :data:`PARAM_KEYS` (``pinned_by_user``; still range-checked).
        pin_sources: rationale source per pinned key (the override entry and its reason,
            :func:`roce_tune.inventory.overrides.pin_sources`); a key without one says "inventory override".

    Returns:
        :class:`roce_tune.plan.Dcqcn` with ``params`` and ``firmware_defaults`` over :data:`PARAM_KEYS`
        and a Rationale per param.

    Raises:
        ValueError: a value (derived or pinned) outside its range, an unknown override key, a pinned
            cnp_dscp/cnp_802p_prio that differs from the site's, or speed_gbps <= 0.
    """
    if speed_gbps <= 0:
        raise ValueError(f"speed_gbps must be > 0, got {speed_gbps}")
    fw = {**MLX5_FIRMWARE_DEFAULTS, **{k: v for k, v in nic.dcqcn_defaults.items()
                                       if k in MLX5_FIRMWARE_DEFAULTS}}
    params: dict[str, int] = {}
    rationale: dict[str, Rationale] = {}
    for key in PARAM_KEYS:
        params[key], rationale[key] = _derive_one(key, fw, speed_gbps, cnp_dscp, cnp_priority)
        check_dcqcn_value(key, params[key], speed_gbps)
    _apply_overrides(overrides or {}, params, rationale, speed_gbps, (cnp_dscp, cnp_priority),
                     pin_sources or {})
    if params["rpg_hai_rate_mbps"] < params["rpg_ai_rate_mbps"]:
        r = rationale["rpg_hai_rate_mbps"]
        rationale["rpg_hai_rate_mbps"] = r.model_copy(
            update={"note": (r.note + "; " if r.note else "") + "HAI below AI: hyper-increase slower than "
                    "additive"})
    return Dcqcn(
        enabled=enabled,
        enabled_priorities=sorted(set(priorities)) if enabled else [],
        params=params,
        firmware_defaults={k: fw[k] for k in PARAM_KEYS},
        relies_on="" if enabled else _PFC_ONLY_NOTE,
        rationale=rationale,
    )


def calc_dcqcn(speed: str | int, nic_id: str = "connectx-7") -> Dcqcn:
    """``roce-tune calc dcqcn --speed 400G``: DCQCN for ``nic_id`` at ``speed`` with the default policy.

    Args:
        speed: any spelling :func:`roce_tune.units.parse_speed_gbps` accepts (``"400G"``, ``400000``).
        nic_id: catalog NIC id.

    Raises:
        ValueError: bad speed. roce_tune.inventory.catalog.CatalogError: unknown NIC.
    """
    from roce_tune.inventory.catalog import load_catalog
    from roce_tune.inventory.models import Policy
    from roce_tune.units import parse_speed_gbps

    pol = Policy()
    return derive_dcqcn(load_catalog().nic(nic_id), parse_speed_gbps(speed), pol.dcqcn,
                        sorted(pol.lossless_priorities), pol.cnp_dscp, pol.cnp_priority)


def nic_speed_gbps(nic_id: str, speed: str | int) -> int:
    """``speed`` in Gb/s if the catalog NIC ``nic_id`` runs at it (``roce-tune calc dcqcn --nic``).

    Raises:
        ValueError: bad speed spelling, or above the NIC's ``max_speed_gbps`` (a ConnectX-7 at 800G: lint
            RT111 refuses it in an inventory). roce_tune.inventory.catalog.CatalogError: unknown NIC.
    """
    from roce_tune.inventory.catalog import load_catalog
    from roce_tune.units import parse_speed_gbps

    nic = load_catalog().nic(nic_id)
    gbps = parse_speed_gbps(speed)
    if gbps > nic.max_speed_gbps:
        raise ValueError(f"{gbps}G exceeds the {nic.max_speed_gbps}G maximum port speed of {nic.id}")
    return gbps


def stepped_rate_mbps(rate_mbps: int, factor: float, up: bool, line_mbps: int | None = None) -> int:
    """A DCQCN recovery rate (rpg_ai / rpg_hai, Mb/s) moved one ``verify --adjust`` step
    (:mod:`roce_tune.verify.adjust`, step rule [D]): multiplied (``up``) or divided by ``factor`` (> 1),
    truncated to whole Mb/s; never below 1 Mb/s (the smallest rate the NIC takes) nor, when ``line_mbps``
    is given, above the line rate.

    >>> stepped_rate_mbps(5, 2.0, True), stepped_rate_mbps(1, 2.0, False)
    (10, 1)
    >>> stepped_rate_mbps(300, 2.0, True, line_mbps=400)
    400
    """
    rate = int(rate_mbps * factor) if up else max(1, int(rate_mbps / factor))
    return rate if line_mbps is None else min(line_mbps, rate)
