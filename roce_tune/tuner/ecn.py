"""ECN/WRED marking thresholds for the lossless queue, checked against the DCQCN fluid model.

Rules (docs/derivation.md#ecn, docs/derivation.md#kmax-first-rtt-burst, docs/derivation.md#dcqcn-fluid-model;
evidence in docs/tuning-sweeps.md):

* PFC onset, like with like: the egress queue of an N:1 incast is fed by N ingress PGs, each of which
  sends XOFF at its dynamic-threshold share ``L(N)`` (``pfc_trigger_bytes``), so the egress queue at PFC
  onset is ``N x L(N)`` (``pfc_onset_bytes``), not ``L(N)``.
* ``derived`` with ``objective: throughput`` (default): Kmax = onset/2 (the ramp reaches toward PFC onset and
  the other half of the onset absorbs the overshoot during the feedback delay), Kmin = Kmax/2. A
  flow-start incast builds ``(N-1) x BDP`` before any feedback; a Kmax below that marks every packet
  at once and idles the link for an increase-timer period (the ``bdp`` rule's failure). On deep buffers
  Kmax is bounded by ``2 x C x rpg_time_reset`` (:func:`timer_queue_bytes`, 7.5 MB at 100G and 400G): the
  queue only has to keep the link busy while the rates recover after a cut train
  (docs/tuning-sweeps.md#kmax-bound).
  ``latency``: the ``bdp`` ramp (bounded standing queue). ``balanced``: Kmax = the first-RTT burst
  ``N x BDP`` (at least the ``bdp`` Kmax, at most onset/2), Kmin = Kmax/4.
* Pmax (every objective) = the smallest of 1/2/5/10/20/50/100 % that is >= 2 x p*(N), the fluid fixed
  point with RoCE-frame model packets.
* ``bdp`` (the previous rule, kept for comparison): Kmin = max(BDP/7, 2 jumbo frames); Kmax = m(N) x BDP,
  m from 2 to 3 (Huawei "2-3 x BDP"), clamped to 0.8 x one PG's trigger; Pmax from the fluid model
  with 1000 B packets, as that rule did.
* Hard rule (DCQCN, "ECN before PFC"): Kmin < Kmax <= PFC onset; a named profile is never "fixed", it
  is flagged (:func:`check_ecn` RT210/RT211). The steady-state check says "PFC-bound" when the fixed
  point sits above the onset or the fast-recovery limit cycle loads the link past 1.
* Named profiles ``nvidia-default``, ``sonic-default``, ``dcqcn-paper`` come from :data:`NAMED_PROFILES`.

Example::

    >>> rtt, _ = base_rtt_us(3, 20.0, 2.0, 0.6)     # leaf-spine-leaf, 20 m one way
    >>> round(rtt, 3)
    7.802
"""

from __future__ import annotations

import math

from roce_tune.findings import Finding, Location, Severity
from roce_tune.inventory.models import PROFILE_NAME_RE, EcnProfileName
from roce_tune.plan import EcnProfile, FluidCheck, Rationale
from roce_tune.platforms.contract import OWN_NAME_RE  # noqa: F401  (naming convention, re-exported)
from roce_tune.tuner.dcqcn import HPCC_AI_MBPS_AT_25G, TIMER_REFERENCE_US, calc_dcqcn
from roce_tune.tuner.fluid import (
    ROCE_FRAME_BYTES,
    FluidParams,
    fast_recovery_load,
    fixed_point,
    fixed_point_p,
)
from roce_tune.units import parse_bytes, parse_speed_gbps, parse_time_us

#: Propagation delay in fibre/copper: 1/1.98e8 m/s (SONiC buffer_headroom_mellanox.lua;
#: docs/derivation.md#headroom).
PROPAGATION_NS_PER_M = 5.05
#: Largest frame a lossless queue carries (policy.mtu maximum, 9216 B).
MAX_FRAME_BYTES = 9216
#: DCTCP marking bound K > C*RTT/7 (Alizadeh et al. SIGCOMM'10 [R], docs/derivation.md#ecn) used for Kmin.
KMIN_BDP_DIVISOR = 7
KMIN_FLOOR_BYTES = 2 * MAX_FRAME_BYTES
RAMP_FLOOR_BYTES = 2 * MAX_FRAME_BYTES
#: Kmax may use at most this fraction of the PFC trigger (guard band for the marking-to-reaction delay).
TRIGGER_GUARD = 0.8
PMAX_LADDER_PERCENT = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)
#: Pmax >= PMAX_MARGIN x p*: q* then sits in the lower half of the ramp.
PMAX_MARGIN = 2.0
#: throughput objective: Kmax = this fraction of the egress PFC onset; Kmin = Kmax x KMIN_OF_KMAX.
ONSET_FRACTION = 0.5
#: Kmax never above this many increase-timer periods of line rate (C x rpg_time_reset): after a train of cuts
#: the queue only has to keep the link busy until the rates recover; a deeper ramp adds standing queue, not
#: efficiency (docs/tuning-sweeps.md#kmax-bound, 40 MB pool: 2 periods match onset/2, 1 period loses up to 10
#: points).
TIMER_PERIODS_OF_QUEUE = 2.0
KMIN_OF_KMAX = {"throughput": 0.5, "balanced": 0.25}
#: the ``bdp`` rule's fluid model packet (the CoNEXT'16 authors' 1000 B), kept so ``bdp`` gives its old
#: values.
BDP_RULE_PACKET_BYTES = 1000
OBJECTIVES = ("throughput", "latency", "balanced")
#: a trigger at least this large means "not given" (calc ecn without --pfc-trigger)
UNKNOWN_TRIGGER_BYTES = 1 << 60
OBJECTIVE_TRADE: dict[str, str] = {
    "throughput": "incast completion and long-lived utilisation first, zero loss, least PFC; traded: a "
                  "standing queue of up to about Kmin + (p*/Pmax)(Kmax - Kmin) (hundreds of KB to MB) on "
                  "congested ports, i.e. tens to hundreds of microseconds of queueing delay",
    "latency": "bounded standing queue (Kmax = 2-3 x BDP); traded: incast completion - a flow-start incast "
               "crosses Kmax at once and the link idles until the increase timer fires (36-53 % incast "
               "efficiency at 100G in docs/tuning-sweeps.md)",
    "balanced": "Kmax sized to the first-RTT burst of the fan-in; traded: part of the incast efficiency of "
                "'throughput' for a standing queue about half as deep",
}

