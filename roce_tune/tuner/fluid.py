"""DCQCN fluid model: the steady-state (fixed-point) marking probability and queue.

Implements the fixed point of the DCQCN delay-differential model of Zhu et al. (SIGCOMM 2015) as
analysed in Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN and
TIMELY" (CoNEXT 2016), Theorem "unique fixed point"; notation and parameter mapping in
``docs/derivation.md#dcqcn-fluid-model``. Pure Python (``math`` only).

All model quantities are in **packets** of :attr:`FluidParams.packet_bytes` (the authors used
1000-byte packets), because ECN marking is a per-packet Bernoulli trial. At the fixed point, with
``R = C/N`` packets/s per flow and marking probability ``p``::

    a = 1 - (1-p)^(tau*R)                      P[>= 1 mark in one CNP interval]
    alpha = 1 - (1-p)^(tau'*R)                 DCTCP-like congestion estimate
    b = p / ((1-p)^(-B) - 1)                   byte-counter events per packet
    d = p / ((1-p)^(-T*R) - 1)                 timer events per packet
    c = b * (1-p)^(F*B),  e = d * (1-p)^(F*T*R)   events past the F fast-recovery stages
    p* solves  a^2 * alpha / ((b+d)(c+e)) = tau^2 * R_AI * R       (unique root in (0, 1))
    q* = Kmin + (p*/Pmax) * (Kmax - Kmin)      if p* <= Pmax (on the RED ramp)

Example (SIGCOMM'15 defaults at 40 Gb/s, two flows)::

    >>> p = paper_defaults(40)
    >>> round(fixed_point_p(p, 2), 5), round(approx_p(p, 2), 5)
    (0.00078, 0.00092)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

#: Bits per byte.
_BITS = 8
#: Wire bytes around a RoCE payload: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
#: (InfiniBand Architecture Specification Annex A16/A17 RoCEv2; docs/derivation.md#fluid-packet-size).
ROCE_HEADER_BYTES = 62
#: Model packet of a RoCE MTU 4096 fabric: one full frame (docs/derivation.md#fluid-packet-size).
ROCE_FRAME_BYTES = 4096 + ROCE_HEADER_BYTES


@dataclass(frozen=True)
class FluidParams:
    """Parameters of the DCQCN fluid model (units in names; SI seconds).

    Attributes:
        capacity_gbps: bottleneck capacity C (Gb/s).
        packet_bytes: model packet size (bytes); the authors used 1000.
        g: alpha EWMA gain (1).
        tau_s: CNP interval tau: at most one rate cut per flow per tau (s).
        tau_prime_s: alpha-update period tau' (s).
        timer_s: rate-increase timer T (s).
        byte_counter_bytes: rate-increase byte counter B (bytes).
        F: fast-recovery stages before additive increase (1).
        rai_mbps: additive-increase step R_AI (Mb/s).
    """

    capacity_gbps: float
    packet_bytes: int = 1000
    g: float = 1 / 256
    tau_s: float = 50e-6
    tau_prime_s: float = 55e-6
    timer_s: float = 55e-6
    byte_counter_bytes: float = 10e6
    F: int = 5
    rai_mbps: float = 40.0

    def __post_init__(self) -> None:
        checks = {
            "capacity_gbps": self.capacity_gbps > 0, "packet_bytes": self.packet_bytes > 0,
            "g": 0 < self.g <= 1, "tau_s": self.tau_s > 0, "tau_prime_s": self.tau_prime_s > 0,
            "timer_s": self.timer_s > 0, "byte_counter_bytes": self.byte_counter_bytes > 0,
            "F": self.F >= 0, "rai_mbps": self.rai_mbps > 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"FluidParams: out-of-range {', '.join(bad)} in {self!r}")

    # --- unit conversions to the model's packet units ---------------------------------------
    @property
    def capacity_pps(self) -> float:
        """C in packets/s."""
        return self.capacity_gbps * 1e9 / (_BITS * self.packet_bytes)

    @property
    def rai_pps(self) -> float:
        """R_AI in packets/s."""
        return self.rai_mbps * 1e6 / (_BITS * self.packet_bytes)

    @property
    def byte_counter_pkts(self) -> float:
        """B in packets."""
        return self.byte_counter_bytes / self.packet_bytes

    @classmethod
    def from_dcqcn_params(cls, params: dict[str, int], speed_gbps: float,
                          packet_bytes: int = ROCE_FRAME_BYTES) -> FluidParams:
        """Map mlx5 DCQCN knobs (plan ``Dcqcn.params`` keys) to model parameters.

        ``packet_bytes`` is the model packet: one RoCE frame (default RoCE MTU 4096 + 62 B headers).
        Marking is a per-packet Bernoulli trial, so the model packet must be the frame the switch marks;
        the authors' 1000 B packets under-predict p* about 4x for 4 KB frames
        (docs/derivation.md#fluid-packet-size).

        Mapping (docs/derivation.md#dcqcn-fluid-model [D]): T <- ``rpg_time_reset_us``, B <-
            ``rpg_byte_reset_bytes``,
        F <- ``rpg_threshold``, R_AI <- ``rpg_ai_rate_mbps``, tau' <- ``dce_tcp_rtt_us``,
        g <- 1 - ``dce_tcp_g``/1024, tau <- max(``min_time_between_cnps_us``,
        ``rate_reduce_monitor_period_us``). Capacity = ``speed_gbps``.

        A byte counter of 0 (disabled in firmware) is modelled as a counter that never fires
        (1e15 bytes); a zero period is clamped to 0.1 µs so the model stays defined.

        Raises:
            KeyError: a required knob is missing.
            ValueError: the mapped value is outside the model's domain (e.g. dce_tcp_g = 1024).
        """
        byte_reset = params["rpg_byte_reset_bytes"]
        return cls(
            capacity_gbps=float(speed_gbps),
            packet_bytes=packet_bytes,
            g=1 - params["dce_tcp_g"] / 1024,
            tau_s=max(params["min_time_between_cnps_us"], params["rate_reduce_monitor_period_us"],
                      0.1) * 1e-6,
            tau_prime_s=max(params["dce_tcp_rtt_us"], 0.1) * 1e-6,
            timer_s=max(params["rpg_time_reset_us"], 0.1) * 1e-6,
            byte_counter_bytes=float(byte_reset) if byte_reset > 0 else 1e15,
            F=params["rpg_threshold"],
            rai_mbps=float(params["rpg_ai_rate_mbps"]),
        )


def paper_defaults(capacity_gbps: float) -> FluidParams:
    """SIGCOMM'15 DCQCN defaults as used by the authors' fluid code.

    Source: ``jitupadhye-zz/rdma:fluidmodel/dcqcn/dcqcn2.m`` comments (tau 50 µs, tau' 55 µs,
    F 5, B 10 MB, R_AI 40 Mb/s, timer 55 µs, g 1/256) and CoNEXT'16 text
    (docs/derivation.md#dcqcn-fluid-model).
    """
    return FluidParams(capacity_gbps=capacity_gbps)


# --- fixed-point equation --------------------------------------------------------------------
def _log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow or cancellation."""
    return x + math.log1p(-math.exp(-x)) if x > 30 else math.log(math.expm1(x))


def _log_lhs(params: FluidParams, n_flows: int, p: float) -> float:
    """log of a^2 * alpha / ((b+d)(c+e)) at marking probability p (0 < p < 1)."""
    rate = params.capacity_pps / n_flows
    l1p = math.log1p(-p)  # log(1-p) < 0
    big_b = params.byte_counter_pkts
    tr = params.timer_s * rate
    log_a = math.log(-math.expm1(params.tau_s * rate * l1p))
    log_alpha = math.log(-math.expm1(params.tau_prime_s * rate * l1p))
    log_b = math.log(p) - _log_expm1(-big_b * l1p)
    log_d = math.log(p) - _log_expm1(-tr * l1p)
    log_c = log_b + params.F * big_b * l1p
    log_e = log_d + params.F * tr * l1p
    return 2 * log_a + log_alpha - _logaddexp(log_b, log_d) - _logaddexp(log_c, log_e)


def _logaddexp(x: float, y: float) -> float:
    hi, lo = (x, y) if x >= y else (y, x)
    return hi + math.log1p(math.exp(lo - hi))


@lru_cache(maxsize=4096)
def fixed_point_p(params: FluidParams, n_flows: int) -> float:
    """Exact fixed-point marking probability p* for ``n_flows`` identical flows.

    Solves a^2*alpha*/((b+d)(c+e)) = tau^2 * R_AI * C/N for p in (0, 1) (CoNEXT'16 fixed-point
    theorem, docs/derivation.md#dcqcn-fluid-model) by bisection on log p. The left side rises from ~0 (p -> 0,
    it behaves like p^3) to +inf (p -> 1), so the root is bracketed and unique.

    Args:
        params: model parameters.
        n_flows: N >= 1 flows sharing the bottleneck.

    Returns:
        p* (dimensionless, 0 < p* < 1), relative precision ~1e-12. Results are memoised
        (FluidParams is frozen), since a plan asks the same question for many ports.

    Raises:
        ValueError: n_flows < 1.
    """
    if n_flows < 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows}")
    rate = params.capacity_pps / n_flows
    target = math.log(params.tau_s ** 2 * params.rai_pps * rate)
    lo, hi = math.log(1e-300), math.log1p(-1e-15)
    if _log_lhs(params, n_flows, math.exp(lo)) >= target:
        return math.exp(lo)
    if _log_lhs(params, n_flows, math.exp(hi)) <= target:
        return math.exp(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _log_lhs(params, n_flows, math.exp(mid)) < target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    return math.exp(0.5 * (lo + hi))


def approx_p(params: FluidParams, n_flows: int) -> float:
    """The paper's Taylor approximation p* ~ [R_AI N^2/(tau' C^2) (1/B + N/(T C))^2]^(1/3).

    Source: CoNEXT'16 (docs/derivation.md#dcqcn-fluid-model); also ``stability.m`` line ``ps =
        (Rai*N*N/...)``.
    Valid for small p*; overestimates the exact root by ~15 % at 40G/N=2 with the paper defaults.
    Units: packets (R_AI, C in packets/s; B in packets).

    Raises:
        ValueError: n_flows < 1.
    """
    if n_flows < 1:
        raise ValueError(f"n_flows must be >= 1, got {n_flows}")
    c = params.capacity_pps
    n = n_flows
    inner = 1 / params.byte_counter_pkts + n / (params.timer_s * c)
    # float ** float is typed Any (a negative base gives a complex); every factor here is positive
    cube_root: float = (params.rai_pps * n * n / (params.tau_prime_s * c * c) * inner ** 2) ** (1 / 3)
    return cube_root


def fixed_point(
    params: FluidParams, n_flows: int, kmin_bytes: float, kmax_bytes: float, pmax: float
) -> tuple[float, float, bool]:
    """Fixed point (p*, q*, on_ramp) for a RED/ECN ramp (Kmin, Kmax, Pmax).

    q* = Kmin + (p*/Pmax)(Kmax - Kmin) when p* <= Pmax. Otherwise there is no operating point on
    the ramp: the queue sits on the Kmax discontinuity (marking jumps to 1 above Kmax) and chatters,
    so q* is reported as Kmax and ``on_ramp`` is False (docs/derivation.md#dcqcn-fluid-model).

    Args:
        params: model parameters.
        n_flows: N >= 1.
        kmin_bytes, kmax_bytes: ramp thresholds (bytes), Kmin < Kmax.
        pmax: marking probability at Kmax as a fraction (0.01 = 1 %), 0 < pmax <= 1.

    Returns:
        (p_star, q_star_bytes, on_ramp).

    Raises:
        ValueError: pmax outside (0, 1], Kmax < Kmin, negative thresholds, n_flows < 1.
    """
    if not 0 < pmax <= 1:
        raise ValueError(f"pmax must be a fraction in (0, 1], got {pmax}")
    if kmin_bytes < 0 or kmax_bytes < kmin_bytes:
        raise ValueError(f"need 0 <= Kmin <= Kmax, got Kmin={kmin_bytes} Kmax={kmax_bytes}")
    p_star = fixed_point_p(params, n_flows)
    if p_star <= pmax:
        return p_star, kmin_bytes + (p_star / pmax) * (kmax_bytes - kmin_bytes), True
    return p_star, float(kmax_bytes), False


def fast_recovery_load(params: FluidParams, n_flows: int, base_rtt_us: float, clamp_tgt_rate: bool,
                       cut_period_us: float) -> float:
    """Load a fast-recovery limit cycle puts on the bottleneck, as a fraction of its capacity.

    With ``clamp_tgt_rate = 0`` (firmware default) a cut does not lower the target rate unless an increase
    event came since the last cut, so a train of cuts leaves R_T near line rate C; the next
    fast-recovery event then moves R_C from about C/N to (C/N + C)/2 at once. Until the next cut
    reaches the sender (one base RTT plus, on average, half the cut-check period ``cut_period_us``), that
    flow sends
    ``(C/2 - C/N) x t_react`` extra bytes. Increase events arrive per flow every B bytes (byte counter)
    or every T (timer), so over all N flows at C/N each they come ``C/B + N/T`` times a second::

        load = (C/B + N/T) x (1/2 - 1/N) x t_react            (dimensionless)

    ``load >= 1``: the recoveries inject more than the link drains, the queue climbs until PFC
    pauses the senders: the steady state is PFC-bound whatever the ECN ramp
    (docs/derivation.md#pfc-bound-steady-state). With ``clamp_tgt_rate = 1`` the target follows
    the cuts and no such jump exists (returns 0).

    Args:
        params: model parameters (capacity, B, T); a B of 1e15 bytes means "byte counter off".
        n_flows: N >= 1.
        base_rtt_us: unloaded RTT (µs).
        clamp_tgt_rate: the RP's clamp_tgt_rate flag.
        cut_period_us: rate_reduce_monitor_period (µs).

    Raises:
        ValueError: n_flows < 1 or negative times.
    """
    if n_flows < 1 or base_rtt_us < 0 or cut_period_us < 0:
        raise ValueError(f"fast_recovery_load: need n_flows >= 1 and times >= 0 (got {n_flows}, "
                         f"{base_rtt_us}, {cut_period_us})")
    if clamp_tgt_rate or n_flows <= 2:
        return 0.0
    c_bytes_per_s = params.capacity_gbps * 1e9 / _BITS
    events_per_s = c_bytes_per_s / params.byte_counter_bytes + n_flows / params.timer_s
    t_react_s = (base_rtt_us + cut_period_us / 2) * 1e-6
    return events_per_s * (0.5 - 1.0 / n_flows) * t_react_s