_S_NVIDIA = ("NVIDIA Onyx User Manual 'show roce' (ECN absolute 150 KB / 1500 KB on TC3); Cumulus 5.x RoCE "
             "page (docs/derivation.md#ecn). Pmax: NVUE RoCE reference 'congestion-control ... probability "
             "100' (docs/derivation.md#platform-syntax); the Onyx default probability itself is a "
             "docs/derivation.md gap")
_S_SONIC = ("sonic-net/sonic-buildimage:files/build_templates/qos_config.j2 WRED_PROFILE AZURE_LOSSLESS "
            "(docs/derivation.md#ecn)")
_S_PAPER = ("Zhu et al., SIGCOMM'15 DCQCN (40G testbed) [R]; jitupadhye-zz/rdma dcqcn2.m comments "
            "(docs/derivation.md#dcqcn-fluid-model)")

#: name -> (kmin_bytes, kmax_bytes, pmax_percent, source)
NAMED_PROFILES: dict[str, tuple[int, int, float, str]] = {
    "nvidia-default": (150_000, 1_500_000, 100.0, _S_NVIDIA),
    "sonic-default": (1_048_576, 2_097_152, 5.0, _S_SONIC),
    "dcqcn-paper": (5_000, 200_000, 1.0, _S_PAPER),
}
_ECN_KEYS = ("kmin_bytes", "kmax_bytes", "pmax_percent")

__all__ = ["NAMED_PROFILES", "base_rtt_us", "calc_dcqcn", "calc_ecn", "check_ecn", "derive_ecn",
           "pmax_ladder_neighbour", "stepped_thresholds"]


#: Name of a derived ECN profile; the plan adds ``_V<n>`` (variants of one speed/fan-in) and ``_PIN``
#: (pinned values) — :data:`OWN_NAME_RE` matches all of them, so deploy can tell the profiles roce-tune
#: created (and may remove once unused) from anyone else's.
DEFAULT_NAME = "ROCE_LOSSLESS_{speed_gbps}G_N{fan_in}"


def bdp_bytes(speed_gbps: float, rtt_us: float) -> float:
    """Bandwidth-delay product in bytes: ``R x RTT`` (docs/derivation.md#bdp-and-base-rtt).

    Args:
        speed_gbps: port rate, Gb/s.
        rtt_us: round-trip time, µs (the base RTT: propagation + switch and NIC latency, no queueing).

    >>> bdp_bytes(100, 5.0)
    62500.0
    """
    return speed_gbps * 1e9 / 8 * rtt_us * 1e-6


def base_rtt_us(hops: int, cable_m_total: float, nic_latency_us: float,
                switch_latency_us: float) -> tuple[float, Rationale]:
    """Unloaded round-trip time between two hosts.

    ``rtt = 2 x cable_m_total x 5.05 ns/m + 2 x hops x switch_latency + 2 x nic_latency``:
    propagation both ways over the one-way cable length, every switch crossed once each way, and the
    two NICs (sender and receiver processing). Serialisation and queueing are not included.

    Args:
        hops: switches on the one-way path (leaf-spine-leaf = 3).
        cable_m_total: total one-way cable length (m).
        nic_latency_us: one NIC's processing latency (µs).
        switch_latency_us: one switch's port-to-port latency (µs).

    Returns:
        (rtt_us, Rationale).

    Raises:
        ValueError: any negative input.
    """
    if hops < 0 or cable_m_total < 0 or nic_latency_us < 0 or switch_latency_us < 0:
        raise ValueError(f"base_rtt_us: inputs must be >= 0 (hops={hops}, cable_m_total={cable_m_total}, "
                         f"nic_latency_us={nic_latency_us}, switch_latency_us={switch_latency_us})")
    prop_us = 2 * cable_m_total * PROPAGATION_NS_PER_M / 1000
    rtt = round(prop_us + 2 * hops * switch_latency_us + 2 * nic_latency_us, 3)
    return rtt, Rationale(
        formula="2*cable_m_total*5.05 ns/m + 2*hops*switch_latency_us + 2*nic_latency_us",
        inputs={"hops": hops, "cable_m_total": cable_m_total, "nic_latency_us": nic_latency_us,
                "switch_latency_us": switch_latency_us, "propagation_us": round(prop_us, 3)},
        source="docs/derivation.md#cable-propagation, docs/derivation.md#bdp-and-base-rtt; switch/NIC "
               "latency from the catalog",
        note="unloaded: no serialisation or queueing delay")


def _ceil_kb(x: float) -> int:
    return int(math.ceil(x / 1000.0)) * 1000


def _kmax_multiplier(n_flows: int) -> float:
    return 2.0 + min(1.0, math.log2(max(1, n_flows)) / 6.0)


def _choose_pmax(p_star: float) -> float:
    for p in PMAX_LADDER_PERCENT:
        if p / 100 >= PMAX_MARGIN * p_star:
            return p
    return PMAX_LADDER_PERCENT[-1]


def _vendor_note(speed_gbps: int) -> str:
    hpcc_min, hpcc_max = 100_000 * speed_gbps // 25, 400_000 * speed_gbps // 25
    return ("vendor/paper values: NVIDIA 150000/1500000 B; SONiC AZURE_LOSSLESS 1048576/2097152 B @5 %; "
            f"DCQCN paper 5000/200000 B @1 % (40G); HPCC rule {hpcc_min}/{hpcc_max} B @20 % at "
            f"{speed_gbps}G; Huawei 100GE 7 KB/750 KB @10 %. Ours follow this port's PFC onset, fan-in and "
            "BDP instead of one fixed number")


def _parse_overrides(overrides: dict[str, float | int | str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in (overrides or {}).items():
        if key not in _ECN_KEYS:
            raise ValueError(f"unknown ECN override {key!r}; allowed: {', '.join(_ECN_KEYS)}")
        if key == "pmax_percent":
            v = float(str(value).rstrip("%").strip()) if isinstance(value, str) else float(value)
            if not 0 < v <= 100:
                raise ValueError(f"ECN pmax_percent={value!r} must be in (0, 100]")
        else:
            try:
                v = float(parse_bytes(value))
            except ValueError as exc:
                raise ValueError(f"ECN {key}={value!r}: {exc}") from None
        out[key] = v
    return out


def timer_queue_bytes(speed_gbps: float, rpg_time_reset_us: float) -> int:
    """Bytes the link drains in :data:`TIMER_PERIODS_OF_QUEUE` DCQCN increase-timer periods: the Kmax bound.

    ``2 x C x rpg_time_reset`` (7.5 MB at 100G/300 us and at 400G/75 us). Sweep:
    docs/tuning-sweeps.md#kmax-bound.

    >>> timer_queue_bytes(100, 300)
    7500000
    """
    return int(TIMER_PERIODS_OF_QUEUE * speed_gbps * 1e9 / 8 * rpg_time_reset_us * 1e-6)


def _derive_onset_ramp(objective: str, bdp: float, n: int, onset: int, p_star: float,
                       common: dict[str, float | int], problems: list[str]
                       ) -> tuple[int, int, float, dict[str, Rationale]]:
    """Kmin/Kmax/Pmax for ``throughput`` and ``balanced`` (docs/derivation.md#kmax-first-rtt-burst)."""
    unknown = onset >= UNKNOWN_TRIGGER_BYTES
    cap = int(common["timer_queue_bytes"])
    half = min(ONSET_FRACTION * onset, cap)
    burst = (n - 1) * bdp
    kmin_floor = max(_ceil_kb(bdp / KMIN_BDP_DIVISOR), KMIN_FLOOR_BYTES)
    if unknown:
        kmax = int(min(cap, max(n * bdp, _kmax_multiplier(n) * bdp)))
        formula = ("Kmax = floor_1000(min(timer_queue_bytes, max(N x BDP, m(N) x BDP))): the first-RTT burst "
                   "(no PFC trigger given, so the onset rule cannot apply)")
    elif objective == "throughput":
        kmax = int(half)
        formula = ("Kmax = floor_1000(min(onset_fraction x pfc_onset_bytes, timer_queue_bytes)), "
                   "pfc_onset_bytes = min(fan_in x pfc_trigger_bytes, queue_buffer_bytes) (all N ingress PGs "
                   "at their threshold); timer_queue_bytes = 2 x C x rpg_time_reset bounds deep buffers: two "
                   "increase-timer periods of line rate keep the link busy while the rates recover "
                   "(docs/tuning-sweeps.md#kmax-bound)")
    else:
        kmax = int(min(half, max(n * bdp, _kmax_multiplier(n) * bdp)))
        formula = ("Kmax = floor_1000(min(onset_fraction x pfc_onset_bytes, timer_queue_bytes, max(N x BDP, "
                   "m(N) x BDP))): the first-RTT burst of the fan-in")
    kmax = (kmax // 1000) * 1000
    note = ""
    squeezed = kmax < kmin_floor + RAMP_FLOOR_BYTES
    if squeezed:
        formula = (f"Kmax = pfc_onset_bytes: the ramp rule gives {kmax} B, below kmin_floor_bytes + "
                   "ramp_floor_bytes (no room for a marking ramp)")
        kmax = int(onset)
        problems.append(f"egress PFC onset {onset} B leaves no room for an ECN ramp (need >= "
                        f"{2 * (kmin_floor + RAMP_FLOOR_BYTES)} B)")
        note = ("onset too small: Kmax set to the onset, Kmin to half of it; PFC will pause before marking "
                "acts")
    if cap < ONSET_FRACTION * onset and not unknown:
        note = "; ".join(filter(None, [note, (
            f"bounded by 2 x C x rpg_time_reset = {cap} B below half the PFC onset "
            f"({round(ONSET_FRACTION * onset)} B): a deeper ramp only adds standing queue "
            "(docs/tuning-sweeps.md#kmax-bound)")]))
    if burst >= half and not unknown:
        note = "; ".join(filter(None, [note, (
            f"the first-RTT burst (N-1) x BDP = {round(burst)} B reaches half the PFC onset: this port class "
            "is PFC-bound in flow-start incasts whatever the ramp "
            "(docs/tuning-sweeps.md#where-no-setting-wins)")]))
    if squeezed:
        kmin = kmax // 2
    else:
        kmin = max(kmin_floor, (int(kmax * KMIN_OF_KMAX.get(objective, 0.5)) // 1000) * 1000)
        kmin = min(kmin, kmax - RAMP_FLOOR_BYTES)
    pmax = _choose_pmax(p_star)
    src = ("docs/derivation.md#kmax-first-rtt-burst, docs/derivation.md#ecn-before-pfc; sweep: "
           "docs/tuning-sweeps.md#ecn-ramp")
    trade = f"objective {objective}: {OBJECTIVE_TRADE[objective]}"
    vendor = _vendor_note(int(common["speed_gbps"]))
    inputs: dict[str, float | int | str | bool] = {**common, "first_rtt_burst_bytes": round(burst),
                                                   "onset_fraction": ONSET_FRACTION}
    r = {
        "kmax_bytes": Rationale(formula=formula, inputs=inputs, source=src,
                                note="; ".join(filter(None, [note, trade, vendor]))),
        "kmin_bytes": Rationale(
            formula=("Kmin = floor(kmax_bytes / 2): no room for a marking ramp" if squeezed else
                     "Kmin = min(max(kmin_floor_bytes, floor_1000(kmax_bytes x kmin_of_kmax)), kmax_bytes - "
                     "ramp_floor_bytes), kmin_floor_bytes = max(ceil_1000(bdp_bytes / 7), 2 x 9216): marking "
                     "starts once the queue holds more than the burst a healthy incast needs"),
            inputs={**common, "kmax_bytes": kmax, "kmin_of_kmax": KMIN_OF_KMAX.get(objective, 0.5),
                    "kmin_floor_bytes": kmin_floor, "ramp_floor_bytes": RAMP_FLOOR_BYTES},
            source=src, note=trade),
        "pmax_percent": Rationale(
            formula="smallest of 1/2/5/10/20/50/100 % with Pmax >= 2 * p*(N) (fluid fixed point, RoCE-frame "
                    "packets)",
            inputs={"p_star": round(p_star, 6), "n_flows": n, "margin": PMAX_MARGIN},
            source="docs/derivation.md#dcqcn-fluid-model, docs/derivation.md#fluid-packet-size; CoNEXT'16 "
                   "fixed-point theorem", note="q* then sits in the lower half of the ramp"),
    }
    return kmin, kmax, pmax, r


def _check_inputs(prof: str, objective: str, speed_gbps: int, base_rtt_us: float, fan_in: int,
                  pfc_trigger_bytes: int) -> None:
    """Raises ValueError for an unknown profile or objective or an out-of-range number."""
    if prof not in ("derived", "bdp") and prof not in NAMED_PROFILES:
        raise ValueError(f"unknown ECN profile {prof!r}; known: derived, bdp, {', '.join(NAMED_PROFILES)}")
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; known: {', '.join(OBJECTIVES)}")
    if speed_gbps <= 0 or base_rtt_us <= 0 or fan_in < 0 or pfc_trigger_bytes < 0:
        raise ValueError("derive_ecn: need speed_gbps > 0, base_rtt_us > 0, fan_in >= 0, pfc_trigger_bytes "
                         f">= 0 (got {speed_gbps}, {base_rtt_us}, {fan_in}, {pfc_trigger_bytes})")


def _bdp_ramp(prof: str, speed_gbps: int, dcqcn_params: dict[str, int], n: int, bdp: float, trig: int,
              onset: int, p_star: float, fp: FluidParams, common: dict[str, float | int],
              problems: list[str]) -> tuple[int, int, float, dict[str, Rationale]]:
    """The previous BDP rule (profile ``bdp``) or objective latency on ``derived``: Kmin/Kmax from the BDP,
    clamped below the PFC trigger (bdp) or half the egress onset (derived); Pmax from the fluid model."""
    # the previous rule's own inputs: 1000 B model packets and the DCQCN it derived then (AI x speed/25G,
    # the 300 us timer), so ``bdp`` reproduces the previous values
    old_dq = {**dcqcn_params, "rpg_ai_rate_mbps": max(1, round(HPCC_AI_MBPS_AT_25G * speed_gbps / 25)),
              "rpg_time_reset_us": TIMER_REFERENCE_US}
    fp_old = FluidParams.from_dcqcn_params(old_dq, speed_gbps, packet_bytes=BDP_RULE_PACKET_BYTES)
    p_old = fixed_point_p(fp_old, n) if prof == "bdp" else p_star
    mult = _kmax_multiplier(n)
    kmin, kmax, clamp_note = _bdp_clamp(prof, bdp, mult, trig, onset, problems)
    pmax = _choose_pmax(p_old)
    vendor = _vendor_note(speed_gbps)
    if prof == "derived":
        vendor = (f"objective latency: the bdp ramp, bounded standing queue; {vendor}")
    else:
        vendor = ("profile bdp: the previous derived rule, kept for comparison (docs/tuning-sweeps.md shows "
                  f"what it costs in incasts); {vendor}")
    r: dict[str, Rationale] = {}
    r["kmin_bytes"] = Rationale(
        formula="max(ceil_1000(BDP/7), 2*9216); BDP = speed_gbps*1e9/8 * base_rtt_us*1e-6",
        inputs={**common, "kmin_floor_bytes": KMIN_FLOOR_BYTES},
        note="; ".join(filter(None, [clamp_note, vendor])),
        source="DCTCP K > C*RTT/7 (SIGCOMM'10 [R]) and 'Kmin a small fraction of BDP' "
               "(docs/derivation.md#ecn)")
    r["kmax_bytes"] = Rationale(
        formula="min(max(ceil_1000(m(N)*BDP), Kmin + 2*9216), 0.8*pfc_trigger); m(N) = 2 + min(1, log2 N / "
                "6)",
        inputs={**common, "m": round(mult, 4)}, note="; ".join(filter(None, [clamp_note, vendor])),
        source="Huawei CloudEngine 'upper threshold = 2-3 x BDP' (EDOC1100155250); DCQCN 'ECN before PFC'; "
               "CoNEXT'16: wider ramps restore phase margin as N grows "
               "(docs/derivation.md#dcqcn-fluid-model)")
    r["pmax_percent"] = Rationale(
        formula="smallest of 1/2/5/10/20/50/100 % with Pmax >= 2 * p*(N) (fluid fixed point)",
        inputs={"p_star": round(p_old, 6), "n_flows": n, "margin": PMAX_MARGIN,
                "model_packet_bytes": fp_old.packet_bytes if prof == "bdp" else fp.packet_bytes}, note=vendor,
        source="docs/derivation.md#dcqcn-fluid-model (check p*(N_max) <= Pmax); CoNEXT'16 fixed-point "
               "theorem")
    return kmin, kmax, pmax, r


def _bdp_clamp(prof: str, bdp: float, mult: float, trig: int, onset: int,
               problems: list[str]) -> tuple[int, int, str]:
    """Kmin = max(BDP/7, 2 frames), Kmax = max(m(N) x BDP, Kmin + 2 frames), then clamped to the cap
    (80 % of the trigger for bdp, half the onset for derived); returns Kmin, Kmax and the clamp note."""
    kmin_d = max(_ceil_kb(bdp / KMIN_BDP_DIVISOR), KMIN_FLOOR_BYTES)
    kmax_d = max(_ceil_kb(mult * bdp), kmin_d + RAMP_FLOOR_BYTES)
    cap = int(TRIGGER_GUARD * trig) if prof == "bdp" else int(ONSET_FRACTION * onset)
    if cap < 2 * MAX_FRAME_BYTES:
        problems.append(f"PFC trigger {trig} B too small for an ECN ramp (need >= "
                        f"{math.ceil(2 * MAX_FRAME_BYTES / TRIGGER_GUARD)} B)")
        return trig // 2, trig, (f"PFC trigger {trig} B leaves no room for a marking ramp of >= 2 frames "
                                 f"below {TRIGGER_GUARD:.0%} of it: Kmax set to the trigger, Kmin to half of "
                                 "it")
    if kmax_d <= cap:
        return kmin_d, kmax_d, ""
    kmax = cap
    kmin = min(kmin_d, max(kmax - RAMP_FLOOR_BYTES, kmax // 2))
    if prof == "bdp":
        return kmin, kmax, (f"clamped: m*BDP = {kmax_d} B exceeds {TRIGGER_GUARD:.0%} of the PFC trigger "
                            f"{trig} B, so Kmax = {kmax} B" + (f" and Kmin {kmin_d} -> {kmin} B"
                                                               if kmin != kmin_d else ""))
    return kmin, kmax, (f"clamped: m*BDP = {kmax_d} B exceeds half the egress PFC onset {onset} B, so Kmax = "
                        f"{kmax} B")


def _named_ramp(prof: str, onset: int, n: int, trig: int,
                common: dict[str, float | int]) -> tuple[int, int, float, dict[str, Rationale]]:
    """A published profile from :data:`NAMED_PROFILES`, used as is (the note says when PFC fires first)."""
    kmin, kmax, pmax, src = NAMED_PROFILES[prof]
    note = f"named profile {prof}: used as published, not adjusted"
    if kmax > onset:
        note += (f"; Kmax {kmax} B is above the egress PFC onset {onset} B (min of {n} x {trig} B and the "
                 "egress queue buffer): PFC fires before marking reaches Pmax")
    r = {key: Rationale(formula=f"{prof} table value", inputs={key: val, **common}, source=src, note=note)
         for key, val in (("kmin_bytes", kmin), ("kmax_bytes", kmax), ("pmax_percent", pmax))}
    return kmin, kmax, pmax, r


def _apply_pins(pins: dict[str, float | int], kmin: int, kmax: int, pmax: float,
                r: dict[str, Rationale], sources: dict[str, str]) -> tuple[int, int, float]:
    """Pinned values replace the derived ones (their rationale keeps the derived value and names the pin's
    ``sources`` entry); an unpinned Kmin or Kmax that the other pin crosses is moved (Kmax/2, Kmin + 2
    frames)."""
    derived_vals = {"kmin_bytes": kmin, "kmax_bytes": kmax, "pmax_percent": pmax}
    for key, v in pins.items():
        r[key] = Rationale(formula="pinned by user", inputs={key: v},
                           source=sources.get(key, "inventory override"),
                           note=f"derived {derived_vals[key]} ({r[key].formula}); still checked against the "
                                "PFC trigger and the fluid model", pinned_by_user=True,
                           derived_value=derived_vals[key])
    kmin = int(pins.get("kmin_bytes", kmin))
    kmax = int(pins.get("kmax_bytes", kmax))
    pmax = float(pins.get("pmax_percent", pmax))
    if "kmin_bytes" not in pins and "kmax_bytes" in pins and kmin >= kmax:
        kmin = kmax // 2
        r["kmin_bytes"] = r["kmin_bytes"].model_copy(update={"note": f"lowered to Kmax/2 = {kmin} B below "
                                                             "pinned Kmax"})
    if "kmax_bytes" not in pins and "kmin_bytes" in pins and kmax <= kmin:
        kmax = kmin + RAMP_FLOOR_BYTES
        r["kmax_bytes"] = r["kmax_bytes"].model_copy(update={"note": "raised to pinned Kmin + 2*9216 = "
                                                             f"{kmax} B"})
    return kmin, kmax, pmax


def _steady_state(n: int, pmax: float, onset: int, trig: int, p_star: float, q_star: float, on_ramp: bool,
                  fr_load: float, problems: list[str]) -> str:
    """``ramp``, ``off-ramp`` or ``pfc-bound`` (the last found wins); appends each problem found."""
    state = "pfc-bound" if problems else "ramp"  # no room for a ramp below the trigger/onset
    if not on_ramp:
        state = "off-ramp"
        problems.append(f"p*(N={n}) = {p_star:.4f} > Pmax {pmax / 100:.4f}: no operating point on the ramp, "
                        "the queue sits at Kmax and chatters")
    if not q_star < onset:
        state = "pfc-bound"
        problems.append(f"q* = {round(q_star)} B >= egress PFC onset {onset} B (min of {n} x {trig} B and "
                        "the egress queue buffer): PFC pauses in steady state")
    if fr_load >= 1.0:
        state = "pfc-bound"
        problems.append(f"PFC-bound steady state: the fast-recovery limit cycle loads the link {fr_load:.2f} "
                        "x C (>= 1; clamp_tgt_rate 0 leaves the target near line rate, each increase event "
                        "jumps halfway back). No ECN ramp fixes this; the DCQCN timer and target-rate "
                        "handling can (docs/derivation.md#pfc-bound-steady-state)")
    return state


def _drop_thresholds(asic_ecn_separate: bool, kmin: int, kmax: int, pmax: float,
                     r: dict[str, Rationale]) -> tuple[int | None, int | None, float | None]:
    """Separate WRED drop thresholds for non-ECT packets (Kmax, 2 x Kmax, Pmax) when the ASIC and platform
    can say them, else none; adds the ``drop_min_bytes`` rationale either way."""
    if asic_ecn_separate:
        r["drop_min_bytes"] = Rationale(
            formula="drop_min = Kmax, drop_max = 2*Kmax, drop probability = Pmax", inputs={"kmax_bytes": kmax,
            "pmax_percent": pmax}, source="SONiC wred_ecn_marking_thresholds_HLD.md ('mark before drop'; "
            "example mark 256K-512K under drop 1M-2M); AZURE_LOSSLESS uses one probability for both",
            note="applies only to non-ECT packets on the lossless queue; ECT packets are marked on the ECN "
                 "ramp")
        return kmax, 2 * kmax, pmax
    r["drop_min_bytes"] = Rationale(
        formula="none: one WRED ramp per queue; non-ECT packets are dropped on the ECN ramp (Kmin..Kmax, "
                "Pmax)",
        inputs={"kmin_bytes": kmin, "kmax_bytes": kmax, "pmax_percent": pmax},
        source="SAI WRED with ECN marking enabled: ECT packets marked, non-ECT dropped on the same "
               "thresholds (SONiC WRED_PROFILE ecn_all, sonic-wred-profile.yang)",
        note="the ASIC or the platform's syntax has no separate drop thresholds")
    return None, None, None


def derive_ecn(
    speed_gbps: int,
    base_rtt_us: float,
    fan_in: int,
    pfc_trigger_bytes: int,
    dcqcn_params: dict[str, int],
    asic_ecn_separate: bool,
    profile: EcnProfileName | str = "derived",
    overrides: dict[str, float | int | str] | None = None,
    name: str | None = None,
    objective: str = "throughput",
    frame_bytes: int = ROCE_FRAME_BYTES,
    queue_buffer_bytes: int | None = None,
    pin_sources: dict[str, str] | None = None,
) -> EcnProfile:
    """ECN profile for one (speed, fan-in) class of lossless egress queues.

    Args:
        speed_gbps: port speed (Gb/s).
        base_rtt_us: unloaded RTT (µs), see :func:`base_rtt_us`.
        fan_in: largest N-to-1 fan-in onto this queue (flows in the fluid model; < 1 is modelled as 1).
        pfc_trigger_bytes: one ingress PG's shared occupancy at which PFC XOFF fires with ``fan_in`` PGs
            congested at once (bytes, :func:`roce_tune.tuner.buffers.pg_shared_limit_bytes`); the egress
            queue at PFC onset is ``fan_in x`` this.
        dcqcn_params: NIC DCQCN params (``Dcqcn.params`` keys) for the fluid model.
        asic_ecn_separate: separate WRED drop thresholds for non-ECT packets can be configured (the ASIC
            has them and the switch's platform syntax can say them); otherwise the profile has none and
            its rationale says non-ECT packets are dropped on the ECN ramp.
        profile: ``derived``, ``bdp`` (the previous BDP rule) or a name in :data:`NAMED_PROFILES`.
        overrides: pinned ``kmin_bytes`` / ``kmax_bytes`` (ints or "150KB") / ``pmax_percent``.
        name: profile name; default ``ROCE_LOSSLESS_{speed}G_N{fan_in}``.
        objective: ``throughput``, ``latency`` or ``balanced`` (policy.objective; used by ``derived``).
        frame_bytes: RoCE frame on the wire (model packet of the fluid model), bytes.
        queue_buffer_bytes: the most the egress queue itself may hold (egress pool x alpha/(1+alpha)); the
            PFC onset is ``min(fan_in x pfc_trigger_bytes, queue_buffer_bytes)``. None = no egress limit.
        pin_sources: rationale source per pinned key (the override entry and its reason,
            :func:`roce_tune.inventory.overrides.pin_sources`); a key without one says "inventory override".

    Returns:
        :class:`roce_tune.plan.EcnProfile` with the FluidCheck and Rationale for kmin/kmax/pmax,
        drop thresholds (if separate) and fluid.

    Raises:
        ValueError: unknown profile or override key, impossible override value, bad name,
            speed/RTT <= 0, negative fan-in or trigger.
    """
    prof = profile.value if isinstance(profile, EcnProfileName) else str(profile)
    _check_inputs(prof, objective, speed_gbps, base_rtt_us, fan_in, pfc_trigger_bytes)
    name = name or DEFAULT_NAME.format(speed_gbps=speed_gbps, fan_in=fan_in)
    if not PROFILE_NAME_RE.fullmatch(name):
        raise ValueError(f"ECN profile name {name!r} must match {PROFILE_NAME_RE.pattern}")
    pins = _parse_overrides(overrides)
    n = max(1, fan_in)
    fp = FluidParams.from_dcqcn_params(dcqcn_params, speed_gbps, packet_bytes=frame_bytes)
    p_star = fixed_point_p(fp, n)
    bdp = bdp_bytes(speed_gbps, base_rtt_us)
    trig = pfc_trigger_bytes
    onset = min(n * trig, 1 << 62, queue_buffer_bytes if queue_buffer_bytes else 1 << 62)
    timer_us = float(dcqcn_params.get("rpg_time_reset_us", TIMER_REFERENCE_US))
    common = {"speed_gbps": speed_gbps, "base_rtt_us": base_rtt_us, "bdp_bytes": round(bdp),
              "rpg_time_reset_us": timer_us, "timer_queue_bytes": timer_queue_bytes(speed_gbps, timer_us),
              "fan_in": fan_in, "pfc_trigger_bytes": trig, "pfc_onset_bytes": onset,
              **({"queue_buffer_bytes": queue_buffer_bytes} if queue_buffer_bytes else {})}
    problems: list[str] = []
    r: dict[str, Rationale] = {}
    if prof == "derived" and objective != "latency":
        kmin, kmax, pmax, r = _derive_onset_ramp(objective, bdp, n, onset, p_star, common, problems)
    elif prof in ("derived", "bdp"):
        kmin, kmax, pmax, r = _bdp_ramp(prof, speed_gbps, dcqcn_params, n, bdp, trig, onset, p_star, fp,
                                        common,
                                        problems)
    else:
        kmin, kmax, pmax, r = _named_ramp(prof, onset, n, trig, common)
    kmin, kmax, pmax = _apply_pins(pins, kmin, kmax, pmax, r, pin_sources or {})
    p_star, q_star, on_ramp = fixed_point(fp, n, min(kmin, kmax), max(kmin, kmax), pmax / 100)
    fr_load = fast_recovery_load(fp, n, base_rtt_us, bool(dcqcn_params.get("clamp_tgt_rate", 0)),
                                 float(dcqcn_params.get("rate_reduce_monitor_period_us", 4)))
    state = _steady_state(n, pmax, onset, trig, p_star, q_star, on_ramp, fr_load, problems)
    ok = not problems
    r["fluid"] = Rationale(
        formula="p* root of a^2*alpha/((b+d)(c+e)) = tau^2*R_AI*C/N with RoCE-frame packets; "
                "q* = Kmin + p*/Pmax*(Kmax-Kmin); load = (C/B + N/T)(1/2 - 1/N)(RTT + cut_period/2)",
        inputs={"n_flows": n, "p_star": round(p_star, 6), "q_star_bytes": round(q_star), "pmax_percent": pmax,
                "model_packet_bytes": fp.packet_bytes, "pfc_onset_bytes": onset,
                "fast_recovery_load": round(fr_load, 3),
                "tau_us": fp.tau_s * 1e6, "tau_prime_us": fp.tau_prime_s * 1e6, "timer_us": fp.timer_s * 1e6,
                "byte_counter_bytes": fp.byte_counter_bytes, "F": fp.F, "rai_mbps": fp.rai_mbps,
                "g": round(fp.g, 6)},
        source="CoNEXT'16 fixed-point theorem; docs/derivation.md#dcqcn-fluid-model, "
               "docs/derivation.md#fluid-packet-size, docs/derivation.md#pfc-bound-steady-state "
               "(roce_tune.tuner.fluid)",
        note=f"ok: steady state on the ramp (q* {round(q_star)} B "
             + (f"< onset {onset} B" if onset < 1 << 62 else "; no PFC onset given")
             + f", fast-recovery load {fr_load:.2f} < 1)" if ok
             else f"FLUID CHECK FAILED ({state}): " + "; ".join(problems))
    drop_min, drop_max, drop_p = _drop_thresholds(asic_ecn_separate, kmin, kmax, pmax, r)
    return EcnProfile(
        name=name, speed_gbps=speed_gbps, source_profile=prof, kmin_bytes=kmin, kmax_bytes=kmax,
        pmax_percent=pmax,
        drop_min_bytes=drop_min, drop_max_bytes=drop_max, drop_probability_percent=drop_p,
        base_rtt_us=base_rtt_us, fan_in=fan_in, pfc_trigger_bytes=trig, pfc_onset_bytes=onset,
        objective=objective if prof == "derived" else None,
        fluid=FluidCheck(n_flows=n, p_star=p_star, q_star_bytes=round(q_star), on_ramp=on_ramp,
                         below_pfc_trigger=q_star < onset, ok=ok, steady_state=state,
                         fast_recovery_load=round(fr_load, 4)),
        rationale=r)


def ramp_pin_path(profile: EcnProfile) -> str | None:
    """The inventory path of the pin behind a profile's ramp (``policy.overrides[i].set.kmax_bytes``, else
    its ``kmin_bytes``: a Kmin pin moves an unpinned Kmax above it), None when neither is pinned; a finding
    on the ramp is positioned there (pipeline.locate_findings)."""
    for key in ("kmax_bytes", "kmin_bytes"):
        why = profile.rationale.get(key)
        path = why.pin_path(key) if why is not None else None
        if path is not None:
            return path
    return None


def check_ecn(profile: EcnProfile, device: str, port: str | None) -> list[Finding]:
    """Safety checks on an ECN profile (derived, named or pinned).

    Returns:
        RT210 (error) when Kmin >= Kmax or Kmax > pfc_onset_bytes (the egress queue at which the fan-in's
        ingress PGs all send XOFF; marking must reach Pmax before it), at the pin behind the ramp if any
        (:func:`ramp_pin_path`); RT211 (warning) when the fluid check failed (p* > Pmax, q* >= trigger, or no
        room for a ramp). Empty list when all is well.
    """
    loc = Location(device=device, port=port)
    ramp = Location(device=device, port=port, path=ramp_pin_path(profile))
    out: list[Finding] = []
    if profile.kmin_bytes >= profile.kmax_bytes:
        out.append(Finding(rule="RT210", severity=Severity.error, location=ramp,
                           message=f"ECN profile {profile.name}: Kmin {profile.kmin_bytes} B >= Kmax "
                                   f"{profile.kmax_bytes} B (no marking ramp)",
                           fix="set kmin_bytes below kmax_bytes (or drop the override)"))
    onset = profile.pfc_onset_bytes if profile.pfc_onset_bytes is not None else profile.pfc_trigger_bytes
    if profile.kmax_bytes > onset:
        out.append(Finding(rule="RT210", severity=Severity.error, location=ramp,
                           message=f"ECN profile {profile.name}: Kmax {profile.kmax_bytes} B is above the "
                                   f"egress PFC onset {onset} B (fan-in {profile.fan_in} x PG trigger "
                                   f"{profile.pfc_trigger_bytes} B): PFC fires before ECN marking reaches "
                                   "Pmax",
                           fix="lower kmax_bytes to at most the PFC trigger, use the derived profile, "
                               "or raise the lossless pool/dynamic_th"))
    if not profile.fluid.ok:
        f = profile.fluid
        why = profile.rationale["fluid"].note if "fluid" in profile.rationale else ""
        out.append(Finding(rule="RT211", severity=Severity.warning, location=loc,
                           message=f"ECN profile {profile.name}: DCQCN fluid check failed at N={f.n_flows} "
                                   f"(p*={f.p_star:.4f}, Pmax={profile.pmax_percent} %, q*={f.q_star_bytes} "
                                   f"B, trigger {profile.pfc_trigger_bytes} B). {why}".strip(),
                           fix="off-ramp: raise pmax_percent above 2*p*; q* above the onset: lower Kmax "
                               "below the egress PFC onset; PFC-bound limit cycle: no ECN value fixes it - "
                               "review the DCQCN rpg_time_reset/rpg_byte_reset/clamp_tgt_rate or reduce the "
                               "fan-in"))
    return out


#: The PFC trigger :func:`calc_ecn` derives with when none is given (2^62 B: no trigger bounds the ramp).
_NO_TRIGGER_BYTES = 1 << 62


def calc_ecn(speed: str | int, rtt: str | float, fan_in: int, pfc_trigger_bytes: str | int | None = None,
             profile: str = "derived", nic_id: str = "connectx-7") -> EcnProfile:
    """``roce-tune calc ecn --speed 400G --rtt 10us --fan-in 8 [--pfc-trigger 4MB]``.

    DCQCN parameters for the fluid check come from :func:`roce_tune.tuner.dcqcn.calc_dcqcn`.
    Without a PFC trigger the profile reports ``pfc_trigger_bytes = Kmax``: the smallest trigger the
    "Kmax <= trigger" rule allows (the note says it was not checked).

    Raises:
        ValueError: bad spellings (see roce_tune.units) or values; CatalogError: unknown NIC.
    """
    speed_gbps = parse_speed_gbps(speed)
    rtt_us = parse_time_us(rtt)
    params = calc_dcqcn(f"{speed_gbps}G", nic_id).params  # a bare 1600 would be read as Mb/s
    if pfc_trigger_bytes is not None:
        return derive_ecn(speed_gbps, rtt_us, int(fan_in), parse_bytes(pfc_trigger_bytes), params, False,
                          profile)
    prof = derive_ecn(speed_gbps, rtt_us, int(fan_in), _NO_TRIGGER_BYTES, params, False, profile)
    fl = prof.fluid
    below = fl.q_star_bytes < prof.kmax_bytes
    # the stand-in trigger is no input anyone gave: it leaves the rationales, the onset is unknown (None)
    r = {k: why.model_copy(update={"inputs": {i: v for i, v in why.inputs.items() if v != _NO_TRIGGER_BYTES}})
         for k, why in prof.rationale.items()}
    r["pfc_trigger_bytes"] = Rationale(formula="Kmax (no trigger given)",
                                       inputs={"kmax_bytes": prof.kmax_bytes},
                                       source="DCQCN 'ECN before PFC' rule",
                                       note="PFC trigger not given: not checked; the switch's trigger must "
                                       "be >= this")
    return prof.model_copy(update={
        "pfc_trigger_bytes": prof.kmax_bytes, "pfc_onset_bytes": None, "rationale": r,
        "fluid": fl.model_copy(update={"below_pfc_trigger": below, "ok": fl.on_ramp and below})})


def stepped_thresholds(kmin_bytes: int, kmax_bytes: int, factor: float, up: bool) -> tuple[int, int]:
    """(Kmin, Kmax) in bytes moved one ``verify --adjust`` step (:mod:`roce_tune.verify.adjust`, step rule
    [D]): both multiplied (``up``) or divided by ``factor`` (> 1), truncated to whole bytes; going down,
    Kmin never below :data:`KMIN_FLOOR_BYTES` and the ramp Kmax - Kmin never below
    :data:`RAMP_FLOOR_BYTES` (the floors :func:`derive_ecn` keeps). The caller checks Kmax against the PFC
    onset.

    >>> stepped_thresholds(100_000, 400_000, 2.0, True), stepped_thresholds(20_000, 30_000, 2.0, False)
    ((200000, 800000), (18432, 36864))
    """
    if up:
        return int(kmin_bytes * factor), int(kmax_bytes * factor)
    kmin = max(KMIN_FLOOR_BYTES, int(kmin_bytes / factor))
    return kmin, max(kmin + RAMP_FLOOR_BYTES, int(kmax_bytes / factor))


def pmax_ladder_neighbour(pmax_percent: float, up: bool) -> float | None:
    """The neighbouring Pmax (%) of :data:`PMAX_LADDER_PERCENT` for a threshold step: the next lower one when
    the thresholds go ``up`` (mark less), the next higher one when they go down; None past the ladder's end.

    >>> pmax_ladder_neighbour(5.0, True), pmax_ladder_neighbour(5.0, False), pmax_ladder_neighbour(1.0, True)
    (2.0, 10.0, None)
    """
    if up:
        lower = [p for p in PMAX_LADDER_PERCENT if p < pmax_percent]
        return lower[-1] if lower else None
    higher = [p for p in PMAX_LADDER_PERCENT if p > pmax_percent]
    return higher[0] if higher else None
